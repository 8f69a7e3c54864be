import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, cellTexts, chromiumAvailable, signIn, startDashboardFixture } from "./dashboard-support";

setDefaultTimeout(120_000);

// "Install the SDK" (src/modules/sdk-package): the version and the three install lines GET /sdk gives for this
// server, each with its copy button, and the files as served; desktop and 390 px, light and dark, axe-clean.

let f: DashboardFixture;
let page: Page;

const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  page = await f.context.newPage();
  await page.setViewportSize(DESKTOP);
  await signIn(f, page, "owner@example.com", "/install");
});
afterAll(async () => {
  await f?.close();
});

async function axeClean(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

describe.skipIf(!chromiumAvailable)("Install the SDK in the dashboard", () => {
  test("the version and the install lines of GET /sdk, each copyable; the files as served; desktop and phone", async () => {
    const info = (await (await fetch(`${f.ts.url}/sdk`)).json()) as { version: string; install: Record<string, string>; files: { path: string; etag: string }[] };
    await page.getByRole("heading", { level: 1, name: "Install the SDK" }).waitFor();
    await page.getByText(`svc-sdk ${info.version}`).waitFor();
    const lines = await page.locator("pre.command code").allInnerTexts();
    // The page asks with the browser's own origin, the same server.
    expect(lines).toEqual([info.install.npm, info.install.module, info.install.browserModule]);
    for (const name of ["Copy: The npm package", "Copy: One ES module, for servers and scripts", "Copy: One ES module, for browsers"]) {
      await page.getByRole("button", { name }).waitFor();
    }
    const table = page.getByRole("table", { name: "The SDK's files as this server serves them" });
    const row = table.getByRole("row").filter({ hasText: "/sdk/svc-sdk.tgz" });
    expect(await cellTexts(row)).toEqual(expect.arrayContaining([info.files[0]!.etag, "not compressed"]));
    expect(await page.getByRole("link", { name: "Install the SDK" }).getAttribute("aria-current")).toBe("page");
    await axeClean("install");
    await page.setViewportSize(PHONE);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await axeClean("install-phone");
    await page.setViewportSize(DESKTOP);
  });
});
