import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { getSchemaValidator } from "elysia";
import type { BrowserContext, Page } from "playwright-core";
import { chromiumAvailable, newBrowserContext } from "./web/dashboard-support";
import { startTestServer, type TestServer } from "./helpers";

setDefaultTimeout(90_000);

type Operation = { method: string; path: string; op: any };

let s: TestServer;
let doc: any;

beforeAll(async () => {
  s = await startTestServer();
  doc = (await s.api("/openapi/json", { key: null })).body;
});
afterAll(() => s?.stop());

function operationsWithBodies(document: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const [method, op] of Object.entries<any>(item)) if (op?.requestBody) out.push({ method: method.toUpperCase(), path, op });
  }
  return out;
}

/** `{id}` back to Elysia's `:id` (and the OFREP `{*}` wildcard). */
function routePath(openapiPath: string): string {
  return openapiPath.replace(/\{\*\}$/, "*").replace(/\{([^}]+)\}/g, ":$1");
}

describe("/openapi/json `servers`", () => {
  test("is the origin the request used: 127.0.0.1 or localhost, each as browsed", async () => {
    expect(s.url).toStartWith("http://127.0.0.1:");
    expect(doc.servers).toEqual([{ url: s.url, description: "This server" }]);

    const port = new URL(s.url).port;
    const viaLocalhost = await (await fetch(`http://localhost:${port}/openapi/json`)).json();
    expect(viaLocalhost.servers).toEqual([{ url: `http://localhost:${port}`, description: "This server" }]);
    // The rest of the document is the same whatever the origin.
    expect({ ...viaLocalhost, servers: null }).toEqual({ ...doc, servers: null });
  });

  test("a Host that is not ours is never echoed: the server is `/`, relative to the document", async () => {
    const res = await s.server.app.handle(new Request("http://evil.example/openapi/json", { headers: { host: "evil.example" } }));
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain("evil.example");
    expect(JSON.parse(text).servers).toEqual([{ url: "/", description: "This server (relative to the document's URL)" }]);
  });

  test("SERVICE_PUBLIC_URL comes first (the address people use); the page may also fetch it", async () => {
    const pub = await startTestServer({ network: { publicUrl: "https://flags.example.com" } });
    try {
      const body = (await pub.api("/openapi/json", { key: null })).body;
      expect(body.servers).toEqual([
        { url: "https://flags.example.com", description: "This server (SERVICE_PUBLIC_URL)" },
        { url: pub.url, description: "This server" },
      ]);
      const page = await fetch(`${pub.url}/openapi`);
      expect(page.headers.get("content-security-policy")).toContain("connect-src 'self' https://flags.example.com;");
    } finally {
      await pub.stop();
    }
  });
});

describe("request body examples", () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  // Elysia's own string format (t.Integer documents `anyOf: [{type: "string", format: "integer"}, {type: "integer"}]`).
  ajv.addFormat("integer", (value: string) => !!value && Number.isInteger(+value));
  /** The documented schema, with the document's components for any `#/components/...` reference. */
  const validatorFor = (schema: any) => ajv.compile({ ...schema, components: doc.components });

  test("every documented request body carries at least one example, and each validates against the documented schema and the live route's validator", () => {
    const ops = operationsWithBodies(doc);
    expect(ops.length).toBeGreaterThanOrEqual(28);
    s.server.ctx.addAllRoutes!();
    const routes = (s.server.app as any).routes as { method: string; path: string; hooks: { body?: any } }[];
    let checked = 0;
    for (const { method, path, op } of ops) {
      const where = `${method} ${path}`;
      for (const [type, media] of Object.entries<any>(op.requestBody.content)) {
        const schema = media.schema;
        expect(Array.isArray(schema.examples) && schema.examples.length > 0, `${where} (${type}): no examples`).toBe(true);
        const documented = validatorFor(schema);
        for (const example of schema.examples) {
          expect(documented(example), `${where} (${type}) ${JSON.stringify(example)}: ${ajv.errorsText(documented.errors)}`).toBe(true);
          checked++;
        }
      }
      // The same examples against the validator Elysia runs on the route (formats, patterns, additionalProperties).
      const route = routes.find((r) => r.method === method && r.path === routePath(path));
      expect(route, where).toBeDefined();
      if (!route!.hooks.body) {
        // Only OFREP reads its body by hand (documented through `detail.requestBody`).
        expect(path).toStartWith("/ofrep/");
        continue;
      }
      const live = getSchemaValidator(route!.hooks.body) as unknown as { Check(value: unknown): boolean };
      for (const example of route!.hooks.body.examples) expect(live.Check(example), `${where} live ${JSON.stringify(example)}`).toBe(true);
    }
    expect(checked).toBeGreaterThanOrEqual(28);
  });

  test("the check refuses a placeholder example such as `\"name\": \"\"`", () => {
    const schema = doc.paths["/api/admin/killswitches"].post.requestBody.content["application/json"].schema;
    const documented = validatorFor(schema);
    expect(documented({ name: "", value: true, switches: {}, description: null })).toBe(false);
    expect(documented({ name: "checkout", enabled: true })).toBe(false);
    s.server.ctx.addAllRoutes!();
    const route = ((s.server.app as any).routes as any[]).find((r) => r.method === "POST" && r.path === "/api/admin/killswitches");
    expect((getSchemaValidator(route.hooks.body) as any).Check({ name: "" })).toBe(false);
  });

  test("the examples the issue names are the documented ones", () => {
    const example = (method: string, path: string) => doc.paths[path][method].requestBody.content["application/json"].schema.examples[0];
    expect(example("post", "/api/admin/killswitches")).toEqual({ name: "checkout", value: false, switches: { eu: false } });
    expect(example("post", "/api/admin/killswitches/{id}/toggle")).toEqual({ env: "prod" });
    // The config's example value satisfies the config's own example schema.
    const config = example("post", "/api/admin/configs");
    expect(ajv.validate(config.schema, config.value)).toBe(true);
    for (const [, value] of Object.entries(example("patch", "/api/admin/configs/{id}")).filter(([k]) => ["value", "dev", "staging", "prod"].includes(k))) {
      expect(ajv.validate(config.schema, value)).toBe(true);
    }
    expect(ajv.validate(config.schema, example("put", "/api/admin/configs/{id}/drafts").value)).toBe(true);
    // The device-flow examples are one flow: the challenge is S256 of the verifier.
    const verifier = example("post", "/auth/device/token").code_verifier;
    expect(example("post", "/auth/device/code").code_challenge).toBe(createHash("sha256").update(verifier).digest("base64url"));
  });

  test("the admin examples, sent as they are to a real server, are accepted", async () => {
    const example = (method: string, path: string) => doc.paths[path][method].requestBody.content["application/json"].schema.examples[0];
    const send = async (method: string, path: string, url = path, key?: string) => {
      const r = await s.api(url, { method: method.toUpperCase(), body: example(method, path), key, headers: { "x-project-id": s.projectId } });
      expect(r.status, `${method} ${url}: ${r.text}`).toBeLessThan(300);
      return r.body;
    };
    const ks = await send("post", "/api/admin/killswitches");
    await send("post", "/api/admin/killswitches/{id}/toggle", `/api/admin/killswitches/${ks.id}/toggle`);
    await send("put", "/api/admin/killswitches/{id}/switch", `/api/admin/killswitches/${ks.id}/switch`);
    await send("put", "/api/admin/killswitches/{id}/value", `/api/admin/killswitches/${ks.id}/value`);
    await send("delete", "/api/admin/killswitches/{id}/switch", `/api/admin/killswitches/${ks.id}/switch`);
    await send("post", "/api/admin/killswitches/{id}/rollback", `/api/admin/killswitches/${ks.id}/rollback`);

    const config = await send("post", "/api/admin/configs");
    await send("patch", "/api/admin/configs/{id}", `/api/admin/configs/${config.id}`);
    await send("put", "/api/admin/configs/{id}/drafts", `/api/admin/configs/${config.id}/drafts`);
    await send("post", "/api/admin/configs/{id}/publish", `/api/admin/configs/${config.id}/publish`);

    await send("post", "/api/admin/keys");
    await send("post", "/api/admin/tokens");
    await send("patch", "/api/admin/projects/{id}", `/api/admin/projects/${s.projectId}`);
    // Projects are created by people (a device-flow access token), not by a project's key.
    await send("post", "/api/admin/projects", "/api/admin/projects", await s.accessTokenFor("owner@example.com"));
  });
});

describe("/openapi page headers", () => {
  test("the page carries a Content-Security-Policy that allows this server only", async () => {
    const res = await fetch(`${s.url}/openapi`);
    expect(res.status).toBe(200);
    const policy = res.headers.get("content-security-policy")!;
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain("connect-src 'self';");
    expect(policy).toContain("font-src 'self';");
    expect(policy).not.toMatch(/https?:|unsafe-eval|\*/);
    const html = await res.text();
    expect([...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1])).toEqual(["/openapi/prelude.js", "/openapi/scalar.js"]);
    expect(html).not.toMatch(/https?:\/\//);
  });
});

describe.skipIf(!chromiumAvailable)("/openapi in a real browser", () => {
  let context: BrowserContext;
  let origin: string;

  beforeAll(async () => {
    // Browsed as people do locally: by name (localhost is also where Scalar shows its cloud tools by default).
    origin = `http://localhost:${new URL(s.url).port}`;
    context = await newBrowserContext();
  });
  afterAll(async () => {
    await context?.close();
  });

  /**
   * Opens a page that records every request it makes (nothing leaves the
   * machine: any other host is recorded, then aborted) and every CSP
   * violation (a blocked request never reaches the network, so the policy
   * could otherwise hide one).
   */
  async function recordingPage(): Promise<{ page: Page; requests: string[]; violations: () => Promise<string[]> }> {
    const page = await context.newPage();
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    await page.route(
      (url) => url.origin !== origin,
      (route) => route.abort("blockedbyclient"),
    );
    await page.addInitScript(() => {
      const seen: string[] = ((window as any).__cspViolations = []);
      document.addEventListener("securitypolicyviolation", (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    return { page, requests, violations: () => page.evaluate(() => (window as any).__cspViolations as string[]) };
  }

  const CLOUD_LABELS = /Ask AI|Generate MCP|Connect MCP|Deploy|Share|Developer Tools|Open in API Client|Open API Client/i;

  test("renders from this server alone: every request goes to its origin, no CSP violation, no cloud button, snippets carry the origin", async () => {
    const { page, requests, violations } = await recordingPage();
    await page.goto(`${origin}/openapi`);
    await page.getByText("Liveness probe").first().waitFor({ state: "visible", timeout: 30_000 });

    // A code snippet of an operation with a body: this origin and the documented example.
    await page.goto(`${origin}/openapi#tag/killswitches/POST/api/admin/killswitches`);
    const snippet = page.locator("pre, code").filter({ hasText: `curl ${origin}/api/admin/killswitches \\` }).filter({ hasText: "--request POST" }).first();
    await snippet.waitFor({ state: "visible", timeout: 30_000 });
    const text = await snippet.innerText();
    expect(text).toContain('"name": "checkout"');
    expect(text).not.toContain('"name": ""');

    // "Test Request" sends from the page straight to this server (no proxy.scalar.com).
    await page.goto(`${origin}/openapi#tag/system/GET/healthz`);
    await page.getByRole("button", { name: /Test Request/ }).first().click();
    const sent = page.waitForRequest((r) => r.url() === `${origin}/healthz`, { timeout: 30_000 });
    await page.getByRole("button", { name: /^Send/ }).first().click();
    await sent;
    await page.waitForLoadState("networkidle");

    expect(requests.length).toBeGreaterThanOrEqual(5);
    expect(requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
    expect(requests).toEqual(expect.arrayContaining([`${origin}/openapi`, `${origin}/openapi/scalar.js`, `${origin}/openapi/json`, `${origin}/healthz`]));
    expect(await violations()).toEqual([]);

    const body = await page.locator("body").innerText();
    expect(body.match(new RegExp(CLOUD_LABELS.source, "gi")) ?? []).toEqual([]);
    expect(await page.getByRole("button", { name: CLOUD_LABELS }).count()).toBe(0);
    // Links to Scalar's cloud apps are gone too (a "Powered by Scalar" credit to www.scalar.com remains).
    const hrefs = await page.locator("a[href]").evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).href));
    expect(hrefs.filter((href) => /\/\/(api|proxy|dashboard|client|registry|editor|fonts)\.scalar\.com/.test(href))).toEqual([]);
    await page.close();
  });

  test("control: the same recorder catches Scalar's defaults (fonts.scalar.com, Ask AI, MCP, Deploy)", async () => {
    const { page, requests } = await recordingPage();
    // The viewer as it ships, on this server's document: no policy, none of the switches of src/modules/system/openapi.ts.
    await page.route(`${origin}/openapi`, (route) =>
      route.fulfill({
        contentType: "text/html",
        body: `<!doctype html><html><body><script id="api-reference" data-url="/openapi/json"></script><script src="/openapi/scalar.js"></script></body></html>`,
      }),
    );
    await page.goto(`${origin}/openapi`);
    await page.getByText("Liveness probe").first().waitFor({ state: "visible", timeout: 30_000 });
    await page.waitForLoadState("networkidle");
    expect(requests.some((url) => new URL(url).host === "fonts.scalar.com")).toBe(true);
    const body = await page.locator("body").innerText();
    expect(body).toMatch(/Ask AI/);
    expect(body).toMatch(/MCP/);
    expect(body).toMatch(/Deploy/);
    await page.close();
  });
});
