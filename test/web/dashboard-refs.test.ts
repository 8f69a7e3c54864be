import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture } from "./dashboard-support";

setDefaultTimeout(90_000);

/** "Code references" on a gate's page (issue 30): per repo count and commit, file:line rows, names as text; desktop and 390 px, light and dark, axe-clean. */

let f: DashboardFixture;
let page: Page;
const SHA = "3f9c2a1e8b7d4c6f0a5e9d2b1c8f7e6a5d4c3b2a";
const HOSTILE_FILE = "<img src=x onerror=alert(1)>/../../etc/passwd";

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  for (const name of ["new-search", "old-banner"]) expect((await f.ts.api("/api/admin/gates", { body: { name } })).status).toBe(201);
  const pushed = await f.ts.api("/api/admin/refs", {
    body: {
      repo: "github.com/acme/shop",
      branch: "main",
      commit: SHA,
      refs: [
        { flag: "new-search", file: "web/src/search.tsx", line: 42, kind: "sdk" },
        { flag: "new-search", file: HOSTILE_FILE, line: 7, kind: "string" },
      ],
    },
  });
  expect(pushed.status).toBe(200);
  expect((await f.ts.api("/api/admin/refs", { body: { repo: "github.com/acme/api", commit: "abc1234", refs: [{ flag: "new-search", file: "handlers/search.go", line: 118, kind: "sdk" }] } })).status).toBe(200);
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/gates");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

describe.skipIf(!chromiumAvailable)("code references in the dashboard", () => {
  test("a gate's page lists its references per repository and file:line; a gate nobody uses says no references", async () => {
    let alerted = false;
    page.on("dialog", async (d) => {
      alerted = true;
      await d.dismiss();
    });
    await page.goto(`${f.ts.url}/gates/new-search`);
    const section = page.getByRole("region", { name: "Code references" });
    await section.getByRole("table").waitFor();
    const repos = await section.getByRole("listitem").allInnerTexts();
    expect(repos.map((t) => t.replace(/, pushed .*$/, ""))).toEqual(["github.com/acme/api: 1 reference at abc1234", "github.com/acme/shop: 2 references at 3f9c2a1e8b7d (main)"]);
    const rows = await section.getByRole("row").allInnerTexts();
    expect(rows.slice(1).map((r) => r.split("\t").map((c) => c.trim()))).toEqual([
      ["handlers/search.go:118", "github.com/acme/api", "SDK call"],
      [`${HOSTILE_FILE}:7`, "github.com/acme/shop", "string"],
      ["web/src/search.tsx:42", "github.com/acme/shop", "SDK call"],
    ]);
    // The file name is text: no element was made from it.
    expect(await page.locator("img[src=x]").count()).toBe(0);
    expect(alerted).toBe(false);
    await noSeriousViolations("refs-gate-desktop");
    await page.setViewportSize({ width: 390, height: 844 });
    await section.getByRole("table").waitFor();
    // The table scrolls in its own box: the page itself is no wider than the phone.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await noSeriousViolations("refs-gate-phone");
    await page.setViewportSize({ width: 1280, height: 860 });

    await page.goto(`${f.ts.url}/gates/old-banner`);
    await page.getByRole("region", { name: "Code references" }).getByText("no references").waitFor();
    expect(await page.getByRole("region", { name: "Code references" }).innerText()).toContain("in 2 pushed repositories.");
    await noSeriousViolations("refs-gate-none");
  });
});
