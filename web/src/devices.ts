// Settings → Devices: the browsers and terminals signed in as the owner,
// this one marked, with its "Notify this device" switch; withdrawing one is
// confirmed by the owner's wallet first and ends its session at once.

import * as api from "./api";
import { el, button, refusal, when } from "./dom";
import { pushSwitch } from "./push";
import { actions, resultLine, type SectionContext } from "./section";

type Device = api.Device;

/** The devices view. */
export class Devices {
  constructor(private readonly ctx: SectionContext) {}

  async load(): Promise<void> {
    const box = this.ctx.part("devices");
    const gen = this.ctx.generation();
    let devices: Device[];
    try {
      devices = (await api.devices()).devices ?? [];
    } catch (e) {
      if (this.ctx.current(gen)) {
        box.replaceChildren(el("p", { class: "empty" }, "Your devices cannot be listed now: " + refusal(e)));
      }
      return;
    }
    if (!this.ctx.current(gen)) {
      return;
    }
    const step = this.ctx.step("device-confirm");
    const out = resultLine("devices-result");
    const items = devices.map((d) => {
      const withdraw = button("Withdraw", () => void this.withdraw(d, step, out), true);
      withdraw.setAttribute("aria-label", d.this ? `Withdraw this device (${d.id})` : `Withdraw the device ${d.id}`);
      return el(
        "li",
        { class: "setting-item", "data-device": d.id },
        el("span", { class: "task-title" }, d.this ? el("span", { class: "this-device" }, "This device") : "Another device", " ", el("span", { class: "mono" }, d.id)),
        el("span", { class: "task-meta" }, "Signed in ", when(d.created_at), " · ends ", when(d.valid_until)),
        d.this ? el("span", { class: "task-meta" }, "Withdrawing this device signs this page out.") : null,
        !d.this && d.push ? el("span", { class: "task-meta" }, "Told when a task is waiting.") : null,
        d.this ? pushSwitch(d.push === true, { say: (t, err) => this.ctx.result(out, t, err), failed: (what, e) => this.ctx.failed(out, what, e) }) : null,
        el(
          "details",
          { class: "precise" },
          el("summary", {}, "Its keys"),
          el("dl", { class: "details" }, el("dt", {}, "Device key"), el("dd", { class: "mono" }, d.device_pubkey), el("dt", {}, "Signed in by the wallet key"), el("dd", { class: "mono" }, d.signer_pubkey)),
        ),
        el("div", { class: "actions" }, withdraw),
      );
    });
    this.ctx.redraw(box, items.length ? el("ul", { class: "tasks", id: "devices-list", "aria-label": "Your devices" }, ...items) : el("p", { class: "empty" }, "No device is signed in."), out, step);
  }

  private async withdraw(d: Device, step: HTMLElement, out: HTMLElement): Promise<void> {
    const confirmation = await this.ctx.confirm(actions.withdrawDevice(d.id), step, "device-confirm", "Send confirmation");
    if (!confirmation) {
      return;
    }
    this.ctx.host.say("Withdrawing the device…");
    try {
      await api.withdrawDevice(d.id, confirmation);
    } catch (e) {
      this.ctx.failed(out, "The device was not withdrawn", e);
      return;
    }
    if (d.this) {
      this.ctx.host.ended("This device was withdrawn: you are signed out.");
      return;
    }
    await this.load();
    this.ctx.result(this.ctx.part("devices").querySelector("#devices-result"), `The device ${d.id} was withdrawn: its session is over.`);
  }
}
