// The live table's scene (see table.js) from what the server sent: pure functions of the
// page state, so the picture is the same however the messages arrived.

import { parseCard } from "./cards.js";

/**
 * A resolved round as the table shows it for a moment: the centre as it was while the round
 * was open, each fly with the hands on it in stacking order (R17) and its outcome (R18, R19).
 * lr is view.last_round; centreBefore the centre while the round was open; until the time
 * (performance.now()) at which the centre tidies up.
 */
export function resolvedRound(lr, centreBefore, until) {
  const allowed = lr.allowed;
  return {
    trigger: lr.trigger,
    seat: lr.seat,
    allowed,
    won: lr.won,
    penalties: lr.penalties,
    until,
    centre: centreBefore.map((card) => {
      const hands = lr.slaps.filter((x) => x.card === card).map((x) => x.seat);
      const outcome = hands.length ? (allowed.includes(card[0]) ? "won" : "wrong") : null;
      return { card, hands, outcome };
    }),
  };
}

/** The scene of a live table for page state s (table, view, seat, round, resolved…) at now. */
export function liveScene(s, now) {
  const v = s.view;
  const me = s.seat;
  const over = v.over;
  const result = over ? s.result || v.result : null;
  const ownPoints = (v.won || []).reduce((a, c) => a + parseCard(c).value, 0);
  const r = s.round;
  const showResolved = s.resolved && now < s.resolved.until - 20;
  const centre = showResolved
    ? s.resolved.centre
    : v.centre.map((card) => ({ card, hands: [], outcome: null }));
  let trigger = null;
  if (v.round) trigger = { card: v.round.trigger, seat: v.round.seat };
  else if (s.resolved) trigger = { card: s.resolved.trigger, seat: s.resolved.seat };
  return {
    live: true,
    seats: s.table.players.map((p, i) => ({
      name: p.name,
      kind: p.kind,
      level: p.level,
      rating: (p.player && s.knownRatings?.[p.player]) ?? p.rating,
      botAccount: !!p.bot_account,
      draw: v.draw_counts[i],
      won: v.won_counts[i],
      points: result ? result.points[i] : i === me ? ownPoints : undefined,
      online: p.kind === "human" ? p.connected : undefined,
      tooFast: p.too_fast || 0,
    })),
    me,
    hands: v.hands,
    toMove: v.to_move,
    centre,
    fresh: s.fresh,
    trigger,
    roundOpen: !!(r && v.round),
    laid: r ? r.laid : null,
    mine: r ? [...r.mine, ...r.pending] : [],
    iAmDone: r ? r.done : false,
    resolved: s.resolved
      ? { allowed: s.resolved.allowed, won: s.resolved.won, penalties: s.resolved.penalties }
      : null,
    canReveal: me !== null && v.to_move === me && !v.round && !over && !s.revealSent && !s.table.paused,
    paused: !!s.table.paused,
    turnTimeoutMs: s.table.options.turn_timeout_ms,
    turnLeftMs:
      s.turnDeadline === undefined
        ? s.table.options.turn_timeout_ms
        : s.turnDeadline === null
          ? null
          : Math.max(0, s.turnDeadline - now),
    usedHands: r ? Math.max(r.mine.length + r.pending.length, (r.laid && r.laid[me]) || 0) : 0,
    over,
    result,
  };
}
