/**
 * The public intake: POST /ops/bug and /ops/feature-request with a client
 * key (scope tickets:public_create, the project's opt-in), always
 * pending_approval, dedupe of open titles, rate limits per key and per
 * client address, the body limit, 503 when the store cannot take the
 * write, CORS for the project's domain (also in a real browser), the edge
 * role, and a client key reaching nothing else.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Server } from "bun";
import type { BrowserContext } from "playwright-core";
import { chromiumAvailable, newBrowserContext } from "../web/dashboard-support";
import { TEST_ENGINE, type TestServer, startTestServer } from "../helpers";

const HIGH = { limit: 100_000, windowMs: 60_000 };
let ts: TestServer;

const post = (server: TestServer, path: string, body: unknown, headers: Record<string, string> = {}, key: string | null = server.clientKey) =>
  server.api(path, { key: null, headers: { ...(key ? { "x-sdk-key": key } : {}), ...headers }, body });
const feature = (body: unknown, headers: Record<string, string> = {}, key: string | null = ts.clientKey) => post(ts, "/ops/feature-request", body, headers, key);
const bug = (body: unknown, headers: Record<string, string> = {}, key: string | null = ts.clientKey) => post(ts, "/ops/bug", body, headers, key);
const itemCount = async (server = ts) => Number((await server.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM ops_items WHERE project_id = ?", server.projectId))!.n);
const eventCount = async (type: string) => Number((await ts.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM outbox_events WHERE project_id = ? AND type = ?", ts.projectId, type))!.n);
const setProject = (server: TestServer, body: Record<string, unknown>) => server.api(`/api/admin/projects/${server.projectId}`, { method: "PATCH", body });

beforeAll(async () => {
  ts = await startTestServer({ intake: { perKey: HIGH, perAddress: HIGH } });
});
afterAll(() => ts.stop());

describe("filing", () => {
  test("a feature request: 201 {id, number}, pending_approval, the use case kept, feature_request.created", async () => {
    const r = await feature({ title: "Dark mode", useCase: "I read in the evening" });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["id", "number"]);
    expect(r.body.id).toMatch(/^fb_/);
    const item = (await ts.api(`/api/admin/ops/${r.body.id}`)).body;
    expect(item).toMatchObject({ number: r.body.number, type: "feature_request", status: "pending_approval", priority: "medium", title: "Dark mode", useCase: "I read in the evening", source: "intake" });
    expect(item.reportedBy).toMatch(/^client-key:key_.+@keys\.local$/);
    // Pending approval: no connector hears of it until a person approves it (DECISIONS, issue 25).
    expect(await eventCount("feature_request.created")).toBe(0);
  });

  test("a bug, with or without its optional fields; always pending_approval", async () => {
    const full = await bug({ title: "Crash on upload", stepsToReproduce: "Upload a 0-byte file", actualResult: "White page", expectedResult: "An error message" });
    expect(full.status).toBe(201);
    expect((await ts.api(`/api/admin/ops/${full.body.id}`)).body).toMatchObject({ type: "bug", status: "pending_approval", stepsToReproduce: "Upload a 0-byte file", actualResult: "White page", expectedResult: "An error message", useCase: null });
    const bare = await bug({ title: "Typo on the pricing page" });
    expect(bare.status).toBe(201);
    expect(bare.body.number).toBe(full.body.number + 1);
    expect(await eventCount("bug.created")).toBe(0);
  });

  test("fields of the other kind, or of the admin API, are refused by name (VALIDATION)", async () => {
    const before = await itemCount();
    const cases: [typeof bug, unknown, RegExp][] = [
      [feature, { title: "x", stepsToReproduce: "y" }, /stepsToReproduce: is not a field of this body \(known: title, useCase\)/],
      [bug, { title: "x", useCase: "y" }, /useCase: is not a field of this body/],
      [bug, { title: "x", status: "open" }, /status: is not a field/],
      [bug, { title: "x", priority: "high" }, /priority: is not a field/],
      [feature, { title: "x", type: "bug" }, /type: is not a field/],
      [feature, {}, /title: is required/],
      [feature, { useCase: "no title" }, /title: is required/],
      [bug, { title: 42 }, /title: must be a string/],
      [bug, { title: "x".repeat(201) }, /title: /],
      [bug, { title: "line\nbreak" }, /title: one line/],
      [feature, { title: "x", useCase: "\u0007bell" }, /useCase: /],
    ];
    for (const [call, body, detail] of cases) {
      const r = await call(body);
      expect([JSON.stringify(body), r.status, r.body.code]).toEqual([JSON.stringify(body), 400, "VALIDATION"]);
      expect(r.body.detail).toMatch(detail);
    }
    expect(await itemCount()).toBe(before);
  });

  test("hostile bodies: never a 500, always the error shape", async () => {
    const bodies = [
      "",
      "null",
      "[]",
      '"text"',
      "{",
      "\u0000",
      '{"title":null}',
      '{"title":{"$ne":""}}',
      '{"title":["a"]}',
      '{"__proto__":{"polluted":true},"title":"proto"}',
      '{"title":"\\ud800 lone surrogate"}',
      '{"title":"nul \\u0000 inside"}',
      '{"title":"🦄\u202e\ufeff bidi"}',
      '\ufeff{"title":"bom"}',
      "[".repeat(5000) + "]".repeat(5000),
      JSON.stringify({ title: "deep", useCase: JSON.parse('{"a":'.repeat(60) + "1" + "}".repeat(60)) }),
      JSON.stringify({ title: "x", useCase: "y".repeat(20_000) }),
      '{"title":1e400}',
    ];
    for (const rawBody of bodies) {
      for (const type of ["application/json", "text/plain", "application/x-www-form-urlencoded"]) {
        const r = await ts.api("/ops/feature-request", { key: null, headers: { "x-sdk-key": ts.clientKey, "content-type": type }, rawBody });
        const label = `${type} ${rawBody.slice(0, 30)}`;
        expect(r.status, label).toBeLessThan(500);
        if (r.status >= 400) {
          expect(Object.keys(r.body).every((k) => ["error", "code", "detail"].includes(k)), label).toBe(true);
          expect(["BAD_REQUEST", "VALIDATION"], label).toContain(r.body.code);
        }
      }
    }
    // What was accepted is stored well-formed.
    const titles = ((await ts.api("/api/admin/ops?q=lone")).body as { title: string }[]).map((i) => i.title);
    expect(titles).toEqual(["\ufffd lone surrogate"]);
    expect(Object.prototype.hasOwnProperty.call({}, "polluted")).toBe(false);
  });
});

describe("dedupe", () => {
  test("a repeat title of an open item, ignoring case and whitespace: 200 {number, deduped: true}, nothing filed", async () => {
    const first = await feature({ title: "Export to   CSV" });
    expect(first.status).toBe(201);
    const before = await itemCount();
    const events = await eventCount("feature_request.created");
    for (const title of ["export to csv", "  EXPORT TO CSV  ", "Export\tto\ncsv"]) {
      const again = await feature({ title: title.includes("\n") ? "Export \t to csv" : title, useCase: "different use case" });
      expect([title, again.status]).toEqual([title, 200]);
      expect(again.body).toEqual({ number: first.body.number, deduped: true });
    }
    // A bug with the same title repeats it too (dedupe is over the project's open items of any type).
    expect((await bug({ title: "EXPORT TO CSV" })).body).toEqual({ number: first.body.number, deduped: true });
    expect(await itemCount()).toBe(before);
    expect(await eventCount("feature_request.created")).toBe(events);
  });

  test("approved (open) and in-progress items still dedupe; done and rejected ones do not", async () => {
    const first = await feature({ title: "Keyboard shortcuts" });
    const ref = `/api/admin/ops/${first.body.id}`;
    expect((await ts.api(`${ref}/approve`, { method: "POST" })).status).toBe(200);
    expect((await feature({ title: "keyboard shortcuts" })).body).toEqual({ number: first.body.number, deduped: true });
    expect((await ts.api(ref, { method: "PATCH", body: { status: "in_progress" } })).status).toBe(200);
    expect((await feature({ title: "keyboard shortcuts" })).status).toBe(200);
    expect((await ts.api(ref, { method: "PATCH", body: { status: "done" } })).status).toBe(200);
    const second = await feature({ title: "keyboard shortcuts" });
    expect(second.status).toBe(201);
    expect(second.body.number).toBeGreaterThan(first.body.number);
    expect((await ts.api(`/api/admin/ops/${second.body.id}/reject`, { method: "POST" })).status).toBe(200);
    expect((await feature({ title: "Keyboard Shortcuts" })).status).toBe(201);
  });

  test("items filed by people or by svc are never matched: the intake cannot probe for internal titles", async () => {
    // An admin-filed item and a platform (error) item, both open.
    const internal = await ts.api("/api/admin/ops", { body: { type: "bug", title: "Payroll export leaks salaries" } });
    expect(internal.status).toBe(201);
    const error = await ts.api("/api/sdk/v1/errors", { key: null, headers: { "x-sdk-key": ts.serverKey }, body: { errors: [{ message: "ledger out of balance", type: "LedgerError", fingerprint: "intake-probe" }] } });
    expect(error.status).toBe(202);
    const platform = (await ts.api("/api/admin/ops?type=error")).body.find((i: { title: string }) => i.title === "LedgerError: ledger out of balance");
    expect(platform).toBeDefined();
    for (const title of ["payroll export leaks SALARIES", "LedgerError: ledger out of balance"]) {
      const probe = await bug({ title });
      expect([title, probe.status]).toEqual([title, 201]);
      expect(probe.body.number).not.toBe(internal.body.number);
      expect(probe.body.number).not.toBe(platform.number);
      expect(probe.body.deduped).toBeUndefined();
      // A repeat of the public item is deduped against it, as before.
      expect((await bug({ title })).body).toEqual({ number: probe.body.number, deduped: true });
    }
  });

  test("concurrent repeats of a new title file exactly one item; every answer names it", async () => {
    const before = await itemCount();
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => feature({ title: i % 2 ? "Offline mode" : "  offline   MODE " })));
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(39);
    const number = created[0]!.body.number;
    expect(results.every((r) => r.body.number === number)).toBe(true);
    expect(await itemCount()).toBe(before + 1);
  });
});

describe("who may file", () => {
  test("no key: 401; a server or admin key: 403; a revoked key: 401; another project's id: 403", async () => {
    expect((await feature({ title: "x" }, {}, null)).status).toBe(401);
    expect((await feature({ title: "x" }, {}, "sdk_client_doesnotexist")).status).toBe(401);
    for (const key of [ts.serverKey, ts.adminKey]) {
      const r = await feature({ title: "x" }, {}, key);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe("FORBIDDEN");
    }
    // The admin key as a bearer secret is refused the same way.
    expect((await ts.api("/ops/bug", { key: ts.adminKey, body: { title: "x" } })).status).toBe(403);
    const minted = await ts.api("/api/admin/keys", { body: { type: "client", name: "to revoke" } });
    expect((await feature({ title: "Before the revocation" }, {}, minted.body.key)).status).toBe(201);
    expect((await ts.api(`/api/admin/keys/${minted.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await feature({ title: "After the revocation" }, {}, minted.body.key)).status).toBe(401);
    const other = await feature({ title: "x" }, { "x-project-id": "00000000-0000-4000-8000-000000000000" });
    expect(other.status).toBe(403);
  });

  test("a client key without tickets:public_create: 403; a project without publicTicketCreation: 403 until it opts in", async () => {
    const scopeless = await ts.api("/api/admin/keys", { body: { type: "client", name: "no scope", scopes: [] } });
    expect(scopeless.status).toBe(201);
    const r = await feature({ title: "Scopeless" }, {}, scopeless.body.key);
    expect(r.status).toBe(403);
    expect(r.body.detail).toContain("tickets:public_create");

    const closed = await ts.newProject("Closed", { publicTicketCreation: false });
    const refused = await ts.api("/ops/feature-request", { key: null, headers: { "x-sdk-key": closed.clientKey }, body: { title: "Let me in" } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "FORBIDDEN", error: "This project does not take public tickets" });
    expect((await ts.api(`/api/admin/projects/${closed.projectId}`, { method: "PATCH", key: closed.adminKey, body: { publicTicketCreation: true } })).status).toBe(200);
    const accepted = await ts.api("/ops/feature-request", { key: null, headers: { "x-sdk-key": closed.clientKey }, body: { title: "Let me in" } });
    expect(accepted.status).toBe(201);
    expect(accepted.body.number).toBe(1);
    // Filed into the key's own project, never the main one.
    expect((await ts.api(`/api/admin/ops/${accepted.body.id}`, { key: closed.adminKey })).status).toBe(200);
    expect((await ts.api(`/api/admin/ops/${accepted.body.id}`)).status).toBe(404);
  });

  test("a client key reaches nothing but the intake: every admin, SDK and OFREP route refuses it", async () => {
    ts.server.ctx.addAllRoutes!();
    const routes = ((ts.server.app as any).routes as { method: string; path: string }[]).filter((r) => /^\/(api|ofrep)\//.test(r.path));
    expect(routes.length).toBeGreaterThan(50);
    const answered: string[] = [];
    for (const route of routes) {
      const path = route.path.replace(/:projectNumber/, "1").replace(/:[A-Za-z_]+/g, "probe-id").replace(/\*$/, "probe-flag");
      for (const headers of [{ "x-sdk-key": ts.clientKey }, { authorization: `Bearer ${ts.clientKey}` }] as Record<string, string>[]) {
        const res = await fetch(ts.url + path, {
          method: route.method,
          headers: { ...headers, "content-type": "application/json" },
          body: route.method === "GET" || route.method === "HEAD" ? undefined : "{}",
        });
        await res.arrayBuffer();
        if (![401, 403].includes(res.status)) answered.push(`${route.method} ${path} ${Object.keys(headers)[0]}: ${res.status}`);
      }
    }
    expect(answered).toEqual([]);
  });
});

describe("limits", () => {
  test("per key: over the limit 429 {error, code} with Retry-After; another key of the project is unaffected", async () => {
    const s = await startTestServer({ intake: { perKey: { limit: 3, windowMs: 60_000 }, perAddress: HIGH } });
    try {
      const other = (await s.api("/api/admin/keys", { body: { type: "client", name: "second" } })).body.key as string;
      const send = (i: number, key = s.clientKey) => post(s, "/ops/feature-request", { title: `Idea ${i}` }, {}, key);
      for (let i = 0; i < 3; i++) expect((await send(i)).status).toBe(201);
      const limited = await send(3);
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ error: "Too many requests", code: "BAD_REQUEST" });
      const retry = Number(limited.headers.get("retry-after"));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      // Nothing filed by the refused call; the other key files on.
      expect(await itemCount(s)).toBe(3);
      expect((await send(4, other)).status).toBe(201);
      // Concurrent floods stop at the limit exactly.
      const flood = await Promise.all(Array.from({ length: 20 }, (_, i) => send(100 + i, other)));
      expect(flood.filter((r) => r.status === 201)).toHaveLength(2);
      expect(flood.filter((r) => r.status === 429)).toHaveLength(18);
    } finally {
      await s.stop();
    }
  });

  test("per client address (a trusted proxy's X-Forwarded-For counts): 429 across keys, other addresses unaffected", async () => {
    const s = await startTestServer({ intake: { perKey: HIGH, perAddress: { limit: 2, windowMs: 60_000 } }, network: { trustedProxies: ["loopback"] } });
    try {
      const keys = [s.clientKey];
      for (let i = 0; i < 3; i++) keys.push((await s.api("/api/admin/keys", { body: { type: "client", name: `k${i}` } })).body.key);
      const from = (address: string, i: number) => post(s, "/ops/bug", { title: `From ${address} ${i}` }, { "x-forwarded-for": address }, keys[i % keys.length]!);
      expect((await from("203.0.113.7", 0)).status).toBe(201);
      expect((await from("203.0.113.7", 1)).status).toBe(201);
      const third = await from("203.0.113.7", 2);
      expect(third.status).toBe(429);
      expect(third.body).toEqual({ error: "Too many requests", code: "BAD_REQUEST" });
      expect(third.headers.get("retry-after")).toBeTruthy();
      expect((await from("198.51.100.9", 3)).status).toBe(201);
      // The address limit comes before the key: a flood without a valid key is stopped as well.
      const keyless = await s.api("/ops/bug", { key: null, headers: { "x-forwarded-for": "203.0.113.7" }, body: { title: "x" } });
      expect(keyless.status).toBe(429);
    } finally {
      await s.stop();
    }
  });

  test("a body over the intake's limit: 413 {error: \"Body too large\", code: \"BAD_REQUEST\"}, declared or streamed", async () => {
    const s = await startTestServer({ intake: { perKey: HIGH, perAddress: HIGH, maxBodyBytes: 1024 } });
    try {
      const big = { title: "Big", useCase: "u".repeat(2000) };
      const declared = await post(s, "/ops/feature-request", big);
      expect(declared.status).toBe(413);
      expect(declared.body).toEqual({ error: "Body too large", code: "BAD_REQUEST" });
      // Chunked, without Content-Length.
      const bytes = new TextEncoder().encode(JSON.stringify(big));
      const stream = new ReadableStream({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 256) controller.enqueue(bytes.slice(i, i + 256));
          controller.close();
        },
      });
      const res = await fetch(`${s.url}/ops/feature-request`, { method: "POST", headers: { "x-sdk-key": s.clientKey, "content-type": "application/json" }, body: stream });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ error: "Body too large", code: "BAD_REQUEST" });
      // Just under the limit is fine.
      expect((await post(s, "/ops/feature-request", { title: "Small", useCase: "u".repeat(900) })).status).toBe(201);
      // The key is checked before the body: no key, big body → 401.
      expect((await post(s, "/ops/feature-request", big, {}, null)).status).toBe(401);
      expect(await itemCount(s)).toBe(1);
    } finally {
      await s.stop();
    }
  });

  test("the store cannot take the write: 503 {error: \"Unavailable\"} only, with Retry-After; nothing filed", async () => {
    const before = await itemCount();
    let release: () => void;
    if (TEST_ENGINE === "sqlite") {
      // Another process holds the file's write lock past the server's busy budget.
      const other = new Database(join(ts.dataDir, "service.db"));
      other.exec("PRAGMA busy_timeout = 5000");
      other.exec("BEGIN IMMEDIATE");
      release = () => {
        other.exec("ROLLBACK");
        other.close();
      };
    } else {
      // PostgreSQL unreachable: every write fails as a lost connection does.
      const store = ts.store as unknown as { write: unknown };
      const original = store.write;
      store.write = async () => {
        throw Object.assign(new Error("Connection closed"), { code: "ERR_POSTGRES_CONNECTION_CLOSED" });
      };
      release = () => {
        store.write = original;
      };
    }
    let r: Awaited<ReturnType<typeof feature>>;
    try {
      r = await feature({ title: "While the store is locked" });
    } finally {
      release!();
    }
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ error: "Unavailable" });
    expect(r.headers.get("retry-after")).toBeTruthy();
    expect(await itemCount()).toBe(before);
    // And right after, the same filing goes through.
    expect((await feature({ title: "While the store is locked" })).status).toBe(201);
  });
});

describe("CORS", () => {
  const preflight = (origin: string | null, path = "/ops/feature-request") =>
    fetch(`${ts.url}${path}`, { method: "OPTIONS", headers: { ...(origin ? { origin } : {}), "access-control-request-method": "POST", "access-control-request-headers": "content-type,x-sdk-key" } });

  test("only the domain of a project that takes public tickets gets CORS headers, on the preflight and the request", async () => {
    expect((await setProject(ts, { domain: "https://shop.example.com" })).status).toBe(200);
    for (const path of ["/ops/feature-request", "/ops/bug"]) {
      const ok = await preflight("https://shop.example.com", path);
      expect(ok.status).toBe(204);
      expect(ok.headers.get("access-control-allow-origin")).toBe("https://shop.example.com");
      expect(ok.headers.get("access-control-allow-methods")).toContain("POST");
      expect(ok.headers.get("access-control-allow-headers")).toContain("X-SDK-Key");
      expect(ok.headers.get("vary")).toContain("Origin");
      const evil = await preflight("https://evil.example.com", path);
      expect(evil.status).toBe(403);
      expect(evil.headers.get("access-control-allow-origin")).toBeNull();
      expect((await evil.json()).code).toBe("FORBIDDEN");
    }
    // No Origin (not a browser): 204 without CORS headers.
    const plain = await preflight(null);
    expect(plain.status).toBe(204);
    expect(plain.headers.get("access-control-allow-origin")).toBeNull();

    const filed = await feature({ title: "From the shop's page" }, { origin: "https://shop.example.com" });
    expect(filed.status).toBe(201);
    expect(filed.headers.get("access-control-allow-origin")).toBe("https://shop.example.com");
    expect(filed.headers.get("access-control-expose-headers")).toContain("Retry-After");
    // Errors are readable by the page too (a 400 here).
    const invalid = await feature({}, { origin: "https://shop.example.com" });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("access-control-allow-origin")).toBe("https://shop.example.com");

    const refused = await feature({ title: "From elsewhere" }, { origin: "https://evil.example.com" });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    // Admin paths never answer CORS.
    const admin = await ts.api("/api/admin/ops", { headers: { origin: "https://shop.example.com" } });
    expect(admin.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("another project's domain gets CORS headers but its page cannot file with this project's key", async () => {
    const other = await ts.newProject("Blog", { publicTicketCreation: true });
    expect((await ts.api(`/api/admin/projects/${other.projectId}`, { method: "PATCH", key: other.adminKey, body: { domain: "blog.example.org" } })).status).toBe(200);
    // A bare host means https on the default port.
    expect((await preflight("https://blog.example.org")).status).toBe(204);
    expect((await preflight("http://blog.example.org")).status).toBe(403);
    const r = await feature({ title: "Cross-project" }, { origin: "https://blog.example.org" });
    expect(r.status).toBe(403);
    expect(r.body.detail).toContain("not the project's domain");
  });

  test("a project without a domain takes no browser filings; server-side calls (no Origin) still file", async () => {
    expect((await setProject(ts, { domain: "" })).status).toBe(200);
    expect((await preflight("https://shop.example.com")).status).toBe(403);
    const r = await feature({ title: "Browser without a domain" }, { origin: "https://shop.example.com" });
    expect(r.status).toBe(403);
    expect((await feature({ title: "Server-side without a domain" })).status).toBe(201);
  });
});

describe("--edge-only", () => {
  test("serves the intake (and its preflight) and /healthz, nothing else", async () => {
    const edge = await startTestServer({ edgeOnly: true, intake: { perKey: HIGH, perAddress: HIGH } });
    try {
      expect((await setProject(edge, { domain: "https://app.example.com" })).status).toBe(404);
      await edge.server.ctx.services.projects.update(edge.projectId, { domain: "https://app.example.com" }, { email: "test@example.com", type: "user" });
      const r = await post(edge, "/ops/feature-request", { title: "Filed at the edge" }, { origin: "https://app.example.com" });
      expect(r.status).toBe(201);
      expect(r.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
      expect((await post(edge, "/ops/bug", { title: "A bug at the edge" })).status).toBe(201);
      const item = await edge.server.ctx.services.ops.get(edge.projectId, String(r.body.number));
      expect(item.status).toBe("pending_approval");
      const pre = await fetch(`${edge.url}/ops/bug`, { method: "OPTIONS", headers: { origin: "https://app.example.com" } });
      expect(pre.status).toBe(204);
      for (const path of ["/api/admin/ops", "/api/sdk/v1/snapshot", "/", "/ops"]) {
        const other = await edge.api(path, { key: edge.adminKey });
        expect([path, other.status]).toEqual([path, 404]);
      }
      expect((await edge.api("/healthz", { key: null })).status).toBe(200);
    } finally {
      await edge.stop();
    }
  });
});

describe.skipIf(!chromiumAvailable)("a real browser on the project's domain", () => {
  let site: Server<unknown>;
  let elsewhere: Server<unknown>;
  let context: BrowserContext;
  const pageServer = () =>
    Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("<!doctype html><title>shop</title><p>shop</p>", { headers: { "content-type": "text/html" } }) });

  beforeAll(async () => {
    site = pageServer();
    elsewhere = pageServer();
    expect((await setProject(ts, { domain: `http://127.0.0.1:${site.port}` })).status).toBe(200);
    context = await newBrowserContext();
  });
  afterAll(async () => {
    await context?.close();
    site?.stop(true);
    elsewhere?.stop(true);
  });

  const fileFrom = async (origin: string, title: string) => {
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    const result = await page.evaluate(
      async ({ url, key, title }) => {
        try {
          const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", "X-SDK-Key": key }, body: JSON.stringify({ title, useCase: "From a page" }) });
          return { ok: true as const, status: res.status, body: await res.json() };
        } catch (err) {
          return { ok: false as const, error: String(err) };
        }
      },
      { url: `${ts.url}/ops/feature-request`, key: ts.clientKey, title },
    );
    await page.close();
    return result;
  };

  test("a feature request sent from a page of the domain lands as pending_approval; another origin is blocked", async () => {
    const ok = await fileFrom(`http://127.0.0.1:${site.port}`, "Sent from the shop in a browser");
    expect(ok).toMatchObject({ ok: true, status: 201 });
    if (!ok.ok) return;
    expect((await ts.api(`/api/admin/ops/${ok.body.id}`)).body).toMatchObject({ status: "pending_approval", useCase: "From a page", source: "intake" });
    // A repeat from the page reads its dedupe answer.
    expect(await fileFrom(`http://127.0.0.1:${site.port}`, "sent from the SHOP in a browser")).toMatchObject({ ok: true, status: 200, body: { number: ok.body.number, deduped: true } });

    const before = await itemCount();
    const blocked = await fileFrom(`http://127.0.0.1:${elsewhere.port}`, "Sent from elsewhere");
    expect(blocked.ok).toBe(false);
    expect(await itemCount()).toBe(before);
  });
});
