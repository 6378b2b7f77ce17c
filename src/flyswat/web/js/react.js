// Quick reactions at the table (docs/PROTOCOL.md, Reactions): a fixed set of keys on the wire,
// each shown here with its sign and the player's words; a bar to send one (a seat, between
// rounds), a bubble by the seat that reacted for a few seconds, and one switch that mutes
// them (remembered in storage.js, as the sound switch is).

import { t } from "./i18n.js";
import { esc } from "./ui.js";

/** The reactions the server takes (protocol.REACTIONS), in the bar's order, with their signs. */
export const REACTIONS = [
  ["nice", "👍"],
  ["wow", "😮"],
  ["oops", "😅"],
  ["well_played", "👏"],
  ["smile", "😄"],
];
const SIGN = Object.fromEntries(REACTIONS);

/** How long a reaction stays by its seat (ms). */
export const REACT_SHOW_MS = 3500;

/** The bar under the table: the reactions (a seat only, greyed while a round is open) and the mute switch. */
export function reactBar(s, muted) {
  const seated = s.seat !== null && s.seat !== undefined;
  const quiet = !!s.round;
  const buttons = seated && !muted
    ? REACTIONS.map(
        ([key, sign]) =>
          `<button class="react-btn" type="button" data-action="react" data-reaction="${key}" title="${esc(t(`react.${key}`))}" aria-label="${esc(t(`react.${key}`))}" ${quiet ? "disabled" : ""}><span aria-hidden="true">${sign}</span></button>`,
      ).join("")
    : "";
  const key = muted ? "react.unmute" : "react.mute";
  return `<div class="react-bar" role="group" aria-label="${esc(t("react.title"))}">${buttons}
    <button class="react-mute" type="button" data-action="mute-reactions" aria-pressed="${muted}" title="${esc(t(key))}">${esc(t(key))}</button></div>`;
}

/** Put each live reaction of s.reacts by its seat in root (the lobby's list, the table, the end);
 * each removes itself when its time is up. */
export function showReacts(root, s, now) {
  for (const el of root.querySelectorAll(".react-bubble")) el.remove();
  for (const [seat, r] of Object.entries(s.reacts || {})) {
    if (r.until <= now) continue;
    const place = root.querySelector(`.seat[data-seat="${seat}"], .seat-list [data-seat="${seat}"]`);
    if (!place) continue;
    place.insertAdjacentHTML(
      "beforeend",
      `<span class="react-bubble" data-reaction="${esc(r.reaction)}"><span aria-hidden="true">${SIGN[r.reaction] || ""}</span> ${esc(t(`react.${r.reaction}`))}</span>`,
    );
    const bubble = place.lastElementChild;
    setTimeout(() => bubble.remove(), r.until - now);
  }
}
