import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { auditOf } from "../../src/lib/audit";
import { batchesOf, keysOfFile } from "../../src/modules/i18n/cli";
import { mcpSession, removeSandboxes, sandbox, svc, svcJson, type Sandbox } from "./client-helpers";
import { SVC_SOURCE } from "./process";
import { startTestServer, type TestServer } from "../helpers";

// Each test spawns the CLI several times.
setDefaultTimeout(120_000);

let ts: TestServer;
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "i18n-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const run = (args: string[]) => svc(box, ["i18n", ...args], { env });
const json = (args: string[]) => svcJson(box, ["i18n", ...args], { env });
const file = (name: string, content: unknown) => {
  const path = join(box.cwd, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
};
const keysOf = async (profile: string) => (await ts.api(`/api/admin/i18n/keys?profile_id=${encodeURIComponent(profile)}`)).body as any[];

describe("push files, as the CLI reads them", () => {
  test("keysOfFile: flat or nested objects (joined with dots); every problem named by key, nothing sent", () => {
    expect(keysOfFile({ "a.b": "x", c: { d: "y", e: { f: "z" } } }, "f.json")).toEqual([
      { key: "a.b", value: "x" },
      { key: "c.d", value: "y" },
      { key: "c.e.f", value: "z" },
    ]);
    expect(() => keysOfFile([], "f.json")).toThrow(/must hold a JSON object/);
    let message = "";
    try {
      keysOfFile({ ok: "x", n: 5, "bad key": "x", long: "x".repeat(10_001), "a.b": "1", a: { b: "2" }, l: [1] }, "f.json");
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.split("\n")).toEqual([
      "f.json: 5 problems, nothing was sent:",
      "  n: the value must be a string, got number",
      '  "bad key": keys are 1 to 200 of A-Z a-z 0-9 _ . : -',
      "  long: the value has 10,001 characters, at most 10,000",
      "  a.b: given twice (once nested, once with dots)",
      "  l: the value must be a string, got an array",
    ]);
  });

  test("batchesOf: at most 1,000 keys and about 512 KB per request", () => {
    const small = Array.from({ length: 2500 }, (_, i) => ({ key: `k${i}`, value: "v" }));
    expect(batchesOf(small).map((b) => b.length)).toEqual([1000, 1000, 500]);
    const big = Array.from({ length: 120 }, (_, i) => ({ key: `k${i}`, value: "x".repeat(9000) }));
    const batches = batchesOf(big);
    expect(batches.length).toBe(3);
    for (const b of batches) expect(JSON.stringify(b).length).toBeLessThan(520 * 1024);
    expect(batches.flat()).toEqual(big);
    expect(batchesOf([])).toEqual([]);
  });
});

describe("svc i18n (as a user runs it)", () => {
  test("profiles create, list, get, update: --json is the API's answer; the human forms; usage mistakes exit 2", async () => {
    const created = await json(["profiles", "create", "web-de", "--locale", "de"]);
    expect(created).toEqual((await ts.api("/api/admin/i18n/profiles/web-de")).body);
    expect(created).toMatchObject({ name: "web-de", locale: "de", keyCount: 0 });
    const human = await run(["profiles", "create", "swiss", "--locale", "de-ch"]);
    expect([human.code, human.stderr]).toEqual([0, ""]);
    expect(human.stdout).toMatch(/^Created translation profile swiss \(i18n_\w+\) for locale de-CH\.$/m);

    const taken = await run(["profiles", "create", "other", "--locale", "DE", "--json"]);
    expect(taken.code).toBe(1);
    expect(JSON.parse(taken.stderr)).toMatchObject({ code: "ALREADY_EXISTS", status: 409, detail: expect.stringContaining("locale: de belongs to profile web-de") });
    const bad = await run(["profiles", "create", "bad", "--locale", "en_US", "--json"]);
    expect([bad.code, JSON.parse(bad.stderr).code]).toEqual([1, "VALIDATION"]);
    for (const args of [["profiles", "create", "nolocale"], ["profiles", "update", "swiss"], ["profiles", "get"], ["keys", "push", "web-de"], ["profiles"]]) {
      const r = await run([...args, "--json"]);
      expect([args.join(" "), r.code, JSON.parse(r.stderr).code]).toEqual([args.join(" "), 2, "USAGE"]);
    }

    expect(await json(["profiles", "list"])).toEqual((await ts.api("/api/admin/i18n/profiles")).body);
    const table = await run(["profiles", "list", "--query", "DE"]);
    expect(table.stdout).toMatch(/^NAME\s+LOCALE\s+KEYS\s+UPDATED$/m);
    expect(table.stdout).toMatch(/^swiss\s+de-CH\s+0\s+\d{4}-/m);
    expect(table.stdout).toMatch(/^web-de\s+de\s+0\s+\d{4}-/m);
    const one = await run(["profiles", "get", "swiss"]);
    expect(one.stdout).toContain("locale:  de-CH");
    const missing = await run(["profiles", "get", "never", "--json"]);
    expect([missing.code, JSON.parse(missing.stderr).code]).toEqual([1, "NOT_FOUND"]);

    expect(await json(["profiles", "update", "swiss", "--rename", "swiss-german", "--locale", "de-ch"])).toMatchObject({ name: "swiss-german", locale: "de-CH" });
    const moved = await run(["profiles", "update", "swiss-german", "--locale", "gsw"]);
    expect(moved.stdout).toContain("Updated translation profile swiss-german:");
    expect(moved.stdout).toContain("locale:  gsw");
  });

  test("keys push: a nested JSON file, insert-only; the summary says what was skipped; --json is the summed reply; stdin with -", async () => {
    const de = file("de.json", { checkout: { pay: "Jetzt bezahlen", greeting: "Hallo {name}!" }, "nav.home": "Start" });
    const first = await json(["keys", "push", "web-de", de]);
    expect(first).toEqual({ added: ["checkout.pay", "checkout.greeting", "nav.home"], skipped: [], pushed_count: 3, skipped_count: 0 });
    const again = file("de2.json", { "checkout.pay": "CHANGED", "nav.back": "Zurück" });
    const human = await run(["keys", "push", "web-de", again]);
    expect([human.code, human.stderr]).toEqual([0, ""]);
    expect(human.stdout).toContain("Pushed 2 keys to web-de (de): 1 added, 1 skipped (already there, left unchanged).");
    expect(human.stdout).toContain("Skipped: checkout.pay");
    expect(human.stdout).toContain("svc i18n keys set web-de KEY VALUE");
    expect((await keysOf("web-de")).find((k) => k.key === "checkout.pay").value).toBe("Jetzt bezahlen");

    const piped = Bun.spawn([...SVC_SOURCE, "i18n", "keys", "push", "web-de", "-", "--json"], {
      cwd: box.cwd,
      env: { ...process.env, HOME: box.home, SERVICE_CONFIG_DIR: box.configDir, ...env },
      stdin: new TextEncoder().encode(JSON.stringify({ "nav.help": "Hilfe" })),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, code] = await Promise.all([new Response(piped.stdout).text(), piped.exited]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ added: ["nav.help"], pushed_count: 1 });

    const broken = file("broken.json", { ok: "fine", "bad key": "x", n: 1 });
    const refused = await run(["keys", "push", "web-de", broken]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("2 problems, nothing was sent");
    expect((await keysOf("web-de")).some((k) => k.key === "ok")).toBe(false);
    const notJson = await run(["keys", "push", "web-de", file("x.json", "{nope")]);
    expect([notJson.code, notJson.stderr]).toEqual([2, expect.stringContaining("is not JSON")]);
    const noFile = await run(["keys", "push", "web-de", join(box.cwd, "missing.json")]);
    expect([noFile.code, noFile.stderr]).toEqual([2, expect.stringContaining("cannot read")]);
    const noProfile = await run(["keys", "push", "nope", de, "--json"]);
    expect([noProfile.code, JSON.parse(noProfile.stderr).code]).toEqual([1, "NOT_FOUND"]);
  });

  test("keys push of a large file goes in batches with progress on stderr; the keys all land once", async () => {
    const entries = Object.fromEntries(Array.from({ length: 2600 }, (_, i) => [`bulk.k${String(i).padStart(4, "0")}`, `Wert ${i}`]));
    const path = file("bulk.json", entries);
    const r = await run(["keys", "push", "swiss-german", path]);
    expect(r.code).toBe(0);
    expect(r.stderr.trim().split("\n")).toEqual([
      "pushed 1,000/2,600 keys (1,000 added, 0 skipped)",
      "pushed 2,000/2,600 keys (2,000 added, 0 skipped)",
      "pushed 2,600/2,600 keys (2,600 added, 0 skipped)",
    ]);
    expect(r.stdout).toContain("Pushed 2,600 keys to swiss-german (gsw): 2,600 added, 0 skipped");
    // Again: everything skipped; under --json no progress, the summed reply only.
    const again = await svc(box, ["i18n", "keys", "push", "swiss-german", path, "--json"], { env });
    expect(again.stderr).toBe("");
    expect(JSON.parse(again.stdout)).toMatchObject({ pushed_count: 0, skipped_count: 2600 });
    expect((await ts.api("/api/admin/i18n/profiles/swiss-german")).body.keyCount).toBe(2600);
  });

  test("keys list, set (changes, or adds when missing) and delete --yes; audited as the token", async () => {
    expect(await json(["keys", "list", "web-de"])).toEqual(await keysOf("web-de"));
    const table = await run(["keys", "list", "web-de", "--query", "checkout"]);
    expect(table.stdout).toMatch(/^KEY\s+VALUE$/m);
    expect(table.stdout).toMatch(/^checkout\.greeting\s+Hallo \{name\}!$/m);
    expect(table.stdout).toMatch(/^checkout\.pay\s+Jetzt bezahlen$/m);
    const everywhere = await run(["keys", "list", "--query", "wert 259"]);
    expect(everywhere.stdout).toMatch(/^LOCALE\s+KEY\s+VALUE$/m);
    expect(everywhere.stdout).toMatch(/^gsw\s+bulk\.k0259\s+Wert 259$/m);

    const set = await run(["keys", "set", "web-de", "checkout.pay", "Zahlen"]);
    expect(set.stdout.trim()).toBe("Set checkout.pay in web-de (de): Zahlen");
    const added = await json(["keys", "set", "web-de", "checkout.new", "Neu\nzweite Zeile"]);
    expect(added).toMatchObject({ key: "checkout.new", value: "Neu\nzweite Zeile", locale: "de" });
    expect((await keysOf("web-de")).find((k) => k.key === "checkout.pay").value).toBe("Zahlen");
    const badKey = await run(["keys", "set", "web-de", "bad key", "x", "--json"]);
    expect([badKey.code, JSON.parse(badKey.stderr).code]).toEqual([1, "VALIDATION"]);

    expect(await json(["keys", "delete", "web-de", "checkout.new", "--yes"])).toMatchObject({ key: "checkout.new", deleted: true, locale: "de" });
    const gone = await run(["keys", "delete", "web-de", "checkout.new", "--yes", "--json"]);
    expect([gone.code, JSON.parse(gone.stderr).code]).toEqual([1, "NOT_FOUND"]);
    const audit = await auditOf(ts.store, ts.projectId, 200);
    expect(audit.find((r) => r.action === "i18n_key.update")).toMatchObject({ actorType: "token", subjectName: "checkout.pay" });
    expect(audit.find((r) => r.action === "i18n_key.delete")).toMatchObject({ actorType: "token", subjectName: "checkout.new" });
  });

  test("profiles delete --yes takes its keys with it", async () => {
    const gone = await json(["profiles", "delete", "swiss-german", "--yes"]);
    expect(gone).toMatchObject({ name: "swiss-german", locale: "gsw", deleted: true, keys: 2600 });
    expect((await ts.api("/api/admin/i18n/profiles/swiss-german")).status).toBe(404);
    expect(Number((await ts.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM i18n_keys WHERE key LIKE 'bulk.%'"))!.n)).toBe(0);
  });

  test("svc mcp: list_i18n_profiles, list_i18n_keys and push_i18n_keys answer as the API does", async () => {
    const { client, call, body, close } = await mcpSession(box, env);
    try {
      const { tools } = await client.listTools();
      for (const name of ["list_i18n_profiles", "list_i18n_keys"]) expect(tools.find((t) => t.name === name)?.annotations).toMatchObject({ readOnlyHint: true });
      expect(tools.find((t) => t.name === "push_i18n_keys")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true });
      expect(await body("list_i18n_profiles", {})).toEqual((await ts.api("/api/admin/i18n/profiles")).body);
      expect(await body("push_i18n_keys", { profile: "web-de", keys: { "mcp.one": "Eins", "checkout.pay": "nope" } })).toEqual({ added: ["mcp.one"], skipped: ["checkout.pay"], pushed_count: 1, skipped_count: 1 });
      expect((await body("list_i18n_keys", { profile: "web-de", q: "MCP" })).map((k: any) => [k.key, k.value])).toEqual([["mcp.one", "Eins"]]);
      expect(await body("list_i18n_keys", {})).toEqual((await ts.api("/api/admin/i18n/keys")).body);
      const missing = await call("list_i18n_keys", { profile: "never" });
      expect(missing.isError).toBe(true);
      expect(missing.text).toContain("NOT_FOUND");
    } finally {
      await close();
    }
  });
});
