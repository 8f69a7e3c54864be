/**
 * CORS for the browser key (issue 28, item 1): a project admits its `domain`
 * origin and the origins listed in Settings (`allowedOrigins`); preflights
 * are answered with Access-Control-Allow-Origin for admitted origins only;
 * credentials are never allowed; a change made on one server reaches every
 * server on the same store.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/lib/log";
import type { ServiceContext, Services } from "../../src/lib/module";
import { type Store, openStore, parseStoreTarget } from "../../src/lib/store";
import { storeMigrations } from "../../src/modules";
import { KeysService } from "../../src/modules/keys/service";
import { ProjectsService } from "../../src/modules/projects/service";
import { expectErrorShape, startTestServer, type TestServer } from "../helpers";

let s: TestServer;
let browserKey: string;
const DOMAIN = "https://shop.example.com";
const LISTED = "http://localhost:5173";
const STRANGER = "https://evil.example.net";

beforeAll(async () => {
  s = await startTestServer();
  expect((await s.api("/api/admin/killswitches", { body: { name: "checkout", value: true } })).status).toBe(201);
  browserKey = (await s.api("/api/admin/keys", { body: { type: "browser", name: "web" } })).body.key;
});
afterAll(() => s.stop());

const evaluate = (origin: string | null, key = browserKey) =>
  s.api("/ofrep/v1/evaluate/flags/checkout", { key: null, headers: { "x-sdk-key": key, ...(origin ? { origin } : {}) }, body: { context: { targetingKey: "u1" } } });

const preflight = (origin: string, path = "/ofrep/v1/evaluate/flags") =>
  fetch(`${s.url}${path}`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type, x-sdk-key" },
  });

describe("the allowedOrigins setting", () => {
  test("PATCH validates, normalises and shows it; GET project shows it", async () => {
    const before = (await s.api(`/api/admin/projects/${s.projectId}`)).body;
    expect(before.allowedOrigins).toEqual([]);
    for (const bad of [["shop.example.com"], ["ftp://x.example"], ["https://x.example/path"], ["https://user@x.example"], ["https://x.exa mple"], Array.from({ length: 21 }, (_, i) => `https://a${i}.example`)]) {
      const r = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { allowedOrigins: bad } });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(expectErrorShape(r.body).code).toBe("VALIDATION");
      expect(r.body.detail).toContain("allowedOrigins");
    }
    expect((await s.api(`/api/admin/projects/${s.projectId}`)).body.allowedOrigins).toEqual([]);
    const r = await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { domain: DOMAIN, allowedOrigins: ["HTTP://LocalHost:5173/", LISTED, "https://app.example.org:443"] } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.allowedOrigins).toEqual([LISTED, "https://app.example.org"]);
    expect((await s.api(`/api/admin/projects/${s.projectId}`)).body.allowedOrigins).toEqual([LISTED, "https://app.example.org"]);
    // Every live key carries them, the domain's first.
    for (const k of (await s.api("/api/admin/keys")).body as any[]) {
      expect(k.allowedOrigin).toBe(DOMAIN);
      expect(k.allowedOrigins).toEqual([DOMAIN, LISTED, "https://app.example.org"]);
    }
    const audit = await s.store.one<{ detail: string }>("SELECT detail FROM audit_log WHERE project_id = ? AND action = 'project.update' ORDER BY seq DESC LIMIT 1", s.projectId);
    expect(JSON.parse(audit!.detail).changed.allowedOrigins).toEqual([LISTED, "https://app.example.org"]);
  });

  test("a browser key and a server key admit the domain and each listed origin, and refuse others", async () => {
    for (const origin of [DOMAIN, LISTED, "https://app.example.org", null]) {
      const r = await evaluate(origin);
      expect(r.status, String(origin)).toBe(200);
      if (origin) expect(r.headers.get("access-control-allow-origin")).toBe(origin);
      expect(r.headers.get("access-control-allow-credentials")).toBeNull();
      const server = await evaluate(origin, s.serverKey);
      expect(server.status).toBe(200);
    }
    // A key minted now gets them too.
    const fresh = (await s.api("/api/admin/keys", { body: { type: "browser" } })).body.key;
    expect((await evaluate(LISTED, fresh)).status).toBe(200);
    expect((await evaluate(STRANGER, fresh)).status).toBe(403);
    for (const key of [browserKey, s.serverKey]) {
      const r = await evaluate(STRANGER, key);
      expect(r.status).toBe(403);
      expect(expectErrorShape(r.body)).toMatchObject({ code: "FORBIDDEN", error: "Origin not allowed for this key" });
      expect(r.headers.get("access-control-allow-origin")).toBeNull();
    }
    // Events and errors from the page follow the same rule.
    const events = await s.api("/api/sdk/v1/events", { key: null, headers: { "x-sdk-key": browserKey, origin: STRANGER }, body: { events: [{ name: "page_view" }] } });
    expect(events.status).toBe(403);
    const ok = await s.api("/api/sdk/v1/events", { key: null, headers: { "x-sdk-key": browserKey, origin: LISTED }, body: { events: [{ name: "page_view" }] } });
    expect(ok.status).toBe(202);
  });

  test("preflights: the admitted origin only, the methods and headers, never credentials", async () => {
    // Every project of this server names its origins: an origin none admits is unknown.
    const other = await s.newProject("Other shop");
    expect((await s.api(`/api/admin/projects/${other.projectId}`, { method: "PATCH", key: other.adminKey, body: { domain: "other.example" } })).status).toBe(200);
    for (const origin of [DOMAIN, LISTED, "https://other.example"]) {
      for (const path of ["/ofrep/v1/evaluate/flags", "/ofrep/v1/evaluate/flags/checkout", "/api/sdk/v1/events", "/api/sdk/v1/errors", "/api/1/envelope/"]) {
        const r = await preflight(origin, path);
        expect(r.status, `${origin} ${path}`).toBe(204);
        expect(r.headers.get("access-control-allow-origin")).toBe(origin);
        expect(r.headers.get("access-control-allow-methods")).toContain("POST");
        expect(r.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("x-sdk-key");
        expect(r.headers.get("vary")).toContain("Origin");
        expect(r.headers.get("access-control-allow-credentials")).toBeNull();
      }
    }
    const refused = await preflight(STRANGER);
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    expect(refused.headers.get("access-control-allow-credentials")).toBeNull();
  });

  test("clearing the list leaves the domain; clearing both admits any origin again", async () => {
    expect((await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { allowedOrigins: [] } })).status).toBe(200);
    expect((await evaluate(LISTED)).status).toBe(403);
    expect((await evaluate(DOMAIN)).status).toBe(200);
    expect((await s.api(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { domain: "" } })).status).toBe(200);
    const any = await evaluate(STRANGER);
    expect(any.status).toBe(200);
    expect(any.headers.get("access-control-allow-origin")).toBe(STRANGER);
    expect(any.headers.get("access-control-allow-credentials")).toBeNull();
  });
});

describe("a second server on the same store", () => {
  let store2: Store;
  let keys2: KeysService;
  let projects2: ProjectsService;

  beforeAll(async () => {
    store2 = await openStore(parseStoreTarget(s.storeUrl, s.dataDir), { migrations: storeMigrations(), busyBudgetMs: 5000, poolSize: 2 });
    const services = {} as Services;
    const ctx: ServiceContext = {
      store: store2,
      log: createLogger({ requests: false, quiet: true }),
      options: { maxBodyBytes: 1 << 20, lastUsedFlushMs: 3_600_000 },
      services,
      shutdown: new AbortController().signal,
    };
    projects2 = services.projects = new ProjectsService(ctx);
    keys2 = services.keys = new KeysService(ctx);
  });
  afterAll(async () => {
    await keys2.close();
    await store2.close();
  });

  async function within(ms: number, ok: () => Promise<boolean>): Promise<boolean> {
    const start = Date.now();
    while (Date.now() - start < ms) {
      if (await ok()) return true;
      await Bun.sleep(25);
    }
    return false;
  }

  test("an origin listed there is admitted here (keys and preflights); removed there, refused here", async () => {
    const added = "https://beta.example.com";
    await projects2.update(s.projectId, { domain: DOMAIN, allowedOrigins: [] });
    expect(await within(3000, async () => (await evaluate(added)).status === 403)).toBe(true);
    // Cached answers here: the key and the preflight's origin.
    expect((await preflight(added)).headers.get("access-control-allow-origin")).toBeNull();
    await projects2.update(s.projectId, { allowedOrigins: [added] });
    expect(await within(3000, async () => (await evaluate(added)).status === 200)).toBe(true);
    expect(await within(3000, async () => (await preflight(added)).headers.get("access-control-allow-origin") === added)).toBe(true);
    await projects2.update(s.projectId, { allowedOrigins: [] });
    expect(await within(3000, async () => (await evaluate(added)).status === 403)).toBe(true);
    expect(await within(3000, async () => (await preflight(added)).headers.get("access-control-allow-origin") === null)).toBe(true);
    expect((await evaluate(DOMAIN)).status).toBe(200);
  });
});
