var Mn=Object.create;var jt=Object.defineProperty;var Nn=Object.getOwnPropertyDescriptor;var Kn=Object.getOwnPropertyNames;var Dn=Object.getPrototypeOf,jn=Object.prototype.hasOwnProperty;var g=(s,e)=>()=>{try{return e||s((e={exports:{}}).exports,e),e.exports}catch(t){throw e=0,t}};var Ln=(s,e,t,n)=>{if(e&&typeof e=="object"||typeof e=="function")for(let r of Kn(e))!jn.call(s,r)&&r!==t&&jt(s,r,{get:()=>e[r],enumerable:!(n=Nn(e,r))||n.enumerable});return s};var On=(s,e,t)=>(t=s!=null?Mn(Dn(s)):{},Ln(e||!s||!s.__esModule?jt(t,"default",{value:s,enumerable:!0}):t,s));var Xe=g(we=>{"use strict";Object.defineProperty(we,"__esModule",{value:!0});we.LocalStorage=void 0;var Ze=class{async get(e){return typeof window>"u"?null:localStorage.getItem(e)}async set(e,t){typeof window>"u"||localStorage.setItem(e,t)}async remove(e){typeof window>"u"||localStorage.removeItem(e)}};we.LocalStorage=Ze});var hn=g(Qe=>{"use strict";Object.defineProperty(Qe,"__esModule",{value:!0});Qe.encodeBase58=rs;var un="123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";function rs(s){if(s.length===0)return"";let e=0,t=0;for(;t<s.length&&s[t]===0;)e++,t++;let n=[0];for(;t<s.length;t++){let o=s[t];for(let i=0;i<n.length;++i)o+=n[i]<<8,n[i]=o%58,o=o/58|0;for(;o>0;)n.push(o%58),o=o/58|0}for(;n.length>0&&n[n.length-1]===0;)n.pop();let r="";for(let o=0;o<e;o++)r+=un[0];for(let o=n.length-1;o>=0;--o)r+=un[n[o]];return r}});var Z=g(fe=>{"use strict";Object.defineProperty(fe,"__esModule",{value:!0});fe.nearActionsToConnectorActions=void 0;var os=hn(),is=s=>{try{return JSON.parse(new TextDecoder().decode(s))}catch{return s}},as=s=>s.map(e=>{if("type"in e)return e;if(e.functionCall)return{type:"FunctionCall",params:{methodName:e.functionCall.methodName,args:is(e.functionCall.args),gas:e.functionCall.gas.toString(),deposit:e.functionCall.deposit.toString()}};if(e.deployGlobalContract)return{type:"DeployGlobalContract",params:{code:e.deployGlobalContract.code,deployMode:e.deployGlobalContract.deployMode.AccountId?"AccountId":"CodeHash"}};if(e.createAccount)return{type:"CreateAccount"};if(e.useGlobalContract)return{type:"UseGlobalContract",params:{contractIdentifier:e.useGlobalContract.contractIdentifier.AccountId?{accountId:e.useGlobalContract.contractIdentifier.AccountId}:{codeHash:(0,os.encodeBase58)(e.useGlobalContract.contractIdentifier.CodeHash)}}};if(e.deployContract)return{type:"DeployContract",params:{code:e.deployContract.code}};if(e.deleteAccount)return{type:"DeleteAccount",params:{beneficiaryId:e.deleteAccount.beneficiaryId}};if(e.deleteKey)return{type:"DeleteKey",params:{publicKey:e.deleteKey.publicKey.toString()}};if(e.transfer)return{type:"Transfer",params:{deposit:e.transfer.deposit.toString()}};if(e.stake)return{type:"Stake",params:{stake:e.stake.stake.toString(),publicKey:e.stake.publicKey.toString()}};if(e.addKey)return{type:"AddKey",params:{publicKey:e.addKey.publicKey.toString(),accessKey:{nonce:Number(e.addKey.accessKey.nonce),permission:e.addKey.accessKey.permission.functionCall?{receiverId:e.addKey.accessKey.permission.functionCall.receiverId,allowance:e.addKey.accessKey.permission.functionCall.allowance?.toString(),methodNames:e.addKey.accessKey.permission.functionCall.methodNames}:"FullAccess"}}};throw new Error("Unsupported action type")});fe.nearActionsToConnectorActions=as});var ye=g(ge=>{"use strict";Object.defineProperty(ge,"__esModule",{value:!0});ge.uuid4=void 0;var cs=()=>typeof window<"u"&&typeof window.crypto<"u"&&typeof window.crypto.randomUUID=="function"?window.crypto.randomUUID():"xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".replace(/[xy]/g,function(s){let e=Math.random()*16|0;return(s==="x"?e:e&3|8).toString(16)});ge.uuid4=cs});var nt=g(me=>{"use strict";Object.defineProperty(me,"__esModule",{value:!0});me.ParentFrameWallet=void 0;var et=Z(),ls=ye(),tt=class{connector;manifest;constructor(e,t){this.connector=e,this.manifest=t}callParentFrame(e,t){let n=(0,ls.uuid4)();return window.parent.postMessage({type:"near-wallet-injected-request",id:n,method:e,params:t},"*"),new Promise((r,o)=>{let i=a=>{a.data.type==="near-wallet-injected-response"&&a.data.id===n&&(window.removeEventListener("message",i),a.data.success?r(a.data.result):o(a.data.error))};window.addEventListener("message",i)})}async signIn(e){let t=await this.callParentFrame("near:signIn",{network:e?.network??this.connector.network,addFunctionCallKey:e?.addFunctionCallKey});return Array.isArray(t)?t:[t]}async signInAndSignMessage(e){let t=await this.callParentFrame("near:signInAndSignMessage",{network:e?.network??this.connector.network,addFunctionCallKey:e?.addFunctionCallKey,messageParams:e.messageParams});return Array.isArray(t)?t:[t]}async signOut(e){let t={...e,network:e?.network??this.connector.network};await this.callParentFrame("near:signOut",t)}async getAccounts(e){let t={...e,network:e?.network??this.connector.network};return this.callParentFrame("near:getAccounts",t)}async signAndSendTransaction(e){let t=(0,et.nearActionsToConnectorActions)(e.actions),n={...e,actions:t,network:e.network??this.connector.network};return this.callParentFrame("near:signAndSendTransaction",n)}async signAndSendTransactions(e){let t={...e,network:e.network??this.connector.network};return t.transactions=t.transactions.map(n=>({actions:(0,et.nearActionsToConnectorActions)(n.actions),receiverId:n.receiverId})),this.callParentFrame("near:signAndSendTransactions",t)}async signMessage(e){let t={...e,network:e.network??this.connector.network};return this.callParentFrame("near:signMessage",t)}async signDelegateActions(e){let t={...e,delegateActions:e.delegateActions.map(n=>({...n,actions:(0,et.nearActionsToConnectorActions)(n.actions)})),network:e.network||this.connector.network};return this.callParentFrame("near:signDelegateActions",t)}};me.ParentFrameWallet=tt});var st=g(be=>{"use strict";Object.defineProperty(be,"__esModule",{value:!0});be.parseUrl=void 0;var ds=s=>{try{return new URL(s)}catch{return null}};be.parseUrl=ds});var ot=g(ke=>{"use strict";Object.defineProperty(ke,"__esModule",{value:!0});ke.EventEmitter=void 0;var rt=class{events={};on(e,t){this.events[e]||(this.events[e]=[]),this.events[e].push(t)}emit(e,t){this.events[e]?.forEach(n=>n(t))}off(e,t){this.events[e]=this.events[e]?.filter(n=>n!==t)}once(e,t){let n=r=>{t(r),this.off(e,n)};this.on(e,n)}removeAllListeners(e){e?delete this.events[e]:this.events={}}};ke.EventEmitter=rt});var xe=g(ve=>{"use strict";Object.defineProperty(ve,"__esModule",{value:!0});ve.escapeHtml=pn;ve.html=us;function pn(s){return s.replace(/&/g,"&amp;").replace(/</g,"&lt;").replace(/>/g,"&gt;").replace(/"/g,"&quot;").replace(/'/g,"&#039;")}var it=Symbol("htmlTag");function us(s,...e){let t=s[0];for(let n=0;n<e.length;n++){for(let r of Array.isArray(e[n])?e[n]:[e[n]]){let o=r?.[it]?r[it]:pn(String(r??""));t+=o}t+=s[n+1]}return Object.freeze({[it]:t,get html(){return t}})}});var wn=g(Se=>{"use strict";Object.defineProperty(Se,"__esModule",{value:!0});Se.css=void 0;var hs=s=>`
${s} * {
  box-sizing: border-box;
  font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, Helvetica, Arial, sans-serif, "Apple Color Emoji", "Segoe UI Emoji", "Segoe UI Symbol";
  -ms-overflow-style: none; 
  scrollbar-width: none; 
  color: #fff;
}

${s} *::-webkit-scrollbar { 
  display: none;
}

${s} p,
${s} h1,
${s} h2,
${s} h3,
${s} h4,
${s} h5,
${s} h6 {
  margin: 0;
}

${s} .modal-container {
    position: fixed;
    top: 0;
    left: 0;
    width: 100%;
    height: 100%;
    z-index: 100000000;
    background-color: rgba(0, 0, 0, 0.5);
    display: flex;
    justify-content: center;
    align-items: center;
    flex-direction: column;
    transition: opacity 0.2s ease-in-out;
}

@media (max-width: 600px) {
  ${s} .modal-container {
    justify-content: flex-end;
  }
}

${s} .modal-content {
  display: flex;
  flex-direction: column;
  align-items: center;

  max-width: 420px;
  max-height: 615px;
  width: 100%;
  border-radius: 24px;
  background: #0d0d0d;
  border: 1.5px solid rgba(255, 255, 255, 0.1);
  transition: transform 0.2s ease-in-out;
}

@media (max-width: 600px) {
  ${s} .modal-content {
    max-width: 100%;
    width: 100%;
    max-height: 80%;
    border-bottom-left-radius: 0;
    border-bottom-right-radius: 0;
    border: none;
    border-top: 1.5px solid rgba(255, 255, 255, 0.1);
  }
}


${s} .modal-header {
  display: flex;
  padding: 16px;
  gap: 16px;
  align-self: stretch;
  align-items: center;
  justify-content: center;
  position: relative;
}

${s} .modal-header button {
  position: absolute;
  right: 16px;
  top: 16px;
  width: 32px;
  height: 32px;
  border-radius: 12px;
  cursor: pointer;
  transition: background 0.2s ease-in-out;
  border: none;
  background: none;
  display: flex;
  align-items: center;
  justify-content: center;
}

${s} .modal-header button:hover {
  background: rgba(255, 255, 255, 0.04);
}
  
${s} .modal-header p {
  color: #fff;
  text-align: center;
  font-size: 24px;
  font-style: normal;
  font-weight: 600;
  line-height: normal;
  margin: 0;
}


${s} .modal-body {
  display: flex;
  padding: 16px;
  flex-direction: column;
  align-items: flex-start;
  text-align: center;
  gap: 8px;
  overflow: auto;

  border-radius: 24px;
  background: rgba(255, 255, 255, 0.08);
  width: 100%;
  flex: 1;
}

${s} .modal-body textarea {
  width: 100%;
  padding: 12px;
  border-radius: 12px;
  background: #0d0d0d;
  color: #fff;
  border: 1px solid rgba(255, 255, 255, 0.1);
  outline: none;
  font-size: 16px;
  transition: background 0.2s ease-in-out;
  font-family: monospace;
  font-size: 12px;
}

${s} .modal-body button {
  width: 100%;
  padding: 12px;
  border-radius: 12px;
  background: #fff;
  color: #000;
  border: none;
  cursor: pointer;
  font-size: 16px;
  transition: background 0.2s ease-in-out;
  margin-top: 16px;
}

${s} .footer {
  width: 100%;
  display: flex;
  align-items: center;
  justify-content: flex-start;
  padding: 16px 24px;
  color: #fff;
  gap: 12px;
}

${s} .modal-body p {
  color: rgba(255, 255, 255, 0.9);
  text-align: center;
  font-size: 16px;
  font-style: normal;
  font-weight: 500;
  line-height: normal;
  letter-spacing: -0.8px;
}

${s} .footer img {
  width: 24px;
  height: 24px;
  border-radius: 50%;
  object-fit: cover;
}

${s} .get-wallet-link {
  color: rgba(255, 255, 255, 0.5);
  text-align: center;
  font-size: 16px;
  font-style: normal;
  font-weight: 500;
  margin-left: auto;
  text-decoration: none;
  transition: color 0.2s ease-in-out;
  cursor: pointer;
}
  
${s} .get-wallet-link:hover {
  color: rgba(255, 255, 255, 1);
}


${s} .connect-item {
  display: flex;
  padding: 8px;
  align-items: center;
  gap: 12px;
  align-self: stretch;
  cursor: pointer;

  transition: background 0.2s ease-in-out;
  border-radius: 24px;
}

${s} .connect-item img {
  width: 48px;
  height: 48px;
  border-radius: 16px;
  object-fit: cover;
  flex-shrink: 0;
}

${s} .connect-item-info {
  display: flex;
  flex-direction: column;
  align-items: flex-start;
  gap: 4px;
  text-align: left;
  flex: 1;
  margin-top: -2px;
}

${s} .connect-item-info .wallet-address {
  color: rgba(255, 255, 255, 0.5);
  font-size: 14px;
  font-style: normal;
  font-weight: 400;
  line-height: normal;
}

${s} .connect-item:hover {
  background: rgba(255, 255, 255, 0.04);
}

${s} .connect-item img {
  width: 48px;
  height: 48px;
  border-radius: 16px;
  object-fit: cover;
}

${s} .connect-item p {
  color: rgba(255, 255, 255, 0.9);
  text-align: center;
  font-size: 18px;
  font-style: normal;
  font-weight: 600;
  line-height: normal;
  letter-spacing: -0.36px;
  margin: 0;
}
`;Se.css=hs});var ct=g(Ae=>{"use strict";Object.defineProperty(Ae,"__esModule",{value:!0});Ae.Popup=void 0;var ps=wn(),ws=xe(),fn=`n${Math.random().toString(36).substring(2,15)}`;if(typeof document<"u"){let s=document.createElement("style");s.textContent=(0,ps.css)(`.${fn}`),document.head.append(s)}var at=class{delegate;isClosed=!1;root=document.createElement("div");state={};constructor(e){this.delegate=e}get dom(){return(0,ws.html)``}disposables=[];addListener(e,t,n){let r=typeof e=="string"?this.root.querySelector(e):e;r&&(r.addEventListener(t,n),this.disposables.push(()=>r.removeEventListener(t,n)))}handlers(){this.disposables.forEach(n=>n()),this.disposables=[];let e=this.root.querySelector(".modal-container"),t=this.root.querySelector(".modal-content");t.onclick=n=>n.stopPropagation(),e.onclick=()=>{this.delegate.onReject(),this.destroy()}}update(e){this.state={...this.state,...e},this.root.innerHTML=this.dom.html,this.handlers()}create({show:e=!0}){this.root.className=`${fn} hot-connector-popup`,this.root.innerHTML=this.dom.html,document.body.append(this.root),this.handlers();let t=this.root.querySelector(".modal-container"),n=this.root.querySelector(".modal-content");n.style.transform="translateY(50px)",t.style.opacity="0",this.root.style.display="none",e&&setTimeout(()=>this.show(),10)}show(){let e=this.root.querySelector(".modal-container"),t=this.root.querySelector(".modal-content");t.style.transform="translateY(50px)",e.style.opacity="0",this.root.style.display="block",setTimeout(()=>{t.style.transform="translateY(0)",e.style.opacity="1"},100)}hide(){let e=this.root.querySelector(".modal-container"),t=this.root.querySelector(".modal-content");t.style.transform="translateY(50px)",e.style.opacity="0",setTimeout(()=>{this.root.style.display="none"},200)}destroy(){this.isClosed||(this.isClosed=!0,this.hide(),setTimeout(()=>{this.root.remove()},200))}};Ae.Popup=at});var gn=g(Ee=>{"use strict";Object.defineProperty(Ee,"__esModule",{value:!0});Ee.IframeWalletPopup=void 0;var lt=xe(),fs=ct(),dt=class extends fs.Popup{delegate;constructor(e){super(e),this.delegate=e}handlers(){super.handlers(),this.addListener("button","click",()=>this.delegate.onApprove())}create(){super.create({show:!1}),this.root.querySelector(".modal-body").appendChild(this.delegate.iframe),this.delegate.iframe.style.width="100%",this.delegate.iframe.style.height="720px",this.delegate.iframe.style.border="none"}get footer(){if(!this.delegate.footer)return"";let{icon:e,heading:t}=this.delegate.footer;return(0,lt.html)`
      <div class="footer">
        ${e?(0,lt.html)`<img src="${e}" alt="${t}" />`:""}
        <p>${t}</p>
      </div>
    `}get dom(){return(0,lt.html)`<div class="modal-container">
      <div class="modal-content">
        <div class="modal-body" style="padding: 0; overflow: auto;"></div>
        ${this.footer}
      </div>
    </div>`}};Ee.IframeWalletPopup=dt});var yn=g(Ce=>{"use strict";Object.defineProperty(Ce,"__esModule",{value:!0});Ce.NEAR_CONNECT_VERSION=void 0;Ce.NEAR_CONNECT_VERSION="0.11.4"});var mn=g(ut=>{"use strict";Object.defineProperty(ut,"__esModule",{value:!0});var gs=yn();async function ys(s){let e=await s.executor.getAllStorage(),t=s.executor.connector.providers,n=s.executor.manifest,r=s.id,o=s.code.replaceAll(".localStorage",".sandboxedLocalStorage").replaceAll("window.top","window.selector").replaceAll("window.open","window.selector.open"),i=s.cspNonce?` nonce="${s.cspNonce.replace(/[^A-Za-z0-9+/=]/g,"")}"`:"";return`
  <!DOCTYPE html>
  <html>
    <head>
      <meta charset="UTF-8">
      <meta name="viewport" content="width=device-width, initial-scale=1.0">
    </head>
    <body>
      <div id="root"></div>

      <style>
        :root {
          --background-color: rgb(40, 40, 40);
          --text-color: rgb(255, 255, 255);
          --border-color: rgb(209, 209, 209);
        }

        * {
          font-family: system-ui, Avenir, Helvetica, Arial, sans-serif
        }

        body, html {
          box-sizing: border-box;
          margin: 0;
          padding: 0;
          background-color: var(--background-color);
          color: var(--text-color);
        }

        #root {
          display: none;
          flex-direction: column;
          align-items: center;
          justify-content: center;
          height: 100vh;
          width: 100vw;
          background: radial-gradient(circle at center, #2c2c2c 0%, #1a1a1a 100%);
          text-align: center;
        }

        #root * {
          box-sizing: border-box;
          font-family: Inter, system-ui, Avenir, Helvetica, Arial, sans-serif;
          line-height: 1.5;
          color-scheme: light dark;
          color: rgb(255, 255, 255);
          font-synthesis: none;
          text-rendering: optimizeLegibility;
          -webkit-font-smoothing: antialiased;
        }

        .prompt-container img {
          width: 100px;
          height: 100px;
          object-fit: cover;
          border-radius: 12px;
        }

        .prompt-container h1 {
          margin: 0;
          font-size: 24px;
          font-weight: 600;
          margin-top: 16px;
        }

        .prompt-container p {
          margin: 0;
          font-size: 16px;
          font-weight: 500;
          color: rgb(209, 209, 209);
        }

        .prompt-container button {
          background-color: #131313;
          border: none;
          border-radius: 12px;
          padding: 12px 24px;
          cursor: pointer;
          transition: border-color 0.25s;
          color: #fff;
          outline: none;
          font-size: 14px;
          font-weight: 500;
          font-family: inherit;
          margin-top: 16px;
        }
      </style>


      <script${i}>
      window.sandboxedLocalStorage = (() => {
        let storage = ${JSON.stringify(e)}

        return {
          setItem: function(key, value) {
            window.selector.storage.set(key, value)
            storage[key] = value || '';
          },
          getItem: function(key) {
            return key in storage ? storage[key] : null;
          },
          removeItem: function(key) {
            window.selector.storage.remove(key)
            delete storage[key];
          },
          get length() {
            return Object.keys(storage).length;
          },
          key: function(i) {
            const keys = Object.keys(storage);
            return keys[i] || null;
          },
        };
      })();

      const showPrompt = async (args) => {
        const root = document.getElementById("root");   
        root.style.display = "flex";
        root.innerHTML = \`
          <div class="prompt-container">
            <img src="${n.icon}" />
            <h1>${n.name}</h1>
            <p>\${args.title}</p>
            <button>\${args.button}</button>
          </div>
        \`;

        return new Promise((resolve) => {
          root.querySelector("button")?.addEventListener("click", () => {
            root.innerHTML = "";
            resolve(true);
          });
        });
      }

      class ProxyWindow {
        constructor(url, features) {
          this.closed = false;
          this.windowIdPromise = window.selector.call("open", { url, features });

          window.addEventListener("message", async (event) => {            
            if (event.data.origin !== "${r}") return;
            if (!event.data.method?.startsWith("proxy-window:")) return;
            const method = event.data.method.replace("proxy-window:", "");
            if (method === "closed" && event.data.windowId === await this.id()) this.closed = true;
          });
        } 

        async id() {
          return await this.windowIdPromise;
        }

        async focus() {
          await window.selector.call("panel.focus", { windowId: await this.id() });
        }

        async postMessage(data) {
          window.selector.call("panel.postMessage", { windowId: await this.id(), data });
        }

        async close() {
          await window.selector.call("panel.close", { windowId: await this.id() });
        }
      }

      window.selector = {
        wallet: null,
        location: "${window.location.href}",
        nearConnectVersion: "${gs.NEAR_CONNECT_VERSION}",
        
        outerHeight: ${window.outerHeight},
        screenY: ${window.screenY},
        outerWidth: ${window.outerWidth},
        screenX: ${window.screenX},

        providers: {
          mainnet: ${JSON.stringify(t.mainnet)},
          testnet: ${JSON.stringify(t.testnet)},
        },

        uuid() {
          return "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".replace(/[xy]/g, function (c) {
            const r = (Math.random() * 16) | 0;
            const v = c === "x" ? r : (r & 0x3) | 0x8;
            return v.toString(16);
          });
        },

        walletConnect: {
          connect(params) {
            return window.selector.call("walletConnect.connect", params);
          },
          disconnect(params) {
            return window.selector.call("walletConnect.disconnect", params);
          },
          request(params) {
            return window.selector.call("walletConnect.request", params);
          },
          getProjectId() {
            return window.selector.call("walletConnect.getProjectId", {});
          },
          getSession() {
            return window.selector.call("walletConnect.getSession", {});
          },
        },
      
        async ready(wallet) {
          wallet.manifest = ${JSON.stringify(n)};
          window.parent.postMessage({ method: "wallet-ready", origin: "${r}" }, "*");
          window.selector.wallet = wallet;
        },

        async call(method, params) {
          const id = window.selector.uuid();
          window.parent.postMessage({ method, params, id, origin: "${r}" }, "*");

          return new Promise((resolve, reject) => {
            const handler = (event) => {
              if (event.data.id !== id || event.data.origin !== "${r}") return;
              window.removeEventListener("message", handler);

              if (event.data.status === "failed") reject(event.data.result);
              else resolve(event.data.result);
            };

            window.addEventListener("message", handler);
          });
        },

        panelClosed(windowId) {
          window.parent.postMessage({ 
            method: "panel.closed", 
            origin: "${r}", 
            result: { windowId } 
          }, "*");
        },

        open(url, _, params) {
          return new ProxyWindow(url, params)
        },

        external(entity, key, ...args) {
          return window.selector.call("external", { entity, key, args: args || [] });
        },

        openNativeApp(url) {
          return window.selector.call("open.nativeApp", { url });
        },

        ui: {
          async whenApprove(options) {
            window.selector.ui.showIframe();
            await showPrompt(options);
            window.selector.ui.hideIframe();
          },

          async showIframe() {
            return await window.selector.call("ui.showIframe");
          },

          async hideIframe() {
            return await window.selector.call("ui.hideIframe");
          },
        },

        storage: {
          async set(key, value) {
            await window.selector.call("storage.set", { key, value });
          },
      
          async get(key) {
            return await window.selector.call("storage.get", { key });
          },
      
          async remove(key) {
            await window.selector.call("storage.remove", { key });
          },

          async keys() {
            return await window.selector.call("storage.keys", {});
          },
        },
      };

      window.addEventListener("message", async (event) => {
        if (event.data.origin !== "${r}") return;
        if (!event.data.method?.startsWith("wallet:")) return;
      
        const wallet = window.selector.wallet;
        const method = event.data.method.replace("wallet:", "");
        const payload = { id: event.data.id, origin: "${r}", method };
      
        if (wallet == null || typeof wallet[method] !== "function") {
          const data = { ...payload, status: "failed", result: "Method not found" };
          window.parent.postMessage(data, "*");
          return;
        }
        
        try {
          const result = await wallet[method](event.data.params);
          window.parent.postMessage({ ...payload, status: "success", result }, "*");
        } catch (error) {
          const data = { ...payload, status: "failed", result: error };
          window.parent.postMessage(data, "*");
        }
      });
      <\/script>

      <script type="module"${i}>${o}<\/script>
    </body>
  </html>
    `}ut.default=ys});var bn=g(X=>{"use strict";var ms=X&&X.__importDefault||function(s){return s&&s.__esModule?s:{default:s}};Object.defineProperty(X,"__esModule",{value:!0});var bs=ot(),ks=ye(),vs=gn(),xs=ms(mn()),ht=class{executor;origin;iframe=document.createElement("iframe");events=new bs.EventEmitter;popup;handler;readyPromiseResolve;readyPromise=new Promise(e=>{this.readyPromiseResolve=e});constructor(e,t,n,r){this.executor=e,this.origin=(0,ks.uuid4)(),this.handler=i=>{i.data.origin===this.origin&&(i.data.method==="wallet-ready"&&this.readyPromiseResolve(),n(this,i))},window.addEventListener("message",this.handler);let o=[];this.executor.checkPermissions("usb")&&o.push("usb *;"),this.executor.checkPermissions("hid")&&o.push("hid *;"),this.executor.checkPermissions("clipboardRead")&&o.push("clipboard-read;"),this.executor.checkPermissions("clipboardWrite")&&o.push("clipboard-write;"),this.executor.checkPermissions("bluetooth")&&o.push("bluetooth *;"),this.iframe.allow=o.join(" "),this.iframe.setAttribute("sandbox","allow-scripts"),(0,xs.default)({id:this.origin,executor:this.executor,code:t,cspNonce:r}).then(i=>{this.executor.connector.logger?.log("Iframe code injected"),this.iframe.srcdoc=i}),this.popup=new vs.IframeWalletPopup({footer:this.executor.connector.footerBranding,iframe:this.iframe,onApprove:()=>{},onReject:()=>{window.removeEventListener("message",this.handler),this.events.emit("close",{}),this.popup.destroy()}}),this.popup.create()}on(e,t){this.events.on(e,t)}show(){this.popup.show()}hide(){this.popup.hide()}postMessage(e){if(!this.iframe.contentWindow)throw new Error("Iframe not loaded");this.iframe.contentWindow.postMessage({...e,origin:this.origin},"*")}dispose(){window.removeEventListener("message",this.handler),this.popup.destroy()}};X.default=ht});var kn=g(Q=>{"use strict";var Ss=Q&&Q.__importDefault||function(s){return s&&s.__esModule?s:{default:s}};Object.defineProperty(Q,"__esModule",{value:!0});var R=st(),pt=ye(),As=Ss(bn()),Es=(0,pt.uuid4)(),wt=class{connector;manifest;activePanels={};storageSpace;constructor(e,t){this.connector=e,this.manifest=t,this.storageSpace=t.id}checkPermissions(e,t){if(e==="walletConnect")return!!this.manifest.permissions.walletConnect;if(e==="external"){let n=this.manifest.permissions.external;return!n||!t?.entity?!1:n.includes(t.entity)}if(e==="allowsOpen"){let n=(0,R.parseUrl)(t?.url||""),r=this.manifest.permissions.allowsOpen;return!n||!r||!Array.isArray(r)||r.length===0?!1:r.some(i=>{let a=(0,R.parseUrl)(i);return!(!a||n.protocol!==a.protocol||a.hostname&&n.hostname!==a.hostname||a.pathname&&a.pathname!=="/"&&n.pathname!==a.pathname)})}return this.manifest.permissions[e]}assertPermissions(e,t,n){if(!this.checkPermissions(t,n.data.params))throw e.postMessage({...n.data,status:"failed",result:"Permission denied"}),new Error("Permission denied")}_onMessage=async(e,t)=>{let n=o=>{e.postMessage({...t.data,status:"success",result:o})},r=o=>{e.postMessage({...t.data,status:"failed",result:o})};if(t.data.method==="ui.showIframe"){e.show(),n(null);return}if(t.data.method==="ui.hideIframe"){e.hide(),n(null);return}if(t.data.method==="storage.set"){this.assertPermissions(e,"storage",t),localStorage.setItem(`${this.storageSpace}:${t.data.params.key}`,t.data.params.value),n(null);return}if(t.data.method==="storage.get"){this.assertPermissions(e,"storage",t);let o=localStorage.getItem(`${this.storageSpace}:${t.data.params.key}`);n(o);return}if(t.data.method==="storage.keys"){this.assertPermissions(e,"storage",t);let o=Object.keys(localStorage).filter(i=>i.startsWith(`${this.storageSpace}:`));n(o);return}if(t.data.method==="storage.remove"){this.assertPermissions(e,"storage",t),localStorage.removeItem(`${this.storageSpace}:${t.data.params.key}`),n(null);return}if(t.data.method==="panel.focus"){let o=this.activePanels[t.data.params.windowId];o&&o.focus(),n(null);return}if(t.data.method==="panel.postMessage"){let o=this.activePanels[t.data.params.windowId];o&&o.postMessage(t.data.params.data,"*"),n(null);return}if(t.data.method==="panel.close"){let o=this.activePanels[t.data.params.windowId];o&&o.close(),delete this.activePanels[t.data.params.windowId],n(null);return}if(t.data.method==="walletConnect.connect"){this.assertPermissions(e,"walletConnect",t);try{if(!this.connector.walletConnect)throw new Error("WalletConnect is not configured");let i=await(await this.connector.walletConnect).connect(t.data.params);i.approval(),n({uri:i.uri})}catch(o){r(o)}return}if(t.data.method==="walletConnect.getProjectId"){if(!this.connector.walletConnect)throw new Error("WalletConnect is not configured");this.assertPermissions(e,"walletConnect",t);let o=await this.connector.walletConnect;n(o.core.projectId);return}if(t.data.method==="walletConnect.disconnect"){this.assertPermissions(e,"walletConnect",t);try{if(!this.connector.walletConnect)throw new Error("WalletConnect is not configured");let i=await(await this.connector.walletConnect).disconnect(t.data.params);n(i)}catch(o){r(o)}return}if(t.data.method==="walletConnect.getSession"){this.assertPermissions(e,"walletConnect",t);try{if(!this.connector.walletConnect)throw new Error("WalletConnect is not configured");let o=await this.connector.walletConnect,i=o.session.keys[o.session.keys.length-1],a=i?o.session.get(i):null;n(a?{topic:a.topic,namespaces:a.namespaces}:null)}catch(o){r(o)}return}if(t.data.method==="walletConnect.request"){this.assertPermissions(e,"walletConnect",t);try{if(!this.connector.walletConnect)throw new Error("WalletConnect is not configured");let i=await(await this.connector.walletConnect).request(t.data.params);n(i)}catch(o){r(o)}return}if(t.data.method==="external"){this.assertPermissions(e,"external",t);try{let{entity:o,key:i,args:a}=t.data.params,l=o.split(".").reduce((u,p)=>u[p],window);o==="nightly.near"&&i==="signTransaction"&&(a[0].encode=()=>a[0]);let d=typeof l[i]=="function"?await l[i](...a||[]):l[i];n(d)}catch(o){r(o)}return}if(t.data.method==="open"){this.assertPermissions(e,"allowsOpen",t);let o=typeof window<"u"?window?.Telegram?.WebApp:null;if(o&&t.data.params.url.startsWith("https://t.me")){o.openTelegramLink(t.data.params.url);return}let i=window.open(t.data.params.url,"_blank",t.data.params.features),a=i?(0,pt.uuid4)():null,l=d=>{let u=(0,R.parseUrl)(t.data.params.url);u&&u.origin===d.origin&&e.postMessage(d.data)};if(n(a),window.addEventListener("message",l),i&&a){this.activePanels[a]=i;let d=setInterval(()=>{if(!i?.closed)return;window.removeEventListener("message",l);let u={method:"proxy-window:closed",windowId:a};delete this.activePanels[a],clearInterval(d);try{e.postMessage(u)}catch{}},500)}return}if(t.data.method==="open.nativeApp"){this.assertPermissions(e,"allowsOpen",t);let o=(0,R.parseUrl)(t.data.params.url);if(!o||["https","http","javascript:","file:","data:","blob:","about:"].includes(o.protocol))throw r("Invalid URL"),new Error("[open.nativeApp] Invalid URL");let a=document.createElement("iframe");a.src=t.data.params.url,a.style.display="none",document.body.appendChild(a),e.postMessage({...t.data,status:"success",result:null});return}};actualCode=null;async checkNewVersion(e,t){if(this.actualCode)return this.connector.logger?.log("New version of code already checked"),this.actualCode;let n=(0,R.parseUrl)(e.manifest.executor);if(n||(n=(0,R.parseUrl)(location.origin+e.manifest.executor)),!n)throw new Error("Invalid executor URL");n.searchParams.set("nonce",Es);let r=await fetch(n.toString()).then(o=>o.text());return this.connector.logger?.log("New version of code fetched"),this.actualCode=r,r===t?(this.connector.logger?.log("New version of code is the same as the current version"),this.actualCode):(await this.connector.db.setItem(`${this.manifest.id}:${this.manifest.version}`,r),this.connector.logger?.log("New version of code saved to cache"),r)}async loadCode(){let e=await this.connector.db.getItem(`${this.manifest.id}:${this.manifest.version}`).catch(()=>null);this.connector.logger?.log("Code loaded from cache",e!==null);let t=this.checkNewVersion(this,e);return e||await t}async call(e,t){this.connector.logger?.log("Add to queue",e,t),this.connector.logger?.log("Calling method",e,t);let n=await this.loadCode();this.connector.logger?.log("Code loaded, preparing");let r=new As.default(this,n,this._onMessage,this.connector.cspNonce);this.connector.logger?.log("Code loaded, iframe initialized"),await r.readyPromise,this.connector.logger?.log("Iframe ready");let o=(0,pt.uuid4)();return new Promise((i,a)=>{try{let l=d=>{d.data.id!==o||d.data.origin!==r.origin||(r.dispose(),window.removeEventListener("message",l),this.connector.logger?.log("postMessage",{result:d.data,request:{method:e,params:t}}),d.data.status==="failed"?a(d.data.result):i(d.data.result))};window.addEventListener("message",l),r.postMessage({method:e,params:t,id:o}),r.on("close",()=>a(new Error("Wallet closed")))}catch(l){this.connector.logger?.log("Iframe error",l),a(l)}})}async getAllStorage(){let e=Object.keys(localStorage).filter(n=>n.startsWith(`${this.storageSpace}:`)),t={};for(let n of e)t[n.replace(`${this.storageSpace}:`,"")]=localStorage.getItem(n);return t}async clearStorage(){let e=Object.keys(localStorage).filter(t=>t.startsWith(`${this.storageSpace}:`));for(let t of e)localStorage.removeItem(t)}};Q.default=wt});var gt=g(O=>{"use strict";var Cs=O&&O.__importDefault||function(s){return s&&s.__esModule?s:{default:s}};Object.defineProperty(O,"__esModule",{value:!0});O.SandboxWallet=void 0;var ft=Z(),Ps=Cs(kn()),Pe=class{connector;manifest;executor;constructor(e,t){this.connector=e,this.manifest=t,this.executor=new Ps.default(e,t)}async signIn(e){return this.executor.call("wallet:signIn",{network:e?.network??this.connector.network,addFunctionCallKey:e?.addFunctionCallKey})}async signInAndSignMessage(e){return this.executor.call("wallet:signInAndSignMessage",{network:e?.network??this.connector.network,addFunctionCallKey:e?.addFunctionCallKey,messageParams:e.messageParams})}async signOut(e){let t={...e,network:e?.network??this.connector.network};await this.executor.call("wallet:signOut",t),await this.executor.clearStorage()}async getAccounts(e){let t={...e,network:e?.network??this.connector.network};return this.executor.call("wallet:getAccounts",t)}async signAndSendTransaction(e){let t=(0,ft.nearActionsToConnectorActions)(e.actions),n={...e,actions:t,network:e.network??this.connector.network};return this.executor.call("wallet:signAndSendTransaction",n)}async signAndSendTransactions(e){let t=e.transactions.map(r=>({actions:(0,ft.nearActionsToConnectorActions)(r.actions),receiverId:r.receiverId})),n={...e,transactions:t,network:e.network??this.connector.network};return this.executor.call("wallet:signAndSendTransactions",n)}async signMessage(e){let t={...e,network:e.network??this.connector.network};return this.executor.call("wallet:signMessage",t)}async signDelegateActions(e){let t={...e,delegateActions:e.delegateActions.map(n=>({...n,actions:(0,ft.nearActionsToConnectorActions)(n.actions)})),network:e.network??this.connector.network};return this.executor.call("wallet:signDelegateActions",t)}};O.SandboxWallet=Pe;O.default=Pe});var bt=g(_e=>{"use strict";Object.defineProperty(_e,"__esModule",{value:!0});_e.InjectedWallet=void 0;var yt=Z(),mt=class{connector;wallet;constructor(e,t){this.connector=e,this.wallet=t}get manifest(){return this.wallet.manifest}async signIn({addFunctionCallKey:e,network:t}){return this.wallet.signIn({network:t??this.connector.network,addFunctionCallKey:e})}async signInAndSignMessage(e){return this.wallet.signInAndSignMessage({network:e?.network??this.connector.network,addFunctionCallKey:e.addFunctionCallKey,messageParams:e.messageParams})}async signOut(e){await this.wallet.signOut({network:e?.network??this.connector.network})}async getAccounts(e){return this.wallet.getAccounts({network:e?.network??this.connector.network})}async signAndSendTransaction(e){let t=(0,yt.nearActionsToConnectorActions)(e.actions),n=e.network??this.connector.network,r=await this.wallet.signAndSendTransaction({...e,actions:t,network:n});if(!r)throw new Error("No result from wallet");return Array.isArray(r.transactions)?r.transactions[0]:r}async signAndSendTransactions(e){let t=e.network??this.connector.network,n=e.transactions.map(o=>({actions:(0,yt.nearActionsToConnectorActions)(o.actions),receiverId:o.receiverId})),r=await this.wallet.signAndSendTransactions({...e,transactions:n,network:t});if(!r)throw new Error("No result from wallet");return Array.isArray(r.transactions)?r.transactions:r}async signMessage(e){return this.wallet.signMessage({...e,network:e.network??this.connector.network})}async signDelegateActions(e){return this.wallet.signDelegateActions({...e,delegateActions:e.delegateActions.map(t=>({...t,actions:(0,yt.nearActionsToConnectorActions)(t.actions)})),network:e.network??this.connector.network})}};_e.InjectedWallet=mt});var vn=g(Te=>{"use strict";Object.defineProperty(Te,"__esModule",{value:!0});Te.NearWalletsPopup=void 0;var q=xe(),_s=st(),Ts=ct(),$s={id:"custom-wallet",name:"Custom Wallet",icon:"https://www.mynearwallet.com/images/webclip.png",description:"Custom wallet for NEAR.",website:"",version:"1.0.0",executor:"your-executor-url.js",type:"sandbox",platform:{},features:{signMessage:!0,signInWithoutAddKey:!0,signInAndSignMessage:!0,signAndSendTransaction:!0,signAndSendTransactions:!0,signDelegateActions:!0},permissions:{storage:!0,allowsOpen:[]}},kt=class extends Ts.Popup{delegate;constructor(e){super(e),this.delegate=e,this.update({wallets:e.wallets,showSettings:!1})}handlers(){super.handlers(),this.addListener(".settings-button","click",()=>this.update({showSettings:!0})),this.addListener(".back-button","click",()=>this.update({showSettings:!1})),this.root.querySelectorAll(".connect-item").forEach(e=>{e instanceof HTMLDivElement&&this.addListener(e,"click",()=>this.delegate.onSelect(e.dataset.type))}),this.root.querySelectorAll(".remove-wallet-button").forEach(e=>{e instanceof SVGSVGElement&&this.addListener(e,"click",async t=>{t.stopPropagation(),await this.delegate.onRemoveDebugManifest(e.dataset.type);let n=this.state.wallets.filter(r=>r.id!==e.dataset.type);this.update({wallets:n})})}),this.addListener(".add-debug-manifest-button","click",async()=>{try{let e=this.root.querySelector("#debug-manifest-input")?.value??"",t=await this.delegate.onAddDebugManifest(e);this.update({showSettings:!1,wallets:[t,...this.state.wallets]})}catch(e){alert(`Something went wrong: ${e}`)}})}create(){super.create({show:!0})}walletDom(e){let t=(0,q.html)`
      <svg
        class="remove-wallet-button"
        data-type="${e.id}"
        width="24"
        height="24"
        viewBox="0 0 24 24"
        fill="none"
        xmlns="http://www.w3.org/2000/svg"
        style="margin-right: 4px;"
      >
        <path d="M18 6L6 18" stroke="rgba(255,255,255,0.5)" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" />
        <path d="M6 6L18 18" stroke="rgba(255,255,255,0.5)" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" />
      </svg>
    `;return(0,q.html)`
      <div class="connect-item" data-type="${e.id}">
        <img style="background: #333" src="${e.icon}" alt="${e.name}" />
        <div class="connect-item-info">
          <span>${e.name}</span>
          <span class="wallet-address">${(0,_s.parseUrl)(e.website)?.hostname}</span>
        </div>
        ${e.debug?t:""}
      </div>
    `}get footer(){if(!this.delegate.footer)return"";let{icon:e,heading:t,link:n,linkText:r}=this.delegate.footer;return(0,q.html)`
      <div class="footer">
        ${e?(0,q.html)`<img src="${e}" alt="${t}" />`:""}
        <p>${t}</p>
        <a class="get-wallet-link" href="${n}" target="_blank">${r}</a>
      </div>
    `}get dom(){return this.state.showSettings?(0,q.html)`
        <div class="modal-container">
          <div class="modal-content">
            <div class="modal-header">
              <button class="back-button" style="left: 16px; right: unset;">
                <svg width="24" height="24" viewBox="0 0 24 24" fill="none" xmlns="http://www.w3.org/2000/svg">
                  <path d="M15 18L9 12L15 6" stroke="rgba(255,255,255,0.5)" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" />
                </svg>
              </button>
              <p>Settings</p>
            </div>

            <div class="modal-body">
              <p style="text-align: left;">
                You can add your wallet to dapp for debug,
                <a href="https://github.com/azbang/hot-connector" target="_blank">read the documentation.</a> Paste your manifest and click "Add".
              </p>

              <textarea style="width: 100%;" id="debug-manifest-input" rows="10">${JSON.stringify($s,null,2)}</textarea>
              <button class="add-debug-manifest-button">Add</button>
            </div>

            ${this.footer}
          </div>
        </div>
      `:(0,q.html)`<div class="modal-container">
      <div class="modal-content">
        <div class="modal-header">
          <p>Select wallet</p>
          <button class="settings-button">
            <svg width="24" height="24" viewBox="0 0 24 24" fill="none" xmlns="http://www.w3.org/2000/svg">
              <circle cx="12" cy="12" r="2" fill="rgba(255,255,255,0.5)" />
              <circle cx="19" cy="12" r="2" fill="rgba(255,255,255,0.5)" />
              <circle cx="5" cy="12" r="2" fill="rgba(255,255,255,0.5)" />
            </svg>
          </button>
        </div>

        <div class="modal-body">${this.state.wallets.map(e=>this.walletDom(e))}</div>

        ${this.footer}
      </div>
    </div>`}};Te.NearWalletsPopup=kt});var xn=g(xt=>{"use strict";Object.defineProperty(xt,"__esModule",{value:!0});var vt=class{dbName;storeName;version;constructor(e,t){this.dbName=e,this.storeName=t,this.version=1}getDb(){return new Promise((e,t)=>{if(typeof window>"u"||typeof indexedDB>"u"){t(new Error("IndexedDB is not available (SSR environment)"));return}let n=indexedDB.open(this.dbName,this.version);n.onerror=r=>{console.error("Error opening database:",r.target.error),t(new Error("Error opening database"))},n.onsuccess=r=>{e(n.result)},n.onupgradeneeded=r=>{let o=n.result;o.objectStoreNames.contains(this.storeName)||o.createObjectStore(this.storeName)}})}async getItem(e){let t=await this.getDb();if(typeof e=="number"&&(e=e.toString()),typeof e!="string")throw new Error("Key must be a string");return new Promise((n,r)=>{if(!this.storeName){r(new Error("Store name not set"));return}let o=t.transaction(this.storeName,"readonly");o.onerror=l=>r(o.error);let a=o.objectStore(this.storeName).get(e);a.onerror=l=>r(a.error),a.onsuccess=()=>{n(a.result),t.close()}})}async setItem(e,t){let n=await this.getDb();if(typeof e=="number"&&(e=e.toString()),typeof e!="string")throw new Error("Key must be a string");return new Promise((r,o)=>{if(!this.storeName){o(new Error("Store name not set"));return}let i=n.transaction(this.storeName,"readwrite");i.onerror=d=>o(i.error);let l=i.objectStore(this.storeName).put(t,e);l.onerror=d=>o(l.error),l.onsuccess=()=>{n.close(),r()}})}async removeItem(e){let t=await this.getDb();if(typeof e=="number"&&(e=e.toString()),typeof e!="string")throw new Error("Key must be a string");return new Promise((n,r)=>{if(!this.storeName){r(new Error("Store name not set"));return}let o=t.transaction(this.storeName,"readwrite");o.onerror=l=>r(o.error);let a=o.objectStore(this.storeName).delete(e);a.onerror=l=>r(a.error),a.onsuccess=()=>{t.close(),n()}})}async keys(){let e=await this.getDb();return new Promise((t,n)=>{if(!this.storeName){n(new Error("Store name not set"));return}let r=e.transaction(this.storeName,"readonly");r.onerror=a=>n(r.error);let i=r.objectStore(this.storeName).getAllKeys();i.onerror=a=>n(i.error),i.onsuccess=()=>{t(i.result),e.close()}})}async count(){let e=await this.getDb();return new Promise((t,n)=>{if(!this.storeName){n(new Error("Store name not set"));return}let r=e.transaction(this.storeName,"readonly");r.onerror=a=>n(r.error);let i=r.objectStore(this.storeName).count();i.onerror=a=>n(i.error),i.onsuccess=()=>{t(i.result),e.close()}})}async length(){return this.count()}async clear(){let e=await this.getDb();return new Promise((t,n)=>{if(!this.storeName){n(new Error("Store name not set"));return}let r=e.transaction(this.storeName,"readwrite");r.onerror=a=>n(r.error);let i=r.objectStore(this.storeName).clear();i.onerror=a=>n(i.error),i.onsuccess=()=>{e.close(),t()}})}};xt.default=vt});var An=g(H=>{"use strict";var Is=H&&H.__importDefault||function(s){return s&&s.__esModule?s:{default:s}};Object.defineProperty(H,"__esModule",{value:!0});H.NearConnector=void 0;var Bs=ot(),Ms=vn(),Ns=Xe(),Ks=Is(xn()),Ds=nt(),js=bt(),Sn=gt(),Ls=["https://raw.githubusercontent.com/hot-dao/near-selector/refs/heads/main/repository/manifest.json","https://cdn.jsdelivr.net/gh/azbang/hot-connector/repository/manifest.json"];function Os(s){return e=>Object.entries(s).length===0?!0:Object.entries(s).filter(([t,n])=>n===!0).every(([t])=>e.manifest.features?.[t]===!0)}var St=class{storage;events;db;logger;wallets=[];manifest={wallets:[],version:"1.0.0"};features={};network="mainnet";providers={mainnet:[],testnet:[]};walletConnect;footerBranding;excludedWallets=[];autoConnect;cspNonce;whenManifestLoaded;constructor(e){this.db=new Ks.default("hot-connector","wallets"),this.storage=e?.storage??new Ns.LocalStorage,this.events=e?.events??new Bs.EventEmitter,this.logger=e?.logger,this.cspNonce=e?.cspNonce,this.network=e?.network??"mainnet",this.walletConnect=e?.walletConnect,this.autoConnect=e?.autoConnect??!0,this.providers=e?.providers??{mainnet:[],testnet:[]},this.excludedWallets=e?.excludedWallets??[],this.features=e?.features??{},e?.footerBranding!==void 0?this.footerBranding=e?.footerBranding:this.footerBranding={icon:"data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%20fill%3D%22none%22%20viewBox%3D%220%200%20512%20512%22%20class%3D%22size-7%22%3E%3Crect%20width%3D%22512%22%20height%3D%22512%22%20fill%3D%22%2300ec97%22%20rx%3D%22110%22%2F%3E%3Cpath%20fill%3D%22%23000%22%20d%3D%22M373.89%20106.199a31.95%2031.95%200%200%200-27.213%2015.207l-62.631%2092.979a6.67%206.67%200%200%200-.989%205.001%206.66%206.66%200%200%200%202.837%204.235%206.67%206.67%200%200%200%208.032-.494l61.643-53.47c1.02-.924%202.599-.827%203.523.193.419.473.644%201.074.644%201.697v167.402a2.49%202.49%200%200%201-2.502%202.491%202.48%202.48%200%200%201-1.912-.891L168.976%20117.497a31.93%2031.93%200%200%200-24.356-11.298h-6.508c-17.623%200-31.917%2014.294-31.917%2031.917v235.767c0%2017.623%2014.294%2031.917%2031.917%2031.917a31.94%2031.94%200%200%200%2027.213-15.206l62.631-92.98a6.66%206.66%200%200%200-1.847-9.236%206.67%206.67%200%200%200-8.033.494l-61.643%2053.471c-1.02.923-2.599.826-3.522-.194a2.5%202.5%200%200%201-.634-1.697V173.008a2.49%202.49%200%200%201%202.502-2.492c.731%200%201.439.322%201.912.891l186.313%20223.096a31.95%2031.95%200%200%200%2024.357%2011.297h6.508c17.623%200%2031.927-14.272%2031.938-31.895V138.116c0-17.623-14.294-31.917-31.917-31.917%22%2F%3E%3C%2Fsvg%3E",heading:"NEAR Connector",link:"https://wallet.near.org",linkText:"Don't have a wallet?"},this.whenManifestLoaded=new Promise(async t=>{e?.manifest==null||typeof e.manifest=="string"?this.manifest=await this._loadManifest(e?.manifest).catch(()=>({wallets:[],version:"1.0.0"})):this.manifest=e?.manifest??{wallets:[],version:"1.0.0"};let n=new Set(this.excludedWallets);n.delete("hot-wallet"),this.manifest.wallets=this.manifest.wallets.filter(r=>!(r.permissions.walletConnect&&!this.walletConnect||n.has(r.id))),await new Promise(r=>setTimeout(r,100)),t()}),typeof window<"u"&&(window.addEventListener("near-wallet-injected",this._handleNearWalletInjected),window.dispatchEvent(new Event("near-selector-ready")),window.addEventListener("message",async t=>{t.data.type==="near-wallet-injected"&&(await this.whenManifestLoaded.catch(()=>{}),this.wallets=this.wallets.filter(n=>n.manifest.id!==t.data.manifest.id),this.wallets.unshift(new Ds.ParentFrameWallet(this,t.data.manifest)),this.events.emit("selector:walletsChanged",{}),this.autoConnect&&this.connect({walletId:t.data.manifest.id}))})),this.whenManifestLoaded.then(()=>{typeof window<"u"&&window.parent.postMessage({type:"near-selector-ready"},"*"),this.manifest.wallets.forEach(t=>this.registerWallet(t)),this.storage.get("debug-wallets").then(t=>{JSON.parse(t??"[]").forEach(r=>this.registerDebugWallet(r))})})}get availableWallets(){return this.wallets.filter(t=>Object.entries(this.features).every(([n,r])=>!(r&&!t.manifest.features?.[n]))).filter(t=>!(this.network==="testnet"&&!t.manifest.features?.testnet))}_handleNearWalletInjected=e=>{this.wallets=this.wallets.filter(t=>t.manifest.id!==e.detail.manifest.id),this.wallets.unshift(new js.InjectedWallet(this,e.detail)),this.events.emit("selector:walletsChanged",{})};async _loadManifest(e){let t=e?[e]:Ls;for(let n of t){let r=await fetch(n).catch(()=>null);if(!(!r||!r.ok))return await r.json()}throw new Error("Failed to load manifest")}async switchNetwork(e,t){this.network!==e&&(await this.disconnect().catch(()=>{}),this.network=e,await this.connect(t))}async registerWallet(e){if(e.type!=="sandbox")throw new Error("Only sandbox wallets are supported");this.wallets.find(t=>t.manifest.id===e.id)||(this.wallets.push(new Sn.SandboxWallet(this,e)),this.events.emit("selector:walletsChanged",{}))}async registerDebugWallet(e){let t=typeof e=="string"?JSON.parse(e):e;if(t.type!=="sandbox")throw new Error("Only sandbox wallets type are supported");if(!t.id)throw new Error("Manifest must have an id");if(!t.name)throw new Error("Manifest must have a name");if(!t.icon)throw new Error("Manifest must have an icon");if(!t.website)throw new Error("Manifest must have a website");if(!t.version)throw new Error("Manifest must have a version");if(!t.executor)throw new Error("Manifest must have an executor");if(!t.features)throw new Error("Manifest must have features");if(!t.permissions)throw new Error("Manifest must have permissions");if(this.wallets.find(r=>r.manifest.id===t.id))throw new Error("Wallet already registered");t.debug=!0,this.wallets.unshift(new Sn.SandboxWallet(this,t)),this.events.emit("selector:walletsChanged",{});let n=this.wallets.filter(r=>r.manifest.debug).map(r=>r.manifest);return this.storage.set("debug-wallets",JSON.stringify(n)),t}async removeDebugWallet(e){this.wallets=this.wallets.filter(n=>n.manifest.id!==e);let t=this.wallets.filter(n=>n.manifest.debug).map(n=>n.manifest);this.storage.set("debug-wallets",JSON.stringify(t)),this.events.emit("selector:walletsChanged",{})}async selectWallet({features:e={}}={}){return await this.whenManifestLoaded.catch(()=>{}),new Promise((t,n)=>{let r=new Ms.NearWalletsPopup({footer:this.footerBranding,wallets:this.availableWallets.filter(Os(e)).map(o=>o.manifest),onRemoveDebugManifest:async o=>this.removeDebugWallet(o),onAddDebugManifest:async o=>this.registerDebugWallet(o),onReject:()=>(n(new Error("User rejected")),r.destroy()),onSelect:o=>(t(o),r.destroy())});r.create()})}async connect(e={}){let t=e.walletId,n=e.signMessageParams;await this.whenManifestLoaded.catch(()=>{}),t||(t=await this.selectWallet({features:{signInAndSignMessage:e.signMessageParams!=null?!0:void 0,signInWithFunctionCallKey:e.addFunctionCallKey!=null?!0:void 0}}));try{let r=await this.wallet(t);this.logger?.log("Wallet available to connect",r),await this.storage.set("selected-wallet",t),this.logger?.log(`Set preferred wallet, try to signIn${n!=null?" (with signed message)":""}`,t);let o;if(e.addFunctionCallKey!=null&&(this.logger?.log("Adding function call access key during sign in with params",e.addFunctionCallKey),o={...e.addFunctionCallKey,gasAllowance:e.addFunctionCallKey.gasAllowance??{amount:"250000000000000000000000",kind:"limited"}}),n!=null){let i=await r.signInAndSignMessage({addFunctionCallKey:o,messageParams:n,network:this.network});if(!i?.length)throw new Error("Failed to sign in");this.logger?.log("Signed in to wallet (with signed message)",t,i),this.events.emit("wallet:signInAndSignMessage",{wallet:r,accounts:i,success:!0}),this.events.emit("wallet:signIn",{wallet:r,accounts:i.map(a=>({accountId:a.accountId,publicKey:a.publicKey})),success:!0,source:"signInAndSignMessage"})}else{let i=await r.signIn({addFunctionCallKey:o,network:this.network});if(!i?.length)throw new Error("Failed to sign in");this.logger?.log("Signed in to wallet",t,i),this.events.emit("wallet:signIn",{wallet:r,accounts:i,success:!0,source:"signIn"})}return r}catch(r){throw this.logger?.log("Failed to connect to wallet",r),r}}async disconnect(e){e||(e=await this.wallet()),await e.signOut({network:this.network}),await this.storage.remove("selected-wallet"),this.events.emit("wallet:signOut",{success:!0})}async getConnectedWallet(){await this.whenManifestLoaded.catch(()=>{});let e=await this.storage.get("selected-wallet"),t=this.wallets.find(r=>r.manifest.id===e);if(!t)throw new Error("No wallet selected");let n=await t.getAccounts();if(!n?.length)throw new Error("No accounts found");return{wallet:t,accounts:n}}async wallet(e){if(await this.whenManifestLoaded.catch(()=>{}),!e)return this.getConnectedWallet().then(({wallet:n})=>n).catch(async()=>{throw await this.storage.remove("selected-wallet"),new Error("No accounts found")});let t=this.wallets.find(n=>n.manifest.id===e);if(!t)throw new Error("Wallet not found");return t}async use(e){await this.whenManifestLoaded.catch(()=>{}),this.wallets=this.wallets.map(t=>new Proxy(t,{get(n,r,o){let i=Reflect.get(n,r,o);if(r in e&&typeof i=="function"){let a=e[r];return function(...l){let d=()=>i.apply(n,l);return l.length>0?a.call(this,...l,d):a.call(this,void 0,d)}}return i}}))}on(e,t){this.events.on(e,t)}once(e,t){this.events.once(e,t)}off(e,t){this.events.off(e,t)}removeAllListeners(e){this.events.removeAllListeners(e)}};H.NearConnector=St});var En=g(v=>{"use strict";Object.defineProperty(v,"__esModule",{value:!0});v.nearActionsToConnectorActions=v.NearConnector=v.InjectedWallet=v.SandboxWallet=v.ParentFrameWallet=v.LocalStorage=void 0;var Ws=Xe();Object.defineProperty(v,"LocalStorage",{enumerable:!0,get:function(){return Ws.LocalStorage}});var Rs=nt();Object.defineProperty(v,"ParentFrameWallet",{enumerable:!0,get:function(){return Rs.ParentFrameWallet}});var qs=gt();Object.defineProperty(v,"SandboxWallet",{enumerable:!0,get:function(){return qs.SandboxWallet}});var Hs=bt();Object.defineProperty(v,"InjectedWallet",{enumerable:!0,get:function(){return Hs.InjectedWallet}});var Us=An();Object.defineProperty(v,"NearConnector",{enumerable:!0,get:function(){return Us.NearConnector}});var Fs=Z();Object.defineProperty(v,"nearActionsToConnectorActions",{enumerable:!0,get:function(){return Fs.nearActionsToConnectorActions}})});var w=class extends Error{name="CryptoError"},Lt=1,P=65,S=12,ce=16,V=32,le=1+P+S+ce,Wn=1+S+ce,de=8192,Ot=/^[a-z0-9-]{1,80}$/,m=()=>{let s=globalThis.crypto?.subtle;if(!s)throw new w("this page needs WebCrypto, which browsers give only to https:// or loopback pages");return s},B=new TextEncoder;function Re(s){if(!Ot.test(s))throw new w("not a task id")}function Rn(s){if(s!=="device-copy"&&s!=="answer"&&s!=="note"&&s!=="rejection")throw new w("unknown purpose for a blob sealed to a public key")}function Wt(s,e){return Rn(s),Re(e),B.encode(`countersign-task:v1:${s}:${e}`)}function qn(s){return Re(s),B.encode(s)}function Hn(s,e){if(Re(s),!Number.isSafeInteger(e)||e<0)throw new w("file number is not a whole number from 0");return B.encode(`${s}:file:${e}`)}function L(...s){let e=new Uint8Array(s.reduce((n,r)=>n+r.length,0)),t=0;for(let n of s)e.set(n,t),t+=n.length;return e}function Rt(s){let e="";for(let t of s)e+=t.toString(16).padStart(2,"0");return e}function Un(s){if(s.length%2!==0||!/^[0-9a-fA-F]*$/.test(s))throw new w("not hex");let e=new Uint8Array(s.length/2);for(let t=0;t<e.length;t++)e[t]=parseInt(s.slice(2*t,2*t+2),16);return e}var qt="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",Ht="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";function Ut(s,e,t){let n="";for(let r=0;r<s.length;r+=3){let o=(s[r]??0)<<16|(s[r+1]??0)<<8|(s[r+2]??0),i=r+1>=s.length?2:r+2>=s.length?3:4;for(let a=0;a<4;a++)n+=a<i?e.charAt(o>>18-6*a&63):t?"=":""}return n}function Ft(s,e,t){let n=()=>new w("not canonical base64"),r=s;if(t){if(s.length%4!==0)throw n();r=s.replace(/={1,2}$/,"")}let o=r.length%4;if(o===1||t&&r.length!==s.length&&o===0)throw n();let i=new Uint8Array(Math.floor(r.length*6/8)),a=0,l=0,d=0;for(let u of r){let p=e.indexOf(u);if(p<0)throw n();a=(a<<6|p)&65535,l+=6,l>=8&&(l-=8,i[d++]=a>>l&255)}if((a&(1<<l)-1)!==0)throw n();return i}var _=s=>Ut(s,qt,!0),M=s=>Ft(s,qt,!0),ae=s=>Ut(s,Ht,!1),Fn=s=>Ft(s,Ht,!1);async function W(s){return Rt(new Uint8Array(await m().digest("SHA-256",s)))}var zn=s=>W(s);function zt(s,e){let t=n=>n===null?"null":`"${_(n)}"`;return W(B.encode(`{"note":${t(s)},"supplied":${t(e)}}`))}var ue={name:"ECDH",namedCurve:"P-256"};async function Vt(){let s=await m().generateKey(ue,!1,["deriveBits"]),e=new Uint8Array(await m().exportKey("raw",s.publicKey));return{privateKey:s.privateKey,publicKey:e}}async function nr(s,e){if(s.length!==32||e.length!==P||e[0]!==4)throw new w("not a P-256 private scalar and uncompressed public point");let t={kty:"EC",crv:"P-256",d:ae(s),x:ae(e.subarray(1,33)),y:ae(e.subarray(33))};return{privateKey:await m().importKey("jwk",t,ue,!1,["deriveBits"]),publicKey:e.slice()}}function Gt(s){if(s.length!==P||s[0]!==4)throw new w("not an uncompressed P-256 point");return"p256:"+ae(s)}async function Yt(s){if(!s.startsWith("p256:"))throw new w('public key does not start with "p256:"');let e=s.slice(5);if(e.length!==87)throw new w("public key is not 87 characters after the prefix");let t;try{t=Fn(e)}catch{throw new w("public key is not canonical unpadded base64url of 65 bytes")}if(t.length!==P||t[0]!==4)throw new w("public key is not an uncompressed point on P-256");return await qe(t,"public key is not an uncompressed point on P-256"),t}async function qe(s,e){if(s.length!==P||s[0]!==4)throw new w(e);try{return await m().importKey("raw",s,ue,!0,[])}catch{throw new w(e)}}async function Jt(s,e,t,n){let r=new Uint8Array(await m().deriveBits({name:"ECDH",public:e},s,256)),o=await m().importKey("raw",r,"HKDF",!1,["deriveBits"]);r.fill(0);let i=new Uint8Array(await m().deriveBits({name:"HKDF",hash:"SHA-256",salt:t,info:n},o,V*8));try{return await m().importKey("raw",i,"AES-GCM",!1,["encrypt","decrypt"])}finally{i.fill(0)}}function Vn(){return crypto.getRandomValues(new Uint8Array(S))}async function He(s,e,t,n){let r=await m().generateKey(ue,!1,["deriveBits"]),o=new Uint8Array(await m().exportKey("raw",r.publicKey));return Gn({privateKey:r.privateKey,publicKey:o},Vn(),s,e,t,n)}async function Gn(s,e,t,n,r,o){let i=Wt(n,r);if(e.length!==S)throw new w("nonce is not 12 bytes");let a=typeof t=="string"?await Yt(t):t,l=await qe(a,"recipient is not a P-256 public key"),d=await Jt(s.privateKey,l,L(s.publicKey,a),i),u=new Uint8Array(await m().encrypt({name:"AES-GCM",iv:e,additionalData:i,tagLength:128},d,o));return L(Uint8Array.of(Lt),s.publicKey,e,u)}function je(s,e){if(s.length<1+e+ce)throw new w(`decryption failed: blob of ${s.length} bytes is shorter than ${1+e+ce}`);if(s[0]!==Lt)throw new w("decryption failed: unknown blob version")}async function Yn(s,e,t,n){let r=Wt(e,t);je(n,P+S);let o=n.slice(1,1+P),i=n.slice(1+P,1+P+S),a=n.slice(1+P+S),l=await qe(o,"decryption failed: ephemeral key is not an uncompressed P-256 point"),d;try{d=await Jt(s.privateKey,l,L(o,s.publicKey),r)}catch{throw new w("decryption failed: key agreement")}return Le(d,i,a,r)}async function Le(s,e,t,n){try{return new Uint8Array(await m().decrypt({name:"AES-GCM",iv:e,additionalData:n,tagLength:128},s,t))}catch{throw new w("decryption failed")}}var Oe=class s{constructor(e,t,n){this.aes=e;this.receipt=t;this.receiptRaw=n}aes;receipt;receiptRaw;static async fromBytes(e){if(e.length!==V)throw new w(`content key is ${e.length} bytes, want ${V}`);try{let t=await m().importKey("raw",e,"AES-GCM",!1,["decrypt"]),n=await m().importKey("raw",e,{name:"HMAC",hash:"SHA-256"},!1,["sign"]),r=new Uint8Array(await m().sign("HMAC",n,B.encode("receipt:v1"))),o=await m().importKey("raw",r,{name:"HMAC",hash:"SHA-256"},!1,["sign","verify"]);return new s(t,o,r)}finally{e.fill(0)}}openContent(e,t){let n=qn(e);return je(t,S),Le(this.aes,t.slice(1,1+S),t.slice(1+S),n)}openFile(e,t,n){let r=Hn(e,t);return je(n,S),Le(this.aes,n.slice(1,1+S),n.slice(1+S),r)}receiptKeyBytes(){return this.receiptRaw.slice()}async receiptSum(e){return Rt(new Uint8Array(await m().sign("HMAC",this.receipt,e)))}async receiptVerify(e,t){return/^[0-9a-f]{64}$/.test(t)?m().verify("HMAC",this.receipt,Un(t),e):!1}};async function Jn(s,e,t){let n=await Yn(s,"device-copy",e,t);if(n.length!==V)throw n.fill(0),new w(`decryption failed: device copy holds ${n.length} bytes, want ${V}`);return Oe.fromBytes(n)}function Zn(s){let e=()=>new w('the content is not a JSON object of the strings "envelope" and "request"'),t;try{t=new TextDecoder("utf-8",{fatal:!0,ignoreBOM:!0}).decode(s)}catch{throw new w("the content is not valid UTF-8")}let n=0,r=()=>{for(;n<t.length&&` 	
\r`.includes(t.charAt(n));)n++},o=u=>{if(r(),t.charAt(n)!==u)throw e();n++},i=()=>{if(r(),t.charAt(n)!=='"')throw e();let u=n++;for(;;){if(n>=t.length)throw e();let p=t.charAt(n++);if(p==='"')break;p==="\\"&&n++}try{let p=JSON.parse(t.slice(u,n));if(typeof p!="string")throw e();return p}catch{throw e()}},a=new Map;if(o("{"),r(),t.charAt(n)!=="}")for(;;){let u=i();o(":");let p=i();if(u!=="envelope"&&u!=="request"||a.has(u))throw e();if(a.set(u,p),r(),t.charAt(n)===","){n++;continue}break}o("}"),r();let l=a.get("envelope"),d=a.get("request");if(n!==t.length||l===void 0||d===void 0)throw e();return{envelope:B.encode(l),request:B.encode(d)}}var k=class extends w{constructor(t,n){super(n);this.reason=t}reason;name="OpenError"};async function Zt(s,e,t){if(!Ot.test(t.id))throw new k("unreadable","the service listed a task whose id is not a task id");let n=t.id;if(t.locked)throw new k("locked",`task ${n} is locked on this device`);if(t.content==null)throw new k("not_waiting",`task ${n} is not waiting and shows nothing`);if(t.device_copy==null)throw new k("locked",`task ${n} is locked on this device`);let r,o;try{r=await Jn(s,n,M(t.device_copy)),o=Zn(await r.openContent(n,M(t.content)))}catch(u){throw new k("unreadable",`task ${n} cannot be read: ${u instanceof Error?u.message:"?"}`)}let i=await zn(o.envelope);if(i!==t.task_hash)throw new k("hash_mismatch",`task ${n}: its content does not hash to the task hash shown; never approve it`);let a;try{let u=JSON.parse(new TextDecoder().decode(o.envelope));if(typeof u!="object"||u===null||Array.isArray(u))throw new Error("not an object");a=u}catch{throw new k("unreadable",`task ${n}: the envelope is not a JSON object`)}if(a.owner!==e)throw new k("mismatch",`task ${n} is addressed to another owner than this device's account`);let l=[["id",t.id],["kind",t.kind],["preparer",t.preparer],["project",t.project],["project_uuid",t.project_uuid],["thread",t.thread],["reply_pubkey",t.reply_pubkey],["created_at",t.created_at],["expires_at",t.expires_at]];for(let[u,p]of l)if((a[u]??null)!==(p??null))throw new k("mismatch",`task ${n}: the listed ${u} is not the envelope's`);let d=null;if(typeof a.reply_pubkey=="string"){try{await Yt(a.reply_pubkey)}catch{throw new k("unreadable",`task ${n}: the reply key is not a P-256 public key`)}d=a.reply_pubkey}return{envelope:a,envelopeBytes:o.envelope,taskHash:i,request:o.request,key:r,replyPubkey:d}}var j=class extends w{name="FileMismatchError"};async function Xt(s,e,t){let n=String(s.envelope.id),r=s.envelope.files,o=Array.isArray(r)?r[e]:void 0;if(!Number.isSafeInteger(e)||e<0||typeof o!="object"||o===null)throw new j(`task ${n} has no file ${e}`);let{size:i,sha256:a}=o;if(typeof i!="number"||t.length!==i+Wn)throw new j(`file ${e} of task ${n} is not the size its envelope names`);let l=await s.key.openFile(n,e,t);if(l.length!==i||await W(l)!==a)throw new j(`file ${e} of task ${n} does not have the SHA-256 its envelope names`);return l}var We=class extends w{name="TooLargeError"};async function Xn(s,e,t,n){if(n.length+le>de)throw new We(`the ${e} is ${n.length} bytes; the service takes at most ${de-le} bytes`);return He(s,e,t,n)}function Ue(s,e,t,n){return Xn(s,e,t,B.encode(n))}var Fe="countersign",G="device",he="key";function Qt(s){return new Promise((e,t)=>{s.onsuccess=()=>e(s.result),s.onerror=()=>t(new w("this browser's storage refused the device key: "+String(s.error)))})}function en(s){let e=indexedDB.open(s,1);return e.onupgradeneeded=()=>{e.result.createObjectStore(G)},Qt(e)}async function tn(s,e,t){let n=await en(s);try{let r=n.transaction(G,e),o=new Promise((a,l)=>{r.oncomplete=()=>a(),r.onabort=r.onerror=()=>l(new w("this browser's storage refused the device key"))}),i=await Qt(t(r.objectStore(G)));return await o,i}finally{n.close()}}function nn(s){let e=s;return!e||!(e.privateKey instanceof CryptoKey)||!(e.publicKey instanceof Uint8Array)?null:{privateKey:e.privateKey,publicKey:e.publicKey}}async function Qn(s=Fe){return nn(await tn(s,"readonly",e=>e.get(he)))}async function sn(s=Fe){let e=await Qn(s);if(e)return e;let t=await Vt(),n=await en(s);try{return await new Promise((r,o)=>{let i=n.transaction(G,"readwrite"),a=i.objectStore(G),l=t,d=a.get(he);d.onsuccess=()=>{let u=nn(d.result);if(u)l=u;else{let p={privateKey:t.privateKey,publicKey:t.publicKey};a.put(p,he)}},i.oncomplete=()=>r(l),i.onabort=i.onerror=()=>o(new w("this browser's storage refused the device key"))})}finally{n.close()}}async function or(s=Fe){await tn(s,"readwrite",e=>e.delete(he))}var ze=["agent","at","build","connector","input_sha256","operation","output_sha256","owner","run","task_hash","task_id"],es=new Set(["task_hash","task_id"]),b=class extends Error{name="ReceiptError"},ts="123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";function Y(s){let e=0n;for(let n of s){let r=ts.indexOf(n);if(r<0)throw new b("not base58");e=e*58n+BigInt(r)}let t=[];for(;e>0n;)t.push(Number(e&255n)),e>>=8n;for(let n of s){if(n!=="1")break;t.push(0)}return Uint8Array.from(t.reverse())}function rn(s){if(!s.startsWith("ed25519:"))throw new b("a run key is ed25519:<base58>");let e=Y(s.slice(8));if(e.length!==32)throw new b("a run key is ed25519:<base58> of 32 bytes");return e}function Ve(s){let e=new Map,t=s;if(t&&typeof t.keys=="object"&&t.keys!==null)for(let[n,r]of Object.entries(t.keys))/^(0|[1-9]\d{0,9})$/.test(n)&&typeof r=="string"&&e.set(Number(n),rn(r));return t&&typeof t.key_id=="number"&&typeof t.public_key=="string"&&!e.has(t.key_id)&&e.set(t.key_id,rn(t.public_key)),e}function ns(s){let e=s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,"�");return JSON.stringify(e).replace(/\u2028/g,"\\u2028").replace(/\u2029/g,"\\u2029")}function on(s){let e=[];for(let t of ze){let n=s[t];n===""&&es.has(t)||e.push(`"${t}":${ns(n)}`)}return new TextEncoder().encode(`{${e.join(",")}}`)}function an(s){let e=new b("the receipt is not a signed receipt");if(s==null)throw new b("the task has no receipt yet");if(typeof s!="object"||Array.isArray(s))throw e;let t=s;for(let l of Object.keys(t))if(!["receipt","key_id","signature"].includes(l))throw e;let n=t.receipt,r=t.key_id??0,o=t.signature??"";if(typeof n!="object"||n===null||Array.isArray(n)||typeof r!="number"||!Number.isInteger(r)||r<0||r>4294967295||typeof o!="string")throw e;let i={};for(let l of ze)i[l]="";for(let[l,d]of Object.entries(n)){if(!ze.includes(l)||typeof d!="string"&&d!==null)throw e;i[l]=d??""}let a;try{a=M(o)}catch{throw new b("the receipt's signature does not verify")}return{receipt:i,keyID:r,signature:a}}function cn(s){let e=s.lastIndexOf("-");if(e<=0)return null;let t=s.slice(e+1);return/^[1-9]\d*$/.test(t)?s.slice(0,e):null}async function Ge(s,e,t){let n=t.envelope,r=String(n.id),o=cn(r);if(o===null)throw new b("the task id does not name the run that prepared it");let i=an(e),a=s.get(i.keyID);if(!a)throw new b(`the receipt is signed with run key ${i.keyID}, which the service does not publish`);let l=!1;try{let u=await crypto.subtle.importKey("raw",a,{name:"Ed25519"},!1,["verify"]);l=await crypto.subtle.verify({name:"Ed25519"},u,i.signature,on(i.receipt))}catch(u){throw new b("this browser cannot check an ed25519 signature: "+(u instanceof Error?u.message:String(u)))}if(!l)throw new b("the receipt's signature does not verify");let d=i.receipt;if(d.task_id!==r||d.task_hash!==t.taskHash)throw new b("the receipt names another task or another hash");if(d.owner!==n.owner||d.agent!==n.preparer)throw new b("the receipt names another owner or agent");if(d.build!==n.build||d.run!==o)throw new b("the receipt names another build or run");if(!await t.key.receiptVerify(t.request,d.input_sha256))throw new b("the receipt's input is not the request the task shows");return d}function c(s,e={},...t){let n=document.createElement(s);for(let[r,o]of Object.entries(e))n.setAttribute(r,o);for(let r of t)typeof r=="string"?n.append(document.createTextNode(r)):r&&n.append(r);return n}function A(s,e,t=!1){let n=c("button",{type:"button"},s);return t&&(n.className="secondary"),n.addEventListener("click",e),n}function J(s,e){return s.setAttribute("aria-keyshortcuts",e),c("span",{class:"with-key"},s,c("kbd",{class:"key-hint","aria-hidden":"true",title:`key ${e}`},e))}var T=class extends Error{constructor(t,n,r){super(r);this.status=t;this.reason=n}status;reason};async function E(s,e,t){let n={method:s,credentials:"same-origin",headers:{Accept:"application/json"}};t!==void 0&&(n.headers={Accept:"application/json","Content-Type":"application/json"},n.body=JSON.stringify(t));let r=await fetch(e,n),o=null;try{o=await r.json()}catch{o=null}if(!r.ok){let i=o??{};throw new T(r.status,typeof i.reason=="string"?i.reason:"",typeof i.error=="string"?i.error:`the service answered ${r.status}`)}return o}function N(s){return s instanceof T?s.reason?`${s.message} (${s.reason})`:s.message:s instanceof Error?s.message:String(s)}function Ye(s,e,t){return`Sign in to Countersign as ${s}. Device key: ${e}. Valid until ${t}.`}function Je(s,e,t,n,r){return`Approve in Countersign as ${s}: task ${e} with hash ${t} and supply ${n}. At ${r}.`}var ln=/^(?=.{2,64}$)(([a-z\d]+[-_])*[a-z\d]+\.)*([a-z\d]+[-_])*[a-z\d]+$/;function dn(s){let e=t=>"'"+t.replaceAll("'","'\\''")+"'";return`countersign wallet sign --wallet YOUR-WALLET.json --recipient ${e(s.recipient)} --nonce ${e(s.nonce)} --message ${e(s.sentence)}`}function ss(s,e){return{account_id:s.account,device_pubkey:s.devicePubkey,valid_until:s.validUntil,...pe(s,e)}}function pe(s,e){let t;try{t=JSON.parse(e)}catch{throw new Error("The wallet's answer is not JSON.")}if(typeof t!="object"||t===null||Array.isArray(t))throw new Error("The wallet's answer is not a JSON object.");let n=t,r=d=>{let u=n[d];if(typeof u!="string"||u==="")throw new Error(`The wallet's answer has no ${d}.`);return u};if(r("message")!==s.sentence)throw new Error("The wallet signed another sentence than the one shown here.");if(r("recipient")!==s.recipient)throw new Error(`The wallet signed for the recipient ${String(n.recipient)}, not ${s.recipient}.`);if(n.accountId!==void 0&&n.accountId!==null&&n.accountId!==s.account)throw new Error(`The wallet signed as ${String(n.accountId)}, not ${s.account}.`);let o,i=n.nonce;if(Array.isArray(i)){if(i.length!==32||!i.every(d=>Number.isInteger(d)&&d>=0&&d<=255))throw new Error("The wallet's nonce is not 32 bytes.");o=_(Uint8Array.from(i))}else o=r("nonce");let a={public_key:r("publicKey"),signature:r("signature"),nonce:o},l=n.callbackUrl;if(typeof l=="string")a.callback_url=l;else if(l!=null)throw new Error("The wallet's callbackUrl is not text.");return a}var Pn=On(En());var zs=2147484061;function Cn(s){let e=new Uint8Array(4);return new DataView(e.buffer).setUint32(0,s,!0),e}function At(s){let e=new TextEncoder().encode(s);return L(Cn(e.length),e)}function Vs(s,e,t,n){if(e.length!==32)throw new Error("a NEP-413 nonce is 32 bytes");let r=n===null?new Uint8Array([0]):L(new Uint8Array([1]),At(n));return L(Cn(zs),At(s),e,At(t),r)}function Gs(s){if(!s.startsWith("ed25519:"))throw new Error(`the wallet's key ${s} is not an ed25519 key`);let e=Y(s.slice(8));if(e.length!==32)throw new Error("the wallet's ed25519 key is not 32 bytes");return e}function Ys(s){let e=s.startsWith("ed25519:")?Y(s.slice(8)):M(s);if(e.length!==64)throw new Error("the wallet's signature is not 64 bytes");return e}async function Et(s,e,t,n,r,o){let i=await crypto.subtle.importKey("raw",Gs(s),{name:"Ed25519"},!1,["verify"]),a=new Uint8Array(await crypto.subtle.digest("SHA-256",Vs(t,n,r,o)));return crypto.subtle.verify({name:"Ed25519"},i,Ys(e),a)}var x=class extends Error{},te=class extends x{},Ct="https://raw.githubusercontent.com/hot-dao/near-selector/a5b64fc8e389b93dde9d207e31c08fd598914752/repository/";function Js(s,e){let t=`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="${e}"/><text x="32" y="43" font-family="sans-serif" font-size="30" font-weight="700" text-anchor="middle" fill="#fff">${s}</text></svg>`;return"data:image/svg+xml;base64,"+btoa(t)}function ee(s,e,t,n,r,o,i,a=!1){return{id:s,name:e,icon:Js(r,o),description:`${e}: signs NEP-413 messages.`,website:t,version:"1.0.0",executor:n,type:"sandbox",platform:{},features:{signMessage:!0,signTransaction:!1,signAndSendTransaction:!1,signAndSendTransactions:!1,signInWithoutAddKey:!0,mainnet:!0,testnet:!0},permissions:{storage:!0,location:a,open:{allows:i}}}}var Zs=[ee("mynearwallet","MyNearWallet","https://mynearwallet.com",Ct+"mnw.js","M","#2b6be6",["https://app.mynearwallet.com"]),ee("meteor-wallet","Meteor Wallet","https://wallet.meteorwallet.app",Ct+"meteor.js","M","#6b3fd4",["https://wallet.meteorwallet.app"]),ee("hot-wallet","HOT Wallet","https://hot-labs.org/wallet",Ct+"hotwallet.js","H","#d4532b",["https://download.hot-labs.org","https://hot-labs.org/wallet","https://t.me/hot_wallet/app","hotwallet://"]),ee("intear-wallet","Intear Wallet","https://wallet.intear.tech","https://wallet.intear.tech/near-selector.js","I","#1f8a5b",["https://wallet.intear.tech","intear://","https://logout-bridge-service.intear.tech"],!0)],Xs={mainnet:["https://rpc.mainnet.near.org"],testnet:["https://rpc.testnet.near.org"]},$e=class{constructor(e){this.opts=e}opts;connector=null;hrefs=new Set;get c(){if(this.hrefs.add(location.href),!this.connector){let e=[...Zs];if(this.opts.sandbox){let t=ee("countersign-sandbox","Sandbox wallet (this service, --dev)",location.origin,this.opts.sandbox,"S","#5b616b",[]);e.unshift(t)}this.connector=new Pn.NearConnector({manifest:{wallets:e,version:"1.0.0"},network:this.opts.network,providers:Xs,features:{signMessage:!0},autoConnect:!1,footerBranding:null,cspNonce:this.opts.nonce})}return this.connector}async connect(){let e;try{e=await this.c.connect()}catch(r){throw new x("No wallet was connected"+(r instanceof Error&&r.message?`: ${r.message}`:"."))}let n=(await e.getAccounts({network:this.opts.network}))[0]?.accountId;if(!n)throw new x(`${e.manifest.name} named no account.`);return{account:n,name:e.manifest.name}}async disconnect(){if(this.connector)try{await this.connector.disconnect()}catch{}}async sign(e){let t;try{t=await this.c.wallet()}catch{throw new te("No wallet is connected in this browser any more.")}let n;try{n=await t.signMessage({message:e.sentence,recipient:e.recipient,nonce:e.nonce,network:this.opts.network,signerId:e.account})}catch(r){throw new x(`${t.manifest.name} did not sign`+(r instanceof Error&&r.message?`: ${r.message}`:typeof r=="string"&&r?`: ${r}`:"."))}if(!n||typeof n.signature!="string"||typeof n.publicKey!="string")throw new x(`${t.manifest.name} returned no signature.`);if(n.accountId&&n.accountId!==e.account)throw new Error(`${t.manifest.name} signed as ${n.accountId}, not ${e.account}.`);return Qs(e,n.publicKey,n.signature,this.hrefs)}};async function Qs(s,e,t,n=[]){let r={public_key:e,signature:t,nonce:_(s.nonce)};if(!e.startsWith("ed25519:")||await Et(e,t,s.sentence,s.nonce,s.recipient,null))return r;for(let o of new Set([location.href,location.origin+location.pathname,location.origin+location.pathname+location.search,...n]))if(await Et(e,t,s.sentence,s.nonce,s.recipient,o))return{...r,callback_url:o};throw new Error("The wallet's signature does not verify for the sentence shown, with or without this page's address.")}function Ie(s,e,t,n,r){let o=_(e.nonce),i=c("textarea",{id:t.answer,name:t.answer,spellcheck:"false","aria-describedby":t.answer+"-help"}),a={account:e.account,sentence:e.sentence,recipient:e.recipient,nonce:o};return new Promise(l=>{let d=()=>{try{let u=pe(a,i.value),p={public_key:u.public_key??"",signature:u.signature??"",nonce:u.nonce??o};u.callback_url!==void 0&&(p.callback_url=u.callback_url),l(p)}catch(u){r(u instanceof Error?u.message:String(u),!0)}};s.replaceChildren(c("p",{},"Have your wallet sign this sentence as a NEP-413 message, for this recipient and with this nonce, then paste its answer below."),c("dl",{},c("dt",{},"Sentence"),c("dd",{},c("code",{id:t.sentence},e.sentence)),c("dt",{},"Recipient"),c("dd",{},c("code",{id:t.recipient},e.recipient)),c("dt",{},"Nonce"),c("dd",{},c("code",{id:t.nonce},o))),c("p",{},"With the terminal's wallet:"),c("pre",{id:t.command},dn(a)),c("label",{for:t.answer},"The wallet's answer (JSON)"),c("p",{id:t.answer+"-help",class:"task-meta"},"What countersign wallet sign or near-cli printed: publicKey, signature, nonce, message, recipient."),i,c("div",{class:"actions"},A(n,d))),s.hidden=!1})}function _n(s){let e=s.replace(/[^\p{L}\p{N}._ -]/gu,"_").replace(/^[. ]+/,"").replace(/[. ]+$/,"");return e=[...e].slice(0,200).join(""),e===""?"file":e}function Be(s){return new Date(Math.floor(s/1e3)*1e3).toISOString().replace(/\.\d{3}Z$/,"Z")}function U(s){return s===1?"1 byte":s<1e4?`${s} bytes`:s<1e7?`${(s/1e3).toFixed(1)} kB`:`${(s/1e6).toFixed(1)} MB`}function Pt(s,e){let t=Math.floor((e-s)/1e3);if(t<=0)return"expired by this device's clock";let n=[],r=Math.floor(t/3600);t-=r*3600;let o=Math.floor(t/60);return t-=o*60,r&&n.push(`${r} h`),(r||o)&&n.push(`${o} min`),n.push(`${t} s`),"in "+n.join(" ")}function _t(s){switch(s){case"done":return"Done";case"failed":return"Failed";case"rejected":return"Rejected by you";case"cancelled":return"Cancelled";case"expired":return"Expired unanswered";case"void":return"Void: the project's policy or the connector changed after it was asked";case"approved":case"answering":return"Approved, being carried out";default:return s}}function Tn(s){switch(s){case"preparer_key_unavailable":return"The agent's key was no longer available, so the approved write was not made.";case"operation_priced":return"The write now has a price the approval did not cover, so it was not made.";case"operation_unknown":return"The connector no longer has that operation, so the write was not made.";case"operation_limit_reached":return"The operation's limit was reached, so the write was not made.";case"queue_unavailable":return"The service could not queue the write, so it was not made.";case"run_not_started":return"The write did not start within 30 minutes of the approval, so it was not made.";case"run_unfinished":return"The write began but did not report back: it may or may not have happened."}return s.startsWith("run_refused:")?`The connector refused the write after your approval (${s.slice(12)}); its answer to the agent says whether anything was written.`:`It failed (${s}).`}var Tt="countersign.account",ne="countersign.wallet",er=29;function $t(){let s=/^#\/tasks\/([^/?#]+)$/.exec(location.hash);if(!s||!s[1])return null;try{return decodeURIComponent(s[1])}catch{return null}}var It=de-le,Bt=class s{constructor(e,t,n){this.root=e;this.recipient=t;this.wallets=new $e(n),e.replaceChildren(this.header,this.status,this.body,this.keysBox),document.addEventListener("keydown",r=>this.onKey(r)),window.addEventListener("hashchange",()=>{let r=$t();r&&r!==this.cardID&&(this.wanted=r,this.relist())})}root;recipient;device=null;account=null;walletName=null;wallets;events=null;listing=0;wanted=$t();seen=null;relistTimer;header=c("header");status=c("p",{class:"status",role:"status","aria-live":"polite",id:"status"});body=c("div");listBox=c("div",{id:"list"});cardBox=c("section",{id:"card","aria-labelledby":"card-title",hidden:""});cardID=null;cardBusy=!1;cardTimer;cardExpired=!1;static KEYS=[["j","next task in the list"],["k","previous task in the list"],["Enter","open the task"],["a","Approve the open task"],["r","Reject the open task"],["g","Got it: close the open notice"],["u","Unlock the tasks locked on this device"],["?","show or hide this list"],["Esc","hide this list"]];keysBox=c("section",{id:"keys",class:"keys",role:"dialog","aria-labelledby":"keys-title",hidden:"",tabindex:"-1"},c("h2",{id:"keys-title"},"Keys"),c("dl",{},...s.KEYS.flatMap(([e,t])=>[c("dt",{},c("kbd",{},e)),c("dd",{},t)])));onKey(e){if(e.ctrlKey||e.metaKey||e.altKey||e.defaultPrevented)return;let t=e.target;if(!(t&&(t.tagName==="INPUT"||t.tagName==="TEXTAREA"||t.tagName==="SELECT"||t.isContentEditable))){if(e.key==="?"){e.preventDefault(),this.keysBox.hidden=!this.keysBox.hidden,this.keysBox.hidden||this.keysBox.focus();return}if(e.key==="Escape"&&!this.keysBox.hidden){e.preventDefault(),this.keysBox.hidden=!0;return}if(this.account){if((e.key==="j"||e.key==="k")&&!this.listBox.hidden){let n=[...this.listBox.querySelectorAll("#tasks button.task-open")];if(!n.length)return;e.preventDefault();let r=n.indexOf(document.activeElement),o=r<0?e.key==="j"?0:n.length-1:Math.min(n.length-1,Math.max(0,r+(e.key==="j"?1:-1)));n[o]?.focus();return}if(e.key==="u"&&!this.listBox.hidden){let n=this.listBox.querySelector('button[aria-keyshortcuts="u"]');n&&!n.disabled&&(e.preventDefault(),n.click());return}if((e.key==="a"||e.key==="r"||e.key==="g")&&this.cardID&&!this.cardBox.hidden){let n=this.cardBox.querySelector(`#card-actions button[aria-keyshortcuts="${e.key}"]`);n&&!n.disabled&&(e.preventDefault(),n.focus(),n.click())}}}}async start(){this.renderHeader(),this.say("Preparing this device's key…");try{this.device=await sn()}catch(e){this.say("This browser cannot keep a device key: "+(e instanceof Error?e.message:String(e)),!0);return}if(this.say(""),this.account=localStorage.getItem(Tt),this.walletName=localStorage.getItem(ne),this.account&&await this.list()){this.signedIn();return}this.account=null,this.showSignIn()}saidAt=0;say(e,t=!1){this.status.textContent=e,this.status.classList.toggle("error",t),this.saidAt=Date.now()}announce(e){if(Date.now()-this.saidAt<5e3&&this.status.textContent){this.status.textContent+=" "+e,this.saidAt=Date.now();return}this.say(e)}renderHeader(){let e=[c("h1",{},"Countersign")];this.account&&e.push(c("div",{class:"actions"},c("span",{class:"who"},"Signed in as ",c("span",{class:"mono",id:"who"},this.account)),A("Sign out",()=>{this.signOut()},!0))),this.header.replaceChildren(...e.filter(t=>t instanceof Node))}showSignIn(){this.renderHeader();let e=c("input",{id:"account",name:"account",autocomplete:"username",spellcheck:"false",autocapitalize:"none",placeholder:"alice.near"}),t=c("section",{id:"another-wallet","aria-labelledby":"another-title"});t.hidden=!0;let n=()=>{let o=e.value.trim();if(!ln.test(o)){this.say("Type your NEAR account id first (like alice.near, or the 64 hex characters of an implicit account).",!0),e.focus();return}this.say("");let i=c("div");t.replaceChildren(c("h2",{id:"another-title"},"Sign with another wallet"),i),t.hidden=!1,this.signIn(o,a=>Ie(i,a,{sentence:"sentence",recipient:"recipient",nonce:"nonce",command:"command",answer:"signed"},"Send signature",(l,d)=>this.say(l,d)))},r=async()=>{t.hidden=!0,this.say("Choose your wallet…");let o;try{o=await this.wallets.connect()}catch(i){this.say(i instanceof x?i.message+" Nothing was signed.":"The wallet could not be connected: "+N(i),!(i instanceof x));return}this.say(`${o.name} signs you in as ${o.account}: confirm the sentence in it.`),this.walletName=o.name,this.signIn(o.account,i=>this.wallets.sign(i))};this.body.replaceChildren(c("section",{id:"signin","aria-labelledby":"signin-title"},c("h2",{id:"signin-title"},"Sign in"),c("p",{},"Your wallet signs one sentence that names this browser's device key. Tasks are opened with that key, on this device only."),c("div",{class:"actions"},A("Sign in",()=>{r()})),c("h3",{},"Or with a wallet elsewhere"),c("p",{},"Type your account, then sign the sentence shown with any NEP-413 wallet (the terminal's countersign wallet sign, near-cli) and paste its answer."),c("label",{for:"account"},"Your NEAR account"),e,c("div",{class:"actions"},A("Sign with another wallet",n,!0))),t)}async signIn(e,t){if(!this.device)return;let n=new Uint8Array(32);crypto.getRandomValues(n);let r=Gt(this.device.publicKey),o=Be(Date.now()+er*86400*1e3),i={account:e,sentence:Ye(e,r,o),recipient:this.recipient,nonce:n};for(;;){let a;try{a=await t(i)}catch(l){this.walletName=null,this.say(l instanceof x?l.message+" Nothing was signed; you are not signed in.":"The sign-in cannot go on: "+N(l),!(l instanceof x));return}this.say("Signing in…");try{let l=await E("POST","/inbox/session",{account_id:e,device_pubkey:r,valid_until:o,...a});this.account=typeof l.account_id=="string"?l.account_id:e;break}catch(l){if(this.say("The sign-in was refused: "+N(l),!0),this.walletName){this.walletName=null;return}}}localStorage.setItem(Tt,this.account),this.walletName?localStorage.setItem(ne,this.walletName):localStorage.removeItem(ne),this.say("Signed in."),await this.list()&&this.signedIn()}signedIn(){this.renderHeader(),this.listen()}async signOut(){try{await E("DELETE","/inbox/session")}catch(e){if(!(e instanceof T&&e.status===401)){this.say("Signing out failed: "+(e instanceof Error?e.message:String(e)),!0);return}}this.ended("Signed out.")}ended(e){this.listing++,window.clearTimeout(this.relistTimer),this.closeCard(),this.events?.close(),this.events=null,localStorage.removeItem(Tt),localStorage.removeItem(ne),this.account=null,this.seen=null,this.walletName&&(this.walletName=null,this.wallets.disconnect()),this.showSignIn(),this.say(e)}async list(){let e=this.device,t=this.account;if(!e||!t)return!1;let n=++this.listing,r,o=E("GET","/inbox/tasks?show=closed").then(h=>h.tasks??[],()=>null);try{r=(await E("GET","/inbox/tasks?show=waiting")).tasks??[]}catch(h){return h instanceof T&&h.status===401?(this.body.querySelector("#tasks")&&this.ended("Your session ended: "+h.message),!1):(this.say("The inbox cannot be listed now: "+(h instanceof Error?h.message:String(h)),!0),!0)}let i=await Promise.all(r.map(h=>this.item(e,t,h))),a=this.seen===null?[]:r.filter(h=>!this.seen?.has(h.id)),l=await o;if(n!==this.listing||this.account!==t)return!0;let d=c("ul",{class:"tasks",id:"tasks","aria-labelledby":"waiting-title"},...i),u=[c("h2",{id:"waiting-title"},"Waiting for you"),c("p",{class:"keys-hint",id:"keys-hint"},"Keys: ",c("kbd",{},"j")," and ",c("kbd",{},"k")," move, ",c("kbd",{},"Enter")," opens, ",c("kbd",{},"?")," lists them all.")];u.push(i.length?d:c("p",{class:"empty",id:"tasks-empty"},"Nothing is waiting for you.")),i.length||(u.push(d),d.hidden=!0),u.push(c("h2",{id:"closed-title"},"Closed")),l===null?u.push(c("p",{class:"empty",id:"closed-empty"},"The closed tasks cannot be listed now.")):l.length?u.push(c("ul",{class:"tasks closed",id:"closed","aria-labelledby":"closed-title"},...l.map(h=>c("li",{class:"task","data-closed":String(h.id),"data-state":String(h.state)},c("span",{class:"task-title"},_t(String(h.state))),c("span",{class:"task-meta"},`${h.project} · from ${h.preparer} · ${h.kind} · asked ${h.created_at} · task ${h.id}`),h.state==="failed"&&h.failure_reason?c("span",{class:"failure"},Tn(String(h.failure_reason))):null)))):u.push(c("p",{class:"empty",id:"closed-empty"},"No closed tasks yet.")),this.listBox.parentNode!==this.body&&this.body.replaceChildren(this.listBox,this.cardBox);let p=document.activeElement?.closest("#list button.task-open")?.dataset.task;if(this.listBox.replaceChildren(...u.filter(h=>h instanceof Node)),p&&this.listBox.querySelector(`button.task-open[data-task="${CSS.escape(p)}"]`)?.focus(),this.seen=new Set(r.map(h=>h.id)),a.length===1&&a[0]){let h=i[r.indexOf(a[0])]?.querySelector(".task-title")?.textContent??"";this.announce(`New task from ${a[0].preparer}: ${h}.`)}else a.length>1&&this.announce(`${a.length} new tasks are waiting for you.`);if(this.wanted){let h=this.wanted;this.wanted=null;let K=this.listBox.querySelector(`button.task-open[data-task="${CSS.escape(h)}"]`),D=l?.find($=>$.id===h);K?K.click():r.some($=>$.id===h)?this.say(`Task ${h} cannot be opened on this device: see why in the list.`,!0):D?this.say(`Task ${h} is closed: ${_t(String(D.state))}.`):this.say(`Task ${h} is not in your inbox (it may have been purged, or belong to another account).`,!0)}return this.cardID&&!r.some(h=>h.id===this.cardID)&&!this.cardBusy&&(this.closeCard(),this.say("The task you had open is no longer waiting.")),!0}async item(e,t,n){let r=c("span",{class:"task-meta"},`${n.project} · from ${n.preparer} · ${n.kind} · until ${n.expires_at}`);try{let o=await Zt(e,t,n),i=o.envelope.display,a=typeof i?.title=="string"?i.title:"(untitled)",l=A("",()=>{this.openCard(n,o)});return l.className="task-open",l.dataset.task=n.id,l.append(c("span",{class:"task-title"},a),r),l.firstChild?.remove(),c("li",{class:"task","data-task":n.id},l)}catch(o){if(o instanceof k&&o.reason==="locked")return c("li",{class:"task task-locked","data-task":n.id},c("span",{class:"task-title"},"Locked on this device"),r,c("p",{},"This task was opened before this device signed in, so it carries no key for this device. Unlock gives every waiting task a copy for each of your devices."),c("div",{class:"actions"},J(A("Unlock",()=>{this.unlock()},!0),"u")));let i=o instanceof Error?o.message:String(o);return c("li",{class:"task task-locked","data-task":n.id},c("span",{class:"task-title"},"This task cannot be shown"),r,c("p",{},i))}}closeCard(){window.clearInterval(this.cardTimer),this.cardID&&$t()===this.cardID&&history.replaceState(null,"",location.pathname+location.search),this.cardID=null,this.cardBusy=!1,this.cardBox.replaceChildren(),this.cardBox.hidden=!0,this.listBox.hidden=!1}async openCard(e,t){let n=this.account;if(!n||this.cardID===e.id)return;window.clearInterval(this.cardTimer),this.cardID=e.id,history.replaceState(null,"",`#/tasks/${encodeURIComponent(e.id)}`),this.cardBusy=!1,this.cardExpired=!1,this.say("");let r=t.envelope,o=e.id,i=r.display??{},a=typeof i.title=="string"?i.title:"(untitled)",l=Array.isArray(i.fields)?i.fields:[],d=Array.isArray(r.files)?r.files:[],u=r.answer_by??null,p=f=>typeof f=="string"?f:String(f??""),h=c("dl",{class:"fields",id:"fields"}),K=!1;for(let f of l){let C=Array.isArray(f.values)?f.values.map(p):[],I=f.written_by==="agent";K||=I;let oe=c("dt",{class:"field-label"});I&&oe.append(c("span",{class:"agent-mark",role:"img","aria-label":"written by the agent",title:"written by the agent"},"🤖")," "),oe.append(p(f.label));let ie;f.kind==="list"||C.length!==1?ie=c("dd",{class:"field-value"},c("ul",{},...C.map(Bn=>c("li",{},Bn)))):ie=c("dd",{class:f.kind==="long_text"?"field-value long":"field-value"},C[0]??""),I&&(oe.classList.add("by-agent"),ie.classList.add("by-agent")),h.append(oe,ie)}let D=d.length?c("ul",{class:"files",id:"files"},...d.map((f,C)=>{let I=A("Download",()=>{this.download(o,t,C,p(f.name),I)},!0);return I.setAttribute("aria-label","Download "+p(f.name)),I.dataset.file=String(C),c("li",{},c("span",{class:"mono"},p(f.name)),` (${p(f.content_type)}, ${U(Number(f.size))}) `,I)})):c("p",{id:"files"},"No files."),$=new TextDecoder("utf-8",{fatal:!1}).decode(t.envelopeBytes),F=await W(t.envelopeBytes),y=p(r.expires_at),z=Date.parse(y),Mt=c("span",{id:"countdown"},Pt(Date.now(),z));this.cardTimer=window.setInterval(()=>{Mt.textContent=Pt(Date.now(),z),this.checkExpiry(o,y,z)},1e3);let se=c("p",{id:"receipt",class:"receipt"},"Checking the receipt of the run that made this task…"),Me=c("div",{class:"card-actions",id:"card-actions"}),In=[c("div",{class:"actions"},A("Back to the list",()=>this.closeCard(),!0)),c("h2",{id:"card-title"},a),c("p",{class:"task-meta"},`${e.project} · from ${e.preparer} · ${p(r.build)} · ${e.kind} · task ${o}`),c("p",{class:"expiry"},`Expires at ${y} (`,Mt,")"),se,c("h3",{},"Preview"),h,K?c("p",{class:"task-meta"},"🤖 marks the agent's own words, not the connector's."):null,c("h3",{},"Files"),D,c("details",{id:"raw-form"},c("summary",{},"RAW form"),c("p",{class:"task-meta"},"The envelope exactly as decrypted on this device. Its SHA-256 is the task hash you sign."),c("pre",{id:"raw",class:"raw"},$),c("p",{},"SHA-256: ",c("code",{id:"raw-sha"},F))),c("details",{id:"raw-request"},c("summary",{},"RAW request"),c("p",{class:"task-meta"},"The agent's call exactly as decrypted on this device, byte for byte. The receipt's input hash covers these bytes."),c("pre",{id:"request",class:"raw"},new TextDecoder("utf-8",{fatal:!1}).decode(t.request)),c("p",{},`${U(t.request.length)}, SHA-256: `,c("code",{id:"request-sha"},await W(t.request)))),Me];if(this.cardBox.replaceChildren(...In.filter(f=>f instanceof Node)),this.listBox.hidden=!0,this.cardBox.hidden=!1,this.cardBox.querySelector("h2")?.setAttribute("tabindex","-1"),this.cardBox.querySelector("h2")?.focus(),!u||e.kind==="notice"){Me.append(c("div",{class:"actions"},J(A("Got it",()=>{this.acknowledge(o)}),"g"))),se.textContent="A notice asks nothing: read it and close it with Got it.",this.checkExpiry(o,y,z),this.checkReceipt(o,t,se,null);return}let Nt=p(u.supplies),Ne=async()=>null,re=[];if(Nt==="text"){let f=c("textarea",{id:"answer",name:"answer",spellcheck:"false"});Ne=async()=>new TextEncoder().encode(f.value),re.push(c("label",{for:"answer"},"Your answer"),f)}else if(Nt==="file"){let f=c("input",{id:"answer-file",name:"answer-file",type:"file","aria-describedby":"answer-file-help"});Ne=async()=>{let C=f.files?.[0];if(!C)throw new Error("choose the file to answer with first");if(C.size>It)throw new Error(`the file is ${U(C.size)}; an answer holds at most ${U(It)}`);return new Uint8Array(await C.arrayBuffer())},re.push(c("label",{for:"answer-file"},"Your answer: a file"),c("p",{id:"answer-file-help",class:"task-meta"},`Sealed on this device to the agent's reply key; at most ${U(It)}.`),f)}let Kt=c("textarea",{id:"note",name:"note",spellcheck:"false"});re.push(c("label",{for:"note"},"A note for the agent (optional)"),Kt);let Ke=A("Approve",()=>{this.prepareApproval(n,t,Ne,Kt,De)});Ke.disabled=!0;let Dt=c("textarea",{id:"reason",name:"reason",spellcheck:"false"}),De=c("div",{id:"approve-step"});De.hidden=!0,Me.append(...re.filter(f=>f instanceof Node),c("div",{class:"actions"},J(Ke,"a")),De,c("label",{for:"reason"},"Why you reject it (optional, for the agent)"),Dt,c("div",{class:"actions"},J(A("Reject",()=>{this.reject(t,Dt)},!0),"r"))),this.checkExpiry(o,y,z),this.checkReceipt(o,t,se,Ke)}checkExpiry(e,t,n){if(this.cardID!==e||this.cardExpired||!(Date.now()>=n))return;this.cardExpired=!0;let r=this.cardBox.querySelector("#card-actions");for(let i of this.cardBox.querySelectorAll("button"))(r?.contains(i)||i.dataset.file!==void 0)&&(i.disabled=!0);for(let i of this.cardBox.querySelectorAll("textarea"))i.readOnly=!0;let o=c("p",{id:"expired",class:"receipt error"},`This task expired at ${t}: it can no longer be answered, and the service refuses an answer now.`);r?.before(o)}async download(e,t,n,r,o){o.disabled=!0;try{let i=await E("GET",`/inbox/tasks/${encodeURIComponent(e)}/files/${n}`);if(typeof i.ciphertext!="string")throw new j("the service sent no file");let a=await Xt(t,n,M(i.ciphertext));if(this.cardID!==e)return;let l=URL.createObjectURL(new Blob([a],{type:"application/octet-stream"})),d=c("a",{href:l,download:_n(r),hidden:""});document.body.append(d),d.click(),d.remove(),window.setTimeout(()=>URL.revokeObjectURL(l),6e4),this.say(`Downloaded ${r}: its size and SHA-256 match the task.`)}catch(i){i instanceof T?this.say(`The file ${r} could not be fetched: ${i.message}`,!0):this.say(`The file ${r} is refused: it is not the file this task names (its size or SHA-256 does not match, or it does not open on this device).`,!0)}finally{o.disabled=this.cardExpired}}async checkReceipt(e,t,n,r){let o;try{let[i,a]=await Promise.all([E("GET",`/inbox/tasks/${encodeURIComponent(e)}/origin`),E("GET","/.well-known/countersign-run-key")]),l=await Ge(Ve(a),i.receipt,t);if(this.cardID!==e)return;n.textContent=`Receipt verified: run ${l.run} of ${l.build} made this task, for this request and this hash.`,n.classList.remove("error"),n.classList.add("ok"),r&&!this.cardExpired&&(r.disabled=!1);return}catch(i){o=i instanceof b||i instanceof T?i.message:"the receipt could not be checked: "+(i instanceof Error?i.message:String(i))}this.cardID===e&&(n.textContent=`Receipt not verified: ${o}. Approve stays off: this task may not come from the service's run.`,n.classList.add("error"),r&&(r.disabled=!0))}async askSignature(e,t,n,r){if(this.walletName){t.replaceChildren(c("p",{},`${this.walletName} is asked to sign: `,c("code",{id:n.sentence},e.sentence))),t.hidden=!1,this.say(`Confirm in ${this.walletName}.`);try{return await this.wallets.sign(e)}catch(o){if(!(o instanceof te))throw o;this.walletName=null,localStorage.removeItem(ne);let i=Ie(t,e,n,r,(a,l)=>this.say(a,l));return this.say("The wallet you signed in with is no longer connected in this browser: sign the sentence shown with your wallet elsewhere and paste its answer.",!0),i}}return this.say("Sign the sentence shown, then paste the wallet's answer."),Ie(t,e,n,r,(o,i)=>this.say(o,i))}async prepareApproval(e,t,n,r,o){let i=String(t.envelope.id),a=t.replyPubkey;if(!a||this.cardBusy)return;let l=null,d=null;try{let y=await n();y&&(l=await He(a,"answer",i,y)),r.value!==""&&(d=await Ue(a,"note",i,r.value))}catch(y){this.say("This answer cannot be sent: "+(y instanceof Error?y.message:String(y)),!0);return}let u=await zt(d,l),p=Math.floor(Date.now()/1e3)*1e3,h=new Uint8Array(32);crypto.getRandomValues(h);let K={account:e,sentence:Je(e,i,t.taskHash,u,Be(p)),recipient:this.recipient,nonce:h},D=c("div");o.replaceChildren(c("h3",{},"Sign the approval"),c("p",{},"Your answer and note are sealed to the agent's reply key; this sentence covers them and the task's hash."),D),o.hidden=!1;let $;try{this.walletName&&(this.cardBusy=!0),$=await this.askSignature(K,D,{sentence:"approval-sentence",recipient:"approval-recipient",nonce:"approval-nonce",command:"approval-command",answer:"approval-signed"},"Send approval")}catch(y){this.cardBusy=!1,o.hidden=!0,this.say(y instanceof x?y.message+" Nothing was sent: the task still waits for you.":"The approval cannot be signed: "+N(y),!(y instanceof x));return}if(this.cardID!==i){this.cardBusy=!1;return}this.cardBusy=!0;let F={task_hash:t.taskHash,approval:{at:p/1e3,...$}};l&&(F.supplied=_(l)),d&&(F.note=_(d)),this.say("Sending the approval…");try{await E("POST",`/inbox/tasks/${encodeURIComponent(i)}/approve`,F)}catch(y){this.cardBusy=!1,o.hidden=!0,this.say("The approval was refused: "+N(y),!0);return}this.closeCard(),this.say("Approved: the service carries it out."),this.relist()}async reject(e,t){let n=String(e.envelope.id),r={};try{t.value!==""&&e.replyPubkey&&(r.reason=_(await Ue(e.replyPubkey,"rejection",n,t.value)))}catch(o){this.say("This reason cannot be sent: "+(o instanceof Error?o.message:String(o)),!0);return}this.cardBusy=!0,this.say("Rejecting…");try{await E("POST",`/inbox/tasks/${encodeURIComponent(n)}/reject`,r)}catch(o){this.cardBusy=!1,this.say("The rejection was refused: "+N(o),!0);return}this.closeCard(),this.say("Rejected."),this.relist()}async acknowledge(e){this.cardBusy=!0;try{await E("POST",`/inbox/tasks/${encodeURIComponent(e)}/acknowledge`)}catch(t){this.cardBusy=!1,this.say("Closing the notice was refused: "+N(t),!0);return}this.closeCard(),this.say("Closed."),this.relist()}async unlock(){try{await E("POST","/inbox/unlock")}catch(e){this.say("Unlock failed: "+(e instanceof Error?e.message:String(e)),!0);return}await this.list()}listen(){this.events?.close();let e=new EventSource("/inbox/events",{withCredentials:!0});e.addEventListener("open",()=>this.relist()),e.addEventListener("task",()=>this.relist()),e.addEventListener("error",()=>{e.readyState===EventSource.CLOSED&&this.events===e&&(this.events=null,this.relist())}),this.events=e}relist(){window.clearTimeout(this.relistTimer),this.relistTimer=window.setTimeout(()=>{this.list()},50)}};function $n(){let s=document.getElementById("inbox-app");if(!s)return;let t=document.querySelector('meta[name="countersign-recipient"]')?.getAttribute("content")||"countersign",n=document.querySelector('meta[name="countersign-network"]')?.getAttribute("content")==="testnet"?"testnet":"mainnet",r=document.querySelector('meta[name="countersign-sandbox-wallet"]')?.getAttribute("content")||null,o=document.querySelector("script[nonce]")?.nonce??"";new Bt(s,t,{network:n,nonce:o,sandbox:r}).start()}$n();export{Oe as ContentKey,w as CryptoError,Fe as DEVICE_DB,j as FileMismatchError,Wn as GCM_OVERHEAD,de as MAX_SEALED_REPLY_BYTES,k as OpenError,P as P256_POINT_SIZE,le as SEALED_OVERHEAD,We as TooLargeError,Lt as VERSION,Je as approvalSentence,L as concat,qn as contentAAD,sn as deviceKey,Hn as fileAAD,or as forgetDeviceKey,Gt as formatP256PublicKey,Y as fromBase58,M as fromBase64,Fn as fromBase64URL,Un as fromHex,Vt as generateDeviceKey,nr as importP256PrivateKey,Wt as info,Qn as loadDeviceKey,Zt as openTask,Xt as openTaskFile,Yn as openWith,Yt as parseP256PublicKey,cn as preparingRun,Zn as readContent,an as readSigned,on as receiptBytes,Ve as runKeys,Xn as sealReply,Ue as sealText,He as sealTo,Gn as sealToWith,Be as sentenceTime,W as sha256Hex,ss as signInBody,Ye as signInSentence,zt as supplyHash,zn as taskHash,_ as toBase64,ae as toBase64URL,Rt as toHex,Jn as unwrapContentKey,Ge as verifyReceipt,pe as walletAnswer};
