import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, tempDir, type TestServer } from "../helpers";

// The SDK from the server itself (issue 27, item 1; DECISIONS "The SDK, from the server itself"): `svc-sdk` is not
// on npm, so GET /sdk/svc-sdk.tgz serves the npm package of the server's own version and GET /sdk/svc.js the same
// SDK as one ES module. Here: the tarball unpacked by tar and by `npm install <url>`, and svc.js imported in Bun,
// each reading a killswitch from the real server. (test/web/sdk-served.test.ts loads svc.js in Chromium.)
setDefaultTimeout(120_000);

const REPO = join(import.meta.dir, "../..");
const rootVersion = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;

let s: TestServer;
let work: string;

/** The parent `npm test`'s npm_* variables must not steer the npm we run. */
function cleanEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => !k.toLowerCase().startsWith("npm_") && v !== undefined)) as Record<string, string>;
}

async function run(cmd: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  const child = Bun.spawn(cmd, { cwd, env: cleanEnv(), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, out, err };
}

/** A program that reads the `checkout` killswitch with the SDK module at `spec`, printing what it saw as JSON. */
function reader(spec: string): string {
  return `import { createClient } from ${JSON.stringify(spec)};
const client = createClient({ baseUrl: ${JSON.stringify(s.url)}, sdkKey: ${JSON.stringify(s.serverKey)}, env: "prod", stream: false, pollIntervalMs: 600000 });
await client.ready();
console.log(JSON.stringify({ killed: client.isKilled("checkout"), typeofCreate: typeof createClient }));
client.close();
`;
}

beforeAll(async () => {
  work = tempDir("svc-sdk-served-");
  s = await startTestServer();
  expect((await s.api("/api/admin/killswitches", { body: { name: "checkout", value: true } })).status).toBe(201);
});
afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("GET /sdk", () => {
  test("the SDK's version, its three files as they are served (size, gzipped size, ETag) and the install lines for this server, without credentials", async () => {
    const res = await fetch(`${s.url}/sdk`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const info = (await res.json()) as { version: string; baseUrl: string; files: { path: string; contentType: string; bytes: number; gzipBytes: number | null; etag: string }[]; install: Record<string, string> };
    expect(info.version).toBe(rootVersion);
    expect(info.baseUrl).toBe(s.url);
    expect(info.install).toEqual({
      npm: `npm install ${s.url}/sdk/svc-sdk.tgz`,
      module: `import { createClient } from "${s.url}/sdk/svc.js";`,
      browserModule: `import { createBrowserClient } from "${s.url}/sdk/svc-browser.js";`,
    });
    expect(info.files.map((f) => f.path)).toEqual(["/sdk/svc-sdk.tgz", "/sdk/svc.js", "/sdk/svc-browser.js"]);
    for (const file of info.files) {
      const plain = await fetch(`${s.url}${file.path}`, { headers: { "accept-encoding": "identity" } });
      expect(plain.headers.get("content-type")).toBe(file.contentType);
      expect(plain.headers.get("etag")).toBe(file.etag);
      expect((await plain.arrayBuffer()).byteLength).toBe(file.bytes);
      if (file.gzipBytes !== null) {
        const gz = await fetch(`${s.url}${file.path}`, { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
        expect(gz.headers.get("content-encoding")).toBe("gzip");
        expect((await gz.arrayBuffer()).byteLength).toBe(file.gzipBytes);
      }
    }
  });

  test("a Host this server does not answer to is BAD_REQUEST, as for every link it hands out", async () => {
    const res = await fetch(`${s.url}/sdk`, { headers: { host: "evil.example" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("BAD_REQUEST");
  });
});

describe("GET /sdk/svc-sdk.tgz", () => {
  test("an npm tarball of svc-sdk at the server's version, without credentials; tar unpacks it and its index.js reads a killswitch", async () => {
    const res = await fetch(`${s.url}/sdk/svc-sdk.tgz`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/gzip");
    expect(res.headers.get("cache-control")).toBe("public, max-age=300, must-revalidate");
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-z]+"$/);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    const again = await fetch(`${s.url}/sdk/svc-sdk.tgz`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");

    const file = join(work, "svc-sdk.tgz");
    writeFileSync(file, bytes);
    const dir = join(work, "unpacked");
    mkdirSync(dir);
    const listed = await run(["tar", "-tzf", file], work);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out.trim().split("\n").sort()).toEqual(["package/README.md", "package/browser.d.ts", "package/browser.js", "package/index.d.ts", "package/index.js", "package/package.json"]);
    const unpacked = await run(["tar", "-xzf", file, "-C", dir], work);
    expect(unpacked.code, unpacked.err).toBe(0);
    const manifest = JSON.parse(readFileSync(join(dir, "package/package.json"), "utf8"));
    expect(manifest).toMatchObject({ name: "svc-sdk", version: rootVersion, type: "module", main: "./index.js", types: "./index.d.ts" });
    const mod = await import(join(dir, "package/index.js"));
    expect(typeof mod.createClient).toBe("function");
    writeFileSync(join(dir, "read.mjs"), reader("./package/index.js"));
    const read = await run([process.execPath, "read.mjs"], dir);
    expect(read.code, read.err).toBe(0);
    expect(JSON.parse(read.out)).toEqual({ killed: true, typeofCreate: "function" });
  });

  test("`npm install http://HOST:PORT/sdk/svc-sdk.tgz` installs it into a project (the registry never asked), and Node imports it by name", async () => {
    const app = join(work, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true, type: "module" }));
    // A registry on a closed loopback port: were npm to ask one for anything, the install would fail here, never reach out.
    const url = `${s.url}/sdk/svc-sdk.tgz`;
    const installed = await run(["npm", "install", url, "--no-audit", "--no-fund", "--no-update-notifier", "--registry", "http://127.0.0.1:9/", "--cache", join(work, "npm-cache")], app);
    expect(installed.code, `${installed.out}\n${installed.err}`).toBe(0);
    const pkg = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
    expect(pkg.dependencies).toEqual({ "svc-sdk": url });
    expect(JSON.parse(readFileSync(join(app, "node_modules/svc-sdk/package.json"), "utf8")).version).toBe(rootVersion);
    writeFileSync(join(app, "read.mjs"), reader("svc-sdk"));
    const read = await run(["node", "read.mjs"], app);
    expect(read.code, read.err).toBe(0);
    expect(JSON.parse(read.out)).toEqual({ killed: true, typeofCreate: "function" });
  });
});

describe("GET /sdk/svc.js", () => {
  test("one ES module, the tarball's index.js, open to any origin, gzip when asked; Bun imports it and reads a killswitch", async () => {
    const res = await fetch(`${s.url}/sdk/svc.js`, { headers: { "accept-encoding": "identity" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("cache-control")).toBe("public, max-age=300, must-revalidate");
    const etag = res.headers.get("etag")!;
    const text = await res.text();
    expect(text).toContain(`svc-sdk ${rootVersion}`);
    expect(text).toContain("export {");
    expect(text).toBe(readFileSync(join(work, "unpacked/package/index.js"), "utf8"));
    expect((await fetch(`${s.url}/sdk/svc.js`, { headers: { "accept-encoding": "identity", "if-none-match": etag } })).status).toBe(304);
    const gz = await fetch(`${s.url}/sdk/svc.js`, { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gz.headers.get("etag")).not.toBe(etag);

    const file = join(work, "svc.js");
    writeFileSync(file, text);
    const mod = await import(file);
    expect(typeof mod.createClient).toBe("function");
    writeFileSync(join(work, "read-svc.mjs"), reader("./svc.js"));
    const read = await run([process.execPath, "read-svc.mjs"], work);
    expect(read.code, read.err).toBe(0);
    expect(JSON.parse(read.out)).toEqual({ killed: true, typeofCreate: "function" });
  });

  test("both are in the OpenAPI document, public", async () => {
    const doc = (await (await fetch(`${s.url}/openapi/json`)).json()) as any;
    for (const path of ["/sdk/svc-sdk.tgz", "/sdk/svc.js", "/sdk/svc-browser.js"]) {
      expect(doc.paths[path]?.get?.tags).toEqual(["SDK"]);
      expect(doc.paths[path].get.description).toContain(path === "/sdk/svc-sdk.tgz" ? "npm install" : path.slice("/sdk/".length));
    }
  });
});
