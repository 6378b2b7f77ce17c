// The live table's renderer (2048's HTMLActuator): draws a model state into the page — the
// lobby, the table (table.js from a scene), the end screen, a stopped connection — keeps the
// countdown running, and plays the moves (motion.js). It reads the state, never changes it;
// the one thing it reports back is the frame that painted a slap round's trigger.

import { liveScene } from "./scene.js";
import { seconds, t } from "./i18n.js";
import { fitCentre, patchRound, renderTable } from "./table.js";
import { esc, errorText } from "./ui.js";
import { lobbyHtml } from "./lobby.js";
import { endHtml } from "./end.js";
import { clearMoves, playMoves } from "./motion.js";
import { reactBar, showReacts } from "./react.js";

export class HTMLRenderer {
  /** root: the element to draw in; onPainted(turn, at): the trigger of round `turn` was painted at `at`. */
  constructor(root, { onPainted = () => {}, storage = null, now = () => performance.now() } = {}) {
    this.root = root;
    this.onPainted = onPainted;
    this.storage = storage;
    this.now = now;
    this.frame = null;
    this.lastResolved = null;
  }

  connecting() {
    this.root.innerHTML = `<div class="page"><p class="muted">${esc(t("table.connecting"))}</p></div>`;
  }

  /** A connection that stays closed: the table does not exist, has expired, or moved to another tab. */
  stopped(s) {
    const what = s.stopped;
    const title = esc(t("lobby.title", { code: s.code }));
    const words = what === "replaced" ? t("table.replaced") : errorText(what);
    const button =
      what === "replaced"
        ? `<button class="btn big" data-action="take-back">${esc(t("table.takeBack"))}</button>`
        : `<button class="btn" data-action="home">${esc(t("nav.home"))}</button>`;
    this.root.innerHTML = `<div class="page"><section class="card-box stopped" data-stopped="${esc(what)}"><h1>${title}</h1>
      <p class="error-text">${esc(words)}</p><div class="row">${button}</div></section></div>`;
  }

  render(s, animate) {
    cancelAnimationFrame(this.frame);
    if (s.stopped) return this.stopped(s);
    if (!s.table) return this.connecting();
    if (s.table.state === "lobby" || !s.view) {
      this.root.innerHTML = lobbyHtml(s, this.storage?.name() || "");
      this.reacts(s);
      return;
    }
    const now = this.now();
    const holder = document.createElement("div");
    const sc = liveScene(s, now);
    renderTable(holder, sc);
    const tableEl = holder.querySelector(".table");
    if (!animate) tableEl.classList.add("still");
    let extra = "";
    if (s.seat === null) extra += `<div class="watching">${esc(t("table.watching"))}</div>`;
    // The last round's hands stay in view a moment before the result covers the table.
    const settled = !s.resolved || now >= s.resolved.until - 20;
    if (sc.over && settled) {
      extra += s.endDismissed
        ? `<div class="watching"><button class="btn" data-action="show-end">${esc(t("end.show"))}</button></div>`
        : endHtml(s, sc);
    }
    const focused = this.root.querySelector(".end")?.contains(document.activeElement) ? document.activeElement : null;
    this.root.replaceChildren(...holder.childNodes);
    if (extra) this.root.insertAdjacentHTML("beforeend", extra);
    this.focusEnd(s, focused);
    this.reacts(s); // its bar takes room from the centre: there before the cards are sized
    fitCentre(this.root);
    if (!s.resolved) clearMoves();
    else if (s.resolved !== this.lastResolved && now < s.resolved.until) {
      this.lastResolved = s.resolved;
      playMoves(this.root, s.resolved);
    }
    if (s.round && s.view.round) {
      // Reaction times count from the frame that paints the trigger (docs/PROTOCOL.md).
      if (s.round.paintedAt === null) {
        const turn = s.round.turn;
        requestAnimationFrame((ts) => this.onPainted(turn, ts));
      } else this.countdown(s);
    }
    this.reaction(s);
  }

  /** The quick reactions' bar (or only its mute switch, for a spectator) and the bubbles by the seats. */
  reacts(s) {
    if (s.table?.practice) return; // the practice table has no one to react to
    const muted = !!this.storage?.reactionsMuted?.();
    this.root.querySelector(".react-bar")?.remove();
    this.root.insertAdjacentHTML("beforeend", reactBar(s, muted));
    if (!muted) showReacts(this.root, s, this.now());
  }

  /** The end screen takes the focus once per game (a keyboard goes on from its title), and
   * keeps it on the same control when it is drawn again (the ratings arrive). */
  focusEnd(s, focused) {
    const end = this.root.querySelector(".end");
    if (!end) return;
    const game = s.table?.game_id || "practice";
    const action = focused?.dataset?.action;
    const again = action ? end.querySelector(`[data-action="${action}"]`) : null;
    if (again) return again.focus({ preventScroll: true });
    if (this.endFocusedFor === game && !focused) return;
    this.endFocusedFor = game;
    end.querySelector("#end-title")?.focus({ preventScroll: true });
  }

  /** Update an open round in place; re-draw everything when there is no open table yet. */
  patch(s) {
    if (!s.round || !this.root.querySelector(".table.round-open")) return this.render(s, false);
    patchRound(this.root, liveScene(s, this.now()));
    fitCentre(this.root);
    this.reaction(s);
    this.reacts(s);
  }

  reaction(s) {
    if (s.round?.lastMs == null) return;
    const lbl = this.root.querySelector(".my-hands .lbl");
    if (lbl) lbl.textContent = `${t("table.yourHands")} · ${t("table.reaction", { ms: s.round.lastMs })}`;
  }

  /** Run the slap window's bar down from the painted trigger (read from the state each frame). */
  countdown(s) {
    const r = s.round;
    const el = this.root.querySelector(".countdown");
    if (!r || !el || r.paintedAt === null) return;
    if (el.hidden) {
      el.hidden = false;
      fitCentre(this.root); // the bar's row is taken from the centre's
    }
    const bar = el.querySelector(".bar");
    const secs = el.querySelector(".secs");
    cancelAnimationFrame(this.frame);
    const tick = (now) => {
      if (!el.isConnected) return;
      const left = Math.max(0, r.windowMs - (now - r.paintedAt));
      bar.style.transform = `scaleX(${left / r.windowTotal})`;
      // The text changes ten times a second; written at every frame it was laid out again.
      const text = t("table.seconds", { s: seconds(left) });
      if (secs.textContent !== text) secs.textContent = text;
      if (left > 0) this.frame = requestAnimationFrame(tick);
    };
    this.frame = requestAnimationFrame(tick);
  }

  stop() {
    cancelAnimationFrame(this.frame);
  }
}
