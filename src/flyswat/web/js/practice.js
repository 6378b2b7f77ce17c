// The practice table (?practice): a first game against a slow bot, in lessons, played by the
// browser's own rules (rules.js) on a scripted deal. PracticeTable stands where the server's
// connection stands: it answers reveals, slaps and "done" with the messages a server sends
// (docs/PROTOCOL.md v2), so the table a newcomer learns on is the live table — the same
// model, input and renderer (game.js). The coach beside it says what to do, and what happened.

import { Game } from "./rules.js";

/** The bot's pauses (ms): slow, so a newcomer can follow. */
const BOT_REVEAL_MS = 1400;
const SLAP_WINDOW_MS = 20000;
/** How long the coach's word on a lesson played again stays before it starts over (ms). */
const RETRY_MS = 4500;

const centreOf = (s) => s.split(" ");

/**
 * The lessons, in order. centre: the middle at the start (R11: every fly in sight); deal:
 * [your draw pile, the bot's], top card first; start: who reveals first; bot: its hands in
 * the slap round, {after: ms after the trigger, card}; goal: what ends the lesson ("reveals":
 * your reveals, or "round": the slap round decided, or "over": the end of the game, R22).
 */
export const LESSONS = [
  { key: "c1", centre: [], deal: [["R3-1", "Y2-1", "B5-1"], ["G4-1", "P1-1", "O1-1"]], start: 0, goal: "reveals", reveals: 2 },
  {
    key: "c2", // the rulebook's second example: 3 red, 3 green, 2 blue, 1 purple, a swatter (R14)
    centre: centreOf("R3-2 G2-1 R1-1 B4-1 G5-1 R4-1 P2-1 G3-1 B2-1"),
    deal: [["Y1-2", "O2-2"], ["S-1", "Y3-2"]],
    start: 1,
    bot: [{ after: 2600, card: ["R4-1", "G5-1", "R3-2"] }],
    goal: "round",
  },
  {
    key: "c3", // a wrong slap pays the most recent won fly to the bottom of the draw pile (R19)
    centre: centreOf("Y3-1 Y1-1 B3-1 Y4-2 P4-1"),
    deal: [["O4-2", "O3-3"], ["S-2", "G1-2"]],
    start: 1,
    bot: [{ after: 2600, card: ["Y4-2", "Y3-1"] }],
    goal: "round",
    needWon: "R5-2",
    // The lesson has shown what it teaches once the learner laid a hand on a wrong colour.
    shows: (r) => r.slaps.some((x) => x.seat === 0 && !r.allowed.includes(x.card[0])),
  },
  {
    key: "c4", // hands stack in arrival order; only the bottom one wins (R17, R18)
    centre: centreOf("O2-1 O5-1 B1-1 O3-1"),
    deal: [["G2-4", "Y2-4"], ["S-3", "P5-1"]],
    start: 1,
    bot: [{ after: 700, card: ["O5-1"] }],
    goal: "round",
    // … once the learner's hand stacked on a fly the bot's hand is on too.
    shows: (r) => r.slaps.some((x) => x.seat === 0 && r.slaps.some((y) => y.seat === 1 && y.card === x.card)),
  },
  {
    key: "c5", // the rulebook's first example: 5 red, 2 yellow, 1 green, 1 purple, a blue fly (R13)
    centre: centreOf("R5-1 R2-1 Y2-2 R3-3 G1-1 R1-2 Y4-1 P3-1 R4-2"),
    deal: [["B2-3", "G3-3"], ["P2-3", "Y5-2"]],
    start: 0,
    bot: [{ after: 2600, card: ["R5-1", "R4-2", "R3-3"] }],
    goal: "round",
  },
  {
    key: "c6", // the last card of a draw pile ends the game once played out (R22–R24)
    centre: centreOf("G4-3 P4-3"),
    deal: [["Y5-1"], ["O5-2", "B1-2"]],
    start: 0,
    goal: "over",
  },
];

/**
 * The practice table. handlers: {onMessage, onStatus}; coach(event) hears each step:
 * {lesson, phase: "setup"|"go"|"result"|"done", round?}; first: the lesson to start with
 * (1–6). Use next() to start the next lesson.
 */
export class PracticeTable {
  constructor(handlers, { coach = () => {}, name = "", botName = "", first = 1 } = {}) {
    this.handlers = handlers;
    this.coach = coach;
    this.name = name;
    this.botName = botName;
    this.timers = [];
    this.k = Math.max(0, Math.min(LESSONS.length, first) - 1) - 1; // next() starts lesson `first`
    this.won = [[], []];
    this.closed = false;
    queueMicrotask(() => {
      handlers.onStatus?.("open");
      this.next();
    });
  }

  get lesson() {
    return LESSONS[this.k];
  }

  later(ms, fn) {
    this.timers.push(setTimeout(() => !this.closed && fn(), ms));
  }

  clear() {
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
  }

  info(state = "playing") {
    return {
      code: "PRACTICE",
      state,
      practice: true, // no rematch, no leaving: the practice table's own field
      paused: this.finished && state !== "over", // the lesson waits for Next: nobody reveals
      options: { seats: 2, bots: [{ seat: 1, level: "easy" }], remove: 0, slap_window_ms: SLAP_WINDOW_MS, turn_timeout_ms: null, start: 0 },
      players: [
        { seat: 0, kind: "human", name: this.name, level: null, joined: true, ready: true, connected: true, host: true, too_fast: 0 },
        { seat: 1, kind: "bot", name: this.botName, level: "easy", joined: true, ready: true, connected: true, host: false, too_fast: 0 },
      ],
      spectators: 0,
      record_url: null,
    };
  }

  emit(msg) {
    if (!this.closed) this.handlers.onMessage(msg);
  }

  /** Start the next lesson (a game set up in the middle), or do nothing after the last. */
  next() {
    this.clear();
    if (this.k + 1 >= LESSONS.length) return false;
    this.k += 1;
    const l = this.lesson;
    this.wonBefore = this.won.map((p) => [...p]); // for a lesson played again
    const won = this.won.map((p) => [...p]);
    // A penalty needs a won fly to pay with (R19): the lesson gives one if none was won yet.
    if (l.needWon && !won[0].length) won[0].push(l.needWon);
    for (const seat of [0, 1]) won[seat] = won[seat].filter((c) => !l.centre.includes(c) && !l.deal.flat().includes(c));
    this.game = new Game({ seats: 2, hands: 2, deal: l.deal, start: l.start, centre: l.centre, won });
    this.reveals = 0;
    this.finished = false;
    this.emit({ type: "welcome", protocol: 2, seat: 0, table: this.info(), view: this.game.view(0), window_left_ms: null, turn_deadline_ms: null });
    this.coach({ lesson: l.key, phase: "setup" });
    this.botTurn();
    return true;
  }

  botTurn() {
    const g = this.game;
    if (!g.over && !g.round && g.toMove === 1) this.later(BOT_REVEAL_MS, () => this.reveal(1));
  }

  reveal(seat) {
    const g = this.game;
    if (g.toMove !== seat || g.round || g.over) return;
    const r = g.reveal();
    const open = !!g.round;
    this.emit({ type: "reveal", turn: g.turn, seat, card: r.card, round: r.round, window_ms: r.round ? SLAP_WINDOW_MS : null, auto: false, view: g.view(0), turn_deadline_ms: null });
    if (seat === 0) this.reveals += 1;
    if (open) {
      this.roundTurn = g.turn;
      this.coach({ lesson: this.lesson.key, phase: "go" });
      for (const b of this.lesson.bot || []) this.later(b.after, () => this.botSlap(b));
      this.later(SLAP_WINDOW_MS, () => this.closeRound());
      return;
    }
    if (r.round) this.decided(); // an empty centre: the round closed at once (R15)
    else this.afterTurn();
  }

  botSlap(b) {
    const g = this.game;
    if (!g.round) return;
    const card = b.card.find((c) => !g.checkSlap(1, c));
    if (card) g.slap(1, card, b.after);
    else g.done(1);
    this.emit({ type: "hands", turn: this.roundTurn, view: g.view(0) });
    this.maybeClose();
  }

  botDone() {
    const g = this.game;
    return (this.lesson.bot || []).length <= g.handsOf(1).length || g.round?.done.has(1);
  }

  maybeClose() {
    const g = this.game;
    if (!g.round) return;
    const mine = g.handsOf(0).length;
    const me = g.round.done.has(0) || mine >= Math.min(g.hands, g.centre.length);
    if (!me) return;
    if (this.botDone()) return this.closeRound();
    // The bot that has not slapped yet does so now, and the round closes (R21).
    this.clear();
    for (const b of this.lesson.bot || []) if (!g.handsOf(1).length) this.botSlap({ ...b, after: Math.max(b.after, 1) });
  }

  closeRound() {
    const g = this.game;
    if (!g.round) return;
    this.clear();
    g.done(1);
    // No network between the hands here: they stack in the order they arrived (R17).
    g.closeRound({ byTime: false });
    // hold (the practice table's own field): the decided round stays in view for the lesson.
    this.emit({ type: "round", turn: this.roundTurn, view: g.view(0), turn_deadline_ms: null, hold: true });
    this.decided();
  }

  decided() {
    const g = this.game;
    this.won = g.won.map((p) => [...p]);
    this.coach({ lesson: this.lesson.key, phase: "result", round: g.lastRound });
    if (g.over) return this.over();
    const shows = this.lesson.shows;
    if (this.lesson.goal === "round" && shows && !shows(g.lastRound)) return this.retry();
    if (this.lesson.goal === "round") this.finish();
    else this.afterTurn();
  }

  /** The round did not show what the lesson teaches: say so, then play the lesson again. */
  retry() {
    this.coach({ lesson: this.lesson.key, phase: "retry" });
    this.later(RETRY_MS, () => {
      this.won = this.wonBefore.map((p) => [...p]);
      this.k -= 1;
      this.next();
    });
  }

  afterTurn() {
    const g = this.game;
    if (g.over) return this.over();
    if (this.lesson.goal === "reveals" && this.reveals >= this.lesson.reveals) return this.finish();
    this.coach({ lesson: this.lesson.key, phase: g.toMove === 0 ? "yourTurn" : "botTurn" });
    this.botTurn();
  }

  /** The lesson's goal is reached: the table waits for Next (a reveal now does nothing). */
  finish(result) {
    this.finished = true;
    if (!result) this.emit({ type: "table", table: this.info() });
    this.coach({ lesson: this.lesson.key, phase: "done", result });
  }

  over() {
    const g = this.game;
    this.won = g.won.map((p) => [...p]);
    const result = g.result();
    this.emit({ type: "over", result, seed: null, commitment: null, record_url: null, table: this.info("over"), view: g.view(0) });
    this.finish(result);
  }

  // ---- the connection's interface (net.js Connection) ----

  send(msg) {
    if (this.closed || !this.game) return false;
    const g = this.game;
    if (msg.type === "reveal") {
      if (this.finished) {
        this.coach({ lesson: this.lesson.key, phase: "nudge" }); // the lesson waits for Next
        return true;
      }
      if (g.toMove !== 0 || g.round || g.over) this.emit({ type: "error", code: g.round ? "round_open" : "not_your_turn" });
      else queueMicrotask(() => this.reveal(0));
    } else if (msg.type === "slap") {
      const error = msg.turn !== undefined && msg.turn !== this.roundTurn && g.round ? "stale_round" : g.checkSlap(0, msg.card);
      if (error) this.emit({ type: "error", code: error });
      else {
        g.slap(0, msg.card, msg.ms);
        this.emit({ type: "accepted", turn: this.roundTurn, card: msg.card, ms: msg.ms });
        this.emit({ type: "hands", turn: this.roundTurn, view: g.view(0) });
        this.maybeClose();
      }
    } else if (msg.type === "done") {
      if (g.round) {
        g.done(0);
        this.emit({ type: "hands", turn: this.roundTurn, view: g.view(0) });
        this.maybeClose();
      }
    }
    return true;
  }

  reconnectWith() {}

  close() {
    this.closed = true;
    this.clear();
  }
}
