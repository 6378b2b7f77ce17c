// Challenges (docs/PROTOCOL.md, Challenges): "Challenge" on another player's profile opens a
// private table of two with its second seat kept for them; the home page shows the
// invitations to you (accept: sit at that table; decline) and the answers to yours, asked
// again with the table list's poll — there is no socket away from a table to push them on.

import { t } from "./i18n.js";
import { me, players } from "./identity.js";
import { storage } from "./storage.js";
import { esc, navigate, showError } from "./ui.js";

/** The profile's "Challenge" button: for another person, when you have an identity. */
export function challengeButton(profile) {
  const who = me();
  if (!who || who.player === profile.id || profile.bot) return "";
  return `<button class="btn" data-challenge="${esc(profile.id)}">${esc(t("challenge.button", { name: profile.name }))}</button>`;
}

/** Sit at a seat the server gave (a challenge made or accepted) and go to its table. */
function sit(seated) {
  storage.saveSeat(seated.code, { seat: seated.seat, token: seated.token, host: seated.host, name: me()?.name || "" });
  navigate(`?table=${seated.code}`);
}

/** The profile's click on "Challenge". */
export async function challenge(id, button) {
  button.disabled = true;
  try {
    sit((await players.challenge(id)).seat);
  } catch (err) {
    showError(err);
    button.disabled = false;
  }
}

function row(c, incoming) {
  if (incoming)
    return `<li data-challenge-id="${esc(c.id)}" data-state="open">${esc(t("challenge.from", { name: c.challenger.name }))}
      <button class="btn" data-accept="${esc(c.id)}">${esc(t("challenge.accept"))}</button>
      <button class="btn secondary" data-decline="${esc(c.id)}">${esc(t("challenge.decline"))}</button></li>`;
  const open = c.state === "open" ? ` <a href="?table=${esc(c.code)}" data-table="${esc(c.code)}">${esc(t("challenge.toTable"))}</a>` : "";
  return `<li data-challenge-id="${esc(c.id)}" data-state="${esc(c.state)}">${esc(t("challenge.to", { name: c.opponent.name }))} —
    <span class="challenge-state">${esc(t(`challenge.state.${c.state}`))}</span>${open}</li>`;
}

/** The home page's box of challenges, drawn from the server's answer (hidden when empty). */
export class ChallengesBox {
  constructor(box) {
    this.box = box;
    this.data = null;
    box.addEventListener("click", (ev) => this.click(ev));
  }

  async refresh() {
    if (!me()) return;
    try {
      this.data = await players.challenges();
      this.draw();
    } catch {
      // asked again with the next poll
    }
  }

  draw() {
    const d = this.data;
    if (!d || (!d.incoming.length && !d.outgoing.length)) {
      this.box.hidden = true;
      this.box.innerHTML = "";
      return;
    }
    this.box.hidden = false;
    this.box.innerHTML = `<h2>${esc(t("challenge.title"))}</h2>
      <ul class="challenge-list">${d.incoming.map((c) => row(c, true)).join("")}${d.outgoing.map((c) => row(c, false)).join("")}</ul>`;
  }

  async click(ev) {
    const el = ev.target.closest("[data-accept], [data-decline], a[data-table]");
    if (!el) return;
    ev.preventDefault();
    if (el.dataset.table) return navigate(`?table=${el.dataset.table}`);
    el.disabled = true;
    try {
      if (el.dataset.accept) return sit(await players.acceptChallenge(el.dataset.accept));
      await players.declineChallenge(el.dataset.decline);
      await this.refresh();
    } catch (err) {
      showError(err);
      el.disabled = false;
    }
  }
}
