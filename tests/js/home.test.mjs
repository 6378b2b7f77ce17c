// The home page's pure parts (web/js/tables.js) and the replay viewer's formats (engine.js).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { joinable, tableCode } from "../../src/flyswat/web/js/tables.js";
import { checkRecord, replay } from "../../src/flyswat/web/js/engine.js";

test("a table code is found in a whole link, a query, or the code itself, in any case", () => {
  assert.equal(tableCode("http://127.0.0.1:8000/?table=b7eawb"), "B7EAWB");
  assert.equal(tableCode("https://flyswat.example/?lang=de&table=K7QX2M#x"), "K7QX2M");
  assert.equal(tableCode("?table=B7EAWB"), "B7EAWB");
  assert.equal(tableCode("  k7qx2m "), "K7QX2M");
  assert.equal(tableCode("http://127.0"), null);
  assert.equal(tableCode(""), null);
});

const human = (seat, extra) => ({ seat, kind: "human", joined: false, host: false, connected: false, ...extra });
const host = human(0, { joined: true, host: true, connected: true });

test("only lobbies with a free seat and their host still there are offered", () => {
  const tables = [
    { code: "OPEN01", state: "lobby", players: [host, human(1)] },
    { code: "FULL01", state: "lobby", players: [host, { seat: 1, kind: "bot" }] },
    { code: "PLAY01", state: "playing", players: [host, human(1)] },
    { code: "GONE01", state: "lobby", players: [{ ...host, connected: false }, human(1)] },
  ];
  assert.deepEqual(joinable(tables).map((t) => t.code), ["OPEN01"]);
});

test("the replay reads flyswat-record/1 and /2, and says which formats it cannot read", () => {
  const golden = JSON.parse(readFileSync(new URL("../golden/web-2-seats.json", import.meta.url), "utf-8"));
  const v2 = { ...golden.record, format: "flyswat-record/2", rules: { ...golden.record.rules, min_reaction_ms: 100 } };
  assert.deepEqual(replay(v2).problems, []);
  assert.throws(() => checkRecord({ ...v2, format: "flyswat-record/3" }), /replay.error.format/);
  assert.throws(() => checkRecord({ hello: "world" }), /replay.error.notRecord/);
});
