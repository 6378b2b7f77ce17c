// The moves of a resolved slap round (R17–R19): the hands drop onto the flies in stacking
// order (CSS, by each hand's place in the stack), each won fly travels to its winner's won
// pile, each penalty card goes from the payer's won pile back under their draw pile. Quick,
// drawn in a layer of their own that takes no input, and not at all for a player who asks
// the system for reduced motion.

import { backSvg } from "./cards.js";

const FLY_MS = 520;

export const reducedMotion = () => !!globalThis.matchMedia?.("(prefers-reduced-motion: reduce)").matches;

function layer() {
  let el = document.getElementById("moves");
  if (!el) {
    el = document.createElement("div");
    el.id = "moves";
    el.className = "moves";
    el.setAttribute("aria-hidden", "true");
    document.body.append(el);
  }
  return el;
}

/** A copy of from's picture that flies onto to, then goes. */
function fly(from, to, kind, seat, card, delay, picture = null) {
  if (!from || !to) return;
  const a = from.getBoundingClientRect();
  const b = to.getBoundingClientRect();
  if (!a.width || !b.width) return;
  const ghost = document.createElement("div");
  ghost.className = `ghost ${kind}`;
  ghost.dataset.move = kind;
  ghost.dataset.seat = String(seat);
  ghost.dataset.card = card;
  ghost.innerHTML = picture || from.querySelector("svg")?.outerHTML || "";
  const w = picture ? Math.max(18, a.height / 1.4) : a.width;
  Object.assign(ghost.style, { left: `${a.left}px`, top: `${a.top}px`, width: `${w}px` });
  layer().append(ghost);
  const dx = b.left + b.width / 2 - (a.left + a.width / 2);
  const dy = b.top + b.height / 2 - (a.top + a.height / 2);
  const scale = Math.max(0.15, Math.min(1, b.height / Math.max(1, a.height)));
  const anim = ghost.animate(
    [
      { transform: "translate(0, 0) scale(0.9)", opacity: 0.95 },
      { transform: `translate(${dx}px, ${dy}px) scale(${scale})`, opacity: 0.6 },
    ],
    // No fill before the start: while it waits, the copy is invisible (opacity 0 in the CSS)
    // and the card with its hands and its label stays in sight.
    { duration: FLY_MS, delay, easing: "cubic-bezier(0.3, 0.1, 0.3, 1)" },
  );
  anim.onfinish = anim.oncancel = () => ghost.remove();
}

/**
 * Play the moves of resolved ({won, penalties}) on the table drawn in root: won flies to
 * their winners, then penalty cards back to the payers' draw piles.
 */
export function playMoves(root, resolved) {
  if (reducedMotion() || typeof Element === "undefined" || !Element.prototype.animate) return;
  const seatEl = (seat, pile) => root.querySelector(`.seat[data-seat="${seat}"] .pile.${pile}`);
  const hands = Math.max(0, ...resolved.centre.map((e) => e.hands.length));
  const start = 250 + hands * 90; // after the hands have dropped
  resolved.won.forEach((w, k) => {
    fly(root.querySelector(`.fly-card[data-card="${w.card}"]`), seatEl(w.seat, "won"), "won", w.seat, w.card, start + k * 80);
  });
  resolved.penalties.forEach((p, k) => {
    const from = seatEl(p.seat, "won");
    fly(from, seatEl(p.seat, "draw"), "penalty", p.seat, p.card, start + FLY_MS + k * 80, backSvg());
  });
}

/** Stop every move still on its way (the table moved on: a new card was revealed). */
export function clearMoves() {
  document.getElementById("moves")?.replaceChildren();
}
