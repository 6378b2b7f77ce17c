// The live table's model without a browser: reduce() over protocol messages (v1 and v2) and
// the intents of clicks and keys (web/js/model.js).

import { test } from "node:test";
import assert from "node:assert/strict";
import { DOUBLE_TAP_MS, initialState, intent, reduce, unsent } from "../../src/flyswat/web/js/model.js";

const table = {
  code: "ABCDEF",
  state: "playing",
  options: { seats: 2, slap_window_ms: 3000, turn_timeout_ms: 4000 },
  players: [
    { seat: 0, kind: "human", name: "Ana", connected: true },
    { seat: 1, kind: "bot", name: "Bot", level: "normal" },
  ],
  record_url: null,
};

function view(extra = {}) {
  return {
    seat: 0, seats: 2, hands: 2, to_move: 0, turn: 3, draw_counts: [10, 10], won_counts: [0, 0], won: [],
    centre: ["R3-1", "R2-1", "G4-1"], box: [], round: null, last_round: null, over: false, result: null, ...extra,
  };
}

const openView = (round = {}) =>
  view({ round: { trigger: "S-1", seat: 1, laid: [0, 0], mine: [], done: false, ...round }, to_move: 0 });

function seated() {
  return reduce(initialState("ABCDEF", "tok"), { type: "welcome", protocol: 2, seat: 0, table, view: view(), turn_deadline_ms: 4000 }, 1000);
}

function inRound() {
  let s = reduce(seated(), { type: "reveal", turn: 4, seat: 1, card: "S-1", round: true, window_ms: 3000, view: openView() }, 2000);
  s = reduce(s, { type: "painted", turn: 4, at: 2010 });
  return s;
}

const types = (s) => s.effects.map((e) => (e.type === "sound" ? `sound:${e.name}` : e.type));

test("welcome seats the player and notes when the server would reveal for them", () => {
  const s = seated();
  assert.equal(s.seat, 0);
  assert.equal(s.turnDeadline, 5000);
  assert.deepEqual(types(s), ["render"]);
});

test("reduce never changes the state it is given", () => {
  const before = inRound();
  const copy = JSON.parse(JSON.stringify(before));
  reduce(before, { type: "accepted", turn: 4, card: "R3-1", ms: 300 });
  reduce(before, { type: "hands", turn: 4, view: openView({ laid: [1, 1], mine: ["R3-1"] }) });
  assert.deepEqual(JSON.parse(JSON.stringify(before)), copy);
});

test("a swatter opens a round with its window and sounds; a fly is placed fresh", () => {
  const s = inRound();
  assert.equal(s.round.turn, 4);
  assert.equal(s.round.windowMs, 3000);
  assert.equal(s.round.paintedAt, 2010);
  const opened = reduce(seated(), { type: "reveal", turn: 4, seat: 1, card: "S-1", round: true, window_ms: 3000, view: openView() });
  assert.ok(types(opened).includes("sound:swatter"));
  const fly = reduce(seated(), { type: "reveal", turn: 4, seat: 1, card: "Y2-1", round: false, view: view({ to_move: 0 }) });
  assert.equal(fly.fresh, "Y2-1");
  assert.ok(types(fly).includes("sound:reveal"));
  assert.ok(types(fly).includes("sound:turn"));
  const fifth = reduce(seated(), { type: "reveal", turn: 4, seat: 1, card: "B2-1", round: true, window_ms: 3000, view: openView({ trigger: "B2-1" }) });
  assert.ok(types(fifth).includes("sound:fifth"));
});

test("a slap is sent with its reaction time from the painted trigger, and is pending until accepted", () => {
  const s = inRound();
  const out = intent(s, { type: "slap", card: "R3-1", at: 2322.4 });
  assert.deepEqual(out.send, { type: "slap", card: "R3-1", ms: 312, turn: 4 });
  assert.deepEqual(out.state.round.pending, ["R3-1"]);
  const ok = reduce(out.state, { type: "accepted", turn: 4, card: "R3-1", ms: 305 });
  assert.deepEqual(ok.round.mine, ["R3-1"]);
  assert.deepEqual(ok.round.pending, []);
  assert.equal(ok.round.lastMs, 305);
  assert.ok(types(ok).includes("sound:slap"));
});

test("intents refuse what the rules refuse, before anything is sent (R16)", () => {
  const s = inRound();
  const unpainted = reduce(seated(), { type: "reveal", turn: 4, seat: 1, card: "S-1", round: true, window_ms: 3000, view: openView() });
  assert.equal(intent(unpainted, { type: "slap", card: "R3-1", at: 1 }).send, undefined);
  const one = intent(s, { type: "slap", card: "R3-1", at: 2400 }).state;
  assert.equal(intent(one, { type: "slap", card: "R3-1", at: 2400 + DOUBLE_TAP_MS }).error, "same_card");
  // a double tap is one slap: the second tap sends nothing and shows no error
  const twice = intent(one, { type: "slap", card: "R3-1", at: 2400 + DOUBLE_TAP_MS - 1 });
  assert.equal(twice.send, undefined);
  assert.equal(twice.error, undefined);
  const two = intent(one, { type: "slap", card: "G4-1", at: 2500 }).state;
  assert.equal(intent(two, { type: "slap", card: "R2-1", at: 2600 }).error, "no_hands_left");
  assert.equal(intent(seated(), { type: "reveal" }).send.type, "reveal");
  const notMine = reduce(seated(), { type: "round", turn: 4, view: view({ to_move: 1 }) });
  assert.equal(intent(notMine, { type: "reveal" }).error, "not_your_turn");
});

test("keys: Space reveals, Enter is done, the fly's key slaps it", () => {
  assert.equal(intent(seated(), { type: "key", key: " ", code: "Space" }).send.type, "reveal");
  const s = inRound();
  assert.deepEqual(intent(s, { type: "key", key: "2", code: "Digit2", at: 2500 }).send.card, "R2-1");
  assert.equal(intent(s, { type: "key", key: "Enter", code: "Enter" }).send.type, "done");
  assert.equal(intent(s, { type: "key", key: "x", code: "KeyX" }).send, undefined);
});

test("a message that could not be sent is taken back", () => {
  const out = intent(inRound(), { type: "slap", card: "R3-1", at: 2400 });
  assert.deepEqual(unsent(out.state, out.send).round.pending, []);
  const r = intent(seated(), { type: "reveal" });
  assert.equal(unsent(r.state, r.send).revealSent, false);
});

test("protocol 1: hands counts come beside the view", () => {
  const s = reduce(inRound(), { type: "hands", turn: 4, laid: [0, 2], done: [0] });
  assert.deepEqual(s.round.laid, [0, 2]);
  assert.equal(s.round.done, true);
});

test("protocol 2: the round view is authoritative, own hands included", () => {
  const s = reduce(inRound(), { type: "hands", turn: 4, view: openView({ laid: [1, 2], mine: ["G4-1"], done: false }) });
  assert.deepEqual(s.round.laid, [1, 2]);
  assert.deepEqual(s.round.mine, ["G4-1"]);
  assert.ok(types(s).includes("sound:slap")); // the other seat's two hands
  const mineOnly = reduce(inRound(), { type: "hands", turn: 4, view: openView({ laid: [1, 0], mine: ["G4-1"] }) });
  assert.ok(!types(mineOnly).includes("sound:slap")); // ours sounded with `accepted`
  // a reconnect in the middle of a round: the welcome's view names my hands
  const w = reduce(initialState("ABCDEF", "tok"), { type: "welcome", protocol: 2, seat: 0, table, view: openView({ laid: [1, 0], mine: ["R3-1"] }), window_left_ms: 1200 });
  assert.deepEqual(w.round.mine, ["R3-1"]);
  assert.equal(w.round.windowMs, 1200);
  assert.equal(intent({ ...w, round: { ...w.round, paintedAt: 0 } }, { type: "slap", card: "R3-1", at: 500 }).error, "same_card");
});

test("a decided round shows its hands, then tidies up; my win and my penalty sound (R18, R19)", () => {
  const lr = { trigger: "S-1", seat: 1, allowed: ["R"], slaps: [{ seat: 0, card: "R3-1" }, { seat: 1, card: "R3-1" }, { seat: 0, card: "G4-1" }], won: [{ seat: 0, card: "R3-1" }], penalties: [{ seat: 0, card: "R3-1" }] };
  const s = reduce(inRound(), { type: "round", turn: 4, view: view({ centre: ["R2-1", "G4-1"], last_round: lr, to_move: 0 }), turn_deadline_ms: 4000 }, 3000);
  assert.equal(s.round, null);
  assert.equal(s.resolved.until, 3000 + 2600);
  assert.deepEqual(s.resolved.centre.find((e) => e.card === "R3-1"), { card: "R3-1", hands: [0, 1], outcome: "won" });
  assert.deepEqual(s.resolved.centre.find((e) => e.card === "G4-1").outcome, "wrong");
  const t = types(s);
  for (const x of ["announceRound", "sound:win", "sound:penalty", "timer", "sound:turn", "render"]) assert.ok(t.includes(x), x);
});

test("protocol 2 close codes: 4409 stops the page (seat opened elsewhere), 4404 no table, 4410 expired; 4408 and 4413 reconnect", () => {
  const s = reduce(inRound(), { type: "closed", code: 4409 });
  assert.equal(s.stopped, "replaced");
  assert.equal(intent(s, { type: "reveal" }).send, undefined);
  assert.equal(reduce(seated(), { type: "closed", code: 4404 }).stopped, "not_found");
  assert.equal(reduce(seated(), { type: "closed", code: 4410 }).stopped, "expired");
  assert.equal(reduce(seated(), { type: "closed", code: 4408 }).stopped, null);
  assert.equal(reduce(seated(), { type: "closed", code: 4413 }).stopped, null);
  assert.equal(reduce(seated(), { type: "missing", code: "expired" }).stopped, "expired");
  const back = reduce(s, { type: "takeBack" });
  assert.equal(back.stopped, null);
  assert.deepEqual(back.effects, [{ type: "reconnect", token: "tok" }]);
  assert.equal(reduce(seated(), { type: "error", code: "replaced" }).stopped, "replaced");
});

test("a refused action shows the error and forgets what was pending", () => {
  const sent = intent(inRound(), { type: "slap", card: "R3-1", at: 2400 }).state;
  const s = reduce(sent, { type: "error", code: "too_fast" });
  assert.deepEqual(s.round.pending, []);
  assert.deepEqual(s.effects[0], { type: "toast", error: "too_fast" });
  const bad = reduce(seated(), { type: "error", code: "bad_token" });
  assert.equal(bad.token, null);
  assert.deepEqual(types(bad).slice(0, 2), ["forgetSeat", "reconnect"]);
});

test("a reaction is shown by its seat a moment, and a refused one touches nothing of the round", () => {
  const s = reduce(seated(), { type: "react", seat: 1, reaction: "nice" }, 2000);
  assert.deepEqual(s.reacts[1].reaction, "nice");
  assert.ok(s.reacts[1].until > 2000);
  assert.deepEqual(s.effects, [{ type: "react", seat: 1, reaction: "nice" }]);
  const open = reduce(seated(), { type: "reveal", turn: 4, seat: 1, card: "S-1", round: true, window_ms: 3000, auto: false, view: openView() }, 3000);
  const slapped = { ...open, round: { ...open.round, pending: ["R3-1"] } };
  const refused = reduce(slapped, { type: "error", code: "reaction_in_round", message: "" }, 3100);
  assert.deepEqual(refused.round.pending, ["R3-1"]);
  assert.deepEqual(refused.effects, [{ type: "toast", error: "reaction_in_round" }]);
});

test("a reaction is sent between rounds only, by a seat, and only one of the set", () => {
  assert.deepEqual(intent(seated(), { type: "react", reaction: "wow" }).send, { type: "react", reaction: "wow" });
  assert.equal(intent(seated(), { type: "react", reaction: "hate" }).send, undefined);
  const open = reduce(seated(), { type: "reveal", turn: 4, seat: 1, card: "S-1", round: true, window_ms: 3000, auto: false, view: openView() }, 3000);
  assert.deepEqual(intent(open, { type: "react", reaction: "wow" }), { state: open, error: "reaction_in_round" });
  const watching = reduce(initialState("ABCDEF"), { type: "welcome", protocol: 3, seat: null, table, view: view({ seat: null }) }, 1000);
  assert.equal(intent(watching, { type: "react", reaction: "wow" }).send, undefined);
});
