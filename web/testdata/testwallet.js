// A NEAR wallet for the browser tests, injected into the page before its
// scripts run through near-connect's documented near-wallet-injected event
// (the way a wallet extension offers itself). It signs NEP-413 messages
// with a known ed25519 key. The test sets TEST_WALLET first:
// {account, publicKey, seed (hex of the 32-byte seed), callback (sign the
// page's URL as the callback, as MyNearWallet does when it redirects)}.
// window.testWallet records what it signed and can be told to decline
// (every message, or those declineIf(message) is true of), to wait until
// released (hold, a promise), or to answer with a signature that verifies
// for nothing (corrupt).
(() => {
  const W = TEST_WALLET;
  const hex = (s) => Uint8Array.from(s.match(/../g), (h) => parseInt(h, 16));
  const pkcs8 = new Uint8Array([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20, ...hex(W.seed)]);
  const key = crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, ["sign"]);
  const u32 = (n) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, n, true);
    return [...b];
  };
  const str = (s) => {
    const b = new TextEncoder().encode(s);
    return [...u32(b.length), ...b];
  };
  const state = { signed: [], signIns: 0, decline: false, declineIf: null, hold: null, callback: !!W.callback, corrupt: false };
  window.testWallet = state;
  const account = { accountId: W.account, publicKey: W.publicKey };
  const wallet = {
    manifest: {
      id: "test-wallet",
      name: "Test Wallet",
      icon: "data:image/svg+xml;base64," + btoa('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8" fill="#888"/></svg>'),
      description: "The browser tests' wallet.",
      website: "https://test-wallet.invalid",
      version: "1.0.0",
      executor: "",
      type: "injected",
      platform: {},
      features: { signMessage: true, signInWithoutAddKey: true, mainnet: true, testnet: true },
      permissions: {},
    },
    async signIn() {
      state.signIns++;
      return [account];
    },
    async signOut() {},
    async getAccounts() {
      return [account];
    },
    async signMessage({ message, recipient, nonce }) {
      if (state.hold) {
        // A wallet that has not answered yet: it declines once released.
        await state.hold;
        throw new Error("User rejected the request");
      }
      if (state.decline || (state.declineIf && state.declineIf(message))) {
        throw new Error("User rejected the request");
      }
      const cb = state.callback ? [1, ...str(location.href)] : [0];
      const bytes = new Uint8Array([...u32(2147484061), ...str(message), ...nonce, ...str(recipient), ...cb]);
      const digest = await crypto.subtle.digest("SHA-256", bytes);
      const sig = new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, await key, digest));
      if (state.corrupt) {
        sig[0] ^= 1; // a signature of nothing the page asked
      }
      state.signed.push(message);
      return { accountId: W.account, publicKey: W.publicKey, signature: btoa(String.fromCharCode(...sig)) };
    },
  };
  window.addEventListener("near-selector-ready", () => window.dispatchEvent(new CustomEvent("near-wallet-injected", { detail: wallet })));
})();
