// The end screen's and lobby's pure parts (web/js/rematch.js): what each control sends, and
// the rating changes and host buttons drawn from a state. Strings are keys here (no file).

import { test } from "node:test";
import assert from "node:assert/strict";
import { deltaHtml, endLinks, hostButtons, lifecycleMessage, rematchHtml } from "../../src/flyswat/web/js/rematch.js";

globalThis.localStorage = { getItem: () => null, setItem() {}, removeItem() {} };

test("each control names the message it sends", () => {
  assert.deepEqual(lifecycleMessage({ type: "rematch" }), { type: "rematch", accept: true });
  assert.deepEqual(lifecycleMessage({ type: "rematch", accept: "false" }), { type: "rematch", accept: false });
  assert.deepEqual(lifecycleMessage({ type: "seat-bot", target: "2" }), { type: "seat_bot", target: 2, level: "normal" });
  assert.deepEqual(lifecycleMessage({ type: "kick", target: "1" }), { type: "kick", target: 1 });
  assert.deepEqual(lifecycleMessage({ type: "leave" }), { type: "leave" });
  assert.equal(lifecycleMessage({ type: "reveal" }), null);
});

test("a rating change reads +N or −N, and a seat not rated a dash", () => {
  const s = { ratings: { seats: [{ seat: 0, rated: true, delta: 14, rating_after: 1014 },
    { seat: 1, rated: true, delta: -3, rating_after: 997 }, { seat: 2, rated: false }, { seat: 3 }] } };
  assert.match(deltaHtml(s, 0), />\+14</);
  assert.match(deltaHtml(s, 1), />−3</);
  assert.match(deltaHtml(s, 0), /class="rating-after">1014</); // the new rating, no hover needed
  assert.doesNotMatch(deltaHtml(s, 0), /provisional/);
  const first = { ratings: { seats: [{ seat: 0, rated: true, delta: 52, rating_after: 1052, provisional: true }] } };
  assert.match(deltaHtml(first, 0), /class="provisional"/);
  assert.match(deltaHtml(s, 2), /delta none/);
  assert.equal(deltaHtml(s, 3), ""); // a bot
});

const seat = (n, extra) => ({ seat: n, kind: "human", joined: true, connected: true, host: false, rematch: false, name: `P${n}`, ...extra });

test("only the host sees the buttons for another seat: an absent one to a bot, a player to remove", () => {
  const tb = { state: "lobby", players: [seat(0, { host: true }), seat(1), seat(2, { connected: false }), seat(3, { joined: false })] };
  assert.equal(hostButtons(tb, tb.players[1], 1), "");
  assert.doesNotMatch(hostButtons(tb, tb.players[1], 0), /seat-bot/);
  assert.match(hostButtons(tb, tb.players[1], 0), /kick/);
  assert.match(hostButtons(tb, tb.players[2], 0), /seat-bot/);
  assert.match(hostButtons(tb, tb.players[3], 0), /seat-bot/);
  assert.equal(hostButtons(tb, tb.players[0], 0), "");
});

test("the end screen offers a rematch until you accept, then the way back", () => {
  const tb = { state: "over", game_id: "g1", players: [seat(0, { host: true }), seat(1, { rematch: true })] };
  assert.match(rematchHtml({ table: tb, seat: 0 }), /data-action="rematch">/);
  const accepted = { ...tb, players: [seat(0, { host: true, rematch: true }), seat(1, { rematch: true })] };
  assert.match(rematchHtml({ table: accepted, seat: 0 }), /data-accept="false"/);
  assert.match(endLinks({ table: tb, seat: 0 }), /\/api\/games\/g1\/record/);
  assert.match(endLinks({ table: tb, seat: 0 }), /\?ratings/);
  assert.equal(rematchHtml({ table: tb, seat: null }), ""); // a spectator
  assert.equal(rematchHtml({ table: { ...tb, practice: true }, seat: 0 }), ""); // after practice
  assert.doesNotMatch(endLinks({ table: { ...tb, practice: true }, seat: 0 }), /ratings/);
});
