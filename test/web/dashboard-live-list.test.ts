import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page, Route } from "playwright-core";
import { type DashboardFixture, chromiumAvailable, signIn, startDashboardFixture } from "./dashboard-support";

setDefaultTimeout(60_000);

let f: DashboardFixture;
let page: Page;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  expect((await f.ts.api("/api/admin/universes", { body: { name: "web" }, headers: { "x-project-id": f.ts.projectId } })).status).toBe(201);
  for (const [name, description] of [["checkout-button", "Green or blue"], ["pricing-page", "Annual plan first"]]) {
    const res = await f.ts.api("/api/admin/experiments", { body: { name, description, universe: "web", variants: [{ key: "control", weight: 1 }, { key: "b", weight: 1 }], allocation: [0, 500] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/experiments");
});
afterAll(async () => {
  await f?.close();
});

describe.skipIf(!chromiumAvailable)("a live list", () => {
  // A full-suite run once showed the unfiltered list 5 s after a search: the search's answer is thrown away when the
  // live reload (every 3 s) starts another load before it lands, so with answers slower than 3 s none was ever shown.
  test("a search's answer is shown though the live reload asked again while it was on its way", async () => {
    const rowNames = () => page.getByRole("rowheader").allInnerTexts();
    await page.getByRole("row").filter({ has: page.getByRole("link", { name: "checkout-button", exact: true }) }).waitFor();
    // Hold the search's first answer until the live reload asks again, then let it land while that second ask waits.
    const held: Route[] = [];
    let released: () => void = () => {};
    const secondAsked = new Promise<void>((resolve) => (released = resolve));
    const search = (url: URL) => url.pathname === "/api/admin/experiments" && url.searchParams.get("q") === "annual";
    await page.route(search, async (route) => {
      held.push(route);
      if (held.length === 1) {
        await secondAsked;
        await route.continue();
      } else if (held.length === 2) released();
      else await route.continue();
    });
    await page.getByRole("searchbox", { name: "Search experiments" }).fill("annual");
    await secondAsked; // the live reload's ask, at most 3 s later
    let rows = await rowNames();
    for (let i = 0; i < 40 && rows.length !== 1; i++) rows = (await Bun.sleep(50), await rowNames());
    expect(rows).toEqual(["pricing-page\nAnnual plan first"]);
    await held[1]!.continue();
    await page.unroute(search);
  });
});
