// The anchor's load generator: the slap-table rhythm of shared/LOAD-RHYTHM.md on @colyseus/sdk
// clients, as bench/harness/rhythm.py plays it on flyswat's protocol.
//
//     node generator.js '{"endpoint": "http://127.0.0.1:2567", "tables": 500}'
//
// The plan (JSON, the first argument; times in seconds): endpoint, tables; and, as
// RhythmPlan's defaults, seats 4, joins_in_flight 50, join_timeout_s 20, react_s [0.15, 0.6],
// heartbeat_s 1, timeout_s 3, duration_s 60, setup_timeout_s 600, seed 0, name "g0".
//
// `tables * seats` clients each `joinOrCreate("rhythm", {gen: name})`, `joins_in_flight` at
// once (a join over `join_timeout_s` has failed and is tried again a second later); a room's
// clients are one table. Each client sends `ping {t}` every `heartbeat_s` (from a random
// phase); on a `reveal` that opens a round (`swatter`) it waits a uniform `react_s`, then
// sends `slap {turn, ms}`, unless that round's result came first (a late hand). Rooms never end
// (there is no game), so the load is constant.
//
// On one clock (CLOCK_MONOTONIC in seconds, the clock of Python's time.monotonic()): the client
// whose slap was its table's last of the round notes from its send to its `result` (last
// action -> result); a round without a result `timeout_s` after its last action is a timeout;
// joins, failed joins, drops and leaves we did not ask for, room errors, messages each way, and
// the event loop's own lag (a 50 ms timer's overshoot).
//
// Lines on stdout, one JSON object each: `{"event": "ready", ...}` once every client has
// joined; then it reads one line on stdin, `{"t0": <monotonic s>}` (the window's start; an
// empty line: now), and prints `{"event": "report", ...}` (the report of
// bench/harness/generator.py's Generator.measure) `timeout_s` + 0.5 s after the window; it
// plays on until stdin closes.
// A failure prints `{"event": "error", "error": ...}` and exits 1.
"use strict";

const readline = require("node:readline");
const { Client } = require("@colyseus/sdk");

const DEFAULTS = {
  seats: 4,
  joins_in_flight: 50,
  join_timeout_s: 20,
  react_s: [0.15, 0.6],
  heartbeat_s: 1,
  timeout_s: 3,
  duration_s: 60,
  setup_timeout_s: 600,
  seed: 0,
  name: "g0",
};

// CLOCK_MONOTONIC in seconds (libuv's hrtime), read through the cheaper performance.now().
const BASE = Number(process.hrtime.bigint()) / 1e9 - performance.now() / 1000;
const now = () => BASE + performance.now() / 1000;
const sleep = (s) => new Promise((resolve) => setTimeout(resolve, s * 1000));

function emit(event, body) {
  process.stdout.write(`${JSON.stringify({ event, ...body })}\n`);
}

// mulberry32: a small seeded generator, so that a plan's reaction times are reproducible.
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Counter {
  constructor() {
    this.counts = {};
  }
  add(key, n = 1) {
    this.counts[key] = (this.counts[key] ?? 0) + n;
  }
}

// What `after` counts more than `before` (two Counter snapshots).
function since(after, before) {
  const out = {};
  for (const [key, n] of Object.entries(after)) {
    if (n !== (before[key] ?? 0)) out[key] = n - (before[key] ?? 0);
  }
  return out;
}

class Player {
  constructor(gen, room) {
    this.gen = gen;
    this.room = room;
    this.table = null;
    this.openTurn = null; // the round open now, as far as this client knows
    this.leaving = false;
    room.onMessage("reveal", (m) => this.onReveal(m));
    room.onMessage("result", (m) => this.onResult(m));
    room.onMessage("pong", () => {
      gen.received += 1;
    });
    room.onDrop(() => this.lost());
    room.onLeave(() => this.lost());
    room.onError((code) => gen.errors.add(String(code)));
    const period = gen.plan.heartbeat_s * 1000;
    this.beat = setTimeout(() => {
      this.beat = setInterval(() => this.send("ping", { t: Date.now() }), period);
    }, gen.rng() * period);
  }

  send(type, message) {
    if (this.room.connection?.isOpen) {
      this.room.send(type, message);
      this.gen.sent += 1;
      return true;
    }
    return false;
  }

  onReveal(message) {
    const gen = this.gen;
    const t = now();
    gen.received += 1;
    if (message.swatter) {
      this.openTurn = message.turn;
      const [lo, hi] = gen.plan.react_s;
      const delay = lo + (hi - lo) * gen.rng();
      setTimeout(() => this.slap(message.turn, t), delay * 1000);
    }
  }

  slap(turn, shownAt) {
    if (this.openTurn !== turn) {
      this.gen.count.add("late_hands"); // the round closed before our hand
      return;
    }
    const t = now();
    if (this.send("slap", { turn, ms: Math.round((t - shownAt) * 1000) })) {
      this.table.acted(this, turn, t);
    }
  }

  onResult(message) {
    const t = now();
    this.gen.received += 1;
    if (this.openTurn === message.turn) {
      this.openTurn = null;
    }
    this.table.result(this, message.turn, t);
  }

  lost() {
    if (!this.leaving) {
      this.gen.count.add("disconnects");
    }
  }

  close() {
    this.leaving = true;
    clearTimeout(this.beat);
    clearInterval(this.beat);
    return this.room.leave(true).catch(() => undefined);
  }
}

class Table {
  constructor(gen) {
    this.gen = gen;
    this.players = [];
    this.seats = gen.plan.seats;
    this.acting = [-1, 0]; // the round being acted on: its turn, slaps sent so far
    this.waiting = null; // the round's last action: [turn, player, sent at]
  }

  seat(player) {
    this.players.push(player);
    player.table = this;
  }

  acted(player, turn, t) {
    const n = this.acting[0] === turn ? this.acting[1] + 1 : 1;
    this.acting = [turn, n];
    if (n === this.seats) {
      this.waiting = [turn, player, t];
      this.gen.lastActions.push(t);
      setTimeout(() => this.timedOut(turn, t), this.gen.plan.timeout_s * 1000);
    }
  }

  result(player, turn, t) {
    const w = this.waiting;
    if (w !== null && w[0] === turn && w[1] === player) {
      this.waiting = null;
      this.gen.rounds.push([w[2], (t - w[2]) * 1000]);
    } else if (player === this.players[0] && this.acting[0] === turn && this.acting[1] < this.seats) {
      this.gen.count.add("rounds_closed_before_last_hand");
    }
  }

  timedOut(turn, sentAt) {
    const w = this.waiting;
    if (w !== null && w[0] === turn && w[2] === sentAt) {
      this.gen.timeouts.push(sentAt);
    }
  }
}

class Generator {
  constructor(plan) {
    this.plan = plan;
    this.client = new Client(plan.endpoint);
    this.rng = seeded(plan.seed);
    this.players = [];
    this.tables = new Map(); // room id -> Table: a room's clients are one table
    this.sent = 0;
    this.received = 0;
    this.count = new Counter();
    this.errors = new Counter();
    this.failures = new Counter();
    this.rounds = []; // [last action sent at, ms to its result]
    this.lastActions = [];
    this.timeouts = [];
    this.lag = []; // [at, ms]
    this.stopping = false;
  }

  async join() {
    const plan = this.plan;
    for (;;) {
      let timer;
      const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("TimeoutError")), plan.join_timeout_s * 1000);
      });
      const joining = this.client.joinOrCreate("rhythm", { gen: plan.name });
      try {
        const room = await Promise.race([joining, late]);
        this.count.add("joins");
        const player = new Player(this, room);
        if (!this.tables.has(room.roomId)) this.tables.set(room.roomId, new Table(this));
        this.tables.get(room.roomId).seat(player);
        return player;
      } catch (error) {
        this.count.add("failed_joins");
        this.failures.add(error?.message === "TimeoutError" ? "TimeoutError" : String(error?.code ?? error?.name ?? error));
        joining.then((room) => room.leave(true)).catch(() => undefined);
        await sleep(1);
      } finally {
        clearTimeout(timer);
      }
    }
  }

  async setup() {
    const plan = this.plan;
    const total = plan.tables * plan.seats;
    let next = 0;
    const worker = async () => {
      while (next < total) {
        next += 1;
        this.players.push(await this.join());
      }
    };
    const workers = Array.from({ length: Math.min(plan.joins_in_flight, total) }, worker);
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`set-up took over ${plan.setup_timeout_s} s`)), plan.setup_timeout_s * 1000);
    });
    await Promise.race([Promise.all(workers), late]).finally(() => clearTimeout(timer));
    for (const table of this.tables.values()) {
      if (table.players.length !== plan.seats) {
        this.count.add("rooms_not_full"); // a room that never reveals: said, not hidden
      }
    }
    this.count.add("tables", this.tables.size);
  }

  watchLag() {
    const t = now();
    setTimeout(() => {
      const t1 = now();
      this.lag.push([t, (t1 - t - 0.05) * 1000]);
      if (!this.stopping) this.watchLag();
    }, 50);
  }

  snapshot() {
    return {
      at: now(),
      sent: this.sent,
      received: this.received,
      count: { ...this.count.counts },
      errors: { ...this.errors.counts },
    };
  }

  async measure(t0) {
    const plan = this.plan;
    this.watchLag();
    await sleep(Math.max(0, t0 - now()));
    const before = this.snapshot();
    const cpu0 = process.cpuUsage();
    await sleep(Math.max(0, t0 + plan.duration_s - now()));
    const after = this.snapshot();
    const cpu = process.cpuUsage(cpu0);
    await sleep(plan.timeout_s + 0.5);
    const t1 = t0 + plan.duration_s;
    const inside = (at) => t0 <= at && at < t1;
    const window = after.at - before.at;
    return {
      name: plan.name,
      tables: this.tables.size,
      players: this.players.length,
      window_s: window,
      sent_per_s: (after.sent - before.sent) / window,
      received_per_s: (after.received - before.received) / window,
      round_ms: this.rounds.filter(([at]) => inside(at)).map(([, ms]) => ms),
      rounds: this.lastActions.filter(inside).length,
      timeouts: this.timeouts.filter(inside).length,
      lag_ms: this.lag.filter(([at]) => inside(at)).map(([, ms]) => ms),
      window: since(after.count, before.count),
      window_errors: since(after.errors, before.errors),
      total: after.count,
      errors: after.errors,
      failures: { ...this.failures.counts },
      loop: `node ${process.version}`,
      pid: process.pid,
      cpu: (cpu.user + cpu.system) / 1e6 / window,
      cpu_system_share: cpu.system / Math.max(1, cpu.user + cpu.system),
    };
  }

  async close() {
    this.stopping = true;
    await Promise.race([Promise.all(this.players.map((p) => p.close())), sleep(5)]);
  }
}

async function main() {
  const plan = { ...DEFAULTS, ...JSON.parse(process.argv[2] ?? "{}") };
  if (!plan.endpoint || !(plan.tables > 0)) {
    throw new Error("the plan needs an endpoint and tables > 0");
  }
  const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const gen = new Generator(plan);
  const began = now();
  await gen.setup();
  emit("ready", { players: gen.players.length, tables: gen.tables.size, setup_s: now() - began, ...gen.count.counts });
  const go = await lines.next();
  if (go.done) {
    await gen.close();
    return;
  }
  const t0 = go.value.trim() ? JSON.parse(go.value).t0 : now();
  emit("report", await gen.measure(Number(t0 ?? now())));
  while (!(await lines.next()).done) {
    // play on until stdin closes
  }
  await gen.close();
  process.exit(0);
}

main().catch((error) => {
  emit("error", { error: String(error?.stack ?? error) });
  process.exit(1);
});
