// A join attempt's request key and the retry of an unanswered idempotent request
// (web/js/identity.js; docs/PROTOCOL.md, JoinTable).

import { test } from "node:test";
import assert from "node:assert/strict";
import { requestKey, retried } from "../../src/flyswat/web/js/identity.js";
import { ServerError } from "../../src/flyswat/web/js/net.js";

test("a request key is 22 base64url characters, fresh each time", () => {
  const keys = new Set(Array.from({ length: 200 }, requestKey));
  assert.equal(keys.size, 200);
  for (const key of keys) assert.match(key, /^[A-Za-z0-9_-]{22}$/);
});

test("an unanswered request is made again, an answered refusal is not", async () => {
  let calls = 0;
  const flaky = async () => {
    calls += 1;
    if (calls === 1) throw new ServerError("network");
    if (calls === 2) throw new ServerError("http", "restarting", 502);
    return { seat: 1 };
  };
  assert.deepEqual(await retried(flaky, 4, 1), { seat: 1 });
  assert.equal(calls, 3);
  let refused = 0;
  const full = async () => {
    refused += 1;
    throw new ServerError("table_full", "every seat is taken", 409);
  };
  await assert.rejects(retried(full, 4, 1), (e) => e.code === "table_full");
  assert.equal(refused, 1);
  let down = 0;
  await assert.rejects(retried(async () => { down += 1; throw new ServerError("network"); }, 3, 1));
  assert.equal(down, 3);
});
