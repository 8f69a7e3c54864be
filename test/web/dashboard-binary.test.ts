import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { type InitOutput, type ServeProcess, type StoreArgs, freshStoreArgs, run, startServe } from "../cli/process";
import { tempDir } from "../helpers";
import { ensureBinary } from "../support/binary";
import { chromiumAvailable, newBrowserContext } from "./dashboard-support";

// The "done when", proven on the compiled binary: the dashboard there is the bundle `bun build --compile` embedded.
setDefaultTimeout(120_000);

const dataDir = tempDir("svc-dash-bin-");
let store: StoreArgs | undefined;
let keys: InitOutput;
let server: ServeProcess | undefined;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  const binary = await ensureBinary();
  store = await freshStoreArgs();
  const init = await run([binary, "init", "--data", dataDir, ...store.args, "--json"]);
  if (init.code !== 0) throw new Error(`svc init failed (${init.code}): ${init.stderr}`);
  keys = JSON.parse(init.stdout);
  server = await startServe([binary, "serve", "--port", "0", "--data", dataDir, "--no-request-log", ...store.args]);
  const schema = { type: "object", properties: { max: { type: "integer", minimum: 1 } }, required: ["max"] };
  for (const [path, body] of [
    ["/api/admin/killswitches", { name: "checkout" }],
    ["/api/admin/configs", { name: "limits", schema, value: { max: 3 } }],
  ] as const) {
    const res = await fetch(server.url + path, { method: "POST", headers: { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(res.status).toBe(201);
  }
  context = await newBrowserContext();
  page = await context.newPage();
}, 300_000);

afterAll(async () => {
  await context?.close();
  if (server && server.proc.exitCode === null) await server.stop();
  await store?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Without SMTP the server writes each mail's link to <data>/outbox.log, one JSON line per mail. */
function lastLinkTo(email: string): string {
  const lines = readFileSync(join(dataDir, "outbox.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const found = lines.findLast((l) => l.to === email);
  if (!found) throw new Error(`no mail to ${email} in the outbox`);
  return found.link;
}

async function prodValue(name: string): Promise<boolean | undefined> {
  const res = await fetch(`${server!.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": keys.serverKey } });
  return (await res.json()).killswitches?.[name]?.value;
}

describe.skipIf(!chromiumAvailable)("the dashboard of the compiled binary", () => {
  test("a stranger at / is sent to sign in, and comes back there", async () => {
    const doc = await fetch(`${server!.url}/`, { redirect: "manual" });
    expect(doc.status).toBe(303);
    expect(doc.headers.get("location")).toBe("/signin?redirect=%2F");
  });

  test("sign in by magic link, find a killswitch with the palette, toggle it on prod with a confirmation: the SDK sees it within a second", async () => {
    await page.goto(server!.url);
    await page.waitForURL((url) => url.pathname === "/signin");
    await page.getByLabel("Email").fill(keys.ownerEmail);
    await page.getByRole("button", { name: "Send sign-in link" }).click();
    await page.waitForLoadState();
    await page.goto(lastLinkTo(keys.ownerEmail));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/");
    await page.getByRole("heading", { level: 1 }).waitFor();

    // Every asset the document references came from the binary, gzipped under the budget.
    const assets = await page.evaluate(() => performance.getEntriesByType("resource").map((e) => ({ name: e.name, size: (e as PerformanceResourceTiming).encodedBodySize })));
    const ours = assets.filter((a) => new URL(a.name).pathname.startsWith("/assets/"));
    expect(ours.length).toBeGreaterThan(0);
    const total = ours.reduce((sum, a) => sum + a.size, 0);
    console.log(`dashboard bundle as served by the binary (gzip): ${(total / 1024).toFixed(1)} KB in ${ours.length} files`);
    expect(total).toBeLessThan(300 * 1024);
    const served = await page.request.get(`${server!.url}/`);
    expect(served.headers()["x-frame-options"]).toBe("DENY");
    expect(served.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(served.headers()["content-security-policy"]).toContain("script-src 'self'");
    const asset = await page.request.get(ours[0]!.name);
    expect(asset.headers()["cache-control"]).toContain("immutable");

    await page.keyboard.press("Control+k");
    const palette = page.getByRole("dialog", { name: "Go to" });
    await palette.getByRole("combobox").fill("checkout");
    // Enter goes to the active option: wait until it is the killswitch.
    await palette.getByRole("option", { name: /checkout/, selected: true }).waitFor();
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === "/killswitches/checkout");
    await page.getByRole("switch", { name: "checkout on prod" }).click();
    const confirm = page.getByRole("dialog", { name: "Kill checkout on prod?" });
    await confirm.waitFor();
    expect(await prodValue("checkout")).toBe(false);
    await confirm.getByRole("button", { name: "Kill in prod" }).click();
    const clicked = Date.now();
    let seen = await prodValue("checkout");
    while (seen !== true && Date.now() - clicked < 1000) seen = await prodValue("checkout");
    expect(seen).toBe(true);
  });

  test("a config draft with a schema error is shown inline and cannot be published", async () => {
    await page.goto(`${server!.url}/configs/limits`);
    const editor = page.getByRole("textbox", { name: "Value of limits on dev (JSON)" });
    await editor.click();
    await page.keyboard.press("Control+a");
    await page.keyboard.press("Delete");
    await page.keyboard.type('{"max": 0}');
    await page.getByRole("alert").filter({ hasText: "must be >= 1" }).waitFor();
    expect(await editor.getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByRole("button", { name: "Save draft" }).isDisabled()).toBe(true);
    expect(await page.getByRole("button", { name: "Publish draft to dev" }).isDisabled()).toBe(true);
  });

  test("a key is minted and its secret shown once", async () => {
    await page.goto(`${server!.url}/keys`);
    await page.getByRole("button", { name: "New SDK key" }).click();
    await page.getByRole("dialog", { name: "New SDK key" }).getByRole("button", { name: "Create key" }).click();
    const secret = await page.getByLabel("The new SDK key", { exact: true }).inputValue();
    expect(secret).toMatch(/^sdk_server_/);
    await page.getByRole("button", { name: "Done" }).click();
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "SDK keys" }).waitFor();
    expect(await page.content()).not.toContain(secret);
  });
});
