import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { compileRegex } from "../../src/lib/re2";
import { type Client, createClient } from "../../src/sdk/index";
import { type TestServer, startTestServer } from "../helpers";
import { GATE_CASES } from "../support/gate-cases";

// The third consumer of the one table of gate cases (after explain and OFREP in test/modules/gates.test.ts): the SDK, evaluating locally.
let ts: TestServer;
const clients: Client[] = [];

beforeAll(async () => {
  ts = await startTestServer();
  for (const [i, c] of GATE_CASES.entries()) expect((await ts.api("/api/admin/gates", { body: { name: `case-${i}`, rules: c.gate.rules } })).status).toBe(201);
  const prerequisite = [{ conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], passPercentage: 100 }];
  expect((await ts.api("/api/admin/gates", { body: { name: "staff", rules: prerequisite } })).status).toBe(201);
  expect((await ts.api("/api/admin/gates", { body: { name: "staff-beta", rules: [{ conditions: [{ attr: "x", op: "passes_gate", value: "staff" }], passPercentage: 100 }] } })).status).toBe(201);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await ts.stop();
});

/** The runtime's RegExp, as an app may pass it instead of the default (RE2). */
const nativeRegex = (pattern: string) => {
  const re = new RegExp(pattern);
  return { test: (value: string) => re.test(value) };
};

function client(options: { re2?: boolean; native?: boolean } = {}): Client {
  const c = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false, ...(options.re2 ? { compileRegex } : options.native ? { compileRegex: nativeRegex } : {}) });
  clients.push(c);
  return c;
}

describe("svc.isEnabled: the SDK evaluates gates locally, as the server does", () => {
  for (const engine of ["the runtime's RegExp", "RE2"] as const) {
    test(`every case of the table (${engine})`, async () => {
      const svc = client(engine === "RE2" ? {} : { native: true });
      await svc.ready();
      for (const [i, c] of GATE_CASES.entries()) {
        const explained = (await ts.api(`/api/admin/gates/case-${i}/explain`, { body: { env: "prod", context: c.context } })).body.value;
        expect([c.name, svc.isEnabled(`case-${i}`, c.context)]).toEqual([c.name, c.expected]);
        expect([c.name, explained]).toEqual([c.name, c.expected]);
      }
    });
  }

  test("by default patterns run on RE2, as on the server: a rule exponential for a backtracking RegExp answers at once (issue 25, item 1)", async () => {
    // Cheap for RE2, so the server accepts it; a backtracking engine tries ~1.6^n ways to split n a's before the b.
    const rules = [{ conditions: [{ attr: "name", op: "regex", value: "^(a|aa)+$" }], passPercentage: 100 }];
    expect((await ts.api("/api/admin/gates", { body: { name: "backtracking", rules } })).status).toBe(201);
    const svc = client();
    await svc.ready();
    expect(svc.isEnabled("backtracking", { name: "aaaa" })).toBe(true);
    const started = performance.now();
    expect(svc.isEnabled("backtracking", { name: `${"a".repeat(44)}b` })).toBe(false);
    // A RegExp takes seconds here (tens of seconds on a slow machine); RE2 well under a millisecond.
    expect(performance.now() - started).toBeLessThan(500);
  });

  test("prerequisite gates come from the same snapshot; an unknown gate is false; percentages agree with explain for 200 units", async () => {
    const svc = client();
    await svc.ready();
    expect(svc.isEnabled("staff-beta", { email: "ana@acme.com" })).toBe(true);
    expect(svc.isEnabled("staff-beta", { email: "ana@example.com" })).toBe(false);
    expect(svc.isEnabled("no-such-gate", { user_id: "u" })).toBe(false);
    expect(svc.isEnabled("toString")).toBe(false);
    expect((await ts.api("/api/admin/gates", { body: { name: "thirty", rules: [{ conditions: [], passPercentage: 30 }] } })).status).toBe(201);
    const fresh = client();
    await fresh.ready();
    let on = 0;
    for (let i = 0; i < 200; i++) {
      const context = { user_id: `user-${i}` };
      const local = fresh.isEnabled("thirty", context);
      if (i % 20 === 0) expect(local).toBe((await ts.api("/api/admin/gates/thirty/explain", { body: { context } })).body.value);
      if (local) on++;
    }
    // About 30 %, with six standard deviations either side (the gate's salt is new each run: 35–85 failed about one
    // run in 6,000).
    expect(on).toBeGreaterThan(21);
    expect(on).toBeLessThan(99);
  });
});
