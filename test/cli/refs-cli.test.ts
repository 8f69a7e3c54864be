import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { scanText } from "../../src/modules/refs/scan";
import { mcpSession, removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// Each test spawns the CLI several times.
setDefaultTimeout(60_000);

/**
 * `svc refs scan` finds the names in a fixture repository of several languages (issue 30, "Done
 * when"): SDK calls of JS, TS, Python, Go, Java, Ruby, PHP, C#, Swift and Kotlin, plain strings;
 * not names in comments or inside longer identifiers and strings, not node_modules, dist or binary
 * files. `svc refs push` sends it with git's repo, commit and branch.
 */

const FIXTURE = resolve(import.meta.dir, "../fixtures/refs-repo");
/** Exactly what the fixture holds, by flag, file and line. */
const EXPECTED = [
  ["checkout", "csharp/Program.cs", 3, "sdk"],
  ["checkout", "go/main.go", 4, "sdk"],
  ["checkout", "kotlin/App.kt", 2, "string"],
  ["checkout", "ruby/app.rb", 4, "sdk"],
  ["checkout", "web/app.js", 6, "string"],
  ["checkout", "web/flags.ts", 5, "sdk"],
  ["dark_mode", "csharp/Program.cs", 4, "sdk"],
  ["dark_mode", "java/App.java", 4, "sdk"],
  ["dark_mode", "py/app.py", 5, "sdk"],
  ["dark_mode", "ruby/app.rb", 3, "sdk"],
  ["dark_mode", "swift/App.swift", 3, "sdk"],
  ["dark_mode", "web/app.js", 8, "string"],
  ["new-search", "java/App.java", 2, "string"],
  ["new-search", "php/index.php", 2, "sdk"],
  ["new-search", "py/app.py", 6, "sdk"],
  ["new-search", "swift/App.swift", 2, "sdk"],
  ["new-search", "web/app.js", 5, "sdk"],
  ["new-search", "web/app.js", 9, "string"],
  ["pricing", "go/main.go", 5, "sdk"],
  ["pricing", "kotlin/App.kt", 3, "sdk"],
  ["pricing", "web/app.js", 8, "string"],
  ["pricing", "web/flags.ts", 4, "sdk"],
];
const shape = (refs: any[]) => refs.map((r) => [r.flag, r.file, r.line, r.kind]);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "refs-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
  // The project's flags: one killswitch, two gates, one config (and a gate no file names).
  expect((await ts.api("/api/admin/killswitches", { body: { name: "checkout" } })).status).toBe(201);
  for (const name of ["new-search", "dark_mode", "unused-gate"]) expect((await ts.api("/api/admin/gates", { body: { name } })).status).toBe(201);
  expect((await ts.api("/api/admin/configs", { body: { name: "pricing", schema: { type: "object" }, value: {} } })).status).toBe(201);
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const run = (args: string[]) => svc(box, ["refs", ...args], { env });
const runJson = (args: string[]) => svcJson(box, ["refs", ...args], { env });

/** A copy of the fixture outside any git work tree. */
function plainCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-refs-"));
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

describe("svc refs", () => {
  test("scan finds the project's names in a fixture repository of ten languages, exactly", async () => {
    const result = await runJson(["scan", FIXTURE]);
    expect(result).toMatchObject({ source: "git", truncated: false });
    expect(shape(result.refs)).toEqual(EXPECTED);
    expect(result.refs.find((r: any) => r.file === "go/main.go" && r.flag === "checkout").text).toBe('on, _ := client.BooleanValue(ctx, "checkout", false, openfeature.EvaluationContext{})');

    const human = await run(["scan", FIXTURE]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("checkout (6 references)\n  csharp/Program.cs:3  sdk  var on = await client.GetBooleanValueAsync(\"checkout\", false);\n");
    expect(human.stdout).toContain("22 references to 4 flags in 12 files.");
  });

  test("the matched text is printable (no terminal escapes), cut at 200; SDK calls of Rust, Elixir and Dart; near misses are no reference", () => {
    const names = new Set(["checkout", "new-search"]);
    const [hostile] = scanText(`x = "checkout"\t\u001b[31m${"y".repeat(300)}`, "a.js", names);
    expect(hostile!.text).toBe(`x = "checkout" \ufffd[31m${"y".repeat(300)}`.slice(0, 200));
    const code = [
      'let on = client.get_bool_value("checkout", None, None).await;', // Rust (OpenFeature)
      'GrowthBook.feature_on?(context, "new-search")', // Elixir
      "final v = await client.getBooleanFlag('checkout', defaultValue: false);", // Dart
      'const a = "checkout-beta", b = checkout, c = "my checkout";', // longer strings, an identifier
      "# isOn checkout", // a comment without quotes
    ].join("\n");
    expect(scanText(code, "m.txt", names).map((r) => [r.flag, r.line, r.kind])).toEqual([
      ["checkout", 1, "sdk"],
      ["new-search", 2, "sdk"],
      ["checkout", 3, "sdk"],
    ]);
  });

  test("outside git: a walk that skips node_modules, dist and binary files; --offline with names from a file; --names", async () => {
    const dir = plainCopy();
    const names = join(dir, "..", `names-${Date.now()}.txt`);
    writeFileSync(names, "checkout\n# a comment\nnew-search\n\n");
    const offline = await svcJson(box, ["refs", "scan", dir, "--offline", "--names-file", names], { env: {} });
    expect(offline.source).toBe("walk");
    expect(shape(offline.refs)).toEqual(EXPECTED.filter(([flag]) => flag === "checkout" || flag === "new-search"));
    const given = await runJson(["scan", dir, "--names", "pricing"]);
    expect(shape(given.refs)).toEqual(EXPECTED.filter(([flag]) => flag === "pricing"));
    // The root .gitignore holds in a walk too: a folder, a glob, an anchored path, a ** path.
    const ignoring = plainCopy();
    writeFileSync(join(ignoring, ".gitignore"), "# generated\nruby/\n*.php\n/web/flags.ts\n**/App.kt\n");
    const walked = await runJson(["scan", ignoring, "--names", "checkout,new-search,dark_mode,pricing"]);
    const gone = (r: (string | number)[]) => ["ruby/app.rb", "php/index.php", "web/flags.ts", "kotlin/App.kt"].includes(r[1] as string);
    expect(shape(walked.refs)).toEqual(EXPECTED.filter((r) => !gone(r)));
    // --offline without names is a usage mistake; so is a missing directory.
    const bad = await run(["scan", dir, "--offline"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--offline needs the names");
    expect((await run(["scan", join(dir, "nope")])).code).toBe(2);
  });

  test("push takes repo (no credentials), commit and branch from git; list and repos read them back; forget deletes", async () => {
    const dir = plainCopy();
    const git = (...args: string[]) => {
      const r = Bun.spawnSync(["git", "-C", dir, "-c", "user.email=ci@example.com", "-c", "user.name=CI", ...args], { stdout: "pipe", stderr: "pipe" });
      if (r.exitCode !== 0) throw new Error(r.stderr.toString());
      return r.stdout.toString().trim();
    };
    git("init", "-q", "-b", "main");
    // The fixture's node_modules and dist are other people's code: ignored here as a project would.
    writeFileSync(join(dir, ".gitignore"), "node_modules\ndist\n");
    git("add", "-A");
    git("commit", "-qm", "fixture");
    git("remote", "add", "origin", "https://ci:s3cret@github.com/acme/shop.git");
    const sha = git("rev-parse", "HEAD");

    const pushed = await runJson(["push", dir]);
    expect(pushed).toEqual({ repo: "github.com/acme/shop", branch: "main", commit: sha, refs: 22, flags: 4, pushedAt: expect.any(String), pushedBy: expect.any(String) });
    // A sub-folder: files are named from the repository's root, and the push replaces the whole repository's.
    const sub = await run(["push", join(dir, "web")]);
    expect(sub.code).toBe(0);
    expect(sub.stdout.trim()).toBe(`Pushed 7 references to 4 flags of github.com/acme/shop at ${sha.slice(0, 12)} (main); they replace its earlier push.`);
    const listed = await runJson(["list", "checkout"]);
    expect(listed.refs.map((r: any) => [r.repo, r.file, r.line, r.kind, r.commit])).toEqual([
      ["github.com/acme/shop", "web/app.js", 6, "string", sha],
      ["github.com/acme/shop", "web/flags.ts", 5, "sdk", sha],
    ]);
    const table = await run(["list", "checkout"]);
    expect(table.stdout).toMatch(/^REPO\s+FILE\s+LINE\s+KIND\s+COMMIT$/m);
    expect(table.stdout).toMatch(/^github\.com\/acme\/shop\s+web\/flags\.ts\s+5\s+sdk\s+[0-9a-f]{12}$/m);
    expect((await run(["list", "unused-gate"])).stdout.trim()).toBe("No references to unused-gate in 1 pushed repository.");
    // The MCP tool reads the same answer, wrapped as untrusted (file names come from the code).
    const mcp = await mcpSession(box, env);
    try {
      const tool = (await mcp.client.listTools()).tools.find((t) => t.name === "find_flag_references")!;
      expect(tool.annotations?.readOnlyHint).toBe(true);
      const found = await mcp.body("find_flag_references", { flag: "checkout" });
      expect(found.untrusted).toBe(true);
      expect(found.untrustedData).toEqual(await runJson(["list", "checkout"]));
    } finally {
      await mcp.close();
    }

    // Outside git: --repo and --commit are required.
    const plain = plainCopy();
    const missing = await run(["push", plain]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--repo is required");
    expect((await runJson(["push", plain, "--repo", "shop-mirror", "--commit", "v1.2.3", "--names", "pricing"])).refs).toBe(4);

    expect((await runJson(["repos"])).map((r: any) => [r.repo, r.branch, r.refs])).toEqual([
      ["github.com/acme/shop", "main", 7],
      ["shop-mirror", null, 4],
    ]);
    expect((await run(["forget", "shop-mirror"])).stdout.trim()).toBe("Forgot the references of shop-mirror.");
    const gone = await run(["forget", "shop-mirror", "--json"]);
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stderr)).toMatchObject({ code: "NOT_FOUND", status: 404 });
    const audit = (await ts.api("/api/admin/audit?action=refs.&limit=10")).body.entries.map((e: any) => [e.action, e.subjectName]);
    expect(audit).toEqual([
      ["refs.delete", "shop-mirror"],
      ["refs.push", "shop-mirror"],
      ["refs.push", "github.com/acme/shop"],
      ["refs.push", "github.com/acme/shop"],
    ]);
  });
});
