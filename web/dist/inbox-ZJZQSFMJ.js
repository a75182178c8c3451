var Wn=Object.create;var Wt=Object.defineProperty;var Hn=Object.getOwnPropertyDescriptor;var qn=Object.getOwnPropertyNames;var Un=Object.getPrototypeOf,Fn=Object.prototype.hasOwnProperty;var v=(s,e)=>()=>{try{return e||s((e={exports:{}}).exports,e),e.exports}catch(t){throw e=0,t}};var zn=(s,e,t,n)=>{if(e&&typeof e=="object"||typeof e=="function")for(let r of qn(e))!Fn.call(s,r)&&r!==t&&Wt(s,r,{get:()=>e[r],enumerable:!(n=Hn(e,r))||n.enumerable});return s};var Jn=(s,e,t)=>(t=s!=null?Wn(Un(s)):{},zn(e||!s||!s.__esModule?Wt(t,"default",{value:s,enumerable:!0}):t,s));var rt=v(Se=>{"use strict";Object.defineProperty(Se,"__esModule",{value:!0});Se.LocalStorage=void 0;var st=class{async get(e){return typeof window>"u"?null:localStorage.getItem(e)}async set(e,t){typeof window>"u"||localStorage.setItem(e,t)}async remove(e){typeof window>"u"||localStorage.removeItem(e)}};Se.LocalStorage=st});var fn=v(ot=>{"use strict";Object.defineProperty(ot,"__esModule",{value:!0});ot.encodeBase58=hs;var gn="123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";function hs(s){if(s.length===0)return"";let e=0,t=0;for(;t<s.length&&s[t]===0;)e++,t++;let n=[0];for(;t<s.length;t++){let o=s[t];for(let a=0;a<n.length;++a)o+=n[a]<<8,n[a]=o%58,o=o/58|0;for(;o>0;)n.push(o%58),o=o/58|0}for(;n.length>0&&n[n.length-1]===0;)n.pop();let r="";for(let o=0;o<e;o++)r+=gn[0];for(let o=n.length-1;o>=0;--o)r+=gn[n[o]];return r}});var le=v(Ee=>{"use strict";Object.defineProperty(Ee,"__esModule",{value:!0});Ee.nearActionsToConnectorActions=void 0;var ps=fn(),gs=s=>{try{return JSON.parse(new TextDecoder().decode(s))}catch{return s}},fs=s=>s.map(e=>{if("type"in e)return e;if(e.functionCall)return{type:"FunctionCall",params:{methodName:e.functionCall.methodName,args:gs(e.functionCall.args),gas:e.functionCall.gas.toString(),deposit:e.functionCall.deposit.toString()}};if(e.deployGlobalContract)return{type:"DeployGlobalContract",params:{code:e.deployGlobalContract.code,deployMode:e.deployGlobalContract.deployMode.AccountId?"AccountId":"CodeHash"}};if(e.createAccount)return{type:"CreateAccount"};if(e.useGlobalContract)return{type:"UseGlobalContract",params:{contractIdentifier:e.useGlobalContract.contractIdentifier.AccountId?{accountId:e.useGlobalContract.contractIdentifier.AccountId}:{codeHash:(0,ps.encodeBase58)(e.useGlobalContract.contractIdentifier.CodeHash)}}};if(e.deployContract)return{type:"DeployContract",params:{code:e.deployContract.code}};if(e.deleteAccount)return{type:"DeleteAccount",params:{beneficiaryId:e.deleteAccount.beneficiaryId}};if(e.deleteKey)return{type:"DeleteKey",params:{publicKey:e.deleteKey.publicKey.toString()}};if(e.transfer)return{type:"Transfer",params:{deposit:e.transfer.deposit.toString()}};if(e.stake)return{type:"Stake",params:{stake:e.stake.stake.toString(),publicKey:e.stake.publicKey.toString()}};if(e.addKey)return{type:"AddKey",params:{publicKey:e.addKey.publicKey.toString(),accessKey:{nonce:Number(e.addKey.accessKey.nonce),permission:e.addKey.accessKey.permission.functionCall?{receiverId:e.addKey.accessKey.permission.functionCall.receiverId,allowance:e.addKey.accessKey.permission.functionCall.allowance?.toString(),methodNames:e.addKey.accessKey.permission.functionCall.methodNames}:"FullAccess"}}};throw new Error("Unsupported action type")});Ee.nearActionsToConnectorActions=fs});var $e=v(Ae=>{"use strict";Object.defineProperty(Ae,"__esModule",{value:!0});Ae.uuid4=void 0;var ws=()=>typeof window<"u"&&typeof window.crypto<"u"&&typeof window.crypto.randomUUID=="function"?window.crypto.randomUUID():"xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".replace(/[xy]/g,function(s){let e=Math.random()*16|0;return(s==="x"?e:e&3|8).toString(16)});Ae.uuid4=ws});var ct=v(Ce=>{"use strict";Object.defineProperty(Ce,"__esModule",{value:!0});Ce.ParentFrameWallet=void 0;var it=le(),ms=$e(),at=class{connector;manifest;constructor(e,t){this.connector=e,this.manifest=t}callParentFrame(e,t){let n=(0,ms.uuid4)();return window.parent.postMessage({type:"near-wallet-injected-request",id:n,method:e,params:t},"*"),new Promise((r,o)=>{let a=c=>{c.data.type==="near-wallet-injected-response"&&c.data.id===n&&(window.removeEventListener("message",a),c.data.success?r(c.data.result):o(c.data.error))};window.addEventListener("message",a)})}async signIn(e){let t=await this.callParentFrame("near:signIn",{network:e?.network??this.connector.network,addFunctionCallKey:e?.addFunctionCallKey});return Array.isArray(t)?t:[t]}async signInAndSignMessage(e){let t=await this.callParentFrame("near:signInAndSignMessage",{network:e?.network??this.connector.network,addFunctionCallKey:e?.addFunctionCallKey,messageParams:e.messageParams});return Array.isArray(t)?t:[t]}async signOut(e){let t={...e,network:e?.network??this.connector.network};await this.callParentFrame("near:signOut",t)}async getAccounts(e){let t={...e,network:e?.network??this.connector.network};return this.callParentFrame("near:getAccounts",t)}async signAndSendTransaction(e){let t=(0,it.nearActionsToConnectorActions)(e.actions),n={...e,actions:t,network:e.network??this.connector.network};return this.callParentFrame("near:signAndSendTransaction",n)}async signAndSendTransactions(e){let t={...e,network:e.network??this.connector.network};return t.transactions=t.transactions.map(n=>({actions:(0,it.nearActionsToConnectorActions)(n.actions),receiverId:n.receiverId})),this.callParentFrame("near:signAndSendTransactions",t)}async signMessage(e){let t={...e,network:e.network??this.connector.network};return this.callParentFrame("near:signMessage",t)}async signDelegateActions(e){let t={...e,delegateActions:e.delegateActions.map(n=>({...n,actions:(0,it.nearActionsToConnectorActions)(n.actions)})),network:e.network||this.connector.network};return this.callParentFrame("near:signDelegateActions",t)}};Ce.ParentFrameWallet=at});var lt=v(Te=>{"use strict";Object.defineProperty(Te,"__esModule",{value:!0});Te.parseUrl=void 0;var ys=s=>{try{return new URL(s)}catch{return null}};Te.parseUrl=ys});var ut=v(Pe=>{"use strict";Object.defineProperty(Pe,"__esModule",{value:!0});Pe.EventEmitter=void 0;var dt=class{events={};on(e,t){this.events[e]||(this.events[e]=[]),this.events[e].push(t)}emit(e,t){this.events[e]?.forEach(n=>n(t))}off(e,t){this.events[e]=this.events[e]?.filter(n=>n!==t)}once(e,t){let n=r=>{t(r),this.off(e,n)};this.on(e,n)}removeAllListeners(e){e?delete this.events[e]:this.events={}}};Pe.EventEmitter=dt});var je=v(_e=>{"use strict";Object.defineProperty(_e,"__esModule",{value:!0});_e.escapeHtml=wn;_e.html=bs;function wn(s){return s.replace(/&/g,"&amp;").replace(/</g,"&lt;").replace(/>/g,"&gt;").replace(/"/g,"&quot;").replace(/'/g,"&#039;")}var ht=Symbol("htmlTag");function bs(s,...e){let t=s[0];for(let n=0;n<e.length;n++){for(let r of Array.isArray(e[n])?e[n]:[e[n]]){let o=r?.[ht]?r[ht]:wn(String(r??""));t+=o}t+=s[n+1]}return Object.freeze({[ht]:t,get html(){return t}})}});var mn=v(Be=>{"use strict";Object.defineProperty(Be,"__esModule",{value:!0});Be.css=void 0;var vs=s=>`
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
`;Be.css=vs});var gt=v(Me=>{"use strict";Object.defineProperty(Me,"__esModule",{value:!0});Me.Popup=void 0;var ks=mn(),xs=je(),yn=`n${Math.random().toString(36).substring(2,15)}`;if(typeof document<"u"){let s=document.createElement("style");s.textContent=(0,ks.css)(`.${yn}`),document.head.append(s)}var pt=class{delegate;isClosed=!1;root=document.createElement("div");state={};constructor(e){this.delegate=e}get dom(){return(0,xs.html)``}disposables=[];addListener(e,t,n){let r=typeof e=="string"?this.root.querySelector(e):e;r&&(r.addEventListener(t,n),this.disposables.push(()=>r.removeEventListener(t,n)))}handlers(){this.disposables.forEach(n=>n()),this.disposables=[];let e=this.root.querySelector(".modal-container"),t=this.root.querySelector(".modal-content");t.onclick=n=>n.stopPropagation(),e.onclick=()=>{this.delegate.onReject(),this.destroy()}}update(e){this.state={...this.state,...e},this.root.innerHTML=this.dom.html,this.handlers()}create({show:e=!0}){this.root.className=`${yn} hot-connector-popup`,this.root.innerHTML=this.dom.html,document.body.append(this.root),this.handlers();let t=this.root.querySelector(".modal-container"),n=this.root.querySelector(".modal-content");n.style.transform="translateY(50px)",t.style.opacity="0",this.root.style.display="none",e&&setTimeout(()=>this.show(),10)}show(){let e=this.root.querySelector(".modal-container"),t=this.root.querySelector(".modal-content");t.style.transform="translateY(50px)",e.style.opacity="0",this.root.style.display="block",setTimeout(()=>{t.style.transform="translateY(0)",e.style.opacity="1"},100)}hide(){let e=this.root.querySelector(".modal-container"),t=this.root.querySelector(".modal-content");t.style.transform="translateY(50px)",e.style.opacity="0",setTimeout(()=>{this.root.style.display="none"},200)}destroy(){this.isClosed||(this.isClosed=!0,this.hide(),setTimeout(()=>{this.root.remove()},200))}};Me.Popup=pt});var bn=v(Ie=>{"use strict";Object.defineProperty(Ie,"__esModule",{value:!0});Ie.IframeWalletPopup=void 0;var ft=je(),Ss=gt(),wt=class extends Ss.Popup{delegate;constructor(e){super(e),this.delegate=e}handlers(){super.handlers(),this.addListener("button","click",()=>this.delegate.onApprove())}create(){super.create({show:!1}),this.root.querySelector(".modal-body").appendChild(this.delegate.iframe),this.delegate.iframe.style.width="100%",this.delegate.iframe.style.height="720px",this.delegate.iframe.style.border="none"}get footer(){if(!this.delegate.footer)return"";let{icon:e,heading:t}=this.delegate.footer;return(0,ft.html)`
      <div class="footer">
        ${e?(0,ft.html)`<img src="${e}" alt="${t}" />`:""}
        <p>${t}</p>
      </div>
    `}get dom(){return(0,ft.html)`<div class="modal-container">
      <div class="modal-content">
        <div class="modal-body" style="padding: 0; overflow: auto;"></div>
        ${this.footer}
      </div>
    </div>`}};Ie.IframeWalletPopup=wt});var vn=v(Ne=>{"use strict";Object.defineProperty(Ne,"__esModule",{value:!0});Ne.NEAR_CONNECT_VERSION=void 0;Ne.NEAR_CONNECT_VERSION="0.11.4"});var kn=v(mt=>{"use strict";Object.defineProperty(mt,"__esModule",{value:!0});var Es=vn();async function As(s){let e=await s.executor.getAllStorage(),t=s.executor.connector.providers,n=s.executor.manifest,r=s.id,o=s.code.replaceAll(".localStorage",".sandboxedLocalStorage").replaceAll("window.top","window.selector").replaceAll("window.open","window.selector.open"),a=s.cspNonce?` nonce="${s.cspNonce.replace(/[^A-Za-z0-9+/=]/g,"")}"`:"";return`
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


      <script${a}>
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
        nearConnectVersion: "${Es.NEAR_CONNECT_VERSION}",
        
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

      <script type="module"${a}>${o}<\/script>
    </body>
  </html>
    `}mt.default=As});var xn=v(de=>{"use strict";var $s=de&&de.__importDefault||function(s){return s&&s.__esModule?s:{default:s}};Object.defineProperty(de,"__esModule",{value:!0});var Cs=ut(),Ts=$e(),Ps=bn(),_s=$s(kn()),yt=class{executor;origin;iframe=document.createElement("iframe");events=new Cs.EventEmitter;popup;handler;readyPromiseResolve;readyPromise=new Promise(e=>{this.readyPromiseResolve=e});constructor(e,t,n,r){this.executor=e,this.origin=(0,Ts.uuid4)(),this.handler=a=>{a.data.origin===this.origin&&(a.data.method==="wallet-ready"&&this.readyPromiseResolve(),n(this,a))},window.addEventListener("message",this.handler);let o=[];this.executor.checkPermissions("usb")&&o.push("usb *;"),this.executor.checkPermissions("hid")&&o.push("hid *;"),this.executor.checkPermissions("clipboardRead")&&o.push("clipboard-read;"),this.executor.checkPermissions("clipboardWrite")&&o.push("clipboard-write;"),this.executor.checkPermissions("bluetooth")&&o.push("bluetooth *;"),this.iframe.allow=o.join(" "),this.iframe.setAttribute("sandbox","allow-scripts"),(0,_s.default)({id:this.origin,executor:this.executor,code:t,cspNonce:r}).then(a=>{this.executor.connector.logger?.log("Iframe code injected"),this.iframe.srcdoc=a}),this.popup=new Ps.IframeWalletPopup({footer:this.executor.connector.footerBranding,iframe:this.iframe,onApprove:()=>{},onReject:()=>{window.removeEventListener("message",this.handler),this.events.emit("close",{}),this.popup.destroy()}}),this.popup.create()}on(e,t){this.events.on(e,t)}show(){this.popup.show()}hide(){this.popup.hide()}postMessage(e){if(!this.iframe.contentWindow)throw new Error("Iframe not loaded");this.iframe.contentWindow.postMessage({...e,origin:this.origin},"*")}dispose(){window.removeEventListener("message",this.handler),this.popup.destroy()}};de.default=yt});var Sn=v(ue=>{"use strict";var js=ue&&ue.__importDefault||function(s){return s&&s.__esModule?s:{default:s}};Object.defineProperty(ue,"__esModule",{value:!0});var Z=lt(),bt=$e(),Bs=js(xn()),Ms=(0,bt.uuid4)(),vt=class{connector;manifest;activePanels={};storageSpace;constructor(e,t){this.connector=e,this.manifest=t,this.storageSpace=t.id}checkPermissions(e,t){if(e==="walletConnect")return!!this.manifest.permissions.walletConnect;if(e==="external"){let n=this.manifest.permissions.external;return!n||!t?.entity?!1:n.includes(t.entity)}if(e==="allowsOpen"){let n=(0,Z.parseUrl)(t?.url||""),r=this.manifest.permissions.allowsOpen;return!n||!r||!Array.isArray(r)||r.length===0?!1:r.some(a=>{let c=(0,Z.parseUrl)(a);return!(!c||n.protocol!==c.protocol||c.hostname&&n.hostname!==c.hostname||c.pathname&&c.pathname!=="/"&&n.pathname!==c.pathname)})}return this.manifest.permissions[e]}assertPermissions(e,t,n){if(!this.checkPermissions(t,n.data.params))throw e.postMessage({...n.data,status:"failed",result:"Permission denied"}),new Error("Permission denied")}_onMessage=async(e,t)=>{let n=o=>{e.postMessage({...t.data,status:"success",result:o})},r=o=>{e.postMessage({...t.data,status:"failed",result:o})};if(t.data.method==="ui.showIframe"){e.show(),n(null);return}if(t.data.method==="ui.hideIframe"){e.hide(),n(null);return}if(t.data.method==="storage.set"){this.assertPermissions(e,"storage",t),localStorage.setItem(`${this.storageSpace}:${t.data.params.key}`,t.data.params.value),n(null);return}if(t.data.method==="storage.get"){this.assertPermissions(e,"storage",t);let o=localStorage.getItem(`${this.storageSpace}:${t.data.params.key}`);n(o);return}if(t.data.method==="storage.keys"){this.assertPermissions(e,"storage",t);let o=Object.keys(localStorage).filter(a=>a.startsWith(`${this.storageSpace}:`));n(o);return}if(t.data.method==="storage.remove"){this.assertPermissions(e,"storage",t),localStorage.removeItem(`${this.storageSpace}:${t.data.params.key}`),n(null);return}if(t.data.method==="panel.focus"){let o=this.activePanels[t.data.params.windowId];o&&o.focus(),n(null);return}if(t.data.method==="panel.postMessage"){let o=this.activePanels[t.data.params.windowId];o&&o.postMessage(t.data.params.data,"*"),n(null);return}if(t.data.method==="panel.close"){let o=this.activePanels[t.data.params.windowId];o&&o.close(),delete this.activePanels[t.data.params.windowId],n(null);return}if(t.data.method==="walletConnect.connect"){this.assertPermissions(e,"walletConnect",t);try{if(!this.connector.walletConnect)throw new Error("WalletConnect is not configured");let a=await(await this.connector.walletConnect).connect(t.data.params);a.approval(),n({uri:a.uri})}catch(o){r(o)}return}if(t.data.method==="walletConnect.getProjectId"){if(!this.connector.walletConnect)throw new Error("WalletConnect is not configured");this.assertPermissions(e,"walletConnect",t);let o=await this.connector.walletConnect;n(o.core.projectId);return}if(t.data.method==="walletConnect.disconnect"){this.assertPermissions(e,"walletConnect",t);try{if(!this.connector.walletConnect)throw new Error("WalletConnect is not configured");let a=await(await this.connector.walletConnect).disconnect(t.data.params);n(a)}catch(o){r(o)}return}if(t.data.method==="walletConnect.getSession"){this.assertPermissions(e,"walletConnect",t);try{if(!this.connector.walletConnect)throw new Error("WalletConnect is not configured");let o=await this.connector.walletConnect,a=o.session.keys[o.session.keys.length-1],c=a?o.session.get(a):null;n(c?{topic:c.topic,namespaces:c.namespaces}:null)}catch(o){r(o)}return}if(t.data.method==="walletConnect.request"){this.assertPermissions(e,"walletConnect",t);try{if(!this.connector.walletConnect)throw new Error("WalletConnect is not configured");let a=await(await this.connector.walletConnect).request(t.data.params);n(a)}catch(o){r(o)}return}if(t.data.method==="external"){this.assertPermissions(e,"external",t);try{let{entity:o,key:a,args:c}=t.data.params,l=o.split(".").reduce((u,h)=>u[h],window);o==="nightly.near"&&a==="signTransaction"&&(c[0].encode=()=>c[0]);let d=typeof l[a]=="function"?await l[a](...c||[]):l[a];n(d)}catch(o){r(o)}return}if(t.data.method==="open"){this.assertPermissions(e,"allowsOpen",t);let o=typeof window<"u"?window?.Telegram?.WebApp:null;if(o&&t.data.params.url.startsWith("https://t.me")){o.openTelegramLink(t.data.params.url);return}let a=window.open(t.data.params.url,"_blank",t.data.params.features),c=a?(0,bt.uuid4)():null,l=d=>{let u=(0,Z.parseUrl)(t.data.params.url);u&&u.origin===d.origin&&e.postMessage(d.data)};if(n(c),window.addEventListener("message",l),a&&c){this.activePanels[c]=a;let d=setInterval(()=>{if(!a?.closed)return;window.removeEventListener("message",l);let u={method:"proxy-window:closed",windowId:c};delete this.activePanels[c],clearInterval(d);try{e.postMessage(u)}catch{}},500)}return}if(t.data.method==="open.nativeApp"){this.assertPermissions(e,"allowsOpen",t);let o=(0,Z.parseUrl)(t.data.params.url);if(!o||["https","http","javascript:","file:","data:","blob:","about:"].includes(o.protocol))throw r("Invalid URL"),new Error("[open.nativeApp] Invalid URL");let c=document.createElement("iframe");c.src=t.data.params.url,c.style.display="none",document.body.appendChild(c),e.postMessage({...t.data,status:"success",result:null});return}};actualCode=null;async checkNewVersion(e,t){if(this.actualCode)return this.connector.logger?.log("New version of code already checked"),this.actualCode;let n=(0,Z.parseUrl)(e.manifest.executor);if(n||(n=(0,Z.parseUrl)(location.origin+e.manifest.executor)),!n)throw new Error("Invalid executor URL");n.searchParams.set("nonce",Ms);let r=await fetch(n.toString()).then(o=>o.text());return this.connector.logger?.log("New version of code fetched"),this.actualCode=r,r===t?(this.connector.logger?.log("New version of code is the same as the current version"),this.actualCode):(await this.connector.db.setItem(`${this.manifest.id}:${this.manifest.version}`,r),this.connector.logger?.log("New version of code saved to cache"),r)}async loadCode(){let e=await this.connector.db.getItem(`${this.manifest.id}:${this.manifest.version}`).catch(()=>null);this.connector.logger?.log("Code loaded from cache",e!==null);let t=this.checkNewVersion(this,e);return e||await t}async call(e,t){this.connector.logger?.log("Add to queue",e,t),this.connector.logger?.log("Calling method",e,t);let n=await this.loadCode();this.connector.logger?.log("Code loaded, preparing");let r=new Bs.default(this,n,this._onMessage,this.connector.cspNonce);this.connector.logger?.log("Code loaded, iframe initialized"),await r.readyPromise,this.connector.logger?.log("Iframe ready");let o=(0,bt.uuid4)();return new Promise((a,c)=>{try{let l=d=>{d.data.id!==o||d.data.origin!==r.origin||(r.dispose(),window.removeEventListener("message",l),this.connector.logger?.log("postMessage",{result:d.data,request:{method:e,params:t}}),d.data.status==="failed"?c(d.data.result):a(d.data.result))};window.addEventListener("message",l),r.postMessage({method:e,params:t,id:o}),r.on("close",()=>c(new Error("Wallet closed")))}catch(l){this.connector.logger?.log("Iframe error",l),c(l)}})}async getAllStorage(){let e=Object.keys(localStorage).filter(n=>n.startsWith(`${this.storageSpace}:`)),t={};for(let n of e)t[n.replace(`${this.storageSpace}:`,"")]=localStorage.getItem(n);return t}async clearStorage(){let e=Object.keys(localStorage).filter(t=>t.startsWith(`${this.storageSpace}:`));for(let t of e)localStorage.removeItem(t)}};ue.default=vt});var xt=v(J=>{"use strict";var Is=J&&J.__importDefault||function(s){return s&&s.__esModule?s:{default:s}};Object.defineProperty(J,"__esModule",{value:!0});J.SandboxWallet=void 0;var kt=le(),Ns=Is(Sn()),De=class{connector;manifest;executor;constructor(e,t){this.connector=e,this.manifest=t,this.executor=new Ns.default(e,t)}async signIn(e){return this.executor.call("wallet:signIn",{network:e?.network??this.connector.network,addFunctionCallKey:e?.addFunctionCallKey})}async signInAndSignMessage(e){return this.executor.call("wallet:signInAndSignMessage",{network:e?.network??this.connector.network,addFunctionCallKey:e?.addFunctionCallKey,messageParams:e.messageParams})}async signOut(e){let t={...e,network:e?.network??this.connector.network};await this.executor.call("wallet:signOut",t),await this.executor.clearStorage()}async getAccounts(e){let t={...e,network:e?.network??this.connector.network};return this.executor.call("wallet:getAccounts",t)}async signAndSendTransaction(e){let t=(0,kt.nearActionsToConnectorActions)(e.actions),n={...e,actions:t,network:e.network??this.connector.network};return this.executor.call("wallet:signAndSendTransaction",n)}async signAndSendTransactions(e){let t=e.transactions.map(r=>({actions:(0,kt.nearActionsToConnectorActions)(r.actions),receiverId:r.receiverId})),n={...e,transactions:t,network:e.network??this.connector.network};return this.executor.call("wallet:signAndSendTransactions",n)}async signMessage(e){let t={...e,network:e.network??this.connector.network};return this.executor.call("wallet:signMessage",t)}async signDelegateActions(e){let t={...e,delegateActions:e.delegateActions.map(n=>({...n,actions:(0,kt.nearActionsToConnectorActions)(n.actions)})),network:e.network??this.connector.network};return this.executor.call("wallet:signDelegateActions",t)}};J.SandboxWallet=De;J.default=De});var At=v(Le=>{"use strict";Object.defineProperty(Le,"__esModule",{value:!0});Le.InjectedWallet=void 0;var St=le(),Et=class{connector;wallet;constructor(e,t){this.connector=e,this.wallet=t}get manifest(){return this.wallet.manifest}async signIn({addFunctionCallKey:e,network:t}){return this.wallet.signIn({network:t??this.connector.network,addFunctionCallKey:e})}async signInAndSignMessage(e){return this.wallet.signInAndSignMessage({network:e?.network??this.connector.network,addFunctionCallKey:e.addFunctionCallKey,messageParams:e.messageParams})}async signOut(e){await this.wallet.signOut({network:e?.network??this.connector.network})}async getAccounts(e){return this.wallet.getAccounts({network:e?.network??this.connector.network})}async signAndSendTransaction(e){let t=(0,St.nearActionsToConnectorActions)(e.actions),n=e.network??this.connector.network,r=await this.wallet.signAndSendTransaction({...e,actions:t,network:n});if(!r)throw new Error("No result from wallet");return Array.isArray(r.transactions)?r.transactions[0]:r}async signAndSendTransactions(e){let t=e.network??this.connector.network,n=e.transactions.map(o=>({actions:(0,St.nearActionsToConnectorActions)(o.actions),receiverId:o.receiverId})),r=await this.wallet.signAndSendTransactions({...e,transactions:n,network:t});if(!r)throw new Error("No result from wallet");return Array.isArray(r.transactions)?r.transactions:r}async signMessage(e){return this.wallet.signMessage({...e,network:e.network??this.connector.network})}async signDelegateActions(e){return this.wallet.signDelegateActions({...e,delegateActions:e.delegateActions.map(t=>({...t,actions:(0,St.nearActionsToConnectorActions)(t.actions)})),network:e.network??this.connector.network})}};Le.InjectedWallet=Et});var En=v(Oe=>{"use strict";Object.defineProperty(Oe,"__esModule",{value:!0});Oe.NearWalletsPopup=void 0;var X=je(),Ds=lt(),Ls=gt(),Os={id:"custom-wallet",name:"Custom Wallet",icon:"https://www.mynearwallet.com/images/webclip.png",description:"Custom wallet for NEAR.",website:"",version:"1.0.0",executor:"your-executor-url.js",type:"sandbox",platform:{},features:{signMessage:!0,signInWithoutAddKey:!0,signInAndSignMessage:!0,signAndSendTransaction:!0,signAndSendTransactions:!0,signDelegateActions:!0},permissions:{storage:!0,allowsOpen:[]}},$t=class extends Ls.Popup{delegate;constructor(e){super(e),this.delegate=e,this.update({wallets:e.wallets,showSettings:!1})}handlers(){super.handlers(),this.addListener(".settings-button","click",()=>this.update({showSettings:!0})),this.addListener(".back-button","click",()=>this.update({showSettings:!1})),this.root.querySelectorAll(".connect-item").forEach(e=>{e instanceof HTMLDivElement&&this.addListener(e,"click",()=>this.delegate.onSelect(e.dataset.type))}),this.root.querySelectorAll(".remove-wallet-button").forEach(e=>{e instanceof SVGSVGElement&&this.addListener(e,"click",async t=>{t.stopPropagation(),await this.delegate.onRemoveDebugManifest(e.dataset.type);let n=this.state.wallets.filter(r=>r.id!==e.dataset.type);this.update({wallets:n})})}),this.addListener(".add-debug-manifest-button","click",async()=>{try{let e=this.root.querySelector("#debug-manifest-input")?.value??"",t=await this.delegate.onAddDebugManifest(e);this.update({showSettings:!1,wallets:[t,...this.state.wallets]})}catch(e){alert(`Something went wrong: ${e}`)}})}create(){super.create({show:!0})}walletDom(e){let t=(0,X.html)`
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
    `;return(0,X.html)`
      <div class="connect-item" data-type="${e.id}">
        <img style="background: #333" src="${e.icon}" alt="${e.name}" />
        <div class="connect-item-info">
          <span>${e.name}</span>
          <span class="wallet-address">${(0,Ds.parseUrl)(e.website)?.hostname}</span>
        </div>
        ${e.debug?t:""}
      </div>
    `}get footer(){if(!this.delegate.footer)return"";let{icon:e,heading:t,link:n,linkText:r}=this.delegate.footer;return(0,X.html)`
      <div class="footer">
        ${e?(0,X.html)`<img src="${e}" alt="${t}" />`:""}
        <p>${t}</p>
        <a class="get-wallet-link" href="${n}" target="_blank">${r}</a>
      </div>
    `}get dom(){return this.state.showSettings?(0,X.html)`
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

              <textarea style="width: 100%;" id="debug-manifest-input" rows="10">${JSON.stringify(Os,null,2)}</textarea>
              <button class="add-debug-manifest-button">Add</button>
            </div>

            ${this.footer}
          </div>
        </div>
      `:(0,X.html)`<div class="modal-container">
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
    </div>`}};Oe.NearWalletsPopup=$t});var An=v(Tt=>{"use strict";Object.defineProperty(Tt,"__esModule",{value:!0});var Ct=class{dbName;storeName;version;constructor(e,t){this.dbName=e,this.storeName=t,this.version=1}getDb(){return new Promise((e,t)=>{if(typeof window>"u"||typeof indexedDB>"u"){t(new Error("IndexedDB is not available (SSR environment)"));return}let n=indexedDB.open(this.dbName,this.version);n.onerror=r=>{console.error("Error opening database:",r.target.error),t(new Error("Error opening database"))},n.onsuccess=r=>{e(n.result)},n.onupgradeneeded=r=>{let o=n.result;o.objectStoreNames.contains(this.storeName)||o.createObjectStore(this.storeName)}})}async getItem(e){let t=await this.getDb();if(typeof e=="number"&&(e=e.toString()),typeof e!="string")throw new Error("Key must be a string");return new Promise((n,r)=>{if(!this.storeName){r(new Error("Store name not set"));return}let o=t.transaction(this.storeName,"readonly");o.onerror=l=>r(o.error);let c=o.objectStore(this.storeName).get(e);c.onerror=l=>r(c.error),c.onsuccess=()=>{n(c.result),t.close()}})}async setItem(e,t){let n=await this.getDb();if(typeof e=="number"&&(e=e.toString()),typeof e!="string")throw new Error("Key must be a string");return new Promise((r,o)=>{if(!this.storeName){o(new Error("Store name not set"));return}let a=n.transaction(this.storeName,"readwrite");a.onerror=d=>o(a.error);let l=a.objectStore(this.storeName).put(t,e);l.onerror=d=>o(l.error),l.onsuccess=()=>{n.close(),r()}})}async removeItem(e){let t=await this.getDb();if(typeof e=="number"&&(e=e.toString()),typeof e!="string")throw new Error("Key must be a string");return new Promise((n,r)=>{if(!this.storeName){r(new Error("Store name not set"));return}let o=t.transaction(this.storeName,"readwrite");o.onerror=l=>r(o.error);let c=o.objectStore(this.storeName).delete(e);c.onerror=l=>r(c.error),c.onsuccess=()=>{t.close(),n()}})}async keys(){let e=await this.getDb();return new Promise((t,n)=>{if(!this.storeName){n(new Error("Store name not set"));return}let r=e.transaction(this.storeName,"readonly");r.onerror=c=>n(r.error);let a=r.objectStore(this.storeName).getAllKeys();a.onerror=c=>n(a.error),a.onsuccess=()=>{t(a.result),e.close()}})}async count(){let e=await this.getDb();return new Promise((t,n)=>{if(!this.storeName){n(new Error("Store name not set"));return}let r=e.transaction(this.storeName,"readonly");r.onerror=c=>n(r.error);let a=r.objectStore(this.storeName).count();a.onerror=c=>n(a.error),a.onsuccess=()=>{t(a.result),e.close()}})}async length(){return this.count()}async clear(){let e=await this.getDb();return new Promise((t,n)=>{if(!this.storeName){n(new Error("Store name not set"));return}let r=e.transaction(this.storeName,"readwrite");r.onerror=c=>n(r.error);let a=r.objectStore(this.storeName).clear();a.onerror=c=>n(a.error),a.onsuccess=()=>{e.close(),t()}})}};Tt.default=Ct});var Cn=v(Q=>{"use strict";var Ks=Q&&Q.__importDefault||function(s){return s&&s.__esModule?s:{default:s}};Object.defineProperty(Q,"__esModule",{value:!0});Q.NearConnector=void 0;var Rs=ut(),Ws=En(),Hs=rt(),qs=Ks(An()),Us=ct(),Fs=At(),$n=xt(),zs=["https://raw.githubusercontent.com/hot-dao/near-selector/refs/heads/main/repository/manifest.json","https://cdn.jsdelivr.net/gh/azbang/hot-connector/repository/manifest.json"];function Js(s){return e=>Object.entries(s).length===0?!0:Object.entries(s).filter(([t,n])=>n===!0).every(([t])=>e.manifest.features?.[t]===!0)}var Pt=class{storage;events;db;logger;wallets=[];manifest={wallets:[],version:"1.0.0"};features={};network="mainnet";providers={mainnet:[],testnet:[]};walletConnect;footerBranding;excludedWallets=[];autoConnect;cspNonce;whenManifestLoaded;constructor(e){this.db=new qs.default("hot-connector","wallets"),this.storage=e?.storage??new Hs.LocalStorage,this.events=e?.events??new Rs.EventEmitter,this.logger=e?.logger,this.cspNonce=e?.cspNonce,this.network=e?.network??"mainnet",this.walletConnect=e?.walletConnect,this.autoConnect=e?.autoConnect??!0,this.providers=e?.providers??{mainnet:[],testnet:[]},this.excludedWallets=e?.excludedWallets??[],this.features=e?.features??{},e?.footerBranding!==void 0?this.footerBranding=e?.footerBranding:this.footerBranding={icon:"data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%20fill%3D%22none%22%20viewBox%3D%220%200%20512%20512%22%20class%3D%22size-7%22%3E%3Crect%20width%3D%22512%22%20height%3D%22512%22%20fill%3D%22%2300ec97%22%20rx%3D%22110%22%2F%3E%3Cpath%20fill%3D%22%23000%22%20d%3D%22M373.89%20106.199a31.95%2031.95%200%200%200-27.213%2015.207l-62.631%2092.979a6.67%206.67%200%200%200-.989%205.001%206.66%206.66%200%200%200%202.837%204.235%206.67%206.67%200%200%200%208.032-.494l61.643-53.47c1.02-.924%202.599-.827%203.523.193.419.473.644%201.074.644%201.697v167.402a2.49%202.49%200%200%201-2.502%202.491%202.48%202.48%200%200%201-1.912-.891L168.976%20117.497a31.93%2031.93%200%200%200-24.356-11.298h-6.508c-17.623%200-31.917%2014.294-31.917%2031.917v235.767c0%2017.623%2014.294%2031.917%2031.917%2031.917a31.94%2031.94%200%200%200%2027.213-15.206l62.631-92.98a6.66%206.66%200%200%200-1.847-9.236%206.67%206.67%200%200%200-8.033.494l-61.643%2053.471c-1.02.923-2.599.826-3.522-.194a2.5%202.5%200%200%201-.634-1.697V173.008a2.49%202.49%200%200%201%202.502-2.492c.731%200%201.439.322%201.912.891l186.313%20223.096a31.95%2031.95%200%200%200%2024.357%2011.297h6.508c17.623%200%2031.927-14.272%2031.938-31.895V138.116c0-17.623-14.294-31.917-31.917-31.917%22%2F%3E%3C%2Fsvg%3E",heading:"NEAR Connector",link:"https://wallet.near.org",linkText:"Don't have a wallet?"},this.whenManifestLoaded=new Promise(async t=>{e?.manifest==null||typeof e.manifest=="string"?this.manifest=await this._loadManifest(e?.manifest).catch(()=>({wallets:[],version:"1.0.0"})):this.manifest=e?.manifest??{wallets:[],version:"1.0.0"};let n=new Set(this.excludedWallets);n.delete("hot-wallet"),this.manifest.wallets=this.manifest.wallets.filter(r=>!(r.permissions.walletConnect&&!this.walletConnect||n.has(r.id))),await new Promise(r=>setTimeout(r,100)),t()}),typeof window<"u"&&(window.addEventListener("near-wallet-injected",this._handleNearWalletInjected),window.dispatchEvent(new Event("near-selector-ready")),window.addEventListener("message",async t=>{t.data.type==="near-wallet-injected"&&(await this.whenManifestLoaded.catch(()=>{}),this.wallets=this.wallets.filter(n=>n.manifest.id!==t.data.manifest.id),this.wallets.unshift(new Us.ParentFrameWallet(this,t.data.manifest)),this.events.emit("selector:walletsChanged",{}),this.autoConnect&&this.connect({walletId:t.data.manifest.id}))})),this.whenManifestLoaded.then(()=>{typeof window<"u"&&window.parent.postMessage({type:"near-selector-ready"},"*"),this.manifest.wallets.forEach(t=>this.registerWallet(t)),this.storage.get("debug-wallets").then(t=>{JSON.parse(t??"[]").forEach(r=>this.registerDebugWallet(r))})})}get availableWallets(){return this.wallets.filter(t=>Object.entries(this.features).every(([n,r])=>!(r&&!t.manifest.features?.[n]))).filter(t=>!(this.network==="testnet"&&!t.manifest.features?.testnet))}_handleNearWalletInjected=e=>{this.wallets=this.wallets.filter(t=>t.manifest.id!==e.detail.manifest.id),this.wallets.unshift(new Fs.InjectedWallet(this,e.detail)),this.events.emit("selector:walletsChanged",{})};async _loadManifest(e){let t=e?[e]:zs;for(let n of t){let r=await fetch(n).catch(()=>null);if(!(!r||!r.ok))return await r.json()}throw new Error("Failed to load manifest")}async switchNetwork(e,t){this.network!==e&&(await this.disconnect().catch(()=>{}),this.network=e,await this.connect(t))}async registerWallet(e){if(e.type!=="sandbox")throw new Error("Only sandbox wallets are supported");this.wallets.find(t=>t.manifest.id===e.id)||(this.wallets.push(new $n.SandboxWallet(this,e)),this.events.emit("selector:walletsChanged",{}))}async registerDebugWallet(e){let t=typeof e=="string"?JSON.parse(e):e;if(t.type!=="sandbox")throw new Error("Only sandbox wallets type are supported");if(!t.id)throw new Error("Manifest must have an id");if(!t.name)throw new Error("Manifest must have a name");if(!t.icon)throw new Error("Manifest must have an icon");if(!t.website)throw new Error("Manifest must have a website");if(!t.version)throw new Error("Manifest must have a version");if(!t.executor)throw new Error("Manifest must have an executor");if(!t.features)throw new Error("Manifest must have features");if(!t.permissions)throw new Error("Manifest must have permissions");if(this.wallets.find(r=>r.manifest.id===t.id))throw new Error("Wallet already registered");t.debug=!0,this.wallets.unshift(new $n.SandboxWallet(this,t)),this.events.emit("selector:walletsChanged",{});let n=this.wallets.filter(r=>r.manifest.debug).map(r=>r.manifest);return this.storage.set("debug-wallets",JSON.stringify(n)),t}async removeDebugWallet(e){this.wallets=this.wallets.filter(n=>n.manifest.id!==e);let t=this.wallets.filter(n=>n.manifest.debug).map(n=>n.manifest);this.storage.set("debug-wallets",JSON.stringify(t)),this.events.emit("selector:walletsChanged",{})}async selectWallet({features:e={}}={}){return await this.whenManifestLoaded.catch(()=>{}),new Promise((t,n)=>{let r=new Ws.NearWalletsPopup({footer:this.footerBranding,wallets:this.availableWallets.filter(Js(e)).map(o=>o.manifest),onRemoveDebugManifest:async o=>this.removeDebugWallet(o),onAddDebugManifest:async o=>this.registerDebugWallet(o),onReject:()=>(n(new Error("User rejected")),r.destroy()),onSelect:o=>(t(o),r.destroy())});r.create()})}async connect(e={}){let t=e.walletId,n=e.signMessageParams;await this.whenManifestLoaded.catch(()=>{}),t||(t=await this.selectWallet({features:{signInAndSignMessage:e.signMessageParams!=null?!0:void 0,signInWithFunctionCallKey:e.addFunctionCallKey!=null?!0:void 0}}));try{let r=await this.wallet(t);this.logger?.log("Wallet available to connect",r),await this.storage.set("selected-wallet",t),this.logger?.log(`Set preferred wallet, try to signIn${n!=null?" (with signed message)":""}`,t);let o;if(e.addFunctionCallKey!=null&&(this.logger?.log("Adding function call access key during sign in with params",e.addFunctionCallKey),o={...e.addFunctionCallKey,gasAllowance:e.addFunctionCallKey.gasAllowance??{amount:"250000000000000000000000",kind:"limited"}}),n!=null){let a=await r.signInAndSignMessage({addFunctionCallKey:o,messageParams:n,network:this.network});if(!a?.length)throw new Error("Failed to sign in");this.logger?.log("Signed in to wallet (with signed message)",t,a),this.events.emit("wallet:signInAndSignMessage",{wallet:r,accounts:a,success:!0}),this.events.emit("wallet:signIn",{wallet:r,accounts:a.map(c=>({accountId:c.accountId,publicKey:c.publicKey})),success:!0,source:"signInAndSignMessage"})}else{let a=await r.signIn({addFunctionCallKey:o,network:this.network});if(!a?.length)throw new Error("Failed to sign in");this.logger?.log("Signed in to wallet",t,a),this.events.emit("wallet:signIn",{wallet:r,accounts:a,success:!0,source:"signIn"})}return r}catch(r){throw this.logger?.log("Failed to connect to wallet",r),r}}async disconnect(e){e||(e=await this.wallet()),await e.signOut({network:this.network}),await this.storage.remove("selected-wallet"),this.events.emit("wallet:signOut",{success:!0})}async getConnectedWallet(){await this.whenManifestLoaded.catch(()=>{});let e=await this.storage.get("selected-wallet"),t=this.wallets.find(r=>r.manifest.id===e);if(!t)throw new Error("No wallet selected");let n=await t.getAccounts();if(!n?.length)throw new Error("No accounts found");return{wallet:t,accounts:n}}async wallet(e){if(await this.whenManifestLoaded.catch(()=>{}),!e)return this.getConnectedWallet().then(({wallet:n})=>n).catch(async()=>{throw await this.storage.remove("selected-wallet"),new Error("No accounts found")});let t=this.wallets.find(n=>n.manifest.id===e);if(!t)throw new Error("Wallet not found");return t}async use(e){await this.whenManifestLoaded.catch(()=>{}),this.wallets=this.wallets.map(t=>new Proxy(t,{get(n,r,o){let a=Reflect.get(n,r,o);if(r in e&&typeof a=="function"){let c=e[r];return function(...l){let d=()=>a.apply(n,l);return l.length>0?c.call(this,...l,d):c.call(this,void 0,d)}}return a}}))}on(e,t){this.events.on(e,t)}once(e,t){this.events.once(e,t)}off(e,t){this.events.off(e,t)}removeAllListeners(e){this.events.removeAllListeners(e)}};Q.NearConnector=Pt});var Tn=v(j=>{"use strict";Object.defineProperty(j,"__esModule",{value:!0});j.nearActionsToConnectorActions=j.NearConnector=j.InjectedWallet=j.SandboxWallet=j.ParentFrameWallet=j.LocalStorage=void 0;var Ys=rt();Object.defineProperty(j,"LocalStorage",{enumerable:!0,get:function(){return Ys.LocalStorage}});var Gs=ct();Object.defineProperty(j,"ParentFrameWallet",{enumerable:!0,get:function(){return Gs.ParentFrameWallet}});var Vs=xt();Object.defineProperty(j,"SandboxWallet",{enumerable:!0,get:function(){return Vs.SandboxWallet}});var Zs=At();Object.defineProperty(j,"InjectedWallet",{enumerable:!0,get:function(){return Zs.InjectedWallet}});var Xs=Cn();Object.defineProperty(j,"NearConnector",{enumerable:!0,get:function(){return Xs.NearConnector}});var Qs=le();Object.defineProperty(j,"nearActionsToConnectorActions",{enumerable:!0,get:function(){return Qs.nearActionsToConnectorActions}})});var f=class extends Error{name="CryptoError"},Ht=1,L=65,B=12,me=16,re=32,ye=1+L+B+me,Yn=1+B+me,be=8192,qt=/^[a-z0-9-]{1,80}$/,S=()=>{let s=globalThis.crypto?.subtle;if(!s)throw new f("this page needs WebCrypto, which browsers give only to https:// or loopback pages");return s},R=new TextEncoder;function Je(s){if(!qt.test(s))throw new f("not a task id")}function Gn(s){if(s!=="device-copy"&&s!=="answer"&&s!=="note"&&s!=="rejection")throw new f("unknown purpose for a blob sealed to a public key")}function Ut(s,e){return Gn(s),Je(e),R.encode(`countersign-task:v1:${s}:${e}`)}function Vn(s){return Je(s),R.encode(s)}function Zn(s,e){if(Je(s),!Number.isSafeInteger(e)||e<0)throw new f("file number is not a whole number from 0");return R.encode(`${s}:file:${e}`)}function z(...s){let e=new Uint8Array(s.reduce((n,r)=>n+r.length,0)),t=0;for(let n of s)e.set(n,t),t+=n.length;return e}function Ft(s){let e="";for(let t of s)e+=t.toString(16).padStart(2,"0");return e}function Xn(s){if(s.length%2!==0||!/^[0-9a-fA-F]*$/.test(s))throw new f("not hex");let e=new Uint8Array(s.length/2);for(let t=0;t<e.length;t++)e[t]=parseInt(s.slice(2*t,2*t+2),16);return e}var zt="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",Jt="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";function Yt(s,e,t){let n="";for(let r=0;r<s.length;r+=3){let o=(s[r]??0)<<16|(s[r+1]??0)<<8|(s[r+2]??0),a=r+1>=s.length?2:r+2>=s.length?3:4;for(let c=0;c<4;c++)n+=c<a?e.charAt(o>>18-6*c&63):t?"=":""}return n}function Gt(s,e,t){let n=()=>new f("not canonical base64"),r=s;if(t){if(s.length%4!==0)throw n();r=s.replace(/={1,2}$/,"")}let o=r.length%4;if(o===1||t&&r.length!==s.length&&o===0)throw n();let a=new Uint8Array(Math.floor(r.length*6/8)),c=0,l=0,d=0;for(let u of r){let h=e.indexOf(u);if(h<0)throw n();c=(c<<6|h)&65535,l+=6,l>=8&&(l-=8,a[d++]=c>>l&255)}if((c&(1<<l)-1)!==0)throw n();return a}var O=s=>Yt(s,zt,!0),W=s=>Gt(s,zt,!0),we=s=>Yt(s,Jt,!1),Qn=s=>Gt(s,Jt,!1);async function H(s){return Ft(new Uint8Array(await S().digest("SHA-256",s)))}var es=s=>H(s);function Vt(s,e){let t=n=>n===null?"null":`"${O(n)}"`;return H(R.encode(`{"note":${t(s)},"supplied":${t(e)}}`))}var ve={name:"ECDH",namedCurve:"P-256"};async function Zt(){let s=await S().generateKey(ve,!1,["deriveBits"]),e=new Uint8Array(await S().exportKey("raw",s.publicKey));return{privateKey:s.privateKey,publicKey:e}}async function gr(s,e){if(s.length!==32||e.length!==L||e[0]!==4)throw new f("not a P-256 private scalar and uncompressed public point");let t={kty:"EC",crv:"P-256",d:we(s),x:we(e.subarray(1,33)),y:we(e.subarray(33))};return{privateKey:await S().importKey("jwk",t,ve,!1,["deriveBits"]),publicKey:e.slice()}}function Xt(s){if(s.length!==L||s[0]!==4)throw new f("not an uncompressed P-256 point");return"p256:"+we(s)}async function Qt(s){if(!s.startsWith("p256:"))throw new f('public key does not start with "p256:"');let e=s.slice(5);if(e.length!==87)throw new f("public key is not 87 characters after the prefix");let t;try{t=Qn(e)}catch{throw new f("public key is not canonical unpadded base64url of 65 bytes")}if(t.length!==L||t[0]!==4)throw new f("public key is not an uncompressed point on P-256");return await Ye(t,"public key is not an uncompressed point on P-256"),t}async function Ye(s,e){if(s.length!==L||s[0]!==4)throw new f(e);try{return await S().importKey("raw",s,ve,!0,[])}catch{throw new f(e)}}async function en(s,e,t,n){let r=new Uint8Array(await S().deriveBits({name:"ECDH",public:e},s,256)),o=await S().importKey("raw",r,"HKDF",!1,["deriveBits"]);r.fill(0);let a=new Uint8Array(await S().deriveBits({name:"HKDF",hash:"SHA-256",salt:t,info:n},o,re*8));try{return await S().importKey("raw",a,"AES-GCM",!1,["encrypt","decrypt"])}finally{a.fill(0)}}function ts(){return crypto.getRandomValues(new Uint8Array(B))}async function Ge(s,e,t,n){let r=await S().generateKey(ve,!1,["deriveBits"]),o=new Uint8Array(await S().exportKey("raw",r.publicKey));return ns({privateKey:r.privateKey,publicKey:o},ts(),s,e,t,n)}async function ns(s,e,t,n,r,o){let a=Ut(n,r);if(e.length!==B)throw new f("nonce is not 12 bytes");let c=typeof t=="string"?await Qt(t):t,l=await Ye(c,"recipient is not a P-256 public key"),d=await en(s.privateKey,l,z(s.publicKey,c),a),u=new Uint8Array(await S().encrypt({name:"AES-GCM",iv:e,additionalData:a,tagLength:128},d,o));return z(Uint8Array.of(Ht),s.publicKey,e,u)}function qe(s,e){if(s.length<1+e+me)throw new f(`decryption failed: blob of ${s.length} bytes is shorter than ${1+e+me}`);if(s[0]!==Ht)throw new f("decryption failed: unknown blob version")}async function ss(s,e,t,n){let r=Ut(e,t);qe(n,L+B);let o=n.slice(1,1+L),a=n.slice(1+L,1+L+B),c=n.slice(1+L+B),l=await Ye(o,"decryption failed: ephemeral key is not an uncompressed P-256 point"),d;try{d=await en(s.privateKey,l,z(o,s.publicKey),r)}catch{throw new f("decryption failed: key agreement")}return Ue(d,a,c,r)}async function Ue(s,e,t,n){try{return new Uint8Array(await S().decrypt({name:"AES-GCM",iv:e,additionalData:n,tagLength:128},s,t))}catch{throw new f("decryption failed")}}var Fe=class s{constructor(e,t,n){this.aes=e;this.receipt=t;this.receiptRaw=n}aes;receipt;receiptRaw;static async fromBytes(e){if(e.length!==re)throw new f(`content key is ${e.length} bytes, want ${re}`);try{let t=await S().importKey("raw",e,"AES-GCM",!1,["decrypt"]),n=await S().importKey("raw",e,{name:"HMAC",hash:"SHA-256"},!1,["sign"]),r=new Uint8Array(await S().sign("HMAC",n,R.encode("receipt:v1"))),o=await S().importKey("raw",r,{name:"HMAC",hash:"SHA-256"},!1,["sign","verify"]);return new s(t,o,r)}finally{e.fill(0)}}openContent(e,t){let n=Vn(e);return qe(t,B),Ue(this.aes,t.slice(1,1+B),t.slice(1+B),n)}openFile(e,t,n){let r=Zn(e,t);return qe(n,B),Ue(this.aes,n.slice(1,1+B),n.slice(1+B),r)}receiptKeyBytes(){return this.receiptRaw.slice()}async receiptSum(e){return Ft(new Uint8Array(await S().sign("HMAC",this.receipt,e)))}async receiptVerify(e,t){return/^[0-9a-f]{64}$/.test(t)?S().verify("HMAC",this.receipt,Xn(t),e):!1}};async function rs(s,e,t){let n=await ss(s,"device-copy",e,t);if(n.length!==re)throw n.fill(0),new f(`decryption failed: device copy holds ${n.length} bytes, want ${re}`);return Fe.fromBytes(n)}function os(s){let e=()=>new f('the content is not a JSON object of the strings "envelope" and "request"'),t;try{t=new TextDecoder("utf-8",{fatal:!0,ignoreBOM:!0}).decode(s)}catch{throw new f("the content is not valid UTF-8")}let n=0,r=()=>{for(;n<t.length&&` 	
\r`.includes(t.charAt(n));)n++},o=u=>{if(r(),t.charAt(n)!==u)throw e();n++},a=()=>{if(r(),t.charAt(n)!=='"')throw e();let u=n++;for(;;){if(n>=t.length)throw e();let h=t.charAt(n++);if(h==='"')break;h==="\\"&&n++}try{let h=JSON.parse(t.slice(u,n));if(typeof h!="string")throw e();return h}catch{throw e()}},c=new Map;if(o("{"),r(),t.charAt(n)!=="}")for(;;){let u=a();o(":");let h=a();if(u!=="envelope"&&u!=="request"||c.has(u))throw e();if(c.set(u,h),r(),t.charAt(n)===","){n++;continue}break}o("}"),r();let l=c.get("envelope"),d=c.get("request");if(n!==t.length||l===void 0||d===void 0)throw e();return{envelope:R.encode(l),request:R.encode(d)}}var _=class extends f{constructor(t,n){super(n);this.reason=t}reason;name="OpenError"};async function tn(s,e,t){if(!qt.test(t.id))throw new _("unreadable","the service listed a task whose id is not a task id");let n=t.id;if(t.locked)throw new _("locked",`task ${n} is locked on this device`);if(t.content==null)throw new _("not_waiting",`task ${n} is not waiting and shows nothing`);if(t.device_copy==null)throw new _("locked",`task ${n} is locked on this device`);let r,o;try{r=await rs(s,n,W(t.device_copy)),o=os(await r.openContent(n,W(t.content)))}catch(u){throw new _("unreadable",`task ${n} cannot be read: ${u instanceof Error?u.message:"?"}`)}let a=await es(o.envelope);if(a!==t.task_hash)throw new _("hash_mismatch",`task ${n}: its content does not hash to the task hash shown; never approve it`);let c;try{let u=JSON.parse(new TextDecoder().decode(o.envelope));if(typeof u!="object"||u===null||Array.isArray(u))throw new Error("not an object");c=u}catch{throw new _("unreadable",`task ${n}: the envelope is not a JSON object`)}if(c.owner!==e)throw new _("mismatch",`task ${n} is addressed to another owner than this device's account`);let l=[["id",t.id],["kind",t.kind],["preparer",t.preparer],["project",t.project],["project_uuid",t.project_uuid],["thread",t.thread],["reply_pubkey",t.reply_pubkey],["created_at",t.created_at],["expires_at",t.expires_at]];for(let[u,h]of l)if((c[u]??null)!==(h??null))throw new _("mismatch",`task ${n}: the listed ${u} is not the envelope's`);let d=null;if(typeof c.reply_pubkey=="string"){try{await Qt(c.reply_pubkey)}catch{throw new _("unreadable",`task ${n}: the reply key is not a P-256 public key`)}d=c.reply_pubkey}return{envelope:c,envelopeBytes:o.envelope,taskHash:a,request:o.request,key:r,replyPubkey:d}}var F=class extends f{name="FileMismatchError"};async function nn(s,e,t){let n=String(s.envelope.id),r=s.envelope.files,o=Array.isArray(r)?r[e]:void 0;if(!Number.isSafeInteger(e)||e<0||typeof o!="object"||o===null)throw new F(`task ${n} has no file ${e}`);let{size:a,sha256:c}=o;if(typeof a!="number"||t.length!==a+Yn)throw new F(`file ${e} of task ${n} is not the size its envelope names`);let l=await s.key.openFile(n,e,t);if(l.length!==a||await H(l)!==c)throw new F(`file ${e} of task ${n} does not have the SHA-256 its envelope names`);return l}var ze=class extends f{name="TooLargeError"};async function is(s,e,t,n){if(n.length+ye>be)throw new ze(`the ${e} is ${n.length} bytes; the service takes at most ${be-ye} bytes`);return Ge(s,e,t,n)}function Ve(s,e,t,n){return is(s,e,t,R.encode(n))}var Ze="countersign",oe="device",ke="key";function sn(s){return new Promise((e,t)=>{s.onsuccess=()=>e(s.result),s.onerror=()=>t(new f("this browser's storage refused the device key: "+String(s.error)))})}function rn(s){let e=indexedDB.open(s,1);return e.onupgradeneeded=()=>{e.result.createObjectStore(oe)},sn(e)}async function on(s,e,t){let n=await rn(s);try{let r=n.transaction(oe,e),o=new Promise((c,l)=>{r.oncomplete=()=>c(),r.onabort=r.onerror=()=>l(new f("this browser's storage refused the device key"))}),a=await sn(t(r.objectStore(oe)));return await o,a}finally{n.close()}}function an(s){let e=s;return!e||!(e.privateKey instanceof CryptoKey)||!(e.publicKey instanceof Uint8Array)?null:{privateKey:e.privateKey,publicKey:e.publicKey}}async function as(s=Ze){return an(await on(s,"readonly",e=>e.get(ke)))}async function cn(s=Ze){let e=await as(s);if(e)return e;let t=await Zt(),n=await rn(s);try{return await new Promise((r,o)=>{let a=n.transaction(oe,"readwrite"),c=a.objectStore(oe),l=t,d=c.get(ke);d.onsuccess=()=>{let u=an(d.result);if(u)l=u;else{let h={privateKey:t.privateKey,publicKey:t.publicKey};c.put(h,ke)}},a.oncomplete=()=>r(l),a.onabort=a.onerror=()=>o(new f("this browser's storage refused the device key"))})}finally{n.close()}}async function mr(s=Ze){await on(s,"readwrite",e=>e.delete(ke))}var Xe=["agent","at","build","connector","input_sha256","operation","output_sha256","owner","run","task_hash","task_id"],cs=new Set(["task_hash","task_id"]),A=class extends Error{name="ReceiptError"},ls="123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";function ie(s){let e=0n;for(let n of s){let r=ls.indexOf(n);if(r<0)throw new A("not base58");e=e*58n+BigInt(r)}let t=[];for(;e>0n;)t.push(Number(e&255n)),e>>=8n;for(let n of s){if(n!=="1")break;t.push(0)}return Uint8Array.from(t.reverse())}function ln(s){if(!s.startsWith("ed25519:"))throw new A("a run key is ed25519:<base58>");let e=ie(s.slice(8));if(e.length!==32)throw new A("a run key is ed25519:<base58> of 32 bytes");return e}function Qe(s){let e=new Map,t=s;if(t&&typeof t.keys=="object"&&t.keys!==null)for(let[n,r]of Object.entries(t.keys))/^(0|[1-9]\d{0,9})$/.test(n)&&typeof r=="string"&&e.set(Number(n),ln(r));return t&&typeof t.key_id=="number"&&typeof t.public_key=="string"&&!e.has(t.key_id)&&e.set(t.key_id,ln(t.public_key)),e}function ds(s){let e=s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,"�");return JSON.stringify(e).replace(/\u2028/g,"\\u2028").replace(/\u2029/g,"\\u2029")}function dn(s){let e=[];for(let t of Xe){let n=s[t];n===""&&cs.has(t)||e.push(`"${t}":${ds(n)}`)}return new TextEncoder().encode(`{${e.join(",")}}`)}function un(s){let e=new A("the receipt is not a signed receipt");if(s==null)throw new A("the task has no receipt yet");if(typeof s!="object"||Array.isArray(s))throw e;let t=s;for(let l of Object.keys(t))if(!["receipt","key_id","signature"].includes(l))throw e;let n=t.receipt,r=t.key_id??0,o=t.signature??"";if(typeof n!="object"||n===null||Array.isArray(n)||typeof r!="number"||!Number.isInteger(r)||r<0||r>4294967295||typeof o!="string")throw e;let a={};for(let l of Xe)a[l]="";for(let[l,d]of Object.entries(n)){if(!Xe.includes(l)||typeof d!="string"&&d!==null)throw e;a[l]=d??""}let c;try{c=W(o)}catch{throw new A("the receipt's signature does not verify")}return{receipt:a,keyID:r,signature:c}}function hn(s){let e=s.lastIndexOf("-");if(e<=0)return null;let t=s.slice(e+1);return/^[1-9]\d*$/.test(t)?s.slice(0,e):null}async function et(s,e,t){let n=t.envelope,r=String(n.id),o=hn(r);if(o===null)throw new A("the task id does not name the run that prepared it");let a=un(e),c=s.get(a.keyID);if(!c)throw new A(`the receipt is signed with run key ${a.keyID}, which the service does not publish`);let l=!1;try{let u=await crypto.subtle.importKey("raw",c,{name:"Ed25519"},!1,["verify"]);l=await crypto.subtle.verify({name:"Ed25519"},u,a.signature,dn(a.receipt))}catch(u){throw new A("this browser cannot check an ed25519 signature: "+(u instanceof Error?u.message:String(u)))}if(!l)throw new A("the receipt's signature does not verify");let d=a.receipt;if(d.task_id!==r||d.task_hash!==t.taskHash)throw new A("the receipt names another task or another hash");if(d.owner!==n.owner||d.agent!==n.preparer)throw new A("the receipt names another owner or agent");if(d.build!==n.build||d.run!==o)throw new A("the receipt names another build or run");if(!await t.key.receiptVerify(t.request,d.input_sha256))throw new A("the receipt's input is not the request the task shows");return d}function i(s,e={},...t){let n=document.createElement(s);for(let[r,o]of Object.entries(e))n.setAttribute(r,o);for(let r of t)typeof r=="string"?n.append(document.createTextNode(r)):r&&n.append(r);return n}function w(s,e,t=!1){let n=i("button",{type:"button"},s);return t&&(n.className="secondary"),n.addEventListener("click",e),n}function ae(s,e){return s.setAttribute("aria-keyshortcuts",e),i("span",{class:"with-key"},s,i("kbd",{class:"key-hint","aria-hidden":"true",title:`key ${e}`},e))}var N=class extends Error{constructor(t,n,r){super(r);this.status=t;this.reason=n}status;reason};async function m(s,e,t){let n={method:s,credentials:"same-origin",headers:{Accept:"application/json"}};t!==void 0&&(n.headers={Accept:"application/json","Content-Type":"application/json"},n.body=JSON.stringify(t));let r=await fetch(e,n),o=null;try{o=await r.json()}catch{o=null}if(!r.ok){let a=o??{};throw new N(r.status,typeof a.reason=="string"?a.reason:"",typeof a.error=="string"?a.error:`the service answered ${r.status}`)}return o}function C(s){return s instanceof N?s.reason?`${s.message} (${s.reason})`:s.message:s instanceof Error?s.message:String(s)}function tt(s,e,t){return`Sign in to Countersign as ${s}. Device key: ${e}. Valid until ${t}.`}function nt(s,e,t,n,r){return`Approve in Countersign as ${s}: task ${e} with hash ${t} and supply ${n}. At ${r}.`}var ce=/^(?=.{2,64}$)(([a-z\d]+[-_])*[a-z\d]+\.)*([a-z\d]+[-_])*[a-z\d]+$/;function pn(s){let e=t=>"'"+t.replaceAll("'","'\\''")+"'";return`countersign wallet sign --wallet YOUR-WALLET.json --recipient ${e(s.recipient)} --nonce ${e(s.nonce)} --message ${e(s.sentence)}`}function us(s,e){return{account_id:s.account,device_pubkey:s.devicePubkey,valid_until:s.validUntil,...xe(s,e)}}function xe(s,e){let t;try{t=JSON.parse(e)}catch{throw new Error("The wallet's answer is not JSON.")}if(typeof t!="object"||t===null||Array.isArray(t))throw new Error("The wallet's answer is not a JSON object.");let n=t,r=d=>{let u=n[d];if(typeof u!="string"||u==="")throw new Error(`The wallet's answer has no ${d}.`);return u};if(r("message")!==s.sentence)throw new Error("The wallet signed another sentence than the one shown here.");if(r("recipient")!==s.recipient)throw new Error(`The wallet signed for the recipient ${String(n.recipient)}, not ${s.recipient}.`);if(n.accountId!==void 0&&n.accountId!==null&&n.accountId!==s.account)throw new Error(`The wallet signed as ${String(n.accountId)}, not ${s.account}.`);let o,a=n.nonce;if(Array.isArray(a)){if(a.length!==32||!a.every(d=>Number.isInteger(d)&&d>=0&&d<=255))throw new Error("The wallet's nonce is not 32 bytes.");o=O(Uint8Array.from(a))}else o=r("nonce");let c={public_key:r("publicKey"),signature:r("signature"),nonce:o},l=n.callbackUrl;if(typeof l=="string")c.callback_url=l;else if(l!=null)throw new Error("The wallet's callbackUrl is not text.");return c}var _n=Jn(Tn());var er=2147484061;function Pn(s){let e=new Uint8Array(4);return new DataView(e.buffer).setUint32(0,s,!0),e}function _t(s){let e=new TextEncoder().encode(s);return z(Pn(e.length),e)}function tr(s,e,t,n){if(e.length!==32)throw new Error("a NEP-413 nonce is 32 bytes");let r=n===null?new Uint8Array([0]):z(new Uint8Array([1]),_t(n));return z(Pn(er),_t(s),e,_t(t),r)}function nr(s){if(!s.startsWith("ed25519:"))throw new Error(`the wallet's key ${s} is not an ed25519 key`);let e=ie(s.slice(8));if(e.length!==32)throw new Error("the wallet's ed25519 key is not 32 bytes");return e}function sr(s){let e=s.startsWith("ed25519:")?ie(s.slice(8)):W(s);if(e.length!==64)throw new Error("the wallet's signature is not 64 bytes");return e}async function jt(s,e,t,n,r,o){let a=await crypto.subtle.importKey("raw",nr(s),{name:"Ed25519"},!1,["verify"]),c=new Uint8Array(await crypto.subtle.digest("SHA-256",tr(t,n,r,o)));return crypto.subtle.verify({name:"Ed25519"},a,sr(e),c)}var $=class extends Error{},Bt="https://raw.githubusercontent.com/hot-dao/near-selector/a5b64fc8e389b93dde9d207e31c08fd598914752/repository/";function rr(s,e){let t=`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="${e}"/><text x="32" y="43" font-family="sans-serif" font-size="30" font-weight="700" text-anchor="middle" fill="#fff">${s}</text></svg>`;return"data:image/svg+xml;base64,"+btoa(t)}function he(s,e,t,n,r,o,a,c=!1){return{id:s,name:e,icon:rr(r,o),description:`${e}: signs NEP-413 messages.`,website:t,version:"1.0.0",executor:n,type:"sandbox",platform:{},features:{signMessage:!0,signTransaction:!1,signAndSendTransaction:!1,signAndSendTransactions:!1,signInWithoutAddKey:!0,mainnet:!0,testnet:!0},permissions:{storage:!0,location:c,open:{allows:a}}}}var or=[he("mynearwallet","MyNearWallet","https://mynearwallet.com",Bt+"mnw.js","M","#2b6be6",["https://app.mynearwallet.com"]),he("meteor-wallet","Meteor Wallet","https://wallet.meteorwallet.app",Bt+"meteor.js","M","#6b3fd4",["https://wallet.meteorwallet.app"]),he("hot-wallet","HOT Wallet","https://hot-labs.org/wallet",Bt+"hotwallet.js","H","#d4532b",["https://download.hot-labs.org","https://hot-labs.org/wallet","https://t.me/hot_wallet/app","hotwallet://"]),he("intear-wallet","Intear Wallet","https://wallet.intear.tech","https://wallet.intear.tech/near-selector.js","I","#1f8a5b",["https://wallet.intear.tech","intear://","https://logout-bridge-service.intear.tech"],!0)],ir={mainnet:["https://rpc.mainnet.near.org"],testnet:["https://rpc.testnet.near.org"]},Ke=class{constructor(e){this.opts=e}opts;connector=null;hrefs=new Set;get c(){if(this.hrefs.add(location.href),!this.connector){let e=[...or];if(this.opts.sandbox){let t=he("countersign-sandbox","Sandbox wallet (this service, --dev)",location.origin,this.opts.sandbox,"S","#5b616b",[]);e.unshift(t)}this.connector=new _n.NearConnector({manifest:{wallets:e,version:"1.0.0"},network:this.opts.network,providers:ir,features:{signMessage:!0},autoConnect:!1,footerBranding:null,cspNonce:this.opts.nonce})}return this.connector}async connect(){let e;try{e=await this.c.connect()}catch(r){throw new $("No wallet was connected"+(r instanceof Error&&r.message?`: ${r.message}`:"."))}let n=(await e.getAccounts({network:this.opts.network}))[0]?.accountId;if(!n)throw new $(`${e.manifest.name} named no account.`);return{account:n,name:e.manifest.name}}async connected(e){try{let{wallet:t,accounts:n}=await this.c.getConnectedWallet();return n.some(r=>r.accountId===e)?{account:e,name:t.manifest.name}:null}catch{return null}}async disconnect(){if(this.connector)try{await this.connector.disconnect()}catch{}}async sign(e){let t;try{t=await this.c.wallet()}catch{throw new $("No wallet is connected in this browser.")}let n;try{n=await t.signMessage({message:e.sentence,recipient:e.recipient,nonce:e.nonce,network:this.opts.network,signerId:e.account})}catch(r){throw new $(`${t.manifest.name} did not sign`+(r instanceof Error&&r.message?`: ${r.message}`:typeof r=="string"&&r?`: ${r}`:"."))}if(!n||typeof n.signature!="string"||typeof n.publicKey!="string")throw new $(`${t.manifest.name} returned no signature.`);if(n.accountId&&n.accountId!==e.account)throw new Error(`${t.manifest.name} signed as ${n.accountId}, not ${e.account}.`);return ar(e,n.publicKey,n.signature,this.hrefs)}};async function ar(s,e,t,n=[]){let r={public_key:e,signature:t,nonce:O(s.nonce)};if(!e.startsWith("ed25519:")||await jt(e,t,s.sentence,s.nonce,s.recipient,null))return r;for(let o of new Set([location.href,location.origin+location.pathname,location.origin+location.pathname+location.search,...n]))if(await jt(e,t,s.sentence,s.nonce,s.recipient,o))return{...r,callback_url:o};throw new Error("The wallet's signature does not verify for the sentence shown, with or without this page's address.")}function Mt(s,e,t,n,r){let o=O(e.nonce),a=i("textarea",{id:t.answer,name:t.answer,spellcheck:"false","aria-describedby":t.answer+"-help"}),c={account:e.account,sentence:e.sentence,recipient:e.recipient,nonce:o};return new Promise(l=>{let d=()=>{try{let u=xe(c,a.value),h={public_key:u.public_key??"",signature:u.signature??"",nonce:u.nonce??o};u.callback_url!==void 0&&(h.callback_url=u.callback_url),l(h)}catch(u){r(u instanceof Error?u.message:String(u),!0)}};s.replaceChildren(i("p",{},"Have your wallet sign this sentence as a NEP-413 message, for this recipient and with this nonce, then paste its answer below."),i("dl",{},i("dt",{},"Sentence"),i("dd",{},i("code",{id:t.sentence},e.sentence)),i("dt",{},"Recipient"),i("dd",{},i("code",{id:t.recipient},e.recipient)),i("dt",{},"Nonce"),i("dd",{},i("code",{id:t.nonce},o))),i("p",{},"With the terminal's wallet:"),i("pre",{id:t.command},pn(c)),i("label",{for:t.answer},"The wallet's answer (JSON)"),i("p",{id:t.answer+"-help",class:"task-meta"},"What countersign wallet sign or near-cli printed: publicKey, signature, nonce, message, recipient."),a,i("div",{class:"actions"},w(n,d))),s.hidden=!1})}function jn(s){let e=s.replace(/[^\p{L}\p{N}._ -]/gu,"_").replace(/^[. ]+/,"").replace(/[. ]+$/,"");return e=[...e].slice(0,200).join(""),e===""?"file":e}function ee(s){return new Date(Math.floor(s/1e3)*1e3).toISOString().replace(/\.\d{3}Z$/,"Z")}function te(s){return s===1?"1 byte":s<1e4?`${s} bytes`:s<1e7?`${(s/1e3).toFixed(1)} kB`:`${(s/1e6).toFixed(1)} MB`}function It(s,e){let t=Math.floor((e-s)/1e3);if(t<=0)return"expired by this device's clock";let n=[],r=Math.floor(t/3600);t-=r*3600;let o=Math.floor(t/60);return t-=o*60,r&&n.push(`${r} h`),(r||o)&&n.push(`${o} min`),n.push(`${t} s`),"in "+n.join(" ")}function Nt(s){switch(s){case"done":return"Done";case"failed":return"Failed";case"rejected":return"Rejected by you";case"cancelled":return"Cancelled";case"expired":return"Expired unanswered";case"void":return"Void: the project's policy or the connector changed after it was asked";case"approved":case"answering":return"Approved, being carried out";default:return s}}function Bn(s){switch(s){case"preparer_key_unavailable":return"The agent's key was no longer available, so the approved write was not made.";case"operation_priced":return"The write now has a price the approval did not cover, so it was not made.";case"operation_unknown":return"The connector no longer has that operation, so the write was not made.";case"operation_limit_reached":return"The operation's limit was reached, so the write was not made.";case"queue_unavailable":return"The service could not queue the write, so it was not made.";case"run_not_started":return"The write did not start within 30 minutes of the approval, so it was not made.";case"run_unfinished":return"The write began but did not report back: it may or may not have happened."}return s.startsWith("run_refused:")?`The connector refused the write after your approval (${s.slice(12)}); its answer to the agent says whether anything was written.`:`It failed (${s}).`}function cr(s,e,t){return`Confirm in Countersign as ${s}: ${e}. At ${t}.`}var pe={withdrawDevice:s=>`withdraw the device ${s}`,nameWebhook:async s=>`name the webhook ${await Mn(s)}`,removeWebhook:()=>"remove the webhook",setProject:async(s,e)=>`set the project ${s} to ${await Mn(e)}`,removeProject:s=>`remove the project ${s}`};async function Mn(s){return H(new TextEncoder().encode(s))}var In=/^[a-z0-9][a-z0-9._-]{0,63}$/;function Nn(s){return s?"$"+(s/1e6).toFixed(6).replace(/0+$/,"").replace(/\.$/,""):"free"}function Dn(s,e){switch(s){case"ok":return"Policy readable: writes follow it.";case"unreadable":return`Policy unreadable: ${e||"it does not read"}. Every write is refused until it is fixed.`;case"broken":return`Policy broken: ${e||"a rule cannot apply"}. Writes are refused until it is fixed.`}return`Policy ${s}${e?": "+e:""}.`}var Re=class{constructor(e){this.host=e}host;root=i("section",{id:"settings",class:"settings","aria-labelledby":"settings-title",hidden:""});devicesBox=i("div",{id:"devices-box"});mutesBox=i("div",{id:"mutes-box"});webhookBox=i("div",{id:"webhook-box"});deliveriesBox=i("div",{id:"deliveries-box"});projectsBox=i("div",{id:"projects-box"});catalogueBox=i("div",{id:"catalogue-box"});busy=!1;generation=0;catalogue=[];get shown(){return!this.root.hidden}show(){this.generation++,this.busy=!1;let e=(t,n,r,...o)=>i("section",{id:t,class:"settings-part","aria-labelledby":t+"-title"},i("h3",{id:t+"-title",tabindex:"-1"},n),i("p",{class:"task-meta"},r),...o);this.root.replaceChildren(i("div",{class:"actions"},w("Back to the inbox",()=>this.host.back(),!0)),i("h2",{id:"settings-title",tabindex:"-1"},"Settings"),e("devices","Devices","The browsers and terminals signed in as you. Withdrawing one ends its session at once; your wallet confirms it.",this.devicesBox),e("mutes","Mutes","A muted agent or project cannot ask you anything: its new tasks are refused.",this.mutesBox),e("webhook","Webhook","One HTTPS address of yours that is told when something happens (never what a task shows), signed with a secret.",this.webhookBox,this.deliveriesBox),e("projects","Projects","Your installations of connectors: what each may do at once, what it asks you first, and which agents may use it.",this.projectsBox,this.catalogueBox)),this.root.hidden=!1,this.root.querySelector("#settings-title")?.focus(),this.loadDevices(),this.loadMutes(),this.loadWebhook(null),this.loadProjects()}hide(){this.generation++,this.busy=!1;for(let e of[this.devicesBox,this.mutesBox,this.webhookBox,this.deliveriesBox,this.projectsBox,this.catalogueBox])e.replaceChildren();this.root.replaceChildren(),this.root.hidden=!0}current(e){return e===this.generation&&this.shown}async confirm(e,t,n,r){let o=this.host.account();if(!o)return null;if(this.busy)return this.host.say("Finish the signature already asked for first.",!0),null;let a=this.generation,c=Math.floor(Date.now()/1e3)*1e3,l=new Uint8Array(32);crypto.getRandomValues(l);let d={account:o,sentence:cr(o,e,ee(c)),recipient:this.host.recipient,nonce:l},u=i("div"),h=document.activeElement instanceof HTMLElement?document.activeElement:null,p=()=>{},k=new Promise((x,T)=>{p=()=>T(new $("You cancelled the signature."))});t.replaceChildren(i("h4",{tabindex:"-1"},"Confirm with your wallet"),i("p",{},"Your wallet signs this confirmation; nothing changes until it does."),u,i("div",{class:"actions"},w("Cancel",()=>p(),!0))),t.hidden=!1,t.querySelector("h4")?.focus(),this.busy=!0;let E={sentence:n+"-sentence",recipient:n+"-recipient",nonce:n+"-nonce",command:n+"-command",answer:n+"-signed"};try{let x=await Promise.race([this.host.askSignature(d,u,E,r),k]);return this.current(a)?{at:c/1e3,...x}:null}catch(x){return this.current(a)&&this.host.say(x instanceof $?x.message+" Nothing was changed.":"The confirmation cannot be signed: "+C(x),!(x instanceof $)),null}finally{if(a===this.generation){this.busy=!1;let x=t.contains(document.activeElement);t.replaceChildren(),t.hidden=!0,x&&h?.isConnected&&h.focus()}}}redraw(e,...t){let n=e.contains(document.activeElement);e.replaceChildren(...t),n&&!e.contains(document.activeElement)&&e.closest("section")?.querySelector("h3")?.focus()}step(e){let t=i("div",{id:e,class:"confirm-step"});return t.hidden=!0,t}failed(e,t){if(dr(t)){this.host.ended("Your session ended: "+C(t));return}this.host.say(`${e}: ${C(t)}`,!0)}async loadDevices(){let e=this.generation,t;try{t=(await m("GET","/inbox/devices")).devices??[]}catch(o){this.current(e)&&this.devicesBox.replaceChildren(i("p",{class:"empty"},"Your devices cannot be listed now: "+C(o)));return}if(!this.current(e))return;let n=this.step("device-confirm"),r=t.map(o=>{let a=w("Withdraw",()=>{this.withdraw(o,n)},!0);return a.setAttribute("aria-label",o.this?`Withdraw this device (${o.id})`:`Withdraw the device ${o.id}`),i("li",{class:"setting-item","data-device":o.id},i("span",{class:"task-title"},o.this?i("span",{class:"this-device"},"This device"):"Another device"," ",i("span",{class:"mono"},o.id)),i("span",{class:"task-meta"},`Signed in ${o.created_at} · until ${o.valid_until} · by the key ${o.signer_pubkey}`),i("span",{class:"task-meta mono"},o.device_pubkey),o.this?i("span",{class:"task-meta"},"Withdrawing this device signs this page out."):null,i("div",{class:"actions"},a))});this.redraw(this.devicesBox,r.length?i("ul",{class:"tasks",id:"devices-list","aria-label":"Your devices"},...r):i("p",{class:"empty"},"No device is signed in."),n)}async withdraw(e,t){let n=await this.confirm(pe.withdrawDevice(e.id),t,"device-confirm","Send confirmation");if(n){this.host.say("Withdrawing the device…");try{await m("DELETE",`/inbox/devices/${encodeURIComponent(e.id)}`,{confirmation:n})}catch(r){this.failed("The device was not withdrawn",r);return}if(e.this){this.host.ended("This device was withdrawn: you are signed out.");return}this.host.say(`The device ${e.id} was withdrawn: its session is over.`),this.loadDevices()}}async loadMutes(){let e=this.generation,t;try{t=(await m("GET","/inbox/mutes")).mutes??[]}catch(d){this.current(e)&&this.mutesBox.replaceChildren(i("p",{class:"empty"},"Your mutes cannot be listed now: "+C(d)));return}if(!this.current(e))return;let n=t.length?i("ul",{class:"tasks",id:"mutes-list","aria-label":"Muted"},...t.map(d=>{let u=d.subject_is==="agent"?"Agent":"Project",h=w("Unmute",()=>{this.unmute(d)},!0);return h.setAttribute("aria-label",`Unmute the ${d.subject_is} ${d.subject}`),i("li",{class:"setting-item","data-mute":`${d.subject_is}:${d.subject}`},i("span",{class:"task-title"},`${u} `,i("span",{class:"mono"},d.subject)),i("span",{class:"task-meta"},`Muted ${d.created_at}`),i("div",{class:"actions"},h))})):i("p",{class:"empty",id:"mutes-empty"},"Nothing is muted."),r=i("input",{type:"radio",name:"mute-kind",id:"mute-agent",value:"agent"});r.checked=!0;let o=i("input",{type:"radio",name:"mute-kind",id:"mute-project",value:"project"}),a=i("input",{id:"mute-subject",name:"mute-subject",spellcheck:"false",autocapitalize:"none",autocomplete:"off","aria-describedby":"mute-subject-help"}),c=i("input",{type:"checkbox",id:"mute-delete",name:"mute-delete"}),l=i("form",{id:"mute-form",class:"setting-form","aria-labelledby":"mute-form-title"},i("h4",{id:"mute-form-title"},"Mute"),i("fieldset",{class:"choices"},i("legend",{},"What to mute"),i("label",{class:"choice",for:"mute-agent"},r," An agent"),i("label",{class:"choice",for:"mute-project"},o," A project")),i("label",{for:"mute-subject"},"The agent's account or the project's name"),i("p",{id:"mute-subject-help",class:"task-meta"},"Like bot.near for an agent, or github for a project."),a,i("label",{class:"choice",for:"mute-delete"},c," Also delete what is waiting from it"),i("div",{class:"actions"},i("button",{type:"submit"},"Mute")));l.addEventListener("submit",d=>{d.preventDefault(),this.mute(o.checked?"project":"agent",a.value.trim(),c.checked)}),this.redraw(this.mutesBox,n,l)}async mute(e,t,n){if(e==="agent"?!ce.test(t):!In.test(t)){this.host.say(e==="agent"?"Type the agent's NEAR account id (like bot.near).":"Type the project's name (1–64 of a-z 0-9 . _ -).",!0),document.getElementById("mute-subject")?.focus();return}let r;try{let a=await m("POST","/inbox/mutes",{subject_is:e,subject:t,delete_waiting:n});r=typeof a.deleted=="number"?a.deleted:0}catch(a){this.failed("Not muted",a);return}let o=n?` ${r===1?"1 waiting task was":`${r} waiting tasks were`} deleted.`:"";this.host.say(`Muted the ${e} ${t}: its new tasks are refused.${o}`),await this.loadMutes()}async unmute(e){try{await m("DELETE","/inbox/mutes",{subject_is:e.subject_is,subject:e.subject})}catch(t){this.failed("Not unmuted",t);return}this.host.say(`Unmuted the ${e.subject_is} ${e.subject}: it can ask you again.`),await this.loadMutes()}async loadWebhook(e){let t=this.generation,n;try{n=await m("GET","/inbox/webhook")}catch(l){this.current(t)&&this.webhookBox.replaceChildren(i("p",{class:"empty"},"The webhook cannot be read now: "+C(l)));return}if(!this.current(t))return;let r=this.step("webhook-confirm"),o=[];if(n.url?o.push(i("p",{id:"webhook-current"},"Sends to ",i("span",{class:"mono",id:"webhook-url"},n.url),`, named ${n.set_at??""} by the key `,i("span",{class:"mono"},n.set_by_key??""),".")):o.push(i("p",{id:"webhook-current",class:"empty"},"No webhook is named: nothing is sent anywhere.")),e){let l=i("code",{id:"webhook-secret"},e),d=w("Copy the secret",()=>{navigator.clipboard.writeText(e).then(()=>this.host.say("The secret is copied."),()=>this.host.say("The secret could not be copied: select it and copy it yourself.",!0))});o.push(i("div",{class:"secret",id:"webhook-secret-box",role:"group","aria-labelledby":"webhook-secret-title"},i("h4",{id:"webhook-secret-title"},"The webhook's secret"),i("p",{},l),i("p",{class:"secret-once"},"This secret is shown this once: it will not be shown again, here or anywhere. Keep it where your receiver checks the signatures; naming the webhook again makes a new one."),i("div",{class:"actions"},d)))}let a=i("input",{id:"webhook-url-input",name:"webhook-url",type:"url",inputmode:"url",spellcheck:"false",autocapitalize:"none",autocomplete:"off",placeholder:"https://hooks.example.com/countersign","aria-describedby":"webhook-url-help"}),c=i("form",{id:"webhook-form",class:"setting-form","aria-labelledby":"webhook-form-title"},i("h4",{id:"webhook-form-title"},n.url?"Name another address":"Name an address"),i("label",{for:"webhook-url-input"},"Webhook address"),i("p",{id:"webhook-url-help",class:"task-meta"},"An HTTPS address on a public host, with no user or password in it. Naming it makes a new secret."),a,i("div",{class:"actions"},i("button",{type:"submit"},"Name the webhook")));c.addEventListener("submit",l=>{l.preventDefault(),this.nameWebhook(a.value.trim(),r)}),o.push(c),n.url&&(o.push(i("div",{class:"actions"},w("Send a test",()=>{this.testWebhook()},!0),w("Remove the webhook",()=>{this.removeWebhook(r)},!0))),o.push(i("p",{id:"webhook-test",class:"task-meta",hidden:""}))),o.push(r),this.redraw(this.webhookBox,...o.filter(l=>l instanceof Node)),await this.loadDeliveries()}async nameWebhook(e,t){if(e===""){this.host.say("Type the webhook's address first.",!0),document.getElementById("webhook-url-input")?.focus();return}let n=await this.confirm(await pe.nameWebhook(e),t,"webhook-confirm","Send confirmation");if(!n)return;let r;try{let o=await m("PUT","/inbox/webhook",{url:e,confirmation:n});r=typeof o.secret=="string"?o.secret:""}catch(o){this.failed("The webhook was not named",o);return}this.host.say("The webhook is named. Its secret is shown below this once."),await this.loadWebhook(r||null),document.getElementById("webhook-secret-title")?.setAttribute("tabindex","-1"),document.getElementById("webhook-secret-title")?.focus()}async removeWebhook(e){let t=await this.confirm(pe.removeWebhook(),e,"webhook-confirm","Send confirmation");if(t){try{await m("DELETE","/inbox/webhook",{confirmation:t})}catch(n){this.failed("The webhook was not removed",n);return}this.host.say("The webhook is removed: nothing is sent any more."),await this.loadWebhook(null)}}async testWebhook(){let e=this.generation;this.host.say("Sending a test ping…");let t;try{t=await m("POST","/inbox/webhook/test")}catch(o){this.failed("The test was not sent",o);return}if(!this.current(e))return;let n=`Test ping: attempt ${t.attempt} at ${t.at}, ${Ln(t)}.`,r=document.getElementById("webhook-test");r&&(r.textContent=n,r.hidden=!1),this.host.say(n,!(t.status_code>=200&&t.status_code<300)),await this.loadDeliveries()}async loadDeliveries(){let e=this.generation,t;try{t=(await m("GET","/inbox/webhook/deliveries")).deliveries??[]}catch(c){this.current(e)&&this.deliveriesBox.replaceChildren(i("p",{class:"empty"},"The delivery log cannot be read now: "+C(c)));return}if(!this.current(e))return;let n=i("h4",{id:"deliveries-title"},"Delivery log"),r=i("div",{class:"actions"},w("Refresh the log",()=>{this.loadDeliveries()},!0));if(!t.length){this.deliveriesBox.replaceChildren(n,i("p",{class:"empty",id:"deliveries-empty"},"Nothing was sent yet."),r);return}let o=c=>i("th",{scope:"col"},c),a=i("table",{id:"deliveries",class:"log"},i("caption",{},`The last ${t.length===1?"attempt":`${t.length} attempts`}, newest first`),i("thead",{},i("tr",{},o("When"),o("Event"),o("Task"),o("Attempt"),o("Answer"))),i("tbody",{},...t.map(c=>i("tr",{"data-event":c.event_id,"data-type":c.type},i("td",{class:"mono"},c.at),i("td",{},c.type),i("td",{class:"mono"},c.task_id||"—"),i("td",{},String(c.attempt)),i("td",{class:c.status_code>=200&&c.status_code<300?"":"failure"},Ln(c))))));this.deliveriesBox.replaceChildren(n,i("div",{class:"table-scroll",role:"region","aria-labelledby":"deliveries-title",tabindex:"0"},a),r)}async loadProjects(){let e=this.generation,t;try{let[l,d]=await Promise.all([m("GET","/inbox/projects"),m("GET","/connectors")]);t=l.projects??[],this.catalogue=d.connectors??[]}catch(l){this.current(e)&&this.projectsBox.replaceChildren(i("p",{class:"empty"},"Your projects cannot be listed now: "+C(l)));return}if(!this.current(e))return;let n=t.map(l=>this.projectItem(l)),r=i("input",{id:"project-new-name",name:"project-new-name",spellcheck:"false",autocapitalize:"none",autocomplete:"off","aria-describedby":"project-new-help"}),o=i("select",{id:"project-new-connector",name:"project-new-connector"},...this.catalogue.map(l=>i("option",{value:l.name},`${l.name} ${l.version}`))),a=i("div",{id:"project-new-editor"}),c=i("form",{id:"project-new",class:"setting-form","aria-labelledby":"project-new-title"},i("h4",{id:"project-new-title"},"Add a project"),i("label",{for:"project-new-name"},"Its name"),i("p",{id:"project-new-help",class:"task-meta"},"1–64 of a-z 0-9 . _ -, beginning with a letter or digit; agents call it by this name."),r,i("label",{for:"project-new-connector"},"Its connector"),o,i("div",{class:"actions"},i("button",{type:"submit"},"Set it up")));c.addEventListener("submit",l=>{l.preventDefault();let d=r.value.trim();if(!In.test(d)){this.host.say("A project name is 1–64 of a-z 0-9 . _ -, beginning with a letter or digit.",!0),r.focus();return}if(t.some(h=>h.name===d)){this.host.say(`You have a project ${d} already: edit it above.`,!0);return}let u={name:d,connector:o.value,agents:[],policy:"{}",policy_mode:"ok",credentials:!1,updated_at:""};a.replaceChildren(this.editor(u,!0))}),this.redraw(this.projectsBox,n.length?i("ul",{class:"tasks",id:"projects-list","aria-label":"Your projects"},...n):i("p",{class:"empty",id:"projects-empty"},"You have no project yet."),c,a),this.drawCatalogue()}connector(e){return this.catalogue.find(t=>t.name===e)}projectItem(e){let t=i("div",{class:"project-editor-box"}),n=this.step(`project-${e.name}-confirm`),r=w("Edit",()=>{let c=t.childElementCount>0;t.replaceChildren(...c?[]:[this.editor(e,!1)]),r.setAttribute("aria-expanded",String(!c)),c||t.querySelector("input, textarea")?.focus()},!0);r.setAttribute("aria-label",`Edit the project ${e.name}`),r.setAttribute("aria-expanded","false");let o=w("Delete",()=>{this.deleteProject(e,n)},!0);o.setAttribute("aria-label",`Delete the project ${e.name}`);let a=[];try{let c=JSON.parse(e.policy);Array.isArray(c.confirm)&&(a=c.confirm.map(String))}catch{}return i("li",{class:"setting-item","data-project":e.name},i("span",{class:"task-title"},e.name),i("span",{class:"task-meta"},`${e.connector} · agents: ${e.agents.length?e.agents.join(", "):"none"} · credentials: ${e.credentials?"set":"none"}${e.updated_at?" · changed "+e.updated_at:""}`),i("span",{class:"task-meta"},a.length?`Asks you before: ${a.join(", ")}.`:"Asks you before: nothing (writes act at once unless the connector always asks)."),i("span",{class:e.policy_mode==="ok"?"policy-mode":"policy-mode failure","data-mode":e.policy_mode},Dn(e.policy_mode,e.policy_sentence)),i("div",{class:"actions"},r,o),n,t)}editor(e,t){let n=this.connector(e.connector),r=e.name.replace(/[^a-z0-9_-]/g,"_"),o=g=>`project-${r}-${g}`,a={},c="";try{let g=JSON.parse(e.policy);g&&typeof g=="object"&&!Array.isArray(g)?a=g:c=e.policy}catch{c=e.policy}let l=Array.isArray(a.confirm)?a.confirm.map(String):[],d={...a};Array.isArray(a.confirm)&&delete d.confirm,c||(c=Object.keys(d).length?JSON.stringify(d,null,2):"");let u=(n?.operations??[]).filter(g=>g.kind==="write").map(g=>g.name),h=l.filter(g=>!u.includes(g)),p=[],k=(g,M)=>{let P=i("input",{type:"checkbox",id:o("ask-"+g),name:o("ask"),value:g,"data-write":g});return P.checked=l.includes(g),p.push(P),i("label",{class:"choice",for:o("ask-"+g)},P," ",i("span",{class:"mono"},g),M?i("span",{class:"task-meta"}," "+M):null)},E=g=>n?.operations.find(M=>M.name===g),x=i("fieldset",{class:"choices",id:o("ask")},i("legend",{},"Ask me before"),u.length?null:i("p",{class:"task-meta"},n?`${e.connector} has no write.`:`The service runs no connector ${e.connector}.`),...u.map(g=>k(g,`(${Nn(E(g)?.price??0)})${E(g)?.description?" "+E(g)?.description:""}`)),...h.map(g=>k(g,`— not a write of ${e.connector}: it makes the policy unreadable`))),T=(n?.policy_keys??[]).filter(g=>g!=="confirm"),y=T.includes("rules")?new Dt(o("rules"),u,ur(d.rules)):null;y&&d.rules!==void 0&&y.read&&(delete d.rules,c=Object.keys(d).length?JSON.stringify(d,null,2):"");let D=T.some(g=>g!=="rules")||c!=="",Y=i("textarea",{id:o("policy"),name:o("policy"),spellcheck:"false","aria-describedby":o("policy-help"),rows:"6"});Y.value=c;let G=T.includes("rules")?`A JSON object of the policy's other members. ${e.connector} reads ${T.join(", ")}. rules is an ordered list of {"when": {…}, "then": "allow" | "ask" | "refuse"}; the first that matches decides, and never more loosely than Ask me before.`:T.length?`A JSON object of the policy's other members. ${e.connector} reads ${T.join(", ")}; any other member makes the policy unreadable.`:`${e.connector} reads no other member: any member here makes the policy unreadable.`,q=i("input",{id:o("agents"),name:o("agents"),spellcheck:"false",autocapitalize:"none",autocomplete:"off","aria-describedby":o("agents-help")});q.value=e.agents.join(", ");let ne=i("input",{id:o("credentials"),name:o("credentials"),type:"password",autocomplete:"new-password",spellcheck:"false","aria-describedby":o("credentials-help")}),se=i("input",{type:"checkbox",id:o("credentials-remove"),name:o("credentials-remove")}),V=this.step(o("save-confirm")),U=i("form",{class:"setting-form project-editor",id:o("editor"),"aria-labelledby":o("editor-title")},i("h4",{id:o("editor-title")},t?`New project ${e.name} (${e.connector})`:`Edit ${e.name} (${e.connector})`),x,D?i("label",{for:o("policy")},"The policy's other members (JSON)"):null,D?i("p",{id:o("policy-help"),class:"task-meta"},G):null,D?Y:null,y?y.root:null,i("label",{for:o("agents")},"Agents granted this project"),i("p",{id:o("agents-help"),class:"task-meta"},"Their NEAR account ids, separated by commas or spaces. An agent not named here is refused (not_granted)."),q,i("label",{for:o("credentials")},"New credentials"),i("p",{id:o("credentials-help"),class:"task-meta"},`${e.credentials?"This project has credentials; they are never shown again.":"This project has no credentials."} Leave this empty to keep what it has. A JSON object is sent as it is; anything else as a JSON string (a token). They are sealed by the service at once.`),ne,e.credentials?i("label",{class:"choice",for:o("credentials-remove")},se," Remove its credentials"):null,i("div",{class:"actions"},i("button",{type:"submit"},t?"Save the new project":"Save")),V);return U.addEventListener("submit",g=>{g.preventDefault();let M;try{M=lr(e.connector,p.filter(P=>P.checked).map(P=>P.value),D?Y.value:"",q.value,ne.value,se.checked,y?y.value():null)}catch(P){this.host.say("This project cannot be saved: "+(P instanceof Error?P.message:String(P)),!0);return}this.saveProject(e.name,M,V,ne)}),U}async saveProject(e,t,n,r){let o=await this.confirm(await pe.setProject(e,t),n,`project-${e.replace(/[^a-z0-9_-]/g,"_")}-save-confirm`,"Send confirmation");if(!o)return;let a;try{a=await m("PUT",`/inbox/projects/${encodeURIComponent(e)}`,{project:t,confirmation:o})}catch(c){this.failed(`The project ${e} was not saved`,c);return}r.value="",this.host.say(`The project ${e} is saved. ${Dn(a.policy_mode,a.policy_sentence)}`,a.policy_mode!=="ok"),await this.loadProjects()}async deleteProject(e,t){let n=await this.confirm(pe.removeProject(e.name),t,`project-${e.name.replace(/[^a-z0-9_-]/g,"_")}-confirm`,"Send confirmation");if(n){try{await m("DELETE",`/inbox/projects/${encodeURIComponent(e.name)}`,{confirmation:n})}catch(r){this.failed(`The project ${e.name} was not deleted`,r);return}this.host.say(`The project ${e.name} is deleted: agents can no longer call it.`),await this.loadProjects()}}drawCatalogue(){let e=this.catalogue.map(t=>{let n=o=>t.operations.filter(a=>a.kind===o),r=(o,a)=>{let c=n(o);return c.length?i("span",{class:"task-meta"},`${a}: `,...c.flatMap((l,d)=>[d?"; ":"",i("span",{class:"mono"},l.name),` (${Nn(l.price)})${l.description?": "+l.description:""}`])):null};return i("li",{class:"setting-item","data-connector":t.name},i("span",{class:"task-title"},`${t.name} `,i("span",{class:"task-meta mono"},t.build)),r("write","Writes"),r("read","Reads"),r("answer","Answers"),i("span",{class:"task-meta"},`Policy members: ${t.policy_keys.join(", ")}`))});this.catalogueBox.replaceChildren(i("h4",{id:"catalogue-title"},"Connectors this service runs"),e.length?i("ul",{class:"tasks",id:"catalogue","aria-labelledby":"catalogue-title"},...e):i("p",{class:"empty"},"None."))}};function Ln(s){return s.error?s.status_code?`answered ${s.status_code}: ${s.error}`:`failed: ${s.error}`:s.status_code?`answered ${s.status_code}`:"no answer"}function lr(s,e,t,n,r,o,a=null){let c={};if(t.trim()!==""){let h;try{h=JSON.parse(t)}catch{throw new Error("the policy's other members are not JSON")}if(!h||typeof h!="object"||Array.isArray(h))throw new Error("the policy's other members are not a JSON object");if(c=h,"confirm"in c)throw new Error("confirm is set by the Ask me before boxes, not in the JSON");if(a?.length&&"rules"in c)throw new Error("the rules are set in the rules editor, not in the JSON")}let l=e.length?{confirm:e,...c}:{...c};a?.length&&(l.rules=a);let d=n.split(/[\s,]+/).filter(h=>h!=="");for(let h of d)if(!ce.test(h))throw new Error(`${h} is not a NEAR account id`);let u={connector:s,policy:l};if(o)u.credentials=null;else if(r!=="")if(r.trim().startsWith("{")){let h;try{h=JSON.parse(r)}catch{throw new Error("the credentials begin like a JSON object but are not JSON")}u.credentials=h}else u.credentials=r;return u.agents=[...new Set(d)],JSON.stringify(u)}function dr(s){return s instanceof N&&s.status===401}var On=[["allow","allow at once"],["ask","ask me first"],["refuse","refuse"]];function ur(s){if(s===void 0)return[];if(!Array.isArray(s))return null;let e=[];for(let t of s){if(!t||typeof t!="object"||Array.isArray(t))return null;let n=t,r=n.when,o=n.then;if(Object.keys(n).some(c=>c!=="when"&&c!=="then")||typeof o!="string"||!On.some(([c])=>c===o)||!r||typeof r!="object"||Array.isArray(r))return null;let a=r;if(a.op!==void 0&&typeof a.op!="string")return null;e.push({when:a,then:o})}return e}var Dt=class{constructor(e,t,n){this.prefix=e;this.writes=t;this.read=n!==null,this.rows=(n??[]).map(o=>{let{op:a,...c}=o.when;return{then:o.then,op:typeof a=="string"?a:"",conds:Object.keys(c).length?JSON.stringify(c):""}}),this.list=i("ol",{class:"rules",id:e+"-list"});let r=w("Add a rule",()=>{this.take(),this.rows.push({then:"ask",op:"",conds:""}),this.draw(),this.list.querySelector("li:last-child select")?.focus()},!0);this.root=i("fieldset",{class:"choices rules-editor",id:e},i("legend",{},"Rules"),i("p",{class:"task-meta",id:e+"-help"},this.read?'Read in order: the first rule whose write and conditions match decides, never more loosely than Ask me before. Conditions are a JSON object of what the connector tests (such as {"min_usd": 500}); leave it empty for none. At most 50 rules.':"These rules cannot be shown row by row: they stay in the JSON above, under rules."),this.list,this.read?i("div",{class:"actions"},r):null),this.draw()}prefix;writes;root;read;rows;list;take(){this.rows=[...this.list.querySelectorAll("li[data-rule]")].map(e=>({then:e.querySelector("select[data-then]")?.value??"ask",op:e.querySelector("select[data-op]")?.value??"",conds:e.querySelector("input[data-conds]")?.value??""}))}draw(){let e=this.rows.length;this.list.replaceChildren(...this.rows.map((t,n)=>{let r=`${this.prefix}-${n+1}`,o=i("select",{id:r+"-then","data-then":""},...On.map(([k,E])=>i("option",{value:k},E)));o.value=t.then;let a=[...this.writes];t.op&&!a.includes(t.op)&&a.push(t.op);let c=i("select",{id:r+"-op","data-op":""},i("option",{value:""},"any write"),...a.map(k=>i("option",{value:k},k)));c.value=t.op;let l=i("input",{id:r+"-conds","data-conds":"",spellcheck:"false",autocomplete:"off","aria-describedby":this.prefix+"-help"});l.value=t.conds;let d=k=>()=>{this.take();let[E]=this.rows.splice(n,1);E&&this.rows.splice(n+k,0,E),this.draw(),this.list.querySelector(`#${CSS.escape(`${this.prefix}-${n+k+1}-then`)}`)?.focus()},u=w("Up",d(-1),!0);u.setAttribute("aria-label",`Move rule ${n+1} up`),u.disabled=n===0;let h=w("Down",d(1),!0);h.setAttribute("aria-label",`Move rule ${n+1} down`),h.disabled=n===e-1;let p=w("Remove",()=>{this.take(),this.rows.splice(n,1),this.draw(),this.root.querySelector("legend")?.focus()},!0);return p.setAttribute("aria-label",`Remove rule ${n+1}`),i("li",{class:"rule","data-rule":String(n+1)},i("span",{class:"task-title"},`Rule ${n+1}`),i("label",{for:r+"-op"},"For"),c,i("label",{for:r+"-conds"},"When (conditions, JSON)"),l,i("label",{for:r+"-then"},"Then"),o,i("div",{class:"actions"},u,h,p))})),e||this.list.append(i("li",{class:"empty rule-none"},"No rule: Ask me before decides alone."))}value(){return this.read?(this.take(),this.rows.map((e,t)=>{let n={};if(e.conds.trim()!==""){let r;try{r=JSON.parse(e.conds)}catch{throw new Error(`rule ${t+1}'s conditions are not JSON`)}if(!r||typeof r!="object"||Array.isArray(r))throw new Error(`rule ${t+1}'s conditions are not a JSON object`);if(n=r,"op"in n)throw new Error(`rule ${t+1} names its write in For, not in its conditions`)}return{when:e.op?{op:e.op,...n}:n,then:e.then}})):[]}};var Lt="countersign.account",We="countersign.wallet",hr=29;function Ot(){let s=/^#\/tasks\/([^/?#]+)$/.exec(location.hash);if(!s||!s[1])return null;try{return decodeURIComponent(s[1])}catch{return null}}var Kt=be-ye,Rt=class s{constructor(e,t,n){this.root=e;this.recipient=t;this.wallets=new Ke(n),this.settings=new Re({account:()=>this.account,recipient:t,say:(r,o)=>this.say(r,o),askSignature:(r,o,a,c)=>this.askSignature(r,o,a,c),ended:r=>this.ended(r),back:()=>this.closeSettings()}),e.replaceChildren(this.header,this.status,this.body,this.keysBox),document.addEventListener("keydown",r=>this.onKey(r)),window.addEventListener("hashchange",()=>{let r=Ot();r&&r!==this.cardID&&(this.wanted=r,this.relist())})}root;recipient;device=null;account=null;walletName=null;wallets;events=null;listing=0;wanted=Ot();seen=null;relistTimer;header=i("header");status=i("p",{class:"status",role:"status","aria-live":"polite",id:"status"});body=i("div");listBox=i("div",{id:"list"});cardBox=i("section",{id:"card","aria-labelledby":"card-title",hidden:""});cardID=null;cardBusy=!1;cardTimer;cardExpired=!1;settings;static KEYS=[["j","next task in the list"],["k","previous task in the list"],["Enter","open the task"],["a","Approve the open task"],["r","Reject the open task"],["g","Got it: close the open notice"],["u","Unlock the tasks locked on this device"],["?","show or hide this list"],["Esc","hide this list"]];keysBox=i("section",{id:"keys",class:"keys",role:"dialog","aria-labelledby":"keys-title",hidden:"",tabindex:"-1"},i("h2",{id:"keys-title"},"Keys"),i("dl",{},...s.KEYS.flatMap(([e,t])=>[i("dt",{},i("kbd",{},e)),i("dd",{},t)])));onKey(e){if(e.ctrlKey||e.metaKey||e.altKey||e.defaultPrevented)return;let t=e.target;if(!(t&&(t.tagName==="INPUT"||t.tagName==="TEXTAREA"||t.tagName==="SELECT"||t.isContentEditable))){if(e.key==="?"){e.preventDefault(),this.keysBox.hidden=!this.keysBox.hidden,this.keysBox.hidden||this.keysBox.focus();return}if(e.key==="Escape"&&!this.keysBox.hidden){e.preventDefault(),this.keysBox.hidden=!0;return}if(this.account){if((e.key==="j"||e.key==="k")&&!this.listBox.hidden){let n=[...this.listBox.querySelectorAll("#tasks button.task-open")];if(!n.length)return;e.preventDefault();let r=n.indexOf(document.activeElement),o=r<0?e.key==="j"?0:n.length-1:Math.min(n.length-1,Math.max(0,r+(e.key==="j"?1:-1)));n[o]?.focus();return}if(e.key==="u"&&!this.listBox.hidden){let n=this.listBox.querySelector('button[aria-keyshortcuts="u"]');n&&!n.disabled&&(e.preventDefault(),n.click());return}if((e.key==="a"||e.key==="r"||e.key==="g")&&this.cardID&&!this.cardBox.hidden){let n=this.cardBox.querySelector(`#card-actions button[aria-keyshortcuts="${e.key}"]`);n&&!n.disabled&&(e.preventDefault(),n.focus(),n.click())}}}}async start(){this.renderHeader(),this.say("Preparing this device's key…");try{this.device=await cn()}catch(e){this.say("This browser cannot keep a device key: "+(e instanceof Error?e.message:String(e)),!0);return}if(this.say(""),this.account=localStorage.getItem(Lt),this.walletName=localStorage.getItem(We),this.account&&await this.list()){this.signedIn();return}this.account=null,this.showSignIn()}saidAt=0;say(e,t=!1){this.status.textContent=e,this.status.classList.toggle("error",t),this.saidAt=Date.now()}announce(e){if(Date.now()-this.saidAt<5e3&&this.status.textContent){this.status.textContent+=" "+e,this.saidAt=Date.now();return}this.say(e)}renderHeader(){let e=[i("h1",{},"Countersign")];this.account&&e.push(i("div",{class:"actions"},i("span",{class:"who"},"Signed in as ",i("span",{class:"mono",id:"who"},this.account)),w("Settings",()=>this.openSettings(),!0),w("Sign out",()=>{this.signOut()},!0))),this.header.replaceChildren(...e.filter(t=>t instanceof Node))}showSignIn(){this.renderHeader();let e=i("input",{id:"account",name:"account",autocomplete:"username",spellcheck:"false",autocapitalize:"none",placeholder:"alice.near"}),t=i("section",{id:"another-wallet","aria-labelledby":"another-title"});t.hidden=!0;let n=()=>{let o=e.value.trim();if(!ce.test(o)){this.say("Type your NEAR account id first (like alice.near, or the 64 hex characters of an implicit account).",!0),e.focus();return}this.say("");let a=i("div");t.replaceChildren(i("h2",{id:"another-title"},"Sign with another wallet"),a),t.hidden=!1,this.signIn(o,c=>Mt(a,c,{sentence:"sentence",recipient:"recipient",nonce:"nonce",command:"command",answer:"signed"},"Send signature",(l,d)=>this.say(l,d)))},r=async()=>{t.hidden=!0,this.say("Choose your wallet…");let o;try{o=await this.wallets.connect()}catch(a){this.say(a instanceof $?a.message+" Nothing was signed.":"The wallet could not be connected: "+C(a),!(a instanceof $));return}this.say(`${o.name} signs you in as ${o.account}: confirm the sentence in it.`),this.walletName=o.name,this.signIn(o.account,a=>this.wallets.sign(a))};this.body.replaceChildren(i("section",{id:"signin","aria-labelledby":"signin-title"},i("h2",{id:"signin-title"},"Sign in"),i("p",{},"Your wallet signs one sentence that names this browser's device key. Tasks are opened with that key, on this device only."),i("div",{class:"actions"},w("Sign in",()=>{r()})),i("h3",{},"Or with a wallet elsewhere"),i("p",{},"Type your account, then sign the sentence shown with any NEP-413 wallet (the terminal's countersign wallet sign, near-cli) and paste its answer."),i("label",{for:"account"},"Your NEAR account"),e,i("div",{class:"actions"},w("Sign with another wallet",n,!0))),t)}async signIn(e,t){if(!this.device)return;let n=new Uint8Array(32);crypto.getRandomValues(n);let r=Xt(this.device.publicKey),o=ee(Date.now()+hr*86400*1e3),a={account:e,sentence:tt(e,r,o),recipient:this.recipient,nonce:n};for(;;){let c;try{c=await t(a)}catch(l){this.walletName=null,this.say(l instanceof $?l.message+" Nothing was signed; you are not signed in.":"The sign-in cannot go on: "+C(l),!(l instanceof $));return}this.say("Signing in…");try{let l=await m("POST","/inbox/session",{account_id:e,device_pubkey:r,valid_until:o,...c});this.account=typeof l.account_id=="string"?l.account_id:e;break}catch(l){if(this.say("The sign-in was refused: "+C(l),!0),this.walletName){this.walletName=null;return}}}localStorage.setItem(Lt,this.account),this.walletName?localStorage.setItem(We,this.walletName):localStorage.removeItem(We),this.say("Signed in."),await this.list()&&this.signedIn()}signedIn(){this.renderHeader(),this.listen()}async signOut(){try{await m("DELETE","/inbox/session")}catch(e){if(!(e instanceof N&&e.status===401)){this.say("Signing out failed: "+(e instanceof Error?e.message:String(e)),!0);return}}this.ended("Signed out.")}ended(e){this.settings.hide(),this.listing++,window.clearTimeout(this.relistTimer),this.closeCard(),this.events?.close(),this.events=null,localStorage.removeItem(Lt),localStorage.removeItem(We),this.account=null,this.seen=null,this.walletName&&(this.walletName=null,this.wallets.disconnect()),this.showSignIn(),this.say(e)}async list(){let e=this.device,t=this.account;if(!e||!t)return!1;let n=++this.listing,r,o=m("GET","/inbox/tasks?show=closed").then(p=>p.tasks??[],()=>null);try{r=(await m("GET","/inbox/tasks?show=waiting")).tasks??[]}catch(p){return p instanceof N&&p.status===401?(this.body.querySelector("#tasks")&&this.ended("Your session ended: "+p.message),!1):(this.say("The inbox cannot be listed now: "+(p instanceof Error?p.message:String(p)),!0),!0)}let a=await Promise.all(r.map(p=>this.item(e,t,p))),c=this.seen===null?[]:r.filter(p=>!this.seen?.has(p.id)),l=await o;if(n!==this.listing||this.account!==t)return!0;let d=i("ul",{class:"tasks",id:"tasks","aria-labelledby":"waiting-title"},...a),u=[i("h2",{id:"waiting-title"},"Waiting for you"),i("p",{class:"keys-hint",id:"keys-hint"},"Keys: ",i("kbd",{},"j")," and ",i("kbd",{},"k")," move, ",i("kbd",{},"Enter")," opens, ",i("kbd",{},"?")," lists them all.")];u.push(a.length?d:i("p",{class:"empty",id:"tasks-empty"},"Nothing is waiting for you.")),a.length||(u.push(d),d.hidden=!0),u.push(i("h2",{id:"closed-title"},"Closed")),l===null?u.push(i("p",{class:"empty",id:"closed-empty"},"The closed tasks cannot be listed now.")):l.length?u.push(i("ul",{class:"tasks closed",id:"closed","aria-labelledby":"closed-title"},...l.map(p=>i("li",{class:"task","data-closed":String(p.id),"data-state":String(p.state)},i("span",{class:"task-title"},Nt(String(p.state))),i("span",{class:"task-meta"},`${p.project} · from ${p.preparer} · ${p.kind} · asked ${p.created_at} · task ${p.id}`),p.state==="failed"&&p.failure_reason?i("span",{class:"failure"},Bn(String(p.failure_reason))):null)))):u.push(i("p",{class:"empty",id:"closed-empty"},"No closed tasks yet.")),this.listBox.parentNode!==this.body&&(this.body.replaceChildren(this.listBox,this.cardBox,this.settings.root),this.listBox.hidden=this.settings.shown);let h=document.activeElement?.closest("#list button.task-open")?.dataset.task;if(this.listBox.replaceChildren(...u.filter(p=>p instanceof Node)),h&&this.listBox.querySelector(`button.task-open[data-task="${CSS.escape(h)}"]`)?.focus(),this.seen=new Set(r.map(p=>p.id)),c.length===1&&c[0]){let p=a[r.indexOf(c[0])]?.querySelector(".task-title")?.textContent??"";this.announce(`New task from ${c[0].preparer}: ${p}.`)}else c.length>1&&this.announce(`${c.length} new tasks are waiting for you.`);if(this.wanted){let p=this.wanted;this.wanted=null;let k=this.listBox.querySelector(`button.task-open[data-task="${CSS.escape(p)}"]`),E=l?.find(x=>x.id===p);k?k.click():r.some(x=>x.id===p)?this.say(`Task ${p} cannot be opened on this device: see why in the list.`,!0):E?this.say(`Task ${p} is closed: ${Nt(String(E.state))}.`):this.say(`Task ${p} is not in your inbox (it may have been purged, or belong to another account).`,!0)}return this.cardID&&!r.some(p=>p.id===this.cardID)&&!this.cardBusy&&(this.closeCard(),this.say("The task you had open is no longer waiting.")),!0}async item(e,t,n){let r=i("span",{class:"task-meta"},`${n.project} · from ${n.preparer} · ${n.kind} · until ${n.expires_at}`);try{let o=await tn(e,t,n),a=o.envelope.display,c=typeof a?.title=="string"?a.title:"(untitled)",l=w("",()=>{this.openCard(n,o)});return l.className="task-open",l.dataset.task=n.id,l.append(i("span",{class:"task-title"},c),r),l.firstChild?.remove(),i("li",{class:"task","data-task":n.id},l)}catch(o){if(o instanceof _&&o.reason==="locked")return i("li",{class:"task task-locked","data-task":n.id},i("span",{class:"task-title"},"Locked on this device"),r,i("p",{},"This task was opened before this device signed in, so it carries no key for this device. Unlock gives every waiting task a copy for each of your devices."),i("div",{class:"actions"},ae(w("Unlock",()=>{this.unlock()},!0),"u")));let a=o instanceof Error?o.message:String(o);return i("li",{class:"task task-locked","data-task":n.id},i("span",{class:"task-title"},"This task cannot be shown"),r,i("p",{},a))}}closeCard(){window.clearInterval(this.cardTimer),this.cardID&&Ot()===this.cardID&&history.replaceState(null,"",location.pathname+location.search),this.cardID=null,this.cardBusy=!1,this.cardBox.replaceChildren(),this.cardBox.hidden=!0,this.listBox.hidden=this.settings.shown}openSettings(){if(this.account){if(this.settings.shown){this.settings.root.querySelector("#settings-title")?.focus();return}this.closeCard(),this.settings.root.parentNode!==this.body&&this.body.replaceChildren(this.listBox,this.cardBox,this.settings.root),this.listBox.hidden=!0,this.say(""),this.settings.show()}}closeSettings(){this.settings.hide(),this.listBox.hidden=!1,this.say(""),this.relist(),this.listBox.querySelector("h2")?.setAttribute("tabindex","-1"),this.listBox.querySelector("h2")?.focus()}async openCard(e,t){let n=this.account;if(!n||this.cardID===e.id)return;window.clearInterval(this.cardTimer),this.cardID=e.id,history.replaceState(null,"",`#/tasks/${encodeURIComponent(e.id)}`),this.cardBusy=!1,this.cardExpired=!1,this.say("");let r=t.envelope,o=e.id,a=r.display??{},c=typeof a.title=="string"?a.title:"(untitled)",l=Array.isArray(a.fields)?a.fields:[],d=Array.isArray(r.files)?r.files:[],u=r.answer_by??null,h=b=>typeof b=="string"?b:String(b??""),p=i("dl",{class:"fields",id:"fields"}),k=!1;for(let b of l){let I=Array.isArray(b.values)?b.values.map(h):[],K=b.written_by==="agent";k||=K;let ge=i("dt",{class:"field-label"});K&&ge.append(i("span",{class:"agent-mark",role:"img","aria-label":"written by the agent",title:"written by the agent"},"🤖")," "),ge.append(h(b.label));let fe;b.kind==="list"||I.length!==1?fe=i("dd",{class:"field-value"},i("ul",{},...I.map(Rn=>i("li",{},Rn)))):fe=i("dd",{class:b.kind==="long_text"?"field-value long":"field-value"},I[0]??""),K&&(ge.classList.add("by-agent"),fe.classList.add("by-agent")),p.append(ge,fe)}let E=d.length?i("ul",{class:"files",id:"files"},...d.map((b,I)=>{let K=w("Download",()=>{this.download(o,t,I,h(b.name),K)},!0);return K.setAttribute("aria-label","Download "+h(b.name)),K.dataset.file=String(I),i("li",{},i("span",{class:"mono"},h(b.name)),` (${h(b.content_type)}, ${te(Number(b.size))}) `,K)})):i("p",{id:"files"},"No files."),x=new TextDecoder("utf-8",{fatal:!1}).decode(t.envelopeBytes),T=await H(t.envelopeBytes),y=h(r.expires_at),D=Date.parse(y),Y=i("span",{id:"countdown"},It(Date.now(),D));this.cardTimer=window.setInterval(()=>{Y.textContent=It(Date.now(),D),this.checkExpiry(o,y,D)},1e3);let G=i("p",{id:"receipt",class:"receipt"},"Checking the receipt of the run that made this task…"),q=i("div",{class:"card-actions",id:"card-actions"}),ne=[i("div",{class:"actions"},w("Back to the list",()=>this.closeCard(),!0)),i("h2",{id:"card-title"},c),i("p",{class:"task-meta"},`${e.project} · from ${e.preparer} · ${h(r.build)} · ${e.kind} · task ${o}`),i("p",{class:"expiry"},`Expires at ${y} (`,Y,")"),G,i("h3",{},"Preview"),p,k?i("p",{class:"task-meta"},"🤖 marks the agent's own words, not the connector's."):null,i("h3",{},"Files"),E,i("details",{id:"raw-form"},i("summary",{},"RAW form"),i("p",{class:"task-meta"},"The envelope exactly as decrypted on this device. Its SHA-256 is the task hash you sign."),i("pre",{id:"raw",class:"raw"},x),i("p",{},"SHA-256: ",i("code",{id:"raw-sha"},T))),i("details",{id:"raw-request"},i("summary",{},"RAW request"),i("p",{class:"task-meta"},"The agent's call exactly as decrypted on this device, byte for byte. The receipt's input hash covers these bytes."),i("pre",{id:"request",class:"raw"},new TextDecoder("utf-8",{fatal:!1}).decode(t.request)),i("p",{},`${te(t.request.length)}, SHA-256: `,i("code",{id:"request-sha"},await H(t.request)))),q];if(this.cardBox.replaceChildren(...ne.filter(b=>b instanceof Node)),this.listBox.hidden=!0,this.cardBox.hidden=!1,this.cardBox.querySelector("h2")?.setAttribute("tabindex","-1"),this.cardBox.querySelector("h2")?.focus(),!u||e.kind==="notice"){q.append(i("div",{class:"actions"},ae(w("Got it",()=>{this.acknowledge(o)}),"g"))),G.textContent="A notice asks nothing: read it and close it with Got it.",this.checkExpiry(o,y,D),this.checkReceipt(o,t,G,null);return}let se=h(u.supplies),V=async()=>null,U=[];if(se==="text"){let b=i("textarea",{id:"answer",name:"answer",spellcheck:"false"});V=async()=>new TextEncoder().encode(b.value),U.push(i("label",{for:"answer"},"Your answer"),b)}else if(se==="file"){let b=i("input",{id:"answer-file",name:"answer-file",type:"file","aria-describedby":"answer-file-help"});V=async()=>{let I=b.files?.[0];if(!I)throw new Error("choose the file to answer with first");if(I.size>Kt)throw new Error(`the file is ${te(I.size)}; an answer holds at most ${te(Kt)}`);return new Uint8Array(await I.arrayBuffer())},U.push(i("label",{for:"answer-file"},"Your answer: a file"),i("p",{id:"answer-file-help",class:"task-meta"},`Sealed on this device to the agent's reply key; at most ${te(Kt)}.`),b)}let g=i("textarea",{id:"note",name:"note",spellcheck:"false"});U.push(i("label",{for:"note"},"A note for the agent (optional)"),g);let M=w("Approve",()=>{this.prepareApproval(n,t,V,g,He)});M.disabled=!0;let P=i("textarea",{id:"reason",name:"reason",spellcheck:"false"}),He=i("div",{id:"approve-step"});He.hidden=!0,q.append(...U.filter(b=>b instanceof Node),i("div",{class:"actions"},ae(M,"a")),He,i("label",{for:"reason"},"Why you reject it (optional, for the agent)"),P,i("div",{class:"actions"},ae(w("Reject",()=>{this.reject(t,P)},!0),"r"))),this.checkExpiry(o,y,D),this.checkReceipt(o,t,G,M)}checkExpiry(e,t,n){if(this.cardID!==e||this.cardExpired||!(Date.now()>=n))return;this.cardExpired=!0;let r=this.cardBox.querySelector("#card-actions");for(let a of this.cardBox.querySelectorAll("button"))(r?.contains(a)||a.dataset.file!==void 0)&&(a.disabled=!0);for(let a of this.cardBox.querySelectorAll("textarea"))a.readOnly=!0;let o=i("p",{id:"expired",class:"receipt error"},`This task expired at ${t}: it can no longer be answered, and the service refuses an answer now.`);r?.before(o)}async download(e,t,n,r,o){o.disabled=!0;try{let a=await m("GET",`/inbox/tasks/${encodeURIComponent(e)}/files/${n}`);if(typeof a.ciphertext!="string")throw new F("the service sent no file");let c=await nn(t,n,W(a.ciphertext));if(this.cardID!==e)return;let l=URL.createObjectURL(new Blob([c],{type:"application/octet-stream"})),d=i("a",{href:l,download:jn(r),hidden:""});document.body.append(d),d.click(),d.remove(),window.setTimeout(()=>URL.revokeObjectURL(l),6e4),this.say(`Downloaded ${r}: its size and SHA-256 match the task.`)}catch(a){a instanceof N?this.say(`The file ${r} could not be fetched: ${a.message}`,!0):this.say(`The file ${r} is refused: it is not the file this task names (its size or SHA-256 does not match, or it does not open on this device).`,!0)}finally{o.disabled=this.cardExpired}}async checkReceipt(e,t,n,r){let o;try{let[a,c]=await Promise.all([m("GET",`/inbox/tasks/${encodeURIComponent(e)}/origin`),m("GET","/.well-known/countersign-run-key")]),l=await et(Qe(c),a.receipt,t);if(this.cardID!==e)return;n.textContent=`Receipt verified: run ${l.run} of ${l.build} made this task, for this request and this hash.`,n.classList.remove("error"),n.classList.add("ok"),r&&!this.cardExpired&&(r.disabled=!1);return}catch(a){o=a instanceof A||a instanceof N?a.message:"the receipt could not be checked: "+(a instanceof Error?a.message:String(a))}this.cardID===e&&(n.textContent=`Receipt not verified: ${o}. Approve stays off: this task may not come from the service's run.`,n.classList.add("error"),r&&(r.disabled=!0))}async askSignature(e,t,n,r){return this.walletName?(t.replaceChildren(i("p",{},`${this.walletName} is asked to sign: `,i("code",{id:n.sentence},e.sentence))),t.hidden=!1,this.say(`Confirm in ${this.walletName}.`),this.wallets.sign(e)):(this.say("Sign the sentence shown, then paste the wallet's answer."),Mt(t,e,n,r,(o,a)=>this.say(o,a)))}async prepareApproval(e,t,n,r,o){let a=String(t.envelope.id),c=t.replyPubkey;if(!c||this.cardBusy)return;let l=null,d=null;try{let y=await n();y&&(l=await Ge(c,"answer",a,y)),r.value!==""&&(d=await Ve(c,"note",a,r.value))}catch(y){this.say("This answer cannot be sent: "+(y instanceof Error?y.message:String(y)),!0);return}let u=await Vt(d,l),h=Math.floor(Date.now()/1e3)*1e3,p=new Uint8Array(32);crypto.getRandomValues(p);let k={account:e,sentence:nt(e,a,t.taskHash,u,ee(h)),recipient:this.recipient,nonce:p},E=i("div");o.replaceChildren(i("h3",{},"Sign the approval"),i("p",{},"Your answer and note are sealed to the agent's reply key; this sentence covers them and the task's hash."),E),o.hidden=!1;let x;try{this.walletName&&(this.cardBusy=!0),x=await this.askSignature(k,E,{sentence:"approval-sentence",recipient:"approval-recipient",nonce:"approval-nonce",command:"approval-command",answer:"approval-signed"},"Send approval")}catch(y){this.cardBusy=!1,o.hidden=!0,this.say(y instanceof $?y.message+" Nothing was sent: the task still waits for you.":"The approval cannot be signed: "+C(y),!(y instanceof $));return}if(this.cardID!==a){this.cardBusy=!1;return}this.cardBusy=!0;let T={task_hash:t.taskHash,approval:{at:h/1e3,...x}};l&&(T.supplied=O(l)),d&&(T.note=O(d)),this.say("Sending the approval…");try{await m("POST",`/inbox/tasks/${encodeURIComponent(a)}/approve`,T)}catch(y){this.cardBusy=!1,o.hidden=!0,this.say("The approval was refused: "+C(y),!0);return}this.closeCard(),this.say("Approved: the service carries it out."),this.relist()}async reject(e,t){let n=String(e.envelope.id),r={};try{t.value!==""&&e.replyPubkey&&(r.reason=O(await Ve(e.replyPubkey,"rejection",n,t.value)))}catch(o){this.say("This reason cannot be sent: "+(o instanceof Error?o.message:String(o)),!0);return}this.cardBusy=!0,this.say("Rejecting…");try{await m("POST",`/inbox/tasks/${encodeURIComponent(n)}/reject`,r)}catch(o){this.cardBusy=!1,this.say("The rejection was refused: "+C(o),!0);return}this.closeCard(),this.say("Rejected."),this.relist()}async acknowledge(e){this.cardBusy=!0;try{await m("POST",`/inbox/tasks/${encodeURIComponent(e)}/acknowledge`)}catch(t){this.cardBusy=!1,this.say("Closing the notice was refused: "+C(t),!0);return}this.closeCard(),this.say("Closed."),this.relist()}async unlock(){try{await m("POST","/inbox/unlock")}catch(e){this.say("Unlock failed: "+(e instanceof Error?e.message:String(e)),!0);return}await this.list()}listen(){this.events?.close();let e=new EventSource("/inbox/events",{withCredentials:!0});e.addEventListener("open",()=>this.relist()),e.addEventListener("task",()=>this.relist()),e.addEventListener("error",()=>{e.readyState===EventSource.CLOSED&&this.events===e&&(this.events=null,this.relist())}),this.events=e}relist(){window.clearTimeout(this.relistTimer),this.relistTimer=window.setTimeout(()=>{this.list()},50)}};function Kn(){let s=document.getElementById("inbox-app");if(!s)return;let t=document.querySelector('meta[name="countersign-recipient"]')?.getAttribute("content")||"countersign",n=document.querySelector('meta[name="countersign-network"]')?.getAttribute("content")==="testnet"?"testnet":"mainnet",r=document.querySelector('meta[name="countersign-sandbox-wallet"]')?.getAttribute("content")||null,o=document.querySelector("script[nonce]")?.nonce??"";new Rt(s,t,{network:n,nonce:o,sandbox:r}).start()}Kn();export{Fe as ContentKey,f as CryptoError,Ze as DEVICE_DB,F as FileMismatchError,Yn as GCM_OVERHEAD,be as MAX_SEALED_REPLY_BYTES,_ as OpenError,L as P256_POINT_SIZE,ye as SEALED_OVERHEAD,ze as TooLargeError,Ht as VERSION,nt as approvalSentence,z as concat,Vn as contentAAD,cn as deviceKey,Zn as fileAAD,mr as forgetDeviceKey,Xt as formatP256PublicKey,ie as fromBase58,W as fromBase64,Qn as fromBase64URL,Xn as fromHex,Zt as generateDeviceKey,gr as importP256PrivateKey,Ut as info,as as loadDeviceKey,tn as openTask,nn as openTaskFile,ss as openWith,Qt as parseP256PublicKey,hn as preparingRun,os as readContent,un as readSigned,dn as receiptBytes,Qe as runKeys,is as sealReply,Ve as sealText,Ge as sealTo,ns as sealToWith,ee as sentenceTime,H as sha256Hex,us as signInBody,tt as signInSentence,Vt as supplyHash,es as taskHash,O as toBase64,we as toBase64URL,Ft as toHex,rs as unwrapContentKey,et as verifyReceipt,xe as walletAnswer};
