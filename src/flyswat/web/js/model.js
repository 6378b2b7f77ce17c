// The live table's model: a pure reduce(state, message, now) over the server's messages
// (docs/PROTOCOL.md, versions 1 and 2) and the client's own events, and pure intents (what a
// click or a key means in a state). No DOM, no clock, no socket: what should happen next is
// listed in state.effects (sounds, words to say, messages to send) for the wiring to do.

import { resolvedRound } from "./scene.js";
import { REACT_SHOW_MS, REACTIONS } from "./react.js";

/** The refusals of a quick reaction: said, and nothing of the round is touched. */
const REACT_ERRORS = new Set(["bad_reaction", "reaction_in_round", "reaction_limited"]);

/** How long the hands of a resolved round stay on the flies before the centre tidies up. */
export const RESOLVE_MS = 2600;

/** The key shown on each centre fly, by position: digits first, then letters. */
export const FLY_KEYS = "1234567890qwertyuiopasdfghjklzxcvbnm".split("");
/** A second tap on the fly just slapped, this soon after (ms), is a double tap: let it be. */
export const DOUBLE_TAP_MS = 400;

const isSwatter = (card) => card.startsWith("S-");

/** The state of a table page before the first message. */
export function initialState(code, token = null) {
  return {
    code,
    token,
    seat: null,
    table: null,
    view: null,
    round: null, // {turn, windowMs, windowTotal, paintedAt, mine, pending, done, laid, centre, lastMs}
    turnDeadline: undefined, // `now` when the server reveals for me; null: no timer
    resolved: null, // {centre, trigger, seat, allowed, won, penalties, until}
    fresh: null,
    revealSent: false,
    endDismissed: false,
    result: null,
    recordUrl: null,
    fair: undefined,
    stopped: null, // null, or why the connection stays closed: "replaced" | "not_found" | "expired"
    reacts: {}, // seat -> {reaction, until}: the quick reactions being shown
    effects: [],
  };
}

function deadline(s, msg, now) {
  if (!("turn_deadline_ms" in msg)) return;
  s.turnDeadline = msg.turn_deadline_ms === null ? null : now + msg.turn_deadline_ms;
}

function openRound(s, turn, windowMs, view, total) {
  const full = s.table?.options.slap_window_ms || 3000;
  s.round = {
    turn,
    windowMs: windowMs ?? full,
    windowTotal: total || windowMs || full,
    paintedAt: null,
    mine: [...(view.round.mine || [])],
    pending: [],
    done: !!view.round.done,
    laid: view.round.laid || null,
    centre: [...view.centre],
    lastMs: null,
  };
}

/** Seats with a wrong hand (R19) that paid nothing for it: their won pile was empty. */
export function unpaid(lr) {
  const wrong = new Map();
  for (const x of lr.slaps || []) if (!lr.allowed.includes(x.card[0])) wrong.set(x.seat, (wrong.get(x.seat) || 0) + 1);
  return [...wrong].filter(([seat, n]) => lr.penalties.filter((p) => p.seat === seat).length < n).map(([seat]) => seat);
}

function closeRound(s, view, now, hold = false) {
  const lr = view.last_round;
  const centreBefore = s.round?.centre || [...view.centre, ...(lr?.won || []).map((w) => w.card)];
  s.view = view;
  s.round = null;
  s.fresh = null;
  if (!lr) return;
  // hold: the practice table keeps a decided round in view until the next lesson.
  s.resolved = resolvedRound(lr, centreBefore, hold ? Infinity : now + RESOLVE_MS);
  s.effects.push({ type: "announceRound", round: lr, unpaid: unpaid(lr) });
  const me = s.seat;
  if (me !== null) {
    if (lr.won.some((w) => w.seat === me)) s.effects.push({ type: "sound", name: "win" });
    if (lr.penalties.some((p) => p.seat === me)) s.effects.push({ type: "sound", name: "penalty" });
  }
  if (!hold) s.effects.push({ type: "timer", ms: RESOLVE_MS });
}

/** Apply a v2 round view (authoritative hands), or a v1 `hands` message's counts. */
function applyHands(s, msg) {
  const r = s.round;
  const vr = msg.view?.round;
  if (vr) {
    r.laid = vr.laid;
    for (const c of vr.mine || []) if (!r.mine.includes(c)) r.mine.push(c);
    r.pending = r.pending.filter((c) => !r.mine.includes(c));
    if (vr.done) r.done = true;
    s.view = { ...msg.view };
  } else {
    r.laid = msg.laid;
    if (s.seat !== null && (msg.done || []).includes(s.seat)) r.done = true;
  }
}

const HANDLERS = {
  welcome(s, msg, now) {
    s.seat = msg.seat;
    s.table = msg.table;
    s.view = msg.view;
    s.recordUrl = msg.table.record_url;
    s.revealSent = false;
    s.round = null;
    s.resolved = null;
    s.stopped = null;
    deadline(s, msg, now);
    if (msg.view?.round) {
      const total = msg.table.options.slap_window_ms;
      openRound(s, msg.view.turn, msg.window_left_ms ?? total, msg.view, total);
    }
    if (msg.view?.over) {
      s.result = msg.view.result;
      s.effects.push({ type: "checkSeed", seed: msg.table.seed, commitment: msg.table.commitment });
    }
    s.effects.push({ type: "render", animate: true });
  },
  table(s, msg) {
    s.table = msg.table;
    s.effects.push({ type: "render", animate: false });
  },
  started(s, msg, now) {
    s.table = msg.table;
    s.view = msg.view;
    deadline(s, msg, now);
    if (s.seat !== null && msg.view.to_move === s.seat) s.effects.push({ type: "sound", name: "turn" });
    s.effects.push({ type: "render", animate: true });
  },
  reveal(s, msg, now) {
    if (msg.auto && msg.seat === s.seat) s.effects.push({ type: "toast", key: "table.autoReveal" });
    // A slap round opened: its window is said with the card (a screen reader's countdown).
    const windowMs = msg.round && msg.view.round ? msg.window_ms : null;
    s.effects.push({ type: "announceReveal", seat: msg.seat, card: msg.card, windowMs });
    s.view = msg.view;
    deadline(s, msg, now);
    s.revealSent = false;
    s.resolved = null;
    if (msg.round && msg.view.round) {
      openRound(s, msg.turn, msg.window_ms, msg.view);
      s.fresh = null;
      s.effects.push({ type: "sound", name: isSwatter(msg.card) ? "swatter" : "fifth" });
    } else {
      s.fresh = isSwatter(msg.card) ? null : msg.card;
      s.effects.push({ type: "sound", name: "reveal" });
      if (s.seat !== null && msg.view.to_move === s.seat && !msg.view.over) s.effects.push({ type: "sound", name: "turn" });
    }
    s.effects.push({ type: "cancelTimer" }, { type: "render", animate: true });
  },
  accepted(s, msg) {
    const r = s.round;
    if (!r || r.turn !== msg.turn) return;
    r.pending = r.pending.filter((c) => c !== msg.card);
    if (!r.mine.includes(msg.card)) r.mine.push(msg.card);
    r.lastMs = msg.ms;
    s.effects.push({ type: "sound", name: "slap" }, { type: "patch" });
  },
  hands(s, msg) {
    if (!s.round || s.round.turn !== msg.turn) return;
    // Others' hands landing sound here; our own sounded with its `accepted`.
    const others = (laid) => (laid || []).reduce((a, n, seat) => a + (seat === s.seat ? 0 : n), 0);
    const before = others(s.round.laid);
    applyHands(s, msg);
    if (others(s.round.laid) > before) s.effects.push({ type: "sound", name: "slap" });
    s.effects.push({ type: "patch" });
  },
  round(s, msg, now) {
    deadline(s, msg, now);
    closeRound(s, msg.view, now, !!msg.hold);
    if (s.seat !== null && msg.view.to_move === s.seat && !msg.view.over) s.effects.push({ type: "sound", name: "turn" });
    s.effects.push({ type: "render", animate: true });
  },
  over(s, msg, now) {
    s.table = msg.table;
    // The players as the game ended: its results keep their names when one leaves after it.
    s.endSeats = msg.table.players.map((p) => ({ name: p.name, kind: p.kind, botAccount: !!p.bot_account }));
    s.result = msg.result;
    s.recordUrl = msg.record_url;
    s.effects.push({ type: "checkSeed", seed: msg.seed, commitment: msg.commitment });
    if (s.round) closeRound(s, msg.view, now);
    s.view = msg.view;
    s.turnDeadline = null;
    s.effects.push({ type: "render", animate: true });
  },
  react(s, msg, now) {
    // Shown by the seat a moment (react.js), unless muted; a newer one of the seat replaces it.
    s.reacts = { ...s.reacts, [msg.seat]: { reaction: msg.reaction, until: now + REACT_SHOW_MS } };
    s.effects.push({ type: "react", seat: msg.seat, reaction: msg.reaction });
  },
  error(s, msg) {
    if (REACT_ERRORS.has(msg.code)) return void s.effects.push({ type: "toast", error: msg.code });
    if (msg.code === "bad_token") {
      // The saved seat is not valid here (another server, or an old game): watch instead.
      s.token = null;
      s.effects.push({ type: "forgetSeat" }, { type: "reconnect", token: null });
    }
    if (msg.code === "replaced" || msg.code === "expired" || msg.code === "not_found") {
      s.stopped = msg.code;
      s.effects.push({ type: "render", animate: false });
      return;
    }
    if (s.round) s.round.pending = [];
    s.revealSent = false;
    s.effects.push({ type: "toast", error: msg.code }, { type: s.round ? "patch" : "render", animate: false });
  },
  // ---- the client's own events ----
  painted(s, msg) {
    if (!s.round || s.round.turn !== msg.turn || s.round.paintedAt !== null) return;
    s.round = { ...s.round, paintedAt: msg.at };
    s.effects.push({ type: "countdown" });
  },
  fair(s, msg) {
    s.fair = msg.ok;
    s.effects.push({ type: "render", animate: false });
  },
  closed(s, msg) {
    // docs/PROTOCOL.md v2: 4409 the seat was opened elsewhere, 4404 no such table, 4410 expired.
    const why = { 4409: "replaced", 4404: "not_found", 4410: "expired" }[msg.code];
    if (!why) return;
    s.stopped = why;
    s.round = null;
    s.effects.push({ type: "render", animate: false });
  },
  missing(s, msg) {
    s.stopped = msg.code === "expired" ? "expired" : "not_found";
    s.effects.push({ type: "stop" }, { type: "render", animate: false });
  },
  takeBack(s) {
    s.stopped = null;
    s.effects.push({ type: "reconnect", token: s.token });
  },
  joined(s, msg) {
    s.token = msg.token;
    s.effects.push({ type: "reconnect", token: msg.token });
  },
  endShown(s, msg) {
    s.endDismissed = !msg.shown;
    s.effects.push({ type: "render", animate: false });
  },
};

/**
 * The next state after message msg at time now (ms, the clock the wiring uses). The input
 * state is not changed; the result's effects list what the wiring should do because of msg.
 */
export function reduce(state, msg, now = 0) {
  const s = { ...state, effects: [], round: state.round ? { ...state.round, mine: [...state.round.mine], pending: [...state.round.pending] } : null };
  const handler = HANDLERS[msg.type];
  if (handler) handler(s, msg, now);
  return s;
}

// ---- intents: what an action means given the state ----------------------------------------

/**
 * What action means now: {state, send?, error?}. Actions: {type: "reveal"}, {type: "slap",
 * card, at} (at: the input event's time, same clock as paintedAt), {type: "done"},
 * {type: "key", key, code, at}, {type: "ready", ready}, {type: "start"}. send is the message
 * for the server (docs/PROTOCOL.md); error an error code to show; state the state with what
 * was sent noted (a slap pending, a reveal sent).
 */
export function intent(state, action) {
  const s = { ...state, effects: [], round: state.round ? { ...state.round, pending: [...state.round.pending] } : null };
  const none = { state };
  const v = s.view;
  const me = s.seat;
  switch (action.type) {
    case "reveal": {
      if (!v || v.over || v.round || me === null || s.stopped) return none;
      if (v.to_move !== me) return { state, error: "not_your_turn" };
      if (s.revealSent) return none;
      s.revealSent = true;
      return { state: s, send: { type: "reveal" } };
    }
    case "slap": {
      const r = s.round;
      if (!r || me === null) return none;
      if (r.paintedAt === null) return none; // not painted yet: nothing could have been seen
      if (r.done) return { state, error: "done" };
      const hands = [...r.mine, ...r.pending];
      if (hands.includes(action.card)) {
        // A quick second tap is one slap tapped twice, not a second hand on the fly (R16).
        const first = r.tapped?.[action.card];
        if (first !== undefined && action.at - first < DOUBLE_TAP_MS) return none;
        return { state, error: "same_card" };
      }
      // After a reconnect a v1 server counts hands laid before it (laid) but names no cards.
      const used = Math.max(hands.length, r.laid?.[me] || 0);
      if (used >= v.hands) return { state, error: "no_hands_left" };
      const ms = Math.max(0, Math.round(action.at - r.paintedAt));
      r.pending.push(action.card);
      r.tapped = { ...r.tapped, [action.card]: action.at };
      return { state: s, send: { type: "slap", card: action.card, ms, turn: r.turn } };
    }
    case "done": {
      const r = s.round;
      if (!r || r.done || me === null) return none;
      r.done = true;
      return { state: s, send: { type: "done", turn: r.turn } };
    }
    case "key": {
      if (!v || v.over) return none;
      if (action.key === " " || action.code === "Space") return { ...intent(state, { type: "reveal" }), handled: true };
      if (action.key === "Enter") return s.round ? { ...intent(state, { type: "done" }), handled: true } : none;
      if (!s.round) return none;
      const k = FLY_KEYS.indexOf(String(action.key).toLowerCase());
      const card = k >= 0 ? v.centre[k] : undefined;
      return card ? { ...intent(state, { type: "slap", card, at: action.at }), handled: true } : none;
    }
    case "react": {
      if (me === null || s.stopped || !REACTIONS.some(([key]) => key === action.reaction)) return none;
      // Never in a slap round's window: the server would refuse it too (reaction_in_round).
      if (s.round) return { state, error: "reaction_in_round" };
      return { state, send: { type: "react", reaction: action.reaction } };
    }
    case "ready":
      return { state, send: { type: "ready", ready: !!action.ready } };
    case "start":
      return { state, send: { type: "start" } };
    default:
      return none;
  }
}

/** A sent message was not delivered (the socket was closed): undo what intent noted. */
export function unsent(state, msg) {
  const s = { ...state, effects: [] };
  if (msg.type === "reveal") s.revealSent = false;
  if (msg.type === "slap" && s.round) s.round = { ...s.round, pending: s.round.pending.filter((c) => c !== msg.card) };
  if (msg.type === "done" && s.round) s.round = { ...s.round, done: false };
  return s;
}
