/**
 * Real browser clients with a browser key, in headless Chromium (issue 28, "Done when"): a page of the
 * project's domain (a local page server, another origin than svc) loads
 * (a) `@openfeature/web-sdk` + `@openfeature/ofrep-web-provider`, reads a killswitch, a gate and a config,
 *     and sees a toggle made through the admin API within its poll interval;
 * (b) `@sentry/browser` with the DSN `http://<browserKey>@host:port/1`, whose captured exception becomes a
 *     tracked error;
 * (c) svc's own browser SDK, imported from the server's GET /sdk/svc-browser.js, reading a flag.
 * The third-party clients are bundled from node_modules by Bun.build (test/fixtures/browser-clients.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Server } from "bun";
import { type Browser, type Page, chromium } from "playwright-core";
import { type TestServer, startTestServer } from "../helpers";
import { waitFor } from "../support/vendor-standin";
import { CHROMIUM, chromiumAvailable } from "./dashboard-support";

let s: TestServer;
let site: Server<unknown>;
let origin: string;
let browserKey: string;
let browser: Browser;

const PAGE = `<!doctype html><html><head><title>shop</title></head><body>shop</body></html>`;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  const built = await Bun.build({ entrypoints: [join(import.meta.dir, "../fixtures/browser-clients.ts")], target: "browser", format: "esm" });
  if (!built.success) throw new Error(built.logs.map(String).join("\n"));
  const clients = await built.outputs[0]!.text();
  site = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request) =>
      new URL(request.url).pathname === "/clients.js"
        ? new Response(clients, { headers: { "content-type": "text/javascript; charset=utf-8" } })
        : new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }),
  });
  origin = `http://127.0.0.1:${site.port}`;

  s = await startTestServer();
  const ok = async (path: string, init: { method?: string; body?: unknown }, status = 201) => {
    const r = await s.api(path, init);
    expect(r.status, `${path}: ${r.text}`).toBe(status);
    return r.body;
  };
  // The project's domain is the page's origin: the browser key minted after it allows that origin only.
  await ok(`/api/admin/projects/${s.projectId}`, { method: "PATCH", body: { domain: origin } }, 200);
  await ok("/api/admin/killswitches", { body: { name: "checkout", value: false } });
  await ok("/api/admin/gates", { body: { name: "swiss", rules: [{ conditions: [{ attr: "country", op: "eq", value: "CH" }], passPercentage: 100 }] } });
  await ok("/api/admin/configs", { body: { name: "limits", schema: { type: "object" }, value: { perMinute: 120 } } });
  const minted = await ok("/api/admin/keys", { body: { type: "browser", name: "shop" } });
  browserKey = minted.key;
  const listed = ((await s.api("/api/admin/keys")).body as { id: string; allowedOrigin: string | null }[]).find((k) => k.id === minted.id);
  expect(listed?.allowedOrigin).toBe(origin);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  site?.stop(true);
  await s?.stop();
});

/** A page of the project's domain; page errors are collected (a client failing quietly must not pass). */
async function openPage(): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  await page.goto(`${origin}/`);
  return { page, problems };
}

const read = (page: Page) => page.evaluate(() => (globalThis as any).flagsRead ?? null);

describe.skipIf(!chromiumAvailable)("browser-key clients in headless Chromium", () => {
  test("OpenFeature web SDK + OFREP web provider: reads a killswitch, a gate and a config, and sees a toggle within its poll interval", async () => {
    const { page, problems } = await openPage();
    await page.evaluate(
      async ({ svcUrl, key }) => {
        const { OpenFeature, OFREPWebProvider, ProviderEvents } = await import(`${location.origin}/clients.js`);
        const g = globalThis as any;
        g.changes = 0;
        await OpenFeature.setProviderAndWait(new OFREPWebProvider({ baseUrl: svcUrl, headers: [["X-SDK-Key", key]], pollInterval: 200 }), { targetingKey: "user-1", country: "CH" });
        const client = OpenFeature.getClient();
        const update = () => {
          g.flagsRead = { checkout: client.getBooleanValue("checkout", true), swiss: client.getBooleanValue("swiss", false), limits: client.getObjectValue("limits", {}) };
        };
        client.addHandler(ProviderEvents.ConfigurationChanged, () => {
          g.changes++;
          update();
        });
        update();
      },
      { svcUrl: s.url, key: browserKey },
    );
    expect(await read(page)).toEqual({ checkout: false, swiss: true, limits: { perMinute: 120 } });
    expect((await s.api("/api/admin/killswitches/checkout/value", { method: "PUT", body: { env: "prod", value: true } })).status).toBe(200);
    await waitFor(async () => (await read(page))?.checkout === true, 15_000, "the toggle to reach the page");
    expect(await read(page)).toEqual({ checkout: true, swiss: true, limits: { perMinute: 120 } });
    expect(await page.evaluate(() => (globalThis as any).changes)).toBeGreaterThanOrEqual(1);
    expect(problems).toEqual([]);
    await page.close();
    expect((await s.api("/api/admin/killswitches/checkout/value", { method: "PUT", body: { env: "prod", value: false } })).status).toBe(200);
  }, 60_000);

  test("@sentry/browser with a browser-key DSN: a captured exception becomes a tracked error", async () => {
    const { page, problems } = await openPage();
    const dsn = `http://${browserKey}@${new URL(s.url).host}/1`;
    await page.evaluate(async (dsn) => {
      const { Sentry } = await import(`${location.origin}/clients.js`);
      Sentry.init({ dsn, defaultIntegrations: false });
      Sentry.captureException(new TypeError("cart total is NaN in the browser"));
      await Sentry.flush(5000);
    }, dsn);
    const found = await waitFor(
      async () => ((await s.api("/api/admin/errors")).body as { message: string; type: string | null }[]).find((e) => e.message.includes("cart total is NaN in the browser")),
      15_000,
      "the tracked error",
    );
    expect(found.type).toBe("TypeError");
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  test("svc's own browser SDK, imported from the server's /sdk/svc-browser.js, reads a flag", async () => {
    const { page, problems } = await openPage();
    await page.evaluate(
      async ({ svcUrl, key }) => {
        const { createBrowserClient } = await import(`${svcUrl}/sdk/svc-browser.js`);
        const svc = createBrowserClient({ baseUrl: svcUrl, key, context: { targetingKey: "user-2", country: "CH" } });
        await svc.ready();
        (globalThis as any).flagsRead = { checkout: svc.isKilled("checkout"), swiss: svc.isEnabled("swiss"), limits: svc.getConfig("limits", { perMinute: 1 }) };
        await svc.close();
      },
      { svcUrl: s.url, key: browserKey },
    );
    expect(await read(page)).toEqual({ checkout: false, swiss: true, limits: { perMinute: 120 } });
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
