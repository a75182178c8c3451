// The wallet picker: the page's own modal dialog listing the wallets
// near-connect offers (the manifest kept in wallet.ts, the sandbox wallet,
// any injected one), each a button named by its wallet. The focus stays in
// the dialog while it is open (Tab and Shift+Tab wrap), Esc or Cancel
// closes it, and the focus goes back where it was. near-connect's own
// picker is not used: its wallet buttons have no accessible name.

import type { WalletManifest } from "@hot-labs/near-connect/build/types";

import { button, el } from "./dom";
import { Declined, type Wallets } from "./wallet";

/** Has the owner choose a wallet: its id, or Declined when the picker is closed. */
export function pickWallet(wallets: Wallets): Promise<string> {
  const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const list = el("ul", { class: "wallets", id: "wallet-list" });
  const cancel = button("Cancel", () => dialog.close("cancel"), true);
  const dialog = el(
    "dialog",
    { id: "wallet-picker", class: "picker", "aria-labelledby": "wallet-picker-title", "aria-describedby": "wallet-picker-help" },
    el("h2", { id: "wallet-picker-title" }, "Choose your wallet"),
    el("p", { id: "wallet-picker-help", class: "task-meta" }, "It connects, then asks you to sign one sentence. Each wallet runs apart from this page, which never sees its keys."),
    list,
    el("p", { class: "empty", id: "wallet-none", hidden: "" }, "No wallet that signs messages is available in this browser."),
    el("div", { class: "actions" }, cancel),
  );
  return new Promise((resolve, reject) => {
    let chosen: string | null = null;
    const draw = (offered: WalletManifest[]) => {
      const had = list.contains(document.activeElement) ? (document.activeElement as HTMLElement).dataset["wallet"] : undefined;
      list.replaceChildren(
        ...offered.map((w) => {
          const b = el(
            "button",
            { type: "button", class: "wallet", "data-wallet": w.id },
            el("img", { src: w.icon, alt: "", width: "32", height: "32" }),
            el("span", { class: "wallet-name" }, w.name),
          );
          b.addEventListener("click", () => {
            chosen = w.id;
            dialog.close("chosen");
          });
          return el("li", {}, b);
        }),
      );
      (dialog.querySelector("#wallet-none") as HTMLElement).hidden = offered.length > 0;
      const again = had ? list.querySelector<HTMLElement>(`button[data-wallet="${CSS.escape(had)}"]`) : null;
      again?.focus();
    };
    const changed = () => void wallets.offered().then(draw);
    dialog.addEventListener("keydown", (ev) => {
      if (ev.key !== "Tab") {
        return;
      }
      const stops = [...dialog.querySelectorAll<HTMLElement>("button:not([disabled])")];
      const first = stops[0];
      const last = stops[stops.length - 1];
      if (!first || !last) {
        return;
      }
      if (ev.shiftKey && document.activeElement === first) {
        ev.preventDefault();
        last.focus();
      } else if (!ev.shiftKey && document.activeElement === last) {
        ev.preventDefault();
        first.focus();
      }
    });
    dialog.addEventListener("close", () => {
      wallets.stopOffering(changed);
      dialog.remove();
      if (chosen) {
        resolve(chosen);
        return;
      }
      if (before?.isConnected) {
        before.focus();
      }
      reject(new Declined("No wallet was chosen."));
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
    void wallets.offered(changed).then((offered) => {
      draw(offered);
      list.querySelector<HTMLElement>("button")?.focus();
    });
  });
}
