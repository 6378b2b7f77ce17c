// The practice table without a browser: each lesson sets up what its coach says (the
// rulebook's two examples included), and PracticeTable answers like a server, so the live
// table's reducer follows it (web/js/practice.js, rules.js, model.js).

import { test } from "node:test";
import assert from "node:assert/strict";
import { LESSONS, PracticeTable } from "../../src/flyswat/web/js/practice.js";
import { Game, allowedColours, triggers } from "../../src/flyswat/web/js/rules.js";
import { initialState, intent, reduce } from "../../src/flyswat/web/js/model.js";

const lesson = (key) => LESSONS.find((l) => l.key === key);
const counts = (centre) => centre.reduce((m, c) => ({ ...m, [c[0]]: (m[c[0]] || 0) + 1 }), {});

test("every card of the practice appears once in a lesson", () => {
  for (const l of LESSONS) {
    const cards = [...l.centre, ...l.deal.flat(), ...(l.needWon ? [l.needWon] : [])];
    assert.equal(new Set(cards).size, cards.length, l.key);
  }
});

test("lesson 2 is the rulebook's second example: red and green tie, both allowed (R14)", () => {
  const l = lesson("c2");
  assert.deepEqual(counts(l.centre), { R: 3, G: 3, B: 2, P: 1 });
  assert.ok(l.deal[l.start][0].startsWith("S-"));
  assert.deepEqual(allowedColours(l.centre), ["R", "G"]);
});

test("lesson 5 is the rulebook's first example: a blue fly is a fifth colour, red alone allowed (R13)", () => {
  const l = lesson("c5");
  assert.deepEqual(counts(l.centre), { R: 5, Y: 2, G: 1, P: 1 });
  const card = l.deal[l.start][0];
  assert.equal(card[0], "B");
  assert.ok(triggers(l.centre, card));
  assert.deepEqual(allowedColours(l.centre), ["R"]);
});

test("lesson 6 ends the game with the last card of a draw pile (R22)", () => {
  const l = lesson("c6");
  const g = new Game({ seats: 2, hands: 2, deal: l.deal, start: l.start, centre: l.centre });
  g.reveal();
  assert.equal(g.over, true);
});

test("the practice table talks like a server: the live table's model follows a whole lesson", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let state = initialState("PRACTICE");
  const said = [];
  const table = new PracticeTable(
    { onMessage: (m) => (state = reduce(state, m, 0)), onStatus: () => {} },
    { coach: (e) => said.push(e.phase), first: 2, name: "Ana", botName: "Bot" },
  );
  return Promise.resolve().then(() => {
    assert.equal(state.seat, 0);
    assert.deepEqual(state.view.centre, lesson("c2").centre);
    t.mock.timers.tick(1400); // the slow bot reveals the swatter
    assert.ok(state.round, "a round is open");
    state = reduce(state, { type: "painted", turn: state.round.turn, at: 100 });
    for (const card of ["R4-1", "G5-1"]) {
      const out = intent(state, { type: "slap", card, at: 400 });
      state = out.state;
      assert.equal(table.send(out.send), true);
    }
    assert.equal(state.round, null, "both hands laid and the bot slapped: decided");
    assert.deepEqual(state.resolved.allowed, ["R", "G"]);
    assert.deepEqual(state.view.won, ["R4-1", "G5-1"]); // our hands came first (300 ms < 2600 ms)
    assert.deepEqual(said.slice(-2), ["result", "done"]);
    table.close();
  });
});

async function play(t, first, cards, wait = 3000) {
  const said = [];
  let state = initialState("PRACTICE");
  const table = new PracticeTable(
    { onMessage: (m) => (state = reduce(state, m, 0)), onStatus: () => {} },
    { coach: (e) => said.push(e.phase), first, name: "Ana", botName: "Bot" },
  );
  await Promise.resolve(); // the table opens its lesson as a connection would: next turn
  t.mock.timers.tick(1400); // the slow bot reveals the trigger
  assert.ok(state.round, "a round is open");
  state = reduce(state, { type: "painted", turn: state.round.turn, at: 100 });
  for (const card of cards) {
    const out = intent(state, { type: "slap", card, at: 400 });
    state = out.state;
    table.send(out.send);
  }
  t.mock.timers.tick(wait); // the bot's hands land (and with one hand, the window runs out)
  return { said, table, state: () => state };
}

test("lesson 3 is only over once a wrong slap has shown its penalty (R19)", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const right = await play(t, 3, ["Y1-1", "Y4-2"]); // allowed flies: no penalty to see
  assert.equal(right.said.at(-1), "retry");
  t.mock.timers.tick(5000); // the lesson starts again
  assert.equal(right.said.at(-1), "setup");
  right.table.close();
  const wrong = await play(t, 3, ["B3-1"], 21_000);
  assert.deepEqual(wrong.said.slice(-2), ["result", "done"]);
  wrong.table.close();
});

test("lesson 4 is only over once a hand has stacked on the bot's (R17)", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const apart = await play(t, 4, ["O2-1", "O3-1"]);
  assert.equal(apart.said.at(-1), "retry");
  apart.table.close();
  const stacked = await play(t, 4, ["O5-1"], 21_000);
  assert.deepEqual(stacked.said.slice(-2), ["result", "done"]);
  stacked.table.close();
});
