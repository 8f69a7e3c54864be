import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { DEFAULT_SERVER_URL } from "../src/cli/client";
import { startTestServer, tempDir, type TestServer } from "./helpers";
import { Browser, fieldValue } from "./browser";
import { SVC_SOURCE, freshStoreArgs, run, startServe } from "./cli/process";

/**
 * Issue 9, the server side of a new user's first day: each defect the trial
 * run hit, and the onboarding path (setup → keys → first calls) on one host
 * name. The CLI's nouns and the SDK package have their own tests.
 */

describe("a taken port", () => {
  test("a second `svc serve` on a port in use fails with one clear line and exit 1; the first keeps serving its own data", async () => {
    const firstDir = tempDir();
    const secondDir = tempDir();
    // The first server on the run's engine; the second one never gets as far as serving, its data dir's file is enough.
    const store = await freshStoreArgs();
    const first = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", firstDir, ...store.args, "--no-request-log"]);
    try {
      const init = await run([...SVC_SOURCE, "init", "--data", firstDir, ...store.args, "--json"]);
      expect(init.code, init.stderr).toBe(0);
      const { adminKey } = JSON.parse(init.stdout);
      const second = await run([...SVC_SOURCE, "serve", "--port", String(first.port), "--host", "127.0.0.1", "--data", secondDir, "--no-request-log"], { timeoutMs: 15_000 });
      expect(second.code).toBe(1);
      expect(second.stderr.trim().split("\n")).toHaveLength(1);
      expect(second.stderr).toContain("address already in use");
      expect(second.stderr).toContain(String(first.port));
      expect(second.stdout).not.toContain("listening on");
      // Every request still reaches the first server's database: none was split off to the second.
      for (let i = 0; i < 20; i++) {
        const r = await fetch(`${first.url}/api/admin/projects/current`, { headers: { authorization: `Bearer ${adminKey}` } });
        expect(r.status).toBe(200);
      }
    } finally {
      await first.stop();
      await store.drop();
      rmSync(firstDir, { recursive: true, force: true });
      rmSync(secondDir, { recursive: true, force: true });
    }
  });
});

describe("request bodies", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
    await ts.api("/api/admin/killswitches", { body: { name: "checkout" } });
    await ts.api("/api/admin/configs", { body: { name: "limits", schema: { type: "object" }, value: { perMinute: 60 } } });
  });
  afterAll(() => ts.stop());

  test("an unknown field is refused with VALIDATION naming it, on every route that takes a body, and nothing changes", async () => {
    const project = { "x-project-id": ts.projectId };
    const cases: { method: string; path: string; body: Record<string, unknown>; headers?: Record<string, string> }[] = [
      { method: "POST", path: "/api/admin/killswitches", body: { name: "k2", enabled: true } },
      { method: "POST", path: "/api/admin/killswitches/checkout/toggle", body: { env: "prod", enabled: true } },
      { method: "PUT", path: "/api/admin/killswitches/checkout/switch", body: { env: "prod", switchKey: "eu", value: true, enabled: true } },
      { method: "PUT", path: "/api/admin/killswitches/checkout/value", body: { env: "prod", value: true, enabled: true } },
      { method: "POST", path: "/api/admin/killswitches/checkout/rollback", body: { env: "prod", version: 1, enabled: true } },
      { method: "POST", path: "/api/admin/configs", body: { name: "c2", schema: true, value: 1, enabled: true } },
      { method: "PATCH", path: "/api/admin/configs/limits", body: { value: { perMinute: 1 }, enabled: true } },
      { method: "PUT", path: "/api/admin/configs/limits/drafts", body: { env: "prod", value: {}, enabled: true }, headers: project },
      { method: "POST", path: "/api/admin/configs/limits/publish", body: { env: "prod", enabled: true }, headers: project },
      { method: "POST", path: "/api/admin/keys", body: { type: "server", enabled: true } },
      { method: "POST", path: "/api/admin/tokens", body: { name: "ci", access: "read-only", enabled: true } },
      { method: "PATCH", path: `/api/admin/projects/${ts.projectId}`, body: { name: "Renamed", enabled: true } },
      { method: "POST", path: "/api/admin/projects", body: { name: "New", enabled: true } },
    ];
    const before = {
      killswitch: (await ts.api("/api/admin/killswitches/checkout")).body,
      config: (await ts.api("/api/admin/configs/limits")).body,
      keys: (await ts.api("/api/admin/keys")).body.length,
      tokens: (await ts.api("/api/admin/tokens")).body.length,
      project: (await ts.api("/api/admin/projects/current")).body,
    };
    const owner = await ts.accessTokenFor("owner@example.com");
    for (const c of cases) {
      const key = c.path === "/api/admin/projects" ? owner : undefined;
      const r = await ts.api(c.path, { method: c.method, body: c.body, headers: c.headers, key });
      expect(r.status, `${c.method} ${c.path}`).toBe(400);
      expect(r.body.code, `${c.method} ${c.path}`).toBe("VALIDATION");
      expect(r.body.detail, `${c.method} ${c.path}`).toContain("enabled: is not a field of this body");
    }
    // Nested objects too.
    const nested = await ts.api(`/api/admin/projects/${ts.projectId}`, { method: "PATCH", body: { analysis: { method: "bayesian", confidence: 0.9 } } });
    expect(nested.status).toBe(400);
    expect(nested.body.detail).toContain("analysis.confidence: is not a field of this body");
    const people = await ts.api("/api/admin/invites", { key: owner, body: { email: "x@example.com", admin: true } });
    expect(people.body.detail).toContain("admin: is not a field of this body");

    expect((await ts.api("/api/admin/killswitches/k2")).status).toBe(404);
    expect((await ts.api("/api/admin/killswitches/checkout")).body).toEqual(before.killswitch);
    expect((await ts.api("/api/admin/configs/limits")).body).toEqual(before.config);
    expect((await ts.api("/api/admin/keys")).body.length).toBe(before.keys);
    expect((await ts.api("/api/admin/tokens")).body.length).toBe(before.tokens);
    expect((await ts.api("/api/admin/projects/current")).body).toEqual(before.project);
    expect((await ts.api("/api/admin/projects", { key: owner })).body).toHaveLength(1);
  });

  test("query strings keep parameters no route names (cache busters, a provider's iss)", async () => {
    expect((await ts.api("/api/admin/killswitches?q=check&_=123")).status).toBe(200);
    expect((await ts.api("/api/sdk/v1/snapshot?env=prod&cb=1", { key: null, headers: { "x-sdk-key": ts.serverKey } })).status).toBe(200);
  });
});

describe("messages and guard rails", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
  });
  afterAll(() => ts.stop());

  test("PATCH /api/admin/projects/current works like the GET; another id says the path takes the caller's project", async () => {
    const r = await ts.api("/api/admin/projects/current", { method: "PATCH", body: { timezone: "Europe/Berlin" } });
    expect(r.status).toBe(200);
    expect(r.body.timezone).toBe("Europe/Berlin");
    const other = await ts.newProject("Other");
    const wrong = await ts.api(`/api/admin/projects/${other.projectId}`, { method: "PATCH", body: { timezone: "UTC" } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.detail).toContain("use its id or `current`");
  });

  test("an admin key cannot revoke itself without ?force=true, and says so", async () => {
    const me = (await ts.api("/api/admin/keys")).body.find((k: any) => k.type === "admin");
    const refused = await ts.api(`/api/admin/keys/${me.id}`, { method: "DELETE" });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain("?force=true");
    expect((await ts.api("/api/admin/projects/current")).status).toBe(200);
    // Another admin key may revoke it; with force it may revoke itself.
    const spare = (await ts.api("/api/admin/keys", { body: { type: "admin", name: "spare" } })).body;
    const forced = await ts.api(`/api/admin/keys/${spare.id}?force=true`, { method: "DELETE", key: spare.key });
    expect(forced.status).toBe(204);
    expect((await ts.api("/api/admin/projects/current", { key: spare.key })).status).toBe(401);
  });

  test("key messages read correctly: an admin key, a server key", async () => {
    const r = await ts.api("/api/sdk/v1/snapshot?env=prod", { key: null, headers: { "x-sdk-key": ts.adminKey } });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe("This path takes a server key, not an admin key");
  });
});

describe("projects", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
  });
  afterAll(() => ts.stop());

  test("people create projects in their organisation; viewers, keys and tokens cannot", async () => {
    const owner = await ts.accessTokenFor("owner@example.com");
    const created = await ts.api("/api/admin/projects", { key: owner, body: { name: "Checkout service" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "Checkout service", organisationId: ts.organisationId, ownerEmail: "owner@example.com", plan: "pro" });
    const id = created.body.id;
    // It is reachable at once, and its keys are minted with X-Project-Id.
    expect((await ts.api("/api/admin/projects", { key: owner })).body.map((p: any) => p.name)).toEqual(["Checkout service", "Main project"]);
    const key = await ts.api("/api/admin/keys", { key: owner, headers: { "x-project-id": id }, body: { type: "server" } });
    expect(key.status).toBe(201);
    expect((await ts.api("/api/sdk/v1/snapshot?env=prod", { key: null, headers: { "x-sdk-key": key.body.key } })).body.projectId).toBe(id);

    await ts.addMember("editor@example.com", "editor");
    await ts.addMember("viewer@example.com", "viewer");
    const editor = await ts.accessTokenFor("editor@example.com");
    expect((await ts.api("/api/admin/projects", { key: editor, body: { name: "By an editor" } })).status).toBe(201);
    const viewer = await ts.accessTokenFor("viewer@example.com");
    expect((await ts.api("/api/admin/projects", { key: viewer, body: { name: "By a viewer" } })).status).toBe(403);
    expect((await ts.api("/api/admin/projects", { body: { name: "By a key" } })).status).toBe(403);
    const token = (await ts.api("/api/admin/tokens", { body: { name: "ci", access: "read-write" } })).body.token;
    expect((await ts.api("/api/admin/projects", { key: token, body: { name: "By a token" } })).status).toBe(403);
    // Another organisation is out of reach.
    const other = await ts.newProject("Elsewhere");
    const foreign = await ts.api("/api/admin/projects", { key: editor, body: { name: "Intruder", organisationId: other.organisationId } });
    expect(foreign.status).toBe(403);
    const names = (await ts.store.all<{ name: string }>("SELECT name FROM projects")).map((p) => p.name);
    expect(names).toContain("Checkout service");
    expect(names).not.toContain("By a viewer");
    expect(names).not.toContain("Intruder");
    // A key lists its one project.
    expect((await ts.api("/api/admin/projects")).body.map((p: any) => p.id)).toEqual([ts.projectId]);
  });

  test("`svc init --organisation` adds a project with its three keys to an existing organisation", async () => {
    const dir = tempDir();
    const store = await freshStoreArgs();
    try {
      const first = JSON.parse((await run([...SVC_SOURCE, "init", "--data", dir, ...store.args, "--owner", "lead@example.com", "--json"])).stdout);
      const added = await run([...SVC_SOURCE, "init", "--data", dir, ...store.args, "--organisation", first.organisationId, "--project", "Second", "--json"]);
      expect(added.code).toBe(0);
      const second = JSON.parse(added.stdout);
      expect(second.organisationId).toBe(first.organisationId);
      expect(second.projectId).not.toBe(first.projectId);
      expect(second.ownerEmail).toBe("lead@example.com");
      expect(Object.keys(second).sort()).toEqual(["adminKey", "clientKey", "organisationId", "ownerEmail", "projectId", "serverKey"]);
      const unknown = await run([...SVC_SOURCE, "init", "--data", dir, ...store.args, "--organisation", "org_nope", "--json"]);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain("no organisation org_nope");
      const bad = await run([...SVC_SOURCE, "init", "--data", dir, ...store.args, "--organisation", "x y"]);
      expect(bad.code).toBe(2);
    } finally {
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the first run, on one host name", () => {
  test("default bind: `listening on http://localhost:PORT`, the setup link on the same origin, the CLI's default too; setup hands out three working keys and the next steps", async () => {
    const dir = tempDir();
    const store = await freshStoreArgs();
    const serve = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--data", dir, ...store.args, "--no-request-log"]);
    try {
      expect(serve.listeningLine).toBe(`listening on http://localhost:${serve.port}`);
      const base = `http://localhost:${serve.port}`;
      expect(new URL(DEFAULT_SERVER_URL).hostname).toBe("localhost");
      const setupLine = await serve.waitForLine((l) => l.includes("First-run setup: open"));
      const setupUrl = /open (\S+)/.exec(setupLine)![1]!;
      expect(setupUrl.startsWith(`${base}/setup?token=`)).toBe(true);

      const b = new Browser(base);
      const form = await b.get(new URL(setupUrl).pathname + new URL(setupUrl).search);
      expect(form.status).toBe(200);
      const token = fieldValue(form.text, "token")!;
      const done = await b.postForm("/setup", { token, email: "first@example.com", organisation: "Acme", project: "Shop", csrf: b.csrf });
      expect(done.status).toBe(200);
      expect(done.setCookies.some((c) => c.startsWith("svc_session="))).toBe(true);
      const keys = {
        admin: /sdk_admin_[A-Za-z0-9]+/.exec(done.text)![0],
        server: /sdk_server_[A-Za-z0-9]+/.exec(done.text)![0],
        client: /sdk_client_[A-Za-z0-9]+/.exec(done.text)![0],
      };
      expect(done.text).toContain("shown only now");
      expect(done.text).toContain(`svc login --url ${base}`);
      expect(done.text).toContain(`curl -s ${base}/api/admin/killswitches`);
      expect(done.text).toContain(`baseUrl: "${base}"`);
      // The SDK installs from this server (issue 27, item 1): the exact command, and the file it names is there.
      expect(done.text).toContain(`npm install ${base}/sdk/svc-sdk.tgz`);
      expect(done.text).toContain(`import { createClient } from "${base}/sdk/svc.js"`);
      const sdk = await fetch(`${base}/sdk/svc-sdk.tgz`);
      expect(sdk.status).toBe(200);
      expect(sdk.headers.get("content-type")).toBe("application/gzip");
      // The keys work.
      const project = await fetch(`${base}/api/admin/projects/current`, { headers: { authorization: `Bearer ${keys.admin}` } });
      expect(project.status).toBe(200);
      expect((await project.json()).name).toBe("Shop");
      const snapshot = await fetch(`${base}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": keys.server } });
      expect(snapshot.status).toBe(200);
      // The session made during setup is the one `svc login` will use: the device page on the same origin knows us.
      const device = await b.get("/device");
      expect(device.status).toBe(200);
      expect(device.text).not.toContain("Sign in");
      // Shown once: the page is not stored, and the setup link is spent.
      expect(done.headers.get("cache-control")).toBe("no-store");
      expect((await new Browser(base).get(new URL(setupUrl).pathname + new URL(setupUrl).search)).status).toBe(400);
    } finally {
      await serve.stop();
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a JSON setup call answers the keys", async () => {
    const dir = tempDir();
    const store = await freshStoreArgs();
    const serve = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dir, ...store.args, "--no-request-log"]);
    try {
      const setupUrl = /open (\S+)/.exec(await serve.waitForLine((l) => l.includes("First-run setup: open")))![1]!;
      const b = new Browser(serve.url);
      await b.get("/signin");
      const token = new URL(setupUrl).searchParams.get("token")!;
      const r = await b.postJson("/setup", { token, email: "json@example.com", organisation: "Org", project: "Proj" }, { "x-csrf-token": b.csrf });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ ok: true, email: "json@example.com", redirect: "/" });
      expect(r.body.keys.admin).toMatch(/^sdk_admin_/);
      expect(r.body.keys.server).toMatch(/^sdk_server_/);
      expect(r.body.keys.client).toMatch(/^sdk_client_/);
      const current = await fetch(`${serve.url}/api/admin/projects/current`, { headers: { authorization: `Bearer ${r.body.keys.admin}` } });
      expect((await current.json()).id).toBe(r.body.projectId);
    } finally {
      await serve.stop();
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
