// The floor's clients: `n` sockets on `ws`, opened 50 at a time, each answering `ping` with
// `pong` and slapping 150–600 ms after a reveal that opens a round. See bench/floor.py.
//
//     node clients.js <url> <n>
"use strict";

const WebSocket = require("../anchors/colyseus/node_modules/ws");

const [url, n] = [process.argv[2], Number(process.argv[3])];
let open = 0;
let started = 0;

function client() {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  ws.on("open", () => {
    open += 1;
    if (open === n) process.stdout.write("ready\n");
    next();
  });
  ws.on("message", (data) => {
    const m = JSON.parse(data);
    if (m.type === "ping") ws.send(`{"type":"pong","id":${m.id}}`);
    else if (m.type === "reveal" && m.swatter) {
      setTimeout(() => ws.send(JSON.stringify({ type: "slap", turn: m.turn })), 150 + Math.random() * 450);
    }
  });
  ws.on("error", (e) => {
    process.stderr.write(`${e}\n`);
    process.exit(1);
  });
}

function next() {
  if (started < n) {
    started += 1;
    client();
  }
}

for (let i = 0; i < 50; i += 1) next();
