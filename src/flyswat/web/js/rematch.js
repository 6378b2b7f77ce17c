// A table beyond one game, in the browser: the lobby's host controls and Play now countdown,
// the end screen's rematch, leave and rating changes (docs/PROTOCOL.md, Players). Pure HTML
// builders from the page state, and the actions they name turned into messages.

import { t } from "./i18n.js";
import { esc } from "./ui.js";
import { me, recordUrl } from "./identity.js";

/** The message an action of these controls sends, or null for another action. */
export function lifecycleMessage(a) {
  switch (a.type) {
    case "rematch":
      return { type: "rematch", accept: a.accept !== "false" };
    case "leave":
      return { type: "leave" };
    case "seat-bot":
      return { type: "seat_bot", target: Number(a.target), level: a.level || "normal" };
    case "kick":
      return { type: "kick", target: Number(a.target) };
    default:
      return null;
  }
}

/** Seconds left on every Play now countdown under root (called a few times a second). */
export function tickFill(root) {
  for (const el of root.querySelectorAll("[data-fill-deadline]")) {
    const left = Math.max(0, Math.ceil((Number(el.dataset.fillDeadline) - performance.now()) / 1000));
    const text = t(left > 0 ? "lobby.fillIn" : "lobby.filling", { s: left });
    if (el.textContent !== text) el.textContent = text;
  }
}

/** The Play now countdown of a lobby, or "". */
export function fillHtml(tb) {
  if (tb.state !== "lobby" || tb.fill_deadline == null) return "";
  return `<p class="fill-countdown" role="timer" data-fill-deadline="${tb.fill_deadline}"></p>`;
}

/** A player's shown rating, as a small pill. */
export function ratingPill(p) {
  return p.rating == null ? "" : `<span class="pill rating" title="${esc(t("players.rating"))}">${esc(p.rating)}</span>`;
}

/** The host's buttons on another seat's row: give it to a bot, remove its player. */
export function hostButtons(tb, p, mySeat) {
  // A Play now lobby has no host's controls (nobody made it); its end has, for a rematch.
  const playNowLobby = tb.options?.autofill_ms != null && tb.state === "lobby";
  const host = mySeat !== null && tb.players[mySeat]?.host && !playNowLobby;
  if (!host || p.seat === mySeat || p.kind === "bot") return "";
  const out = [];
  if (!p.joined || !p.connected)
    out.push(`<button class="btn small secondary" data-action="seat-bot" data-target="${p.seat}">${esc(t("lobby.toBot"))}</button>`);
  if (p.joined && tb.state === "lobby")
    out.push(`<button class="btn small secondary" data-action="kick" data-target="${p.seat}">${esc(t("lobby.kick"))}</button>`);
  return out.join("");
}

/** The lobby's leave button for a seated player. */
export function leaveButton(s) {
  return s.seat === null ? "" : `<button class="btn secondary" data-action="leave">${esc(t("lobby.leave"))}</button>`;
}

/** The small mark of a provisional rating (its first games), or "". */
export function provisionalMark(provisional) {
  return provisional ? `<abbr class="provisional" title="${esc(t("ratings.provisionalTitle"))}">?</abbr>` : "";
}

/** "+14" over "1014", "−3" over "997", or "" for seat's rating in the finished game (s.ratings). */
export function deltaHtml(s, seat) {
  const row = s.ratings?.seats?.find((x) => x.seat === seat);
  if (!row || row.rated == null) return "";
  if (!row.rated) return `<small class="delta none" title="${esc(t("end.unrated"))}">—</small>`;
  const d = row.delta;
  const text = d > 0 ? `+${d}` : d < 0 ? `−${-d}` : "±0";
  return `<span class="delta ${d > 0 ? "up" : d < 0 ? "down" : ""}">${text}</span>
    <span class="rating-now" title="${esc(t("end.ratingNow", { rating: row.rating_after }))}"><span class="rating-after">${esc(row.rating_after)}</span>${provisionalMark(row.provisional)}</span>`;
}

/** The end screen's rematch row: who has accepted, your buttons, the host's (not after practice). */
export function rematchHtml(s) {
  const tb = s.table;
  if (!tb || tb.state !== "over" || s.seat === null || tb.practice) return "";
  const mine = tb.players[s.seat];
  const humans = tb.players.filter((p) => p.kind === "human");
  // Who played and has left since is not waited for: their seat is free (the host may give it
  // to a bot); they are named as the game ended.
  const gone = humans.filter((p) => !p.joined && p.seat !== s.seat);
  const waiting = humans.filter((p) => p.joined && !p.rematch && p.seat !== s.seat); // you know your own answer
  const named = (list) => list.map((p) => p.name || s.endSeats?.[p.seat]?.name || t("seat.empty", { n: p.seat + 1 })).join(", ");
  const left = gone.length ? t("end.rematchLeft", { names: named(gone) }) : "";
  const status = [
    left,
    waiting.length ? t("end.rematchWaiting", { names: named(waiting) }) : mine?.rematch && !gone.length ? t("end.rematchStarting") : "",
  ]
    .filter(Boolean)
    .join(" ");
  const hostControls = humans
    .filter((p) => p.seat !== s.seat && !p.rematch && (!p.joined || !p.connected))
    .map((p) => (mine?.host ? hostButtons(tb, p, s.seat) : ""))
    .join("");
  return `<div class="rematch" data-rematch>
      ${status || hostControls ? `<p class="muted rematch-status">${esc(status)} ${hostControls}</p>` : ""}
      ${mine?.rematch
        ? `<button class="btn big secondary" data-action="rematch" data-accept="false">${esc(t("end.rematchCancel"))}</button>`
        : `<button class="btn big" data-action="rematch">${esc(t("end.rematch"))}</button>`}
    </div>`;
}

/** The end screen's small links: the record, your page, how ratings work. */
export function endLinks(s) {
  const tb = s.table;
  const links = [];
  if (tb?.game_id)
    links.push(`<a href="${esc(recordUrl(tb.game_id))}" download="flyswat-${esc(tb.game_id)}.json" data-download>${esc(t("end.download"))}</a>`);
  const who = me();
  if (who && !tb?.practice)
    links.push(`<a href="?player=${esc(who.player)}" data-action="profile" data-href="?player=${esc(who.player)}">${esc(t("players.yourProfile"))}</a>`);
  if (!tb?.practice) links.push(`<a href="?ratings" data-page="?ratings" data-action="profile" data-href="?ratings">${esc(t("ratings.link"))}</a>`);
  return links.length ? `<p class="end-links">${links.join(" · ")}</p>` : "";
}
