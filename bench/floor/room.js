// The floor's bare room on Node's `ws` (the library under Colyseus's transport): the rhythm's
// traffic with nothing else — rooms of four sockets by arrival, a `reveal` every 2000 ms
// (every fourth opens a round), slaps taken until all four or 1000 ms, then one `result`; a
// `ping` to every socket once a second from one 100-ms timer (a tenth each tick), answered by
// the client's `pong`. No game, no store. See bench/floor.py.
//
//     node room.js <port>
"use strict";

const { WebSocketServer } = require("../anchors/colyseus/node_modules/ws");

const port = Number(process.argv[2]);
const wss = new WebSocketServer({ port, host: "127.0.0.1", perMessageDeflate: false });
let received = 0;
let sent = 0;
let filling = null;
const slots = Array.from({ length: 10 }, () => new Set());
let nextSlot = 0;
let tick = 0;

function send(ws, text) {
  ws.send(text);
  sent += 1;
}

function broadcast(room, text) {
  for (const ws of room.seats) send(ws, text);
}

function reveal(room) {
  room.turn += 1;
  const swatter = room.turn % 4 === 0;
  broadcast(room, JSON.stringify({ type: "reveal", turn: room.turn, swatter }));
  if (swatter) {
    room.open = { turn: room.turn, slaps: [] };
    room.closer = setTimeout(() => close(room), 1000);
  }
}

function close(room) {
  if (!room.open) return;
  clearTimeout(room.closer);
  broadcast(room, JSON.stringify({ type: "result", turn: room.open.turn, slaps: room.open.slaps }));
  room.open = null;
}

wss.on("connection", (ws) => {
  if (filling === null) filling = { seats: [], turn: 0, open: null, closer: null };
  const room = filling;
  room.seats.push(ws);
  const slot = slots[nextSlot];
  nextSlot = (nextSlot + 1) % slots.length;
  slot.add(ws);
  if (room.seats.length === 4) {
    filling = null;
    room.timer = setInterval(() => reveal(room), 2000);
  }
  ws.on("message", (data) => {
    received += 1;
    const m = JSON.parse(data);
    if (m.type === "slap" && room.open && m.turn === room.open.turn) {
      room.open.slaps.push(room.seats.indexOf(ws));
      if (room.open.slaps.length === room.seats.length) close(room);
    }
  });
  ws.on("close", () => {
    slot.delete(ws);
    clearInterval(room.timer);
  });
});

setInterval(() => {
  const slot = slots[tick];
  tick = (tick + 1) % slots.length;
  for (const ws of slot) send(ws, JSON.stringify({ type: "ping", id: (Math.random() * 2 ** 31) | 0 }));
}, 100);

process.stdin.on("data", () => {
  process.stdout.write(`${JSON.stringify({ received, sent })}\n`);
});
wss.on("listening", () => process.stdout.write("listening\n"));
