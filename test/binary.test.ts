import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers";
import { BINARY, ensureBinary } from "./support/binary";
import { childrenOf, ended } from "./support/children";
import { type InitOutput, type ServeProcess, type StoreArgs, adminGet, freshStoreArgs, run, startServe } from "./cli/process";

// Runs from an empty directory holding a `.env` that would break start-up if the binary read it.
const cwd = tempDir("svc-bin-cwd-");
const dataDir = tempDir("svc-bin-data-");
let keys: InitOutput;
let server: ServeProcess | undefined;
/** On PostgreSQL runs the binary gets `--store` (its PostgreSQL driver is part of the build too). */
let store: StoreArgs | undefined;

beforeAll(async () => {
  await ensureBinary();
  writeFileSync(join(cwd, ".env"), "SERVICE_INIT_ADMIN_KEY=not-a-key\nPORT=notaport\n");
  store = await freshStoreArgs();
  const init = await run([BINARY, "init", "--data", dataDir, ...store.args, "--json"], { cwd });
  if (init.code !== 0) throw new Error(`svc init failed (${init.code}): ${init.stderr}`);
  keys = JSON.parse(init.stdout);
  server = await startServe([BINARY, "serve", "--port", "0", "--data", dataDir, ...store.args], { cwd });
}, 300_000);

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.stop();
  await store?.drop();
  rmSync(cwd, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

test("the binary prints its listening line with the real port", () => {
  // A wildcard bind is shown as localhost: the CLI default and the setup link name the same origin.
  expect(server!.listeningLine).toBe(`listening on http://localhost:${server!.port}`);
  expect(server!.port).toBeGreaterThan(0);
});

test("an authenticated admin route works (the build keeps Elysia's handler introspection intact)", async () => {
  const res = await adminGet(`${server!.url}/api/admin/projects/current`, keys.adminKey);
  expect(res.status).toBe(200);
  expect(res.body.id).toBe(keys.projectId);
  expect(res.body.organisationId).toBe(keys.organisationId);

  const noKey = await fetch(`${server!.url}/api/admin/projects/current`);
  expect(noKey.status).toBe(401);
  expect(await noKey.json()).toMatchObject({ code: "UNAUTHORIZED" });
  const malformed = await fetch(`${server!.url}/api/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" },
    body: "{nope",
  });
  expect(malformed.status).toBe(400);
  expect(await malformed.json()).toMatchObject({ code: "BAD_REQUEST" });
});

test("config values are checked in the schema checker: the binary itself, started by the server as its child process", async () => {
  const create = (value: unknown) =>
    fetch(`${server!.url}/api/admin/configs`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `limits-${value}`, schema: { type: "integer", maximum: 3 }, value }),
    });
  const bad = await create(5);
  expect(bad.status).toBe(400);
  expect(await bad.json()).toMatchObject({ code: "VALIDATION", detail: "value /: must be <= 3" });
  expect((await create(2)).status).toBe(201);
  // The checker is up for 10 s after its last check: the server's one child, running this same binary.
  const children = childrenOf(server!.proc.pid);
  expect(children.length).toBe(1);
  expect(realpathSync(`/proc/${children[0]}/exe`)).toBe(realpathSync(BINARY));
});

test("SQLite's WAL checkpoints run in the binary itself, started by the server as its child once the WAL grows, which ends with a server killed with SIGKILL", async () => {
  const sqliteDir = tempDir("svc-bin-wal-");
  const init = await run([BINARY, "init", "--data", sqliteDir, "--json"], { cwd });
  expect(init.code, init.stderr).toBe(0);
  const own = JSON.parse(init.stdout) as InitOutput;
  const walServer = await startServe([BINARY, "serve", "--port", "0", "--data", sqliteDir], { cwd });
  try {
    expect(childrenOf(walServer.proc.pid)).toEqual([]);
    // Written to, service.db's WAL grows past 256 KB (a write adds tens of KB): the checkpoint process starts at the
    // server's next look (every second, from a second after its first answer).
    let children: number[] = [];
    for (let i = 0, until = Date.now() + 15_000; Date.now() < until && children.length === 0; i++) {
      const r = await fetch(`${walServer.url}/api/admin/killswitches`, {
        method: "POST",
        headers: { authorization: `Bearer ${own.adminKey}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `wal-${i}`, value: true }),
      });
      expect(r.status).toBe(201);
      await Bun.sleep(20);
      children = childrenOf(walServer.proc.pid);
    }
    expect(children.length).toBe(1);
    const [checkpointer] = children;
    expect(realpathSync(`/proc/${checkpointer}/exe`)).toBe(realpathSync(BINARY));
    expect(readFileSync(`/proc/${checkpointer}/environ`, "utf8").split("\0")).toContain("SVC_WAL_CHECKPOINTER=1");
    walServer.proc.kill("SIGKILL");
    await walServer.proc.exited;
    expect(await ended(checkpointer!)).toBe(true);
  } finally {
    if (walServer.proc.exitCode === null && walServer.proc.signalCode === null) await walServer.stop();
    rmSync(sqliteDir, { recursive: true, force: true });
  }
}, 60_000);

test("the binary serves the SDK it was built with: /sdk/svc-sdk.tgz (npm's tarball), /sdk/svc.js and /sdk/svc-browser.js, from the embedded package (issue 27, item 1; issue 28)", async () => {
  const { version } = JSON.parse(await Bun.file(join(import.meta.dir, "../package.json")).text()) as { version: string };
  const tgz = await fetch(`${server!.url}/sdk/svc-sdk.tgz`);
  expect(tgz.status).toBe(200);
  expect(tgz.headers.get("content-type")).toBe("application/gzip");
  const dir = tempDir("svc-bin-sdk-");
  try {
    writeFileSync(join(dir, "svc-sdk.tgz"), new Uint8Array(await tgz.arrayBuffer()));
    const untar = await run(["tar", "-xzf", "svc-sdk.tgz"], { cwd: dir });
    expect(untar.code, untar.stderr).toBe(0);
    expect(JSON.parse(await Bun.file(join(dir, "package/package.json")).text())).toMatchObject({ name: "svc-sdk", version });
    const js = await fetch(`${server!.url}/sdk/svc.js`, { headers: { "accept-encoding": "identity" } });
    expect(js.status).toBe(200);
    expect(await js.text()).toBe(await Bun.file(join(dir, "package/index.js")).text());
    // The browser mode too (issue 28): its own module, from the same embedded package.
    const browserJs = await fetch(`${server!.url}/sdk/svc-browser.js`, { headers: { "accept-encoding": "identity" } });
    expect(browserJs.status).toBe(200);
    expect(await browserJs.text()).toBe(await Bun.file(join(dir, "package/browser.js")).text());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("/openapi loads the Scalar bundle from the binary, not a CDN", async () => {
  const page = await fetch(`${server!.url}/openapi`);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  const html = await page.text();
  const sources = [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1]);
  expect(sources).toEqual(["/openapi/prelude.js", "/openapi/scalar.js"]);
  expect(html).not.toMatch(/https?:\/\//);
  // The browser itself refuses anything from another host (test/openapi.test.ts drives a real one).
  expect(page.headers.get("content-security-policy")).toContain("default-src 'none'; script-src 'self';");
  expect((await fetch(`${server!.url}/openapi/prelude.js`)).status).toBe(200);

  const bundle = await fetch(`${server!.url}/openapi/scalar.js`);
  expect(bundle.status).toBe(200);
  expect(bundle.headers.get("content-type")).toContain("javascript");
  expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);

  const spec = await fetch(`${server!.url}/openapi/json`);
  expect(spec.status).toBe(200);
  const document = await spec.json();
  expect(document.paths["/api/admin/projects/current"]).toBeDefined();
  // Snippets in the viewer carry the address the binary was reached at.
  expect(document.servers[0].url).toBe(server!.url);
});

test("svc healthcheck exits 0 against the running binary", async () => {
  const result = await run([BINARY, "healthcheck", "--port", String(server!.port)], { cwd });
  expect(result.code).toBe(0);
});

test("svc version from the binary", async () => {
  const result = await run([BINARY, "version"], { cwd });
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/^svc \d+\.\d+\.\d+ \(bun /);
});

test("SIGTERM stops the binary with exit code 0", async () => {
  expect(await server!.stop()).toBe(0);
  expect(server!.lines().some((l) => l.includes('"msg":"shutting down"'))).toBe(true);
  expect(server!.stderr()).toBe("");
});
