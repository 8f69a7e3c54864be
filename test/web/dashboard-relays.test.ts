import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import type { Page } from "playwright-core";
import { type RunningRelay, startRelay } from "../../src/modules/relays/edge/relay";
import { tempDir } from "../helpers";
import { type DashboardFixture, capture, cellTexts, chromiumAvailable, signIn, startDashboardFixture } from "./dashboard-support";

setDefaultTimeout(90_000);

/** "Edge relays" (src/modules/relays): the empty state's command, then a connected and a stale relay, and forgetting one; desktop and 390 px, light and dark, axe-clean. */

let f: DashboardFixture;
let page: Page;
let relay: RunningRelay | undefined;
const relayDir = tempDir("svc-relays-web-");

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/relays");
});
afterAll(async () => {
  await relay?.stop();
  await f?.close();
  rmSync(relayDir, { recursive: true, force: true });
});

async function axeClean(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

describe.skipIf(!chromiumAvailable)("edge relays in the dashboard", () => {
  test("no relay yet: the page says how to start one", async () => {
    await page.getByRole("heading", { level: 1, name: "Edge relays" }).waitFor();
    const command = page.locator("pre.command code");
    await command.waitFor();
    expect(await command.innerText()).toStartWith("svc serve --relay ");
    await axeClean("relays-empty");
  });

  test("a connected and a stale relay, badges in words; an owner forgets the stale one; desktop and phone", async () => {
    relay = await startRelay({ port: 0, host: "127.0.0.1", dataDir: relayDir, upstream: f.ts.url, key: f.ts.serverKey, name: "edge-fra-1", quiet: true, logRequests: false });
    const lookup = await fetch(`${f.ts.url}/api/sdk/v1/key`, { headers: { "x-sdk-key": f.ts.serverKey, "x-svc-relay": "id=rly_old; name=edge-old; version=1.0.0" } });
    expect(lookup.status).toBe(200);
    const table = page.getByRole("table", { name: /Edge relays with their state/ });
    const live = table.getByRole("row").filter({ hasText: "edge-fra-1" }).filter({ hasText: "connected" });
    // The list reloads every few seconds: wait for both rows, the relay's with its streams open.
    expect((await cellTexts(live)).join(" ")).toContain("dev, prod, staging");
    const old = table.getByRole("row").filter({ hasText: "edge-old" });
    expect(await cellTexts(old)).toEqual(expect.arrayContaining(["stale", "1.0.0", "none"]));
    await axeClean("relays");
    await page.setViewportSize({ width: 390, height: 844 });
    await axeClean("relays-phone");
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByRole("button", { name: "Forget edge relay edge-old" }).click();
    const dialog = page.getByRole("dialog", { name: "Forget edge relay edge-old" });
    await dialog.waitFor();
    await axeClean("relays-forget");
    await dialog.getByRole("button", { name: "Forget relay" }).click();
    await page.getByText("Forgot edge-old.").waitFor();
    await old.waitFor({ state: "detached" });
    expect((await f.ts.api<{ name: string }[]>("/api/admin/relays")).body.map((r) => r.name)).toEqual(["edge-fra-1"]);
  });
});
