import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { Elysia } from "elysia";
import { buildApp, closeServices, createContext } from "../src/app";
import { LruCache } from "../src/lib/lru";
import type { Logger } from "../src/lib/log";
import { SqliteStore, openStore, parseStoreTarget } from "../src/lib/store";
import { storeMigrations } from "../src/modules";
import { TEST_ENGINE, dropStore, freshStoreUrl, startTestServer, tempDir, type TestServer } from "./helpers";
import { Browser, MailCapture, testClock } from "./browser";

/**
 * One test (or more) per finding of the security review of issue 8 that
 * lives in no module's own test file; each fails on the code as it was
 * reviewed. The findings covered elsewhere: roles (identity.test.ts
 * "roles are enforced…", "only a signed-in owner manages people…"), SMTP
 * (mail.test.ts), OIDC (identity.test.ts "OIDC sign-in"), the CLI's
 * credentials (cli tests), the refresh rotation (device.test.ts), the busy
 * store and the two-process tests (concurrency.test.ts).
 */

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** A browser that reaches the server under another Host name (DNS pointing at us, or a forged header). */
async function browserAt(ts: TestServer, host: string): Promise<Browser> {
  const b = new Browser(ts.url, `http://${host}`);
  await b.get("/signin", { host });
  return b;
}

describe("#1 links and CSRF follow our own host names, never the request's Host", () => {
  let ts: TestServer;
  const mails = new MailCapture();
  beforeAll(async () => {
    ts = await startTestServer({ signIn: { mailer: mails } });
  });
  afterAll(() => ts.stop());

  test("a sign-in form posted with Host: evil.example mails nothing and answers 400", async () => {
    const b = new Browser(ts.url, "http://evil.example");
    await b.get("/signin");
    const before = mails.sent.length;
    const res = await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf }, { host: "evil.example" });
    expect(res.status).toBe(400);
    expect(mails.sent.length).toBe(before);
    expect(await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM sign_in_links WHERE email = 'owner@example.com'")).toEqual({ n: 0 });
    // The sign-in pages themselves do not answer to a foreign Host either (DNS rebinding).
    expect((await b.get("/signin", { host: "evil.example" })).status).toBe(400);
  });

  test("the CSRF check does not accept an Origin just because it equals the Host header", async () => {
    const b = new Browser(ts.url, "http://evil.example:1234");
    await b.get("/signin");
    const res = await b.postJson("/auth/magic-link", { email: "owner@example.com" }, { "x-csrf-token": b.csrf, host: "evil.example:1234" });
    expect([400, 403]).toContain(res.status);
    // Our own host with a foreign Origin: 403.
    const own = new Browser(ts.url, "http://evil.example");
    await own.get("/signin");
    const foreign = await own.postJson("/auth/magic-link", { email: "owner@example.com" }, { "x-csrf-token": own.csrf });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toBe("Cross-site request refused");
    expect(mails.sent.filter((m) => m.to === "owner@example.com")).toHaveLength(0);
  });

  test("on our own host names (127.0.0.1, localhost) links point there; device codes too", async () => {
    const port = new URL(ts.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const b = new Browser(ts.url, `http://${host}`);
      await b.get("/signin", { host });
      const sent = await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf }, { host });
      expect(sent.status).toBe(200);
      expect(mails.lastTo("owner@example.com")!.url.startsWith(`http://${host}/auth/magic?token=`)).toBe(true);
    }
    const code = await ts.api("/auth/device/code", { key: null, headers: { host: "evil.example" }, body: { code_challenge: "x".repeat(43), code_challenge_method: "S256" } });
    expect(code.status).toBe(400);
    expect(code.text).not.toContain("evil.example/device");
    // The admin API does not care about Host: keys, not cookies or links, decide there.
    expect((await ts.api("/api/admin/projects/current", { headers: { host: "evil.example" } })).status).toBe(200);
  });

  test("SERVICE_PUBLIC_URL fixes every link whatever the Host, and is the only foreign origin CSRF accepts", async () => {
    const own = new MailCapture();
    const pub = await startTestServer({ signIn: { mailer: own }, network: { publicUrl: "https://flags.example.com" } });
    try {
      const b = new Browser(pub.url, "http://evil.example");
      await b.get("/signin", { host: "evil.example" });
      const forged = await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf }, { host: "evil.example" });
      expect(forged.status).toBe(403);
      b.origin = "https://flags.example.com";
      const ok = await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf }, { host: "evil.example" });
      expect(ok.status).toBe(200);
      expect(own.lastTo("owner@example.com")!.url.startsWith("https://flags.example.com/auth/magic?token=")).toBe(true);
    } finally {
      await pub.stop();
    }
  });

  test("SERVICE_ALLOWED_HOSTS adds names browsers may use; links then use that name", async () => {
    const own = new MailCapture();
    const allowed = await startTestServer({ signIn: { mailer: own }, network: { allowedHosts: ["flags.internal"] } });
    try {
      const port = new URL(allowed.url).port;
      const b = await browserAt(allowed, `flags.internal:${port}`);
      const sent = await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf }, { host: `flags.internal:${port}` });
      expect(sent.status).toBe(200);
      expect(own.lastTo("owner@example.com")!.url.startsWith(`http://flags.internal:${port}/auth/magic?token=`)).toBe(true);
      expect((await b.get("/signin", { host: `other.internal:${port}` })).status).toBe(400);
    } finally {
      await allowed.stop();
    }
  });
});

describe("#2 a leaked API token cannot make itself permanent", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
  });
  afterAll(() => ts.stop());

  test("a read-write token mints no SDK key of any type, and no token", async () => {
    const token = (await ts.api("/api/admin/tokens", { body: { name: "ci", access: "read-write" } })).body.token;
    const before = (await ts.api("/api/admin/keys")).body.length;
    for (const type of ["admin", "server", "client"]) {
      const r = await ts.api("/api/admin/keys", { key: token, body: { type } });
      expect(r.status, type).toBe(403);
      expect(r.body.code).toBe("FORBIDDEN");
      expect(r.text).not.toContain("sdk_");
    }
    expect((await ts.api("/api/admin/keys")).body.length).toBe(before);
    expect(await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM sdk_keys WHERE type = 'admin' AND revoked_at IS NULL")).toEqual({ n: 1 });
    expect((await ts.api("/api/admin/tokens", { key: token, body: { name: "escalate", access: "read-write" } })).status).toBe(403);
    // Nor can it revoke the keys people rely on.
    const keyId = (await ts.api("/api/admin/keys")).body[0].id;
    expect((await ts.api(`/api/admin/keys/${keyId}`, { method: "DELETE", key: token })).status).toBe(403);
  });
});

describe("#5 validating a config value never holds the write lock, and its cost is bounded", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
  });
  afterAll(() => ts.stop());

  test("uniqueItems over 10,000 objects validates in well under a second; 30,000 items are refused at once", async () => {
    const created = await ts.api("/api/admin/configs", { body: { name: "unique-objects", schema: { type: "array", uniqueItems: true, items: { type: "object" } }, value: [] } });
    expect(created.status).toBe(201);
    // About 200 KB: under the 256 KB value limit.
    const many = Array.from({ length: 10_000 }, (_, i) => ({ id: i, t: [i] }));
    let started = performance.now();
    const ok = await ts.api("/api/admin/configs/unique-objects", { method: "PATCH", body: { prod: many } });
    const okMs = performance.now() - started;
    expect(ok.status).toBe(200);
    expect(okMs).toBeLessThan(1000);

    const duplicate = [...many.slice(0, 5000), { t: [7], id: 7 }];
    const dup = await ts.api("/api/admin/configs/unique-objects", { method: "PATCH", body: { prod: duplicate } });
    expect(dup.status).toBe(400);
    expect(dup.body.detail).toContain("duplicate items (items ## 7 and 5000");

    const huge = Array.from({ length: 30_000 }, (_, i) => ({ i }));
    started = performance.now();
    const refused = await ts.api("/api/admin/configs/unique-objects", { method: "PATCH", body: { prod: huge } });
    expect(performance.now() - started).toBeLessThan(500);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("VALIDATION");
    expect(refused.body.detail).toContain("at most 10000");
    expect((await ts.api("/api/admin/configs/unique-objects")).body.envs.prod.version).toBe(2);
  });

  // Holds SQLite's file-wide write lock from another connection: PostgreSQL has no such lock (multi-server tests its unavailability).
  test.skipIf(TEST_ENGINE === "postgres")("a value is validated before the write transaction: with the write lock held elsewhere, a bad value still gets VALIDATION", async () => {
    const created = await ts.api("/api/admin/configs", { body: { name: "limits", schema: { type: "object", properties: { n: { type: "integer" } } }, value: { n: 1 } } });
    expect(created.status, created.text).toBe(201);
    const other = new SqliteStore(join(ts.dataDir, "service.db"));
    try {
      other.database.exec("PRAGMA busy_timeout = 5000");
      other.database.exec("BEGIN IMMEDIATE");
      const bad = await ts.api("/api/admin/configs/limits", { method: "PATCH", body: { prod: { n: "x" } } });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe("VALIDATION");
      // A valid one cannot commit while the lock is held: 503, quickly, and nothing changes.
      const started = performance.now();
      const busy = await ts.api("/api/admin/configs/limits", { method: "PATCH", body: { prod: { n: 2 } } });
      expect(performance.now() - started).toBeLessThan(1500);
      expect(busy.status).toBe(503);
      expect(busy.body).toEqual({ error: "Unavailable" });
      expect(busy.headers.get("retry-after")).toBe("1");
    } finally {
      other.database.exec("ROLLBACK");
      await other.close();
    }
    expect((await ts.api("/api/admin/configs/limits")).body.envs.prod).toMatchObject({ value: { n: 1 }, version: 1 });
    expect((await ts.api("/api/admin/configs/limits", { method: "PATCH", body: { prod: { n: 2 } } })).status).toBe(200);
  });

  test("OpenAPI documents the value limits", async () => {
    const doc = (await ts.api("/openapi/json", { key: null })).body;
    const patch = JSON.stringify(doc.paths["/api/admin/configs/{id}"].patch);
    expect(patch).toContain("10000 items");
    expect(patch).toContain("262144 bytes");
  });
});

describe("#9 one deeply nested body cannot stall the server", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
  });
  afterAll(() => ts.stop());

  test("100,000 nested [ on POST /api/admin/keys: 400 BAD_REQUEST in milliseconds; other requests are not held up", async () => {
    const before = (await ts.api("/api/admin/keys")).body.length;
    const body = "[".repeat(100_000) + "]".repeat(100_000);
    const health = (async () => {
      const times: number[] = [];
      for (let i = 0; i < 10; i++) {
        const t = performance.now();
        await fetch(`${ts.url}/healthz`);
        times.push(performance.now() - t);
      }
      return Math.max(...times);
    })();
    const started = performance.now();
    const r = await ts.api("/api/admin/keys", { rawBody: body });
    expect(performance.now() - started).toBeLessThan(300);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: "Body nested too deeply", code: "BAD_REQUEST", detail: "body: at most 64 levels of arrays/objects" });
    expect(await health).toBeLessThan(300);
    expect((await ts.api("/api/admin/keys")).body.length).toBe(before);
    // Just under the limit is parsed as usual (and refused as the wrong shape, not as too deep).
    const ok = await ts.api("/api/admin/keys", { rawBody: `{"type":"server","name":"n","scopes":${"[".repeat(62)}${"]".repeat(62)}}` });
    expect(ok.status).toBe(400);
    expect(ok.body.code).toBe("VALIDATION");
    // Brackets inside strings do not count.
    const inString = await ts.api("/api/admin/keys", { body: { type: "server", name: "[".repeat(150) } });
    expect(inString.status).toBe(201);
  });

  test("the same limit holds on SDK paths (OFREP) and for chunked bodies", async () => {
    const deep = `{"context":${"[".repeat(70)}${"]".repeat(70)}}`;
    const ofrep = await fetch(`${ts.url}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-sdk-key": ts.serverKey, "content-type": "application/json" }, body: deep });
    expect(ofrep.status).toBe(400);
    expect((await ofrep.json()).error).toBe("Body nested too deeply");
    const chunked = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode("[".repeat(50_000)));
        c.enqueue(new TextEncoder().encode("]".repeat(50_000)));
        c.close();
      },
    });
    const r = await fetch(`${ts.url}/api/admin/keys`, { method: "POST", headers: { authorization: `Bearer ${ts.adminKey}`, "content-type": "application/json" }, body: chunked, duplex: "half" } as RequestInit);
    expect(r.status).toBe(400);
    expect((await r.json()).error).toBe("Body nested too deeply");
  });
});

describe("#10 forwarded headers count only from trusted proxies", () => {
  const fields = (b: Browser) => ({ email: "nobody@example.com", csrf: b.csrf });
  const limits = { magicLinkPerIp: { limit: 3, windowMs: 60_000 }, magicLinkPerEmail: { limit: 1000, windowMs: 60_000 } };

  test("behind a trusted proxy each client has its own rate-limit bucket, keyed on X-Forwarded-For", async () => {
    const ts = await startTestServer({ signIn: { mailer: new MailCapture(), rateLimits: limits }, network: { trustedProxies: ["loopback"] } });
    try {
      const b = new Browser(ts.url);
      await b.get("/signin");
      for (let i = 0; i < 3; i++) expect((await b.postForm("/auth/magic-link", fields(b), { "x-forwarded-for": "203.0.113.1" })).status).toBe(200);
      expect((await b.postForm("/auth/magic-link", fields(b), { "x-forwarded-for": "203.0.113.1" })).status).toBe(429);
      // Another client behind the same proxy is not punished for the first one.
      expect((await b.postForm("/auth/magic-link", fields(b), { "x-forwarded-for": "203.0.113.2" })).status).toBe(200);
      // A client cannot escape its bucket by prepending addresses: the nearest untrusted hop counts.
      expect((await b.postForm("/auth/magic-link", fields(b), { "x-forwarded-for": "198.51.100.9, 203.0.113.1" })).status).toBe(429);
    } finally {
      await ts.stop();
    }
  });

  test("without trusted proxies X-Forwarded-For is ignored: a client cannot pick a fresh bucket per request", async () => {
    const ts = await startTestServer({ signIn: { mailer: new MailCapture(), rateLimits: limits } });
    try {
      const b = new Browser(ts.url);
      await b.get("/signin");
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await b.postForm("/auth/magic-link", fields(b), { "x-forwarded-for": `203.0.113.${10 + i}` })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await ts.stop();
    }
  });
});

describe("should-fix findings", () => {
  // A byte copy of the SQLite file; on PostgreSQL the epoch follows the database's oid (a restored dump is another database).
  test.skipIf(TEST_ENGINE === "postgres")("ETags carry a per-database epoch: a copied database never answers 304 to a tag of the original", async () => {
    const ts = await startTestServer();
    let copyDir = "";
    try {
      const first = await fetch(`${ts.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": ts.serverKey } });
      const etag = first.headers.get("etag")!;
      const revision = (await first.json()).revision;
      copyDir = tempDir();
      // A byte copy of the file (as `cp` makes it), taken while the server runs: the same revisions and keys.
      (ts.server.store as SqliteStore).database.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      copyFileSync(join(ts.dataDir, "service.db"), join(copyDir, "service.db"));
      const copy = await startTestServer({ dataDir: copyDir });
      try {
        const again = await fetch(`${copy.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": ts.serverKey, "if-none-match": etag } });
        expect(again.status).toBe(200);
        const body = await again.json();
        expect(body.revision).toBe(revision);
        expect(again.headers.get("etag")).not.toBe(etag);
        expect(etag.endsWith(`-${ts.projectId}-prod-${revision}"`)).toBe(true);
      } finally {
        await copy.stop();
      }
      // The original keeps its epoch across restarts of the same file.
      const same = await fetch(`${ts.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": ts.serverKey, "if-none-match": etag } });
      expect(same.status).toBe(304);
    } finally {
      await ts.stop();
    }
  });

  test("errors are mapped by type: an unexpected error mentioning 'payload' is a logged 500 with its request id, not a silent 413", async () => {
    const dir = tempDir();
    const url = await freshStoreUrl();
    const store = await openStore(parseStoreTarget(url, dir), { migrations: storeMigrations() });
    const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
    const log: Logger = {
      info: (msg, fields) => lines.push({ level: "info", msg, fields }),
      warn: (msg, fields) => lines.push({ level: "warn", msg, fields }),
      error: (msg, fields) => lines.push({ level: "error", msg, fields }),
      request: () => {},
      requests: false,
    };
    const ctx = createContext(store, log, { maxBodyBytes: 1024 });
    const app = buildApp(ctx).use(
      new Elysia().get("/api/test/boom", () => {
        throw new Error("request payload too large for the widget");
      }),
    );
    try {
      const res = await app.handle(new Request("http://localhost/api/test/boom", { headers: { "x-request-id": "req-boom-1" } }));
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: "Internal error", code: "INTERNAL", detail: "request id req-boom-1" });
      const logged = lines.find((l) => l.msg === "unexpected error");
      expect(logged?.level).toBe("error");
      expect(logged?.fields).toMatchObject({ requestId: "req-boom-1", path: "/api/test/boom", error: "request payload too large for the widget" });
    } finally {
      await closeServices(ctx.services);
      await store.close();
      await dropStore(url);
    }
  });

  // File modes of SQLite's files and of `svc backup` (SQLite only); PostgreSQL keeps its data in its own cluster.
  test.skipIf(TEST_ENGINE === "postgres")("the database, its WAL and a backup are created 0600 whatever the umask", async () => {
    const previous = process.umask(0o022);
    try {
      const ts = await startTestServer();
      try {
        await ts.api("/api/admin/killswitches", { body: { name: "modes" } });
        for (const file of readdirSync(ts.dataDir).filter((f) => f.startsWith("service.db"))) {
          expect(statSync(join(ts.dataDir, file)).mode & 0o777, file).toBe(0o600);
        }
        expect(statSync(ts.dataDir).mode & 0o077).toBe(0);
        const out = join(tempDir(), "backup.db");
        const proc = Bun.spawnSync([process.execPath, "src/main.ts", "backup", "--data", ts.dataDir, "--out", out], { cwd: join(import.meta.dir, "..") });
        expect(proc.exitCode).toBe(0);
        expect(statSync(out).mode & 0o777).toBe(0o600);
        const copy = new Database(out, { readonly: true });
        expect(copy.query("SELECT COUNT(*) AS n FROM killswitches").get()).toEqual({ n: 1 });
        copy.close();
      } finally {
        await ts.stop();
      }
    } finally {
      process.umask(previous);
    }
  });

  test("the SDK key cache forgets the least recently used entry, not everything at 10,000", async () => {
    const ts = await startTestServer();
    try {
      const { keys } = ts.server.ctx.services;
      const cache = (keys as unknown as { resolved: LruCache<string, unknown> }).resolved;
      // What the SDK paths do: memory first, the store when memory has no answer.
      const resolveSecret = async (secret: string) => {
        const cached = keys.cached(secret);
        return cached !== undefined ? cached : keys.resolve(secret);
      };
      expect((await resolveSecret(ts.serverKey))?.type).toBe("server");
      for (let i = 0; i < 12_000; i++) {
        await resolveSecret(`sdk_server_unknown${i}`);
        // The real key keeps being used while the flood goes on.
        if (i % 1000 === 0) await resolveSecret(ts.serverKey);
      }
      expect(cache.size).toBeLessThanOrEqual(10_000);
      expect(cache.get(sha256(ts.serverKey))).toBeDefined();
      // The oldest unknown ones went first.
      expect(cache.get(sha256("sdk_server_unknown1"))).toBeUndefined();
      expect(cache.get(sha256("sdk_server_unknown11999"))).toBeDefined();
    } finally {
      await ts.stop();
    }
    const lru = new LruCache<string, number>(2);
    lru.set("a", 1);
    lru.set("b", 2);
    lru.get("a");
    lru.set("c", 3);
    expect([lru.get("a"), lru.get("b"), lru.get("c")]).toEqual([1, undefined, 3]);
  });

  test("expired sessions, sign-in links, pending logins, device codes and tokens are removed by the cleanup job", async () => {
    const clock = testClock();
    const mails = new MailCapture();
    const ts = await startTestServer({ signIn: { mailer: mails, now: clock.now }, cleanupEveryMs: 100 });
    try {
      const count = async (table: string) => (await ts.store.one<{ n: number }>(`SELECT CAST(COUNT(*) AS INTEGER) AS n FROM ${table}`))!.n;
      const b = new Browser(ts.url);
      await b.get("/signin");
      await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf });
      const token = new URL(mails.lastTo("owner@example.com")!.url).searchParams.get("token")!;
      await b.postForm("/auth/magic", { token, csrf: b.csrf });
      const access = await ts.accessTokenFor("owner@example.com");
      expect(await count("sessions")).toBe(1);
      // The magic link, and the first-run setup link the empty server printed before the test made its project.
      expect(await count("sign_in_links")).toBe(2);
      expect(await count("device_codes")).toBe(1);
      expect(await count("device_tokens")).toBe(2);

      // 91 days later everything above has expired (the sign-in's 90 days included).
      clock.advance(91 * 24 * 3600_000);
      const left = async () => (await count("device_tokens")) + (await count("sessions")) + (await count("sign_in_links")) + (await count("device_codes"));
      for (let i = 0; i < 50 && (await left()) > 0; i++) await Bun.sleep(50);
      expect([await count("sessions"), await count("sign_in_links"), await count("device_codes"), await count("device_tokens"), await count("token_families")]).toEqual([
        0, 0, 0, 0, 0,
      ]);
      expect((await ts.api("/api/admin/projects/current", { key: access })).status).toBe(401);
      // A fresh sign-in made after the cleanup is kept.
      await ts.accessTokenFor("owner@example.com");
      await Bun.sleep(300);
      expect(await count("device_tokens")).toBe(2);
    } finally {
      await ts.stop();
    }
  });

  test("services log through the injected logger, never console", () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        // A module's cli.ts is its CLI noun (and cli-*.ts, *-cli.ts its parts): printing to the terminal is what it is for, not logging.
        else if (path.endsWith(".ts") && !/^(cli|cli-[a-z-]+|[a-z-]+-cli)\.ts$/.test(entry.name) && /console\.(log|error|warn|info)|process\.stderr\.write/.test(readFileSync(path, "utf8"))) offenders.push(path);
      }
    };
    walk(join(import.meta.dir, "../src/modules"));
    walk(join(import.meta.dir, "../src/lib"));
    expect(offenders.filter((p) => !p.endsWith("lib/log.ts"))).toEqual([]);
  });
});
