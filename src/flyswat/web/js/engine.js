// A game record (docs/RECORD.md, flyswat-record/1 and /2) re-played in the browser by the
// rules of rules.js: the deal and the slaps are the facts, everything else is recomputed.
// replay(record) returns one frame per reveal, plus one per resolved slap round.

import { Game, allowedColours, rank } from "./rules.js";

export { allowedColours, rank };

/** The record formats this client reads: /2 adds rules.min_reaction_ms to /1. */
export const FORMATS = ["flyswat-record/1", "flyswat-record/2"];

/** Check the shape of a record; throws an Error whose message is an i18n key. */
export function checkRecord(rec) {
  if (!rec || typeof rec !== "object") throw new Error("replay.error.notRecord");
  if (typeof rec.format === "string" && rec.format.startsWith("flyswat-record/") && !FORMATS.includes(rec.format))
    throw new Error("replay.error.format");
  if (!FORMATS.includes(rec.format)) throw new Error("replay.error.notRecord");
  const ok =
    rec.rules &&
    Array.isArray(rec.seats) &&
    Array.isArray(rec.deal) &&
    Array.isArray(rec.turns) &&
    rec.deal.length === rec.rules.seats &&
    rec.seats.length === rec.rules.seats;
  if (!ok) throw new Error("replay.error.notRecord");
}

const same = (a, b) => JSON.stringify(a ?? []) === JSON.stringify(b);
const strip = (xs) => (xs ?? []).map(({ seat, card }) => ({ seat, card }));

/**
 * Re-play a record. Returns {frames, result, problems, over}: each frame is a snapshot
 * {kind: "deal"|"place"|"trigger"|"resolve", turn, seat, card, toMove, draw, won, points,
 *  centre: [{card, hands: [seat…], outcome}], trigger, allowed, wonCards, penalties, over, box};
 * problems lists turns where the record disagrees with the rules (empty for a valid record).
 */
export function replay(rec) {
  checkRecord(rec);
  const game = new Game({ seats: rec.rules.seats, hands: rec.rules.hands, deal: rec.deal, start: rec.start ?? 0 });
  const frames = [];
  const problems = [];

  const snap = (extra) =>
    frames.push({
      turn: -1,
      seat: null,
      card: null,
      toMove: game.toMove,
      draw: game.draw.map((p) => p.length),
      won: game.won.map((p) => p.length),
      points: game.points(),
      centre: game.centre.map((card) => ({ card, hands: [], outcome: null })),
      trigger: null,
      allowed: null,
      wonCards: [],
      penalties: [],
      over: game.over,
      box: game.box.length,
      ...extra,
    });
  snap({ kind: "deal" });

  rec.turns.forEach((turn, i) => {
    if (game.over) {
      problems.push({ turn: i, what: "afterEnd" });
      return;
    }
    const expected = game.toMove;
    const before = [...game.centre];
    const allowed = allowedColours(before);
    const { seat, card, round } = game.reveal();
    if (turn.seat !== expected) problems.push({ turn: i, what: "seat" });
    if (card !== turn.card) problems.push({ turn: i, what: "card" });
    if (!round) {
      if (turn.round) problems.push({ turn: i, what: "round" });
      snap({ kind: "place", turn: i, seat, card });
      return;
    }
    snap({ kind: "trigger", turn: i, seat, card, trigger: card, allowed });
    const slaps = turn.round?.slaps ?? [];
    let lr;
    if (game.round) {
      for (const s of slaps) if (game.slap(s.seat, s.card, s.ms ?? null).error) problems.push({ turn: i, what: "slap" });
      lr = game.closeRound({ byTime: false });
    } else {
      if (slaps.length) problems.push({ turn: i, what: "slap" });
      lr = game.lastRound;
    }
    const r = turn.round;
    if (!r) problems.push({ turn: i, what: "round" });
    else {
      if (!same(r.allowed, allowed)) problems.push({ turn: i, what: "allowed" });
      if (!same(strip(r.won), lr.won)) problems.push({ turn: i, what: "won" });
      if (!same(strip(r.penalties), lr.penalties)) problems.push({ turn: i, what: "penalties" });
    }
    snap({ kind: "resolve", turn: i, seat, card, trigger: card, allowed, wonCards: lr.won, penalties: lr.penalties });
    frames[frames.length - 1].centre = before.map((c) => {
      const hands = lr.slaps.filter((s) => s.card === c).map((s) => s.seat);
      return { card: c, hands, outcome: hands.length ? (allowed.includes(c[0]) ? "won" : "wrong") : null };
    });
  });

  const result = game.result();
  if (rec.result && JSON.stringify(rec.result.places) !== JSON.stringify(result.places))
    problems.push({ turn: rec.turns.length, what: "result" });
  if (!game.over) problems.push({ turn: rec.turns.length, what: "unfinished" });
  return { frames, result, problems, over: game.over };
}
