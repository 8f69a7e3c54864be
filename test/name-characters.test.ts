import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers";

/**
 * Issue 25 item 14: names accepted bidirectional and C1 control characters
 * (U+202E turns "abc\u202Etxt.exe" into what reads as another name; U+009B
 * is a terminal's CSI). Every name is refused with VALIDATION naming the
 * field when it holds one, and nothing is stored.
 */

let s: TestServer;
let seq = 0;
const project = () => ({ "x-project-id": s.projectId });

beforeAll(async () => {
  // The connector case posts a loopback webhook (DECISIONS: tests allow private targets).
  process.env.SERVICE_CONNECTOR_PRIVATE_TARGETS = "allow";
  s = await startTestServer();
  expect((await s.api("/api/admin/events", { body: { name: "job.failed" } })).status).toBe(201);
});
afterAll(() => s.stop());

/** The characters refused in names, beside the C0 controls that always were. */
const UNSAFE = ["\u202e", "\u009b", "\u0085", "\u200e", "\u200f", "\u202a", "\u202d", "\u2066", "\u2069", "\u061c"];

type Case = { what: string; path: string; method?: string; field: string; body: (name: string) => unknown; headers?: () => Record<string, string> };

const CASES: Case[] = [
  { what: "config", path: "/api/admin/configs", field: "name", body: (name) => ({ name, schema: true, value: 1 }) },
  { what: "gate", path: "/api/admin/gates", field: "name", body: (name) => ({ name }) },
  { what: "killswitch", path: "/api/admin/killswitches", field: "name", body: (name) => ({ name }) },
  { what: "killswitch sub-switch key", path: "/api/admin/killswitches", field: "switches", body: (name) => ({ name: `ks-${++seq}`, switches: { [name]: false } }) },
  { what: "universe", path: "/api/admin/universes", field: "name", body: (name) => ({ name }), headers: project },
  { what: "metric", path: "/api/admin/metrics", field: "name", body: (name) => ({ name, kind: "count", event: "job.failed" }) },
  { what: "gate template", path: "/api/admin/gates/templates", field: "name", body: (name) => ({ name, rules: [] }) },
  { what: "i18n profile", path: "/api/admin/i18n/profiles", field: "name", body: (name) => ({ name, locale: "de" }), headers: project },
  { what: "connector", path: "/api/admin/connectors", field: "name", body: (name) => ({ provider: "webhook", name, events: ["bug.created"], config: { url: "http://127.0.0.1:9/hook" } }) },
  { what: "SDK key", path: "/api/admin/keys", field: "name", body: (name) => ({ type: "server", name }) },
  { what: "API token", path: "/api/admin/tokens", field: "name", body: (name) => ({ name, access: "read-only" }) },
];

async function auditCount(): Promise<number> {
  const row = await s.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM audit_log WHERE project_id = ?", s.projectId);
  return Number(row!.n);
}

describe("names refuse control and bidirectional formatting characters", () => {
  for (const c of CASES) {
    test(`${c.what}: U+202E, U+009B and the other bidi/C1 controls are VALIDATION naming ${c.field}; a plain name is accepted`, async () => {
      const before = await auditCount();
      for (const ch of UNSAFE) {
        const name = `safe${ch}name-${++seq}`;
        const r = await s.api(c.path, { method: c.method ?? "POST", body: c.body(name), headers: c.headers?.() });
        expect(r.status, `${c.what} U+${ch.codePointAt(0)!.toString(16)}: ${JSON.stringify(r.body)}`).toBe(400);
        expect(r.body.code).toBe("VALIDATION");
        expect(r.body.detail).toContain(c.field);
      }
      expect(await auditCount()).toBe(before);
      const ok = await s.api(c.path, { method: c.method ?? "POST", body: c.body(`plain-name-${++seq}`), headers: c.headers?.() });
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    });
  }

  test("a project's name: PATCH with U+202E or U+009B is VALIDATION and the name stays", async () => {
    const before = (await s.api(`/api/admin/projects/${s.projectId}`)).body.name;
    for (const ch of ["\u202e", "\u009b", "\u2067"]) {
      const r = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { name: `Shop${ch}gnp.exe` } });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.code).toBe("VALIDATION");
      expect(r.body.detail).toContain("name");
    }
    expect((await s.api(`/api/admin/projects/${s.projectId}`)).body.name).toBe(before);
  });

  test("names in other scripts and emoji stay allowed", async () => {
    for (const name of ["Bestellübersicht", "заказ", "注文", "طلب", "שלום", "rocket-🚀"]) {
      const r = await s.api("/api/admin/gates", { body: { name: `${name}-${++seq}` } });
      expect(r.status, name).toBe(201);
    }
  });
});
