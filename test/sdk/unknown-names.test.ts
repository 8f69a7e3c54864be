import { afterAll, beforeAll, expect, test } from "bun:test";
import { UNKNOWN_NAMES_WARNED, createClient, type Client } from "../../src/sdk";
import { startTestServer, type TestServer } from "../helpers";

// Issue 27, item 20: a mistyped flag name in code answered the default without a word.

let s: TestServer;
const clients: Client[] = [];

beforeAll(async () => {
  s = await startTestServer();
  expect((await s.api("/api/admin/killswitches", { body: { name: "checkout" } })).status).toBe(201);
  expect((await s.api("/api/admin/gates", { body: { name: "new-search", rules: [] } })).status).toBe(201);
  expect((await s.api("/api/admin/configs", { body: { name: "limits", schema: { type: "integer" }, value: 5 } })).status).toBe(201);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await s.stop();
});

function client(onWarning?: (message: string) => void) {
  const c = createClient({ baseUrl: s.url, sdkKey: s.serverKey, env: "prod", stream: false, onError: () => {}, onWarning });
  clients.push(c);
  return c;
}

test("the SDK warns once per unknown name and client, never for known names or before the snapshot, and stops after a bounded number", async () => {
  const warnings: string[] = [];
  const c = client((m) => warnings.push(m));
  // Before the first snapshot every answer is the default by design: no warning.
  expect(c.isKilled("chekout")).toBe(false);
  await c.ready();
  expect(warnings).toEqual([]);

  for (let i = 0; i < 3; i++) {
    expect(c.isKilled("chekout")).toBe(false);
    expect(c.isEnabled("new-serch", { user_id: "u1" })).toBe(false);
    expect(c.getConfig("limit", 1)).toBe(1);
    expect(c.getVariant("button-colour", { user_id: "u1" }).reason).toBe("not_found");
    // Known names say nothing.
    expect(c.isKilled("checkout")).toBe(false);
    expect(c.isEnabled("new-search", { user_id: "u1" })).toBe(false);
    expect(c.getConfig("limits", 1)).toBe(5);
  }
  expect(warnings).toEqual([
    '[svc] unknown killswitch "chekout": not in the prod snapshot, so isKilled answers false (check the name, or create it; said once per name)',
    '[svc] unknown gate "new-serch": not in the prod snapshot, so isEnabled answers false (check the name, or create it; said once per name)',
    '[svc] unknown config "limit": not in the prod snapshot, so getConfig answers the default (check the name, or create it; said once per name)',
    '[svc] no running experiment "button-colour" in the prod snapshot, so getVariant answers not_found (check the name, or create it; said once per name)',
  ]);

  // Names made at run time cannot flood the log: a bounded number, then one line saying so.
  for (let i = 0; i < UNKNOWN_NAMES_WARNED * 3; i++) c.isKilled(`generated-${i}`);
  expect(warnings.length).toBe(UNKNOWN_NAMES_WARNED + 1);
  expect(warnings.at(-1)).toBe(`[svc] more than ${UNKNOWN_NAMES_WARNED} unknown names asked for; this client reports no more`);

  // Once per client: another client says it again, by default on console.warn.
  const seen: string[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => void seen.push(args.join(" "));
  try {
    const other = client();
    await other.ready();
    other.isKilled("chekout");
    other.isKilled("chekout");
  } finally {
    console.warn = original;
  }
  expect(seen).toEqual([warnings[0]!]);
});
