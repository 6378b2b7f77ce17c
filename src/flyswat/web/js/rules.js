// The rules of a game in play (docs/RULES.md R10–R24), step by step, in the browser: the
// replay viewer re-plays records through it (engine.js) and the practice table plays on it
// (practice.js). The Python engine is the reference; tests/golden/*.json hold the two together.

import { COLOUR_ORDER } from "./cards.js";

const colourOf = (text) => (text.startsWith("S-") ? null : text[0]);
const valueOf = (text) => (text.startsWith("S-") ? 0 : Number(text[1]));

/** Places by points, then flies won; tied seats share a place and the next skips (R24). */
export function rank(points, flies) {
  return points.map(
    (p, i) => 1 + points.filter((q, j) => q > p || (q === p && flies[j] > flies[i])).length,
  );
}

/** The most numerous colours in the centre, ties included, in the order R Y G B P O (R14). */
export function allowedColours(centre) {
  const counts = {};
  for (const c of centre) counts[colourOf(c)] = (counts[colourOf(c)] || 0) + 1;
  const most = Math.max(0, ...Object.values(counts));
  return COLOUR_ORDER.filter((c) => counts[c] === most && most > 0);
}

/** Does revealing card onto centre open a slap round? A swatter (R12) or a fifth colour (R13). */
export function triggers(centre, card) {
  const colour = colourOf(card);
  if (colour === null) return true;
  const colours = new Set(centre.map(colourOf));
  return colours.size === 4 && !colours.has(colour);
}

/**
 * One game from a known deal. reveal(); if a round opened, slap()/done() and closeRound();
 * until over. Refusals are returned as the protocol's error codes, never thrown: the state
 * changes only when an action is allowed.
 */
export class Game {
  /** centre and won set up a game in the middle (the practice table's lessons); a game starts empty. */
  constructor({ seats, hands, deal, start = 0, centre = [], won = null }) {
    this.seats = seats;
    this.hands = hands ?? (seats >= 5 ? 1 : 2);
    this.draw = deal.map((p) => [...p]);
    this.won = won ? won.map((p) => [...p]) : Array.from({ length: seats }, () => []);
    this.centre = [...centre];
    this.box = [];
    this.toMove = start;
    this.turn = 0;
    this.round = null; // {trigger, seat, allowed, slaps: [{seat, card, ms}], done: Set}
    this.lastRound = null; // {trigger, seat, allowed, slaps, won, penalties}
    this.over = false;
    this.ending = false;
  }

  /** The player to move reveals their top card (R10–R13, R15, R22). Returns {seat, card, round}. */
  reveal() {
    if (this.over) return { error: "game_over" };
    if (this.round) return { error: "round_open" };
    const seat = this.toMove;
    const card = this.draw[seat].shift();
    this.ending = this.draw[seat].length === 0;
    this.toMove = (seat + 1) % this.seats;
    this.turn += 1;
    if (!triggers(this.centre, card)) {
      this.centre.push(card);
      if (this.ending) this.over = true;
      return { seat, card, round: false };
    }
    this.round = { trigger: card, seat, allowed: allowedColours(this.centre), slaps: [], done: new Set() };
    if (!this.centre.length) this.closeRound();
    return { seat, card, round: true };
  }

  /** Why seat may not lay a hand on card now (an error code), or null if it may (R16, R21). */
  checkSlap(seat, card) {
    const r = this.round;
    if (!r) return "no_round";
    if (!this.centre.includes(card)) return "not_in_centre";
    if (r.done.has(seat)) return "done";
    const mine = this.handsOf(seat);
    if (mine.includes(card)) return "same_card";
    if (mine.length >= this.hands) return "no_hands_left";
    return null;
  }

  /** The cards seat has a hand on in the open round, in arrival order. */
  handsOf(seat) {
    return this.round ? this.round.slaps.filter((s) => s.seat === seat).map((s) => s.card) : [];
  }

  /** Hands laid per seat in the open round. */
  laid() {
    const out = Array(this.seats).fill(0);
    for (const s of this.round?.slaps || []) out[s.seat] += 1;
    return out;
  }

  slap(seat, card, ms = null) {
    const error = this.checkSlap(seat, card);
    if (error) return { error };
    this.round.slaps.push({ seat, card, ms });
    return { ok: true };
  }

  done(seat) {
    if (!this.round) return { error: "no_round" };
    this.round.done.add(seat);
    return { ok: true };
  }

  /** Has every seat laid all its hands (or one on every fly) or said done? (R21) */
  roundComplete() {
    if (!this.round) return false;
    const need = Math.min(this.hands, this.centre.length);
    for (let seat = 0; seat < this.seats; seat++)
      if (!this.round.done.has(seat) && this.handsOf(seat).length < need) return false;
    return true;
  }

  /**
   * Resolve the open round: wins in stacking order (R18), then penalties (R19, R20); the
   * trigger goes to the box. byTime orders the hands by reaction time, ties by arrival (R17),
   * when every hand has one; otherwise they stack as they arrived (a record's facts).
   */
  closeRound({ byTime = true } = {}) {
    const r = this.round;
    if (!r) return { error: "no_round" };
    let slaps = r.slaps;
    if (byTime && slaps.every((s) => typeof s.ms === "number"))
      slaps = slaps.map((s, k) => ({ s, k })).sort((a, b) => a.s.ms - b.s.ms || a.k - b.k).map((x) => x.s);
    const bottom = new Map();
    for (const s of slaps) if (!bottom.has(s.card)) bottom.set(s.card, s);
    const won = [];
    const penalties = [];
    for (const s of slaps)
      if (r.allowed.includes(colourOf(s.card)) && bottom.get(s.card) === s) {
        this.centre.splice(this.centre.indexOf(s.card), 1);
        this.won[s.seat].push(s.card);
        won.push({ seat: s.seat, card: s.card });
      }
    for (const s of slaps)
      if (!r.allowed.includes(colourOf(s.card)) && this.won[s.seat].length) {
        const paid = this.won[s.seat].pop();
        this.draw[s.seat].push(paid);
        penalties.push({ seat: s.seat, card: paid });
      }
    this.box.push(r.trigger);
    this.round = null;
    this.lastRound = {
      trigger: r.trigger,
      seat: r.seat,
      allowed: r.allowed,
      slaps: slaps.map(({ seat, card }) => ({ seat, card })),
      won,
      penalties,
    };
    if (this.ending) this.over = true;
    return this.lastRound;
  }

  points() {
    return this.won.map((p) => p.reduce((a, c) => a + valueOf(c), 0));
  }

  /** Points, flies and places (R23, R24). */
  result() {
    const points = this.points();
    const flies = this.won.map((p) => p.length);
    return { points, flies, places: rank(points, flies) };
  }

  /**
   * What seat sees (R25), in the server's view shape (docs/PROTOCOL.md): the practice table
   * hands this to the same reducer a live table's messages go through.
   */
  view(seat) {
    const r = this.round;
    return {
      seat,
      seats: this.seats,
      hands: this.hands,
      to_move: this.toMove,
      turn: this.turn,
      draw_counts: this.draw.map((p) => p.length),
      won_counts: this.won.map((p) => p.length),
      won: seat === null ? [] : [...this.won[seat]],
      centre: [...this.centre],
      box: [...this.box],
      round: r
        ? { trigger: r.trigger, seat: r.seat, laid: this.laid(), mine: this.handsOf(seat), done: r.done.has(seat) }
        : null,
      last_round: this.lastRound,
      over: this.over,
      result: this.over ? this.result() : null,
    };
  }
}
