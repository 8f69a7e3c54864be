import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chromium } from "playwright-core";
import { type TestServer, startTestServer } from "../helpers";
import { CHROMIUM, chromiumAvailable } from "./dashboard-support";

// GET /sdk/svc.js in a browser (issue 27, item 1): a page imports the module the server serves, with no bundler and
// no npm, and reads a killswitch and a config from that server. (test/sdk/served.test.ts covers the tarball.)
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
  expect((await s.api("/api/admin/killswitches", { body: { name: "checkout", value: true } })).status).toBe(201);
  expect((await s.api("/api/admin/configs", { body: { name: "limits", schema: { type: "object" }, value: { perMinute: 120 } } })).status).toBe(201);
});
afterAll(async () => {
  await s?.stop();
});

describe.skipIf(!chromiumAvailable)("svc.js in Chromium", () => {
  test("a page imports /sdk/svc.js as an ES module and reads a killswitch and a config from the server", async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
      page.on("console", (message) => message.type() === "error" && problems.push(`console: ${message.text()}`));
      const html = `<!doctype html><title>app</title>
<script type="module">
import { createClient } from "/sdk/svc.js";
const client = createClient({ baseUrl: location.origin, sdkKey: ${JSON.stringify(s.serverKey)}, env: "prod", stream: false, pollIntervalMs: 600000 });
await client.ready();
window.svcRead = { killed: client.isKilled("checkout"), limits: client.getConfig("limits", { perMinute: 1 }) };
client.close();
</script>`;
      // Only the page is stood in for (a site's own page on the server's origin); /sdk/svc.js and the snapshot are the real server's.
      await page.route(`${s.url}/app/`, (route) => route.fulfill({ contentType: "text/html", body: html }));
      const served: number[] = [];
      page.on("response", (r) => new URL(r.url()).pathname === "/sdk/svc.js" && served.push(r.status()));
      await page.goto(`${s.url}/app/`);
      await page.waitForFunction(() => (globalThis as any).svcRead !== undefined, undefined, { timeout: 10_000 }).catch(() => {});
      expect({ read: await page.evaluate(() => (globalThis as any).svcRead ?? null), problems, served }).toEqual({
        read: { killed: true, limits: { perMinute: 120 } },
        problems: [],
        served: [200],
      });
    } finally {
      await browser.close();
    }
  }, 60_000);
});
