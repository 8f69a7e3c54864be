import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { startTestServer, tempDir, type TestServer } from "../helpers";

// The npm package `svc-sdk` as a user gets it: `npm run build:sdk`, `npm pack`, `npm install` of the
// tarball into a fresh project, then the installed copy (never src/sdk) in Bun, Node, Chromium and
// Deno against a real server, and its declarations under a strict tsc.
setDefaultTimeout(60_000);

const REPO = join(import.meta.dir, "../..");
const TSC = join(REPO, "node_modules/typescript/bin/tsc");
const CHROMIUM = "/usr/bin/chromium";
const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable) {
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run must install Debian's chromium`);
  console.warn(`skipping svc-sdk in Chromium: ${CHROMIUM} is missing (apt-get install -y chromium)`);
}
const deno = Bun.which("deno");
if (!deno) console.warn("skipping svc-sdk in Deno: deno is not installed (https://deno.land); Node, Bun and Chromium still run");

const rootPackage = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };
const sdkSource = readFileSync(join(REPO, "src/sdk/index.ts"), "utf8");
/** Every name src/sdk exports (values and types): the package must export each one. */
const exportedNames = [...sdkSource.matchAll(/^export (?:declare )?(?:type|interface|class|(?:async )?function|const|let) (\w+)/gm)].map((m) => m[1]!);
const repoLicense = ["LICENSE", "LICENSE.md", "LICENSE.txt"].some((name) => existsSync(join(REPO, name)));

let work: string;
/** What `npm run build:sdk -- --outdir` wrote. */
let pkgDir: string;
let tarball: string;
/** A fresh npm project with the tarball installed. */
let app: string;
let installed: string;
let s: TestServer;

/** The parent `npm test`'s npm_* variables (prefix, lifecycle, config) must not steer the npm we run. */
function cleanEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => !k.toLowerCase().startsWith("npm_") && v !== undefined)) as Record<string, string>;
}

async function run(cmd: string[], cwd: string): Promise<string> {
  const child = Bun.spawn(cmd, { cwd, env: cleanEnv(), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}:\n${out}\n${err}`);
  return out;
}

/** npm, offline and with a private cache: installing a local package needs no registry. */
const npm = (args: string[], cwd: string) => run(["npm", ...args, "--no-audit", "--no-fund", "--offline", "--cache", join(work, "npm-cache")], cwd);

function newProject(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", private: true, type: "module" }));
  return dir;
}

beforeAll(async () => {
  work = tempDir("svc-sdk-package-");
  pkgDir = join(work, "sdk");
  const started = performance.now();
  await run(["npm", "run", "--silent", "build:sdk", "--", "--outdir", pkgDir], REPO);
  const built = performance.now();
  const [packed] = JSON.parse(await npm(["pack", pkgDir, "--json", "--pack-destination", work], work)) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, packed!.filename);
  app = newProject("app");
  await npm(["install", tarball], app);
  installed = join(app, "node_modules/svc-sdk");
  console.log(`svc-sdk: build ${Math.round(built - started)} ms, pack + install ${Math.round(performance.now() - built)} ms`);

  s = await startTestServer({ streamHeartbeatMs: 200 });
  expect((await s.api("/api/admin/killswitches", { body: { name: "checkout", value: false, switches: { eu: true } } })).status).toBe(201);
  expect((await s.api("/api/admin/configs", { body: { name: "limits", schema: { type: "object" }, value: { perMinute: 120 } } })).status).toBe(201);
});
afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the package", () => {
  test("npm run build:sdk writes package.json, index.js, index.d.ts, browser.js, browser.d.ts and a README; the manifest is publishable", () => {
    const expected = ["README.md", "browser.d.ts", "browser.js", "index.d.ts", "index.js", "package.json", ...(repoLicense ? ["LICENSE"] : [])].sort();
    expect(readdirSync(pkgDir).sort()).toEqual(expected);
    const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
    expect(manifest).toMatchObject({
      name: "svc-sdk",
      version: rootPackage.version,
      type: "module",
      exports: { ".": { types: "./index.d.ts", import: "./index.js", default: "./index.js" }, "./browser": { types: "./browser.d.ts", import: "./browser.js", default: "./browser.js" } },
      sideEffects: false,
      engines: { node: ">=18" },
    });
    // "types" must come first in the condition map (TypeScript takes the first match).
    expect(Object.keys(manifest.exports["."])[0]).toBe("types");
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies", "bundleDependencies", "devDependencies", "private", "scripts"]) {
      expect(manifest[field], field).toBeUndefined();
    }
    for (const path of [manifest.main, manifest.types, ...Object.values(manifest.exports["."]), ...Object.values(manifest.exports["./browser"]), ...manifest.files]) {
      expect(existsSync(join(pkgDir, path as string)), String(path)).toBe(true);
    }
    // The tarball holds exactly the package (the installed copy is what npm unpacked from it).
    expect(readdirSync(installed).sort()).toEqual(expected);
    expect(readFileSync(join(installed, "index.js"), "utf8")).toBe(readFileSync(join(pkgDir, "index.js"), "utf8"));
  });

  test("index.js and browser.js are readable, self-contained ES modules; no file names a Bun, Deno or Node API", () => {
    const js = readFileSync(join(pkgDir, "index.js"), "utf8");
    const dts = readFileSync(join(pkgDir, "index.d.ts"), "utf8");
    const browserJs = readFileSync(join(pkgDir, "browser.js"), "utf8");
    const browserDts = readFileSync(join(pkgDir, "browser.d.ts"), "utf8");
    expect(browserJs).toMatch(/^export \{\n(?:  \w+,?\n)+\};\n$/m);
    expect(js.split("\n").length).toBeGreaterThan(100); // not minified
    expect(js).toMatch(/^export \{\n(?:  \w+,?\n)+\};\n$/m);
    // Comments aside (the declarations keep the source's doc comments, whose examples read process.env).
    const codeOf = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/(?!\/)[^\n]*$/gm, "");
    for (const [name, text] of [["index.js", js], ["index.d.ts", dts], ["browser.js", browserJs], ["browser.d.ts", browserDts]] as const) {
      const code = codeOf(text);
      for (const pattern of [/\b(?:Bun|Deno|process|Buffer|global|__dirname|__filename|NodeJS)\b/, /["'`]node:/, /\brequire\s*\(/, /^\s*import\b/m, /\bimport\s*\(/, /\bfrom\s*["'`]/, /\/\/\/\s*<reference/]) {
        expect(code.match(pattern)?.[0] ?? null, `${name} matches ${pattern}`).toBeNull();
      }
    }
  });

  test("the built module exports the same values as src/sdk, and rebuilding gives the same bytes", async () => {
    const built = await import(join(pkgDir, "index.js"));
    const source = await import("../../src/sdk");
    expect(Object.keys(built).sort()).toEqual(Object.keys(source).sort());
    const before = Object.fromEntries(readdirSync(pkgDir).map((f) => [f, readFileSync(join(pkgDir, f), "utf8")]));
    await run(["npm", "run", "--silent", "build:sdk", "--", "--outdir", pkgDir], REPO);
    const after = Object.fromEntries(readdirSync(pkgDir).map((f) => [f, readFileSync(join(pkgDir, f), "utf8")]));
    expect(after).toEqual(before);
    expect(readdirSync(work).filter((f) => f.includes(".tmp-") || f.includes(".old-"))).toEqual([]);
  });

  test("index.d.ts type-checks a strict consumer, as a browser project (bundler) and a Node project (nodenext, @types/node only)", async () => {
    expect(exportedNames).toContain("createClient");
    writeFileSync(
      join(app, "consumer.ts"),
      `import { ${exportedNames.join(", ")} } from "svc-sdk";

const options: ClientOptions = { baseUrl: "http://localhost:8080", sdkKey: "sdk_server_x", env: "prod", onError: (e: SvcError) => console.warn(e.status, e.code) };
const client: Client = createClient(options);
await client.ready();
const killed: boolean = client.isKilled("checkout", "eu");
const limits: { perMinute: number } = client.getConfig("limits", { perMinute: 60 });
const snapshot: Readonly<Snapshot> | null = client.snapshot();
const off: () => void = client.onChange((next) => console.log(next.revision, next.epoch, next.killswitches["checkout"]?.switches));
off();
client.close();
const events: SseEvent[] = [];
await readEventStream(new ReadableStream<Uint8Array>(), (event) => events.push(event));
const error: Error = new SvcError("denied", 401, "UNAUTHORIZED");
console.log(killed, limits, snapshot, error);
// The declarations are real types, not any: each of these must be an error.
// @ts-expect-error env is dev, staging or prod
createClient({ baseUrl: "x", sdkKey: "y", env: "production" });
// @ts-expect-error sdkKey is required
createClient({ baseUrl: "x" });
// @ts-expect-error getConfig is typed by its default
const wrong: string = client.getConfig("limits", 60);
// @ts-expect-error a gate's context is an object of attributes
client.isEnabled("checkout", "user-1");
const enabled: boolean = client.isEnabled("new-checkout", { user_id: "u1", country: "de" });
// @ts-expect-error no such method
client.getFlag("checkout");
console.log(enabled);
console.log(wrong);
`,
    );
    const base = { strict: true, noEmit: true, target: "ES2022", skipLibCheck: false, skipDefaultLibCheck: true, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true };
    writeFileSync(
      join(app, "tsconfig.browser.json"),
      JSON.stringify({ compilerOptions: { ...base, module: "ESNext", moduleResolution: "Bundler", lib: ["ES2022", "DOM"], types: [] }, files: ["consumer.ts"] }),
    );
    writeFileSync(
      join(app, "tsconfig.node.json"),
      JSON.stringify({
        compilerOptions: { ...base, module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022"], types: ["node"], typeRoots: [join(REPO, "node_modules/@types")] },
        files: ["consumer.ts"],
      }),
    );
    await Promise.all(["tsconfig.browser.json", "tsconfig.node.json"].map((config) => run(["node", TSC, "-p", config], app)));
  });

  test("npm install of the package directory (a link) also imports by name from Node ESM", async () => {
    const linked = newProject("linked");
    await npm(["install", pkgDir], linked);
    writeFileSync(join(linked, "check.mjs"), `import * as sdk from "svc-sdk";\nconsole.log(JSON.stringify(Object.keys(sdk).sort()));\n`);
    expect(JSON.parse(await run(["node", "check.mjs"], linked))).toEqual(Object.keys(await import("../../src/sdk")).sort());
    writeFileSync(join(linked, "check-browser.mjs"), `import * as sdk from "svc-sdk/browser";\nconsole.log(JSON.stringify(Object.keys(sdk).sort()));\n`);
    expect(JSON.parse(await run(["node", "check-browser.mjs"], linked))).toEqual(Object.keys(await import("../../src/sdk/browser")).sort());
  });
});

describe("against a real server", () => {
  const first = { killed: false, eu: true, limits: { perMinute: 120 }, missing: 5, badKey: { svcError: true, status: 401 } };
  const { badKey: _, ...initial } = first;
  const toggled = { ...initial, killed: true };

  async function toggleCheckout(): Promise<void> {
    expect((await s.api("/api/admin/killswitches/checkout/toggle", { body: {} })).status).toBe(200);
  }
  const streams = () => s.server.ctx.services.snapshots.listenerCount();
  /**
   * Each test starts once the previous client's stream is gone and toggles once its own is open:
   * a toggle before that would still arrive (the stream starts with any newer snapshot), but this
   * keeps it the live path.
   */
  async function streamsUntil(check: (open: number) => boolean): Promise<void> {
    const deadline = Date.now() + 3000;
    while (!check(streams()) && Date.now() < deadline) await Bun.sleep(10);
  }

  /**
   * The same program for Node and Deno: print the first answers, then the answers after the
   * next snapshot (polling is every 10 minutes, so only the stream can bring it), then exit.
   */
  function clientProgram(specifier: string): string {
    return `import { createClient, SvcError } from ${JSON.stringify(specifier)};
const baseUrl = ${JSON.stringify(s.url)};
const bad = createClient({ baseUrl, sdkKey: "sdk_server_nosuchkey0000000000", stream: false, pollIntervalMs: 600000, onError: () => {} });
const badKey = await bad.ready().then(() => null, (e) => ({ svcError: e instanceof SvcError, status: e.status }));
bad.close();
const client = createClient({ baseUrl, sdkKey: ${JSON.stringify(s.serverKey)}, env: "prod", pollIntervalMs: 600000, onError: (e) => console.error(e.message) });
await client.ready();
const read = () => ({ killed: client.isKilled("checkout"), eu: client.isKilled("checkout", "eu"), limits: client.getConfig("limits", { perMinute: 1 }), missing: client.getConfig("missing", 5) });
console.log(JSON.stringify({ ...read(), badKey }));
client.onChange(() => {
  console.log(JSON.stringify(read()));
  client.close();
});
`;
  }

  async function runProgram(cmd: string[], cwd: string): Promise<void> {
    await streamsUntil((open) => open === 0);
    const child = Bun.spawn(cmd, { cwd, env: cleanEnv(), stdout: "pipe", stderr: "pipe" });
    const reader = child.stdout.getReader();
    const decoder = new TextDecoder();
    let out = "";
    const nextLine = async (): Promise<unknown> => {
      while (!out.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`${cmd[0]} exited early: ${await new Response(child.stderr).text()}`);
        out += decoder.decode(value, { stream: true });
      }
      const line = out.slice(0, out.indexOf("\n"));
      out = out.slice(out.indexOf("\n") + 1);
      return JSON.parse(line);
    };
    try {
      expect(await nextLine()).toEqual(first);
      await streamsUntil((open) => open > 0);
      await toggleCheckout();
      try {
        expect(await nextLine()).toEqual(toggled);
      } finally {
        await toggleCheckout();
      }
      expect(await child.exited, await new Response(child.stderr).text()).toBe(0);
    } finally {
      child.kill();
    }
  }

  test("Bun: the installed package, resolved by name through its exports", async () => {
    const resolved = Bun.resolveSync("svc-sdk", app);
    expect(resolved).toBe(join(installed, "index.js"));
    const sdk = (await import(resolved)) as typeof import("../../src/sdk");
    const bad = sdk.createClient({ baseUrl: s.url, sdkKey: "sdk_server_nosuchkey0000000000", stream: false, pollIntervalMs: 600_000, onError: () => {} });
    const badKey = await bad.ready().then(
      () => null,
      (e) => ({ svcError: e instanceof sdk.SvcError, status: e.status }),
    );
    bad.close();
    await streamsUntil((open) => open === 0);
    const errors: string[] = [];
    const client = sdk.createClient({ baseUrl: s.url, sdkKey: s.serverKey, env: "prod", pollIntervalMs: 600_000, onError: (e) => errors.push(e.message) });
    try {
      await client.ready();
      const read = () => ({
        killed: client.isKilled("checkout"),
        eu: client.isKilled("checkout", "eu"),
        limits: client.getConfig("limits", { perMinute: 1 }),
        missing: client.getConfig("missing", 5),
      });
      expect({ ...read(), badKey }).toEqual(first);
      await streamsUntil((open) => open > 0);
      const changed = new Promise<void>((resolve) => client.onChange(() => resolve()));
      await toggleCheckout();
      try {
        await changed;
        expect(read()).toEqual(toggled);
      } finally {
        await toggleCheckout();
      }
      expect(errors).toEqual([]);
    } finally {
      client.close();
    }
  });

  test("Node: a program in the npm project imports svc-sdk by name", async () => {
    writeFileSync(join(app, "client.mjs"), clientProgram("svc-sdk"));
    await runProgram(["node", "client.mjs"], app);
  });

  test.skipIf(!deno)("Deno: the installed index.js by file URL", async () => {
    writeFileSync(join(work, "deno-client.mjs"), clientProgram(pathToFileURL(join(installed, "index.js")).href));
    await runProgram([deno!, "run", `--allow-net=${new URL(s.url).host}`, "--no-prompt", "deno-client.mjs"], work);
  });

  test.skipIf(!chromiumAvailable)("Chromium: a page loads the served index.js through an import map as svc-sdk", async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
      page.on("console", (message) => {
        // Chromium logs every non-2xx response; the one 401 is the bad-key client's, asserted through badKey.
        if (message.type() === "error" && !/status of 401/.test(message.text())) problems.push(`console: ${message.text()}`);
      });
      const html = `<!doctype html>
<script type="importmap">{ "imports": { "svc-sdk": "/sdk-test/node_modules/svc-sdk/index.js" } }</script>
<script type="module">
import { createClient, SvcError } from "svc-sdk";
const bad = createClient({ baseUrl: location.origin, sdkKey: "sdk_server_nosuchkey0000000000", stream: false, pollIntervalMs: 600000, onError: () => {} });
const badKey = await bad.ready().then(() => null, (e) => ({ svcError: e instanceof SvcError, status: e.status }));
bad.close();
const client = createClient({ baseUrl: location.origin, sdkKey: ${JSON.stringify(s.serverKey)}, env: "prod", pollIntervalMs: 600000, onError: (e) => console.error(e.message) });
window.svcClient = client;
window.svcRead = () => ({ killed: client.isKilled("checkout"), eu: client.isKilled("checkout", "eu"), limits: client.getConfig("limits", { perMinute: 1 }), missing: client.getConfig("missing", 5) });
await client.ready();
window.svcFirst = { ...window.svcRead(), badKey };
</script>`;
      // The page and the package come from the server's own origin (as a site would serve them); the SDK's requests reach the real server.
      await page.route(`${s.url}/sdk-test/**`, (route) => {
        const path = new URL(route.request().url()).pathname;
        if (path === "/sdk-test/") return route.fulfill({ contentType: "text/html", body: html });
        if (path === "/sdk-test/node_modules/svc-sdk/index.js") return route.fulfill({ contentType: "text/javascript", body: readFileSync(join(installed, "index.js"), "utf8") });
        return route.fulfill({ status: 404, body: "not found" });
      });
      await streamsUntil((open) => open === 0);
      await page.goto(`${s.url}/sdk-test/`);
      await page.waitForFunction(() => (globalThis as any).svcFirst !== undefined, undefined, { timeout: 5000 }).catch(() => {});
      expect({ first: await page.evaluate(() => (globalThis as any).svcFirst ?? null), problems }).toEqual({ first, problems: [] });
      await streamsUntil((open) => open > 0);
      await toggleCheckout();
      try {
        await page.waitForFunction(() => (globalThis as any).svcRead().killed === true, undefined, { timeout: 3000 });
        expect(await page.evaluate(() => (globalThis as any).svcRead())).toEqual(toggled);
      } finally {
        await toggleCheckout();
      }
      await page.evaluate(() => (globalThis as any).svcClient.close());
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
