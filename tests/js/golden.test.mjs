// The browser's rules (web/js/rules.js, through the replay viewer's engine.js) against the
// Python engine: every golden transcript in tests/golden/ replays to the same state after
// every turn and to the same result (shared/STYLE.md: one copy per rule, held by goldens).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { replay } from "../../src/flyswat/web/js/engine.js";

const dir = new URL("../golden/", import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();

test("there are golden transcripts to replay", () => {
  assert.ok(files.length >= 2, files.join());
});

for (const file of files) {
  const golden = JSON.parse(readFileSync(new URL(file, dir), "utf-8"));
  test(`golden ${golden.name} (${golden.covers.join(" ")}): every turn and the result agree`, () => {
    const rec = golden.record;
    const game = replay(rec);
    assert.deepEqual(game.problems, []);
    assert.equal(golden.after.length, rec.turns.length);
    const removed = (rec.removed || []).length;
    golden.after.forEach((want, i) => {
      const frames = game.frames.filter((f) => f.turn === i);
      const f = frames[frames.length - 1];
      const got = {
        centre: f.kind === "resolve" ? centreAfter(f) : f.centre.map((e) => e.card),
        draw: f.draw,
        won: f.won,
        box: removed + f.box,
      };
      assert.deepEqual(got, want, `after turn ${i + 1} (${rec.turns[i].card})`);
    });
    assert.deepEqual(game.result, rec.result);
    assert.equal(game.over, true);
  });
}

/** The centre after a resolved round: the flies that were not won stay (R18, R19). */
function centreAfter(frame) {
  const won = new Set(frame.wonCards.map((w) => w.card));
  return frame.centre.map((e) => e.card).filter((c) => !won.has(c));
}
