// The anchor's server: the Colyseus room of shared/LOAD-RHYTHM.md, one process, defaults.
//
//     node server.js --port 2567 [--host 127.0.0.1] [--gc-log FILE] [--reveal-ms 2000]
//
// The room plays the rhythm's messages without a game: `maxClients` 4, filled by
// `joinOrCreate`; once full it broadcasts `reveal {turn, swatter}` every 2000 ms, every fourth
// one a swatter that opens a round; it records slaps in arrival order until every client has
// slapped or 1000 ms have passed, then broadcasts one `result {turn, order}`; `ping {t}` is
// answered with `pong {t}`. Plain broadcast/send/onMessage, no schema state, nothing stored:
// what Colyseus itself costs for the rhythm's traffic. The one room option, `gen`, keeps each
// load generator process's clients among themselves (`filterBy`), so that every room's four
// clients share one clock.
//
// `GET /health` answers 200 once the server listens (and prints `listening <port>`).
// `--gc-log FILE` appends each of V8's garbage collections as `<wall s> <kind> <pause ms>`,
// kind 2 for a full (mark-sweep-compact) collection and 1 for the others, the format of the
// Python server's log in bench/harness/procs.py. `--reveal-ms` (2000, the rhythm's) is for a
// quick smoke test.
"use strict";

const fs = require("node:fs");
const { PerformanceObserver, constants } = require("node:perf_hooks");
const { parseArgs } = require("node:util");
const { Room, Server } = require("@colyseus/core");
const { WebSocketTransport } = require("@colyseus/ws-transport");

const SLAP_WINDOW_MS = 1000;
const SWATTER_EVERY = 4;

class RhythmRoom extends Room {
  maxClients = 4;

  onCreate(options) {
    this.revealMs = options.revealMs;
    this.turn = 0;
    this.round = null; // the open round: {turn, order, closer}
    this.reveals = null;
    this.onMessage("slap", (client, message) => this.slap(client, message));
    this.onMessage("ping", (client, message) => client.send("pong", message));
  }

  onJoin() {
    if (this.clients.length === this.maxClients && this.reveals === null) {
      this.reveals = this.clock.setInterval(() => this.reveal(), this.revealMs);
    }
  }

  reveal() {
    this.turn += 1;
    const swatter = this.turn % SWATTER_EVERY === 0 && this.round === null;
    if (swatter) {
      const closer = this.clock.setTimeout(() => this.close(), SLAP_WINDOW_MS);
      this.round = { turn: this.turn, order: [], closer };
    }
    this.broadcast("reveal", { turn: this.turn, swatter });
  }

  slap(client, message) {
    const round = this.round;
    if (round === null || message?.turn !== round.turn) {
      return; // too late, or for another round: nothing to record
    }
    if (!round.order.includes(client.sessionId)) {
      round.order.push(client.sessionId);
    }
    if (round.order.length >= this.clients.length) {
      this.close();
    }
  }

  close() {
    const round = this.round;
    if (round === null) {
      return;
    }
    round.closer.clear();
    this.round = null;
    this.broadcast("result", { turn: round.turn, order: round.order });
  }
}

function logCollections(path) {
  const out = fs.openSync(path, "a");
  const observer = new PerformanceObserver((list) => {
    const lines = list.getEntries().map((entry) => {
      const full = entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR ? 2 : 1;
      const at = (performance.timeOrigin + entry.startTime) / 1000;
      return `${at.toFixed(3)} ${full} ${entry.duration.toFixed(1)}\n`;
    });
    fs.writeSync(out, lines.join(""));
  });
  observer.observe({ entryTypes: ["gc"] });
}

async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "2567" },
      host: { type: "string", default: "127.0.0.1" },
      "gc-log": { type: "string" },
      "reveal-ms": { type: "string", default: "2000" },
    },
  });
  if (values["gc-log"]) {
    logCollections(values["gc-log"]);
  }
  const server = new Server({
    transport: new WebSocketTransport(),
    greet: false,
    express: (app) => app.get("/health", (req, res) => res.json({ ok: true })),
  });
  server.define("rhythm", RhythmRoom, { revealMs: Number(values["reveal-ms"]) }).filterBy(["gen"]);
  const port = Number(values.port);
  await server.listen(port, values.host);
  process.stdout.write(`listening ${port}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
