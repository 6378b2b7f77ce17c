// Protocol 3's lean wire in the browser (web/js/wire.js) against the Python twin: the golden
// game of tests/golden/wire/ (made by tests/table/test_wire.py from the table itself) is put
// together message by message into the very views the Python side holds — each seat's whole
// view, as it would have been sent whole.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Assembler } from "../../src/flyswat/web/js/wire.js";

const golden = JSON.parse(readFileSync(new URL("../golden/wire/wire-3-seats.json", import.meta.url), "utf-8"));

test("the golden game has players, a spectator and deltas", () => {
  const conns = Object.keys(golden.conns);
  assert.ok(conns.length >= 4, conns.join());
  const sent = golden.conns["1"].sent;
  assert.ok(sent.some((m) => m.type === "hands" && m.view && !("centre" in m.view)));
});

for (const [conn, { sent, assembled }] of Object.entries(golden.conns)) {
  test(`connection ${conn}: every message put together as the Python client has it`, () => {
    let wire = new Assembler();
    assert.equal(sent.length, assembled.length);
    sent.forEach((msg, i) => {
      if (msg.type === "welcome") wire = new Assembler(); // a new socket: a new assembler
      assert.deepEqual(wire.feed(msg), assembled[i], `message ${i} (${msg.type})`);
    });
  });
}
