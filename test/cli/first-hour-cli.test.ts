import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { Browser, fieldValue } from "../browser";
import { startTestServer, tempDir, type TestServer } from "../helpers";
import { COMMANDS } from "../../src/main";
import { singular } from "../../src/lib/suggest";
import { removeSandboxes, sandbox, svc, svcJson, type Sandbox } from "./client-helpers";
import { SVC_SOURCE, freshStoreArgs, startServe } from "./process";

// Issue 27, items 20 and 21: what a newcomer meets when they mistype, send a key in the wrong header, start and stop.
// Each test spawns the CLI several times.
setDefaultTimeout(60_000);

let ts: TestServer;
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startTestServer();
  const token = await ts.api("/api/admin/tokens", { body: { name: "first-hour", access: "read-write" } });
  expect(token.status).toBe(201);
  env = { SERVICE_CLI_TOKEN: token.body.token, SERVICE_URL: ts.url };
  box = sandbox();
  expect((await ts.api("/api/admin/killswitches", { body: { name: "checkout" } })).status).toBe(201);
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const cli = (args: string[]) => svc(box, args, { env });

describe("item 20: the CLI forgives the first typos", () => {
  test("every noun takes its singular, and the plural keeps working", async () => {
    const plural = await svcJson(box, ["killswitches", "list"], { env });
    expect(plural.map((k: { name: string }) => k.name)).toEqual(["checkout"]);
    expect(await svcJson(box, ["killswitch", "list"], { env })).toEqual(plural);
    // A plural word inside a subcommand too.
    expect((await svcJson(box, ["sdk", "key", "list"], { env })).length).toBe(3);
    expect((await svcJson(box, ["gate", "template", "list"], { env })).map((t: { name: string }) => t.name)).toContain("Beta opt-in");
    // Every plural noun of `svc help` answers to its singular.
    const singulars = COMMANDS.map((c) => [c.name, singular(c.name)] as const).filter(([, s]) => s !== undefined);
    expect(singulars.map(([, s]) => s)).toEqual(expect.arrayContaining(["killswitch", "gate", "config", "event", "metric", "error", "alert", "universe", "experiment", "rollout", "connector", "token", "member", "project", "attribute"]));
    for (const [name, one] of singulars) {
      const help = await cli(["help", one!]);
      expect([one, help.code]).toEqual([one, 0]);
      expect(help.stdout.startsWith(`svc ${name}: `)).toBe(true);
    }
  });

  test("a mistyped noun, subcommand or flag gets `did you mean`, exit 2, and runs nothing", async () => {
    const noun = await cli(["killswich", "list"]);
    expect(noun.code).toBe(2);
    expect(noun.stderr).toContain('svc: unknown command "killswich". Did you mean "killswitch"?');
    const sub = await cli(["killswitches", "lsit"]);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain("Did you mean `svc killswitches list`?");
    expect((await cli(["sdk", "key", "lst"])).stderr).toContain("Did you mean `svc sdk keys list`?");
    const flag = await cli(["killswitches", "list", "--jsn"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("Unknown option '--jsn'. Did you mean --json?");
    const json = await cli(["toggle", "checkout", "--swich", "eu", "--json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toMatchObject({ code: "USAGE", error: "Unknown option '--swich'. Did you mean --switch?" });
    expect((await cli(["help", "killswitches", "lst"])).stderr).toContain("Did you mean `svc killswitches list`?");
    // Nothing close: no guess.
    const far = await cli(["frobnicate"]);
    expect(far.code).toBe(2);
    expect(far.stderr).not.toContain("Did you mean");
    expect((await ts.api("/api/admin/killswitches/checkout")).body.envs.prod.version).toBe(1);
  });

  test("a mistyped flag name gets the name it was one typo from (API and CLI), and changes nothing", async () => {
    const before = (await ts.api("/api/admin/killswitches/checkout")).body;
    const api = await ts.api("/api/admin/killswitches/chekout/toggle", { body: { env: "prod" } });
    expect(api.status).toBe(404);
    expect(api.body).toEqual({ error: "Killswitch chekout not found", code: "NOT_FOUND", detail: 'name: did you mean "checkout"?' });
    const toggled = await cli(["toggle", "chekout"]);
    expect(toggled.code).toBe(1);
    expect(toggled.stderr).toContain('did you mean "checkout"?');
    expect(toggled.stderr).toContain("svc killswitches list");
    // Nothing near: the plain NOT_FOUND.
    expect((await ts.api("/api/admin/killswitches/zzzzzzzz")).body).toEqual({ error: "Killswitch zzzzzzzz not found", code: "NOT_FOUND" });
    expect((await ts.api("/api/admin/killswitches/checkout")).body).toEqual(before);
  });

  test("`gates create --template` with an unknown name lists the valid ones and creates nothing", async () => {
    const api = await ts.api("/api/admin/gates", { body: { name: "beta", template: "Beta optin" } });
    expect(api.status).toBe(404);
    expect(api.body).toMatchObject({ code: "NOT_FOUND", error: "Gate template Beta optin not found" });
    for (const name of ["Internal users", "Percentage rollout", "Country list", "App version at least", "Beta opt-in"]) expect(api.body.detail).toContain(`"${name}"`);
    const created = await cli(["gates", "create", "beta", "--template", "Beta optin"]);
    expect(created.code).toBe(1);
    expect(created.stderr).toContain("Gate template Beta optin not found");
    expect(created.stderr).toContain('"Beta opt-in"');
    expect((await ts.api("/api/admin/gates/beta")).status).toBe(404);
  });

  test("a key in the wrong header is told which header it belongs in", async () => {
    // An admin key as X-SDK-Key on the SDK paths, and on the admin API.
    const snapshot = await ts.api("/api/sdk/v1/snapshot", { key: "", headers: { "x-sdk-key": ts.adminKey } });
    expect(snapshot.status).toBe(403);
    expect(snapshot.body).toMatchObject({ code: "FORBIDDEN", error: "This path takes a server key, not an admin key" });
    expect(snapshot.body.detail).toContain("an admin key belongs in `Authorization: Bearer` on the admin API");
    const ofrep = await ts.api("/ofrep/v1/evaluate/flags/checkout", { key: "", headers: { "x-sdk-key": ts.adminKey }, body: { context: { targetingKey: "u1" } } });
    expect(ofrep.status).toBe(403);
    const admin = await ts.api("/api/admin/killswitches", { key: "", headers: { "x-sdk-key": ts.adminKey } });
    expect(admin.status).toBe(401);
    expect(admin.body).toMatchObject({ code: "UNAUTHORIZED", error: "An admin key goes in the Authorization header, not X-SDK-Key" });
    expect(admin.body.detail).toContain("Authorization: send `Bearer <admin key>`");
    // A server key as the admin Authorization.
    const server = await ts.api("/api/admin/killswitches", { key: ts.serverKey });
    expect(server.status).toBe(403);
    expect(server.body).toMatchObject({ code: "FORBIDDEN", error: "A server key cannot use the admin API" });
    expect(server.body.detail).toContain("a server key belongs in X-SDK-Key on the SDK paths");
    // Nothing was created by any of them.
    expect((await ts.api("/api/admin/killswitches")).body.map((k: { name: string }) => k.name)).toEqual(["checkout"]);
  });

  test("an enum that fails validation lists the allowed values, on bodies and queries", async () => {
    const cases: [string, { method?: string; body?: unknown; key?: string }, string][] = [
      ["/api/admin/keys", { body: { type: "mobile" } }, "type: must be one of: admin, client, server, browser"],
      ["/api/admin/killswitches/checkout/toggle", { body: { env: "qa" } }, "env: must be one of: dev, staging, prod"],
      ["/api/admin/killswitches/checkout/history?env=qa", {}, "env: must be one of: dev, staging, prod"],
      [`/api/admin/projects/${"{id}"}`, { method: "PATCH", body: { analysis: { method: "bayes" } } }, "analysis.method: must be one of: frequentist, bayesian"],
      ["/api/admin/tokens", { body: { name: "x", access: "rw" } }, "access: must be one of: read-only, read-write"],
      ["/api/admin/errors?status=open", {}, "status: must be one of: unresolved, resolved, ignored, regressed"],
      ["/api/sdk/v1/snapshot?env=qa", { key: "" }, "env: must be one of: dev, staging, prod"],
    ];
    for (const [path, init, detail] of cases) {
      const headers = init.key === "" ? { "x-sdk-key": ts.serverKey } : undefined;
      const r = await ts.api(path.replace("{id}", ts.projectId), { ...init, headers });
      expect([path, r.status, r.body]).toEqual([path, 400, { error: "Request failed validation", code: "VALIDATION", detail }]);
    }
    expect((await ts.api("/api/admin/tokens")).body.map((t: { name: string }) => t.name)).toEqual(["first-hour"]);
  });
});

describe("item 21: start, stop and sign-in say what happened", () => {
  test("svc serve prints `listening on` then the setup link last; the setup page names the keys that exist; Ctrl-C ends with a `stopped` line", async () => {
    const dir = tempDir();
    const store = await freshStoreArgs();
    const serve = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--data", dir, ...store.args, "--no-request-log"]);
    try {
      const setupLine = await serve.waitForLine((l) => l.includes("First-run setup: open"));
      const printed = serve.lines().filter((l) => l.trim() !== "");
      expect(printed).toEqual([serve.listeningLine, setupLine]);
      const setupUrl = /open (\S+)/.exec(setupLine)![1]!;
      const b = new Browser(serve.url);
      const form = await b.get(new URL(setupUrl).pathname + new URL(setupUrl).search);
      const done = await b.postForm("/setup", { token: fieldValue(form.text, "token")!, email: "first@example.com", organisation: "Acme", project: "Shop", csrf: b.csrf });
      expect(done.status).toBe(200);
      expect(done.text).not.toContain("coming soon");
      expect(done.text).toContain("Read flags on your servers with the server key");
    } finally {
      serve.proc.kill("SIGINT");
      const code = await serve.proc.exited;
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
      expect(code).toBe(0);
    }
    const last = serve.lines().filter((l) => l.trim() !== "").at(-1)!;
    expect(JSON.parse(last)).toMatchObject({ level: "info", msg: "stopped", signal: "SIGINT" });
  });

  test("svc login where nothing answers names the URL, where it came from, --url and SERVICE_URL", async () => {
    const other = sandbox();
    const flag = await svc(other, ["login", "--no-browser", "--url", "http://127.0.0.1:9"]);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain("could not reach http://127.0.0.1:9: nothing answers there (connection refused)");
    expect(flag.stderr).toContain("comes from --url");
    expect(flag.stderr).toContain("--url");
    expect(flag.stderr).toContain("SERVICE_URL");
    const fromEnv = await svc(other, ["login", "--no-browser", "--json"], { env: { SERVICE_URL: "http://127.0.0.1:9" } });
    expect(fromEnv.code).toBe(1);
    expect(JSON.parse(fromEnv.stderr)).toMatchObject({ code: "NETWORK", error: "could not reach http://127.0.0.1:9: nothing answers there (connection refused)", hint: expect.stringContaining("comes from SERVICE_URL") });
  });
});
