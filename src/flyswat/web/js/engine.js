// The rules (shared/RULES.md R7–R24) re-played in the browser from a game record
// (shared/RECORD.md): the deal and the slaps are the facts, everything else is recomputed.
// replay(record) returns one frame per reveal, plus one per resolved slap round.

import { COLOUR_ORDER, parseCard } from "./cards.js";

const colourOf = (text) => (text.startsWith("S-") ? null : text[0]);
const valueOf = (text) => parseCard(text).value;

/** Places by points, then flies won; tied seats share a place and the next skips (R24). */
export function rank(points, flies) {
  return points.map(
    (p, i) =>
      1 + points.filter((q, j) => q > p || (q === p && flies[j] > flies[i])).length,
  );
}

/** The most numerous colours in the centre, ties included, in the order R Y G B P O (R14). */
export function allowedColours(centre) {
  const counts = {};
  for (const c of centre) counts[colourOf(c)] = (counts[colourOf(c)] || 0) + 1;
  const most = Math.max(0, ...Object.values(counts));
  return COLOUR_ORDER.filter((c) => counts[c] === most && most > 0);
}

function triggers(centre, card) {
  const colour = colourOf(card);
  if (colour === null) return true; // a swatter (R12)
  const colours = new Set(centre.map(colourOf));
  return colours.size === 4 && !colours.has(colour); // a fifth colour (R13)
}

/** Check the shape of a record; throws an Error whose message is an i18n key. */
export function checkRecord(rec) {
  if (!rec || typeof rec !== "object") throw new Error("replay.error.notRecord");
  const known = ["flyswat-record/1", "flyswat-record/2"]; // 2: 1 plus rules.min_reaction_ms
  if (typeof rec.format === "string" && rec.format.startsWith("flyswat-record/") && !known.includes(rec.format))
    throw new Error("replay.error.format");
  if (!known.includes(rec.format)) throw new Error("replay.error.notRecord");
  const ok =
    rec.rules &&
    Array.isArray(rec.seats) &&
    Array.isArray(rec.deal) &&
    Array.isArray(rec.turns) &&
    rec.deal.length === rec.rules.seats &&
    rec.seats.length === rec.rules.seats;
  if (!ok) throw new Error("replay.error.notRecord");
}

/**
 * Re-play a record. Returns {frames, result, problems}: each frame is a snapshot
 * {kind: "deal"|"place"|"trigger"|"resolve", turn, seat, card, toMove, draw, won, points,
 *  centre: [{card, hands: [seat…], outcome}], trigger, allowed, wonCards, penalties, over};
 * problems lists turns where the record disagrees with the rules (empty for a valid record).
 */
export function replay(rec) {
  checkRecord(rec);
  const n = rec.rules.seats;
  const draw = rec.deal.map((p) => [...p]);
  const won = Array.from({ length: n }, () => []);
  let centre = [];
  let toMove = rec.start ?? 0;
  const frames = [];
  const problems = [];
  let over = false;

  const snap = (extra) => {
    const points = won.map((p) => p.reduce((a, c) => a + valueOf(c), 0));
    frames.push({
      turn: -1,
      seat: null,
      card: null,
      toMove,
      draw: draw.map((p) => p.length),
      won: won.map((p) => p.length),
      points,
      centre: centre.map((card) => ({ card, hands: [], outcome: null })),
      trigger: null,
      allowed: null,
      wonCards: [],
      penalties: [],
      over,
      ...extra,
    });
  };
  snap({ kind: "deal" });

  rec.turns.forEach((turn, i) => {
    if (over) {
      problems.push({ turn: i, what: "afterEnd" });
      return;
    }
    const seat = toMove;
    if (turn.seat !== seat) problems.push({ turn: i, what: "seat" });
    const card = draw[seat].shift();
    if (card !== turn.card) problems.push({ turn: i, what: "card" });
    const ending = draw[seat].length === 0;
    toMove = (seat + 1) % n;
    if (!triggers(centre, card)) {
      centre.push(card);
      over = ending;
      snap({ kind: "place", turn: i, seat, card });
      return;
    }
    const allowed = allowedColours(centre);
    const slaps = turn.round?.slaps ?? [];
    snap({ kind: "trigger", turn: i, seat, card, trigger: card, allowed });
    // Resolve (R18–R20): wins in arrival order of the bottom hands, then penalties.
    const hands = new Map(centre.map((c) => [c, []]));
    for (const s of slaps) {
      if (!hands.has(s.card)) problems.push({ turn: i, what: "slap" });
      else hands.get(s.card).push(s.seat);
    }
    const wonCards = [];
    const penalties = [];
    const bottom = new Map();
    slaps.forEach((s, k) => {
      if (!bottom.has(s.card)) bottom.set(s.card, k);
    });
    slaps.forEach((s, k) => {
      if (allowed.includes(colourOf(s.card)) && bottom.get(s.card) === k && hands.has(s.card)) {
        won[s.seat].push(s.card);
        wonCards.push({ seat: s.seat, card: s.card });
      }
    });
    const before = centre;
    centre = centre.filter((c) => !wonCards.some((w) => w.card === c));
    for (const s of slaps) {
      if (!allowed.includes(colourOf(s.card)) && hands.has(s.card) && won[s.seat].length) {
        const paid = won[s.seat].pop();
        draw[s.seat].push(paid);
        penalties.push({ seat: s.seat, card: paid });
      }
    }
    const r = turn.round;
    if (!r) problems.push({ turn: i, what: "round" });
    else {
      const same = (a, b) => JSON.stringify(a ?? []) === JSON.stringify(b);
      if (!same(r.allowed, allowed)) problems.push({ turn: i, what: "allowed" });
      const strip = (xs) => xs.map(({ seat, card }) => ({ seat, card }));
      if (!same(strip(r.won ?? []), wonCards)) problems.push({ turn: i, what: "won" });
      if (!same(strip(r.penalties ?? []), penalties)) problems.push({ turn: i, what: "penalties" });
    }
    over = ending;
    const shown = before.map((c) => ({
      card: c,
      hands: hands.get(c) || [],
      outcome: (hands.get(c) || []).length
        ? allowed.includes(colourOf(c))
          ? "won"
          : "wrong"
        : null,
    }));
    snap({ kind: "resolve", turn: i, seat, card, trigger: card, allowed, wonCards, penalties });
    frames[frames.length - 1].centre = shown;
  });

  const last = frames[frames.length - 1];
  const flies = won.map((p) => p.length);
  const result = { points: last.points, flies, places: rank(last.points, flies) };
  if (rec.result && JSON.stringify(rec.result.places) !== JSON.stringify(result.places))
    problems.push({ turn: rec.turns.length, what: "result" });
  if (!over) problems.push({ turn: rec.turns.length, what: "unfinished" });
  return { frames, result, problems, over };
}
