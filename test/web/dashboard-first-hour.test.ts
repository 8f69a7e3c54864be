import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { Glob } from "bun";
import { pkceChallenge, randomBase62 } from "../../src/lib/ids";
import { ROOT } from "../cli/process";
import { startServer } from "../../src/server";
import { dropStore, freshStoreUrl, tempDir } from "../helpers";
import { type DashboardFixture, chromiumAvailable, seriousViolations, signIn, startDashboardFixture } from "./dashboard-support";

// The first hour (issue 27, items 7, 8, 16, 17): phones, the sign-in pages' dark theme and the theme button, the
// getting-started checklist and empty lists, the grouped sidebar. One browser, one page.

setDefaultTimeout(240_000);

/**
 * SVC_PHONE_SCREENSHOTS=1 (a fresh temp dir) or =<dir>: every page at 390 × 844, light and dark, saved as PNG there
 * (for the closing note); nothing is saved otherwise.
 */
const SHOTS = process.env.SVC_PHONE_SCREENSHOTS ? (process.env.SVC_PHONE_SCREENSHOTS === "1" ? mkdtempSync(join(tmpdir(), "svc-phone-")) : process.env.SVC_PHONE_SCREENSHOTS) : null;

let f: DashboardFixture;
let page: Page;
let errorId = "";
let rolloutId = "";
let queueNumber = 0;
let connectorId = "";

const ok = (res: { status: number; body: unknown }, ...statuses: number[]) => expect(statuses.length ? statuses : [200, 201], JSON.stringify(res.body)).toContain(res.status);
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 860 };

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  const api = f.ts.api;
  // One of everything, so every detail page has data.
  ok(await api("/api/admin/killswitches", { body: { name: "checkout", description: "Stops taking orders everywhere when the payment provider is down", switches: { eu: false, "us-east-1-very-long-region-name": false } } }));
  ok(await api("/api/admin/gates", { body: { name: "new-checkout", description: "The redesigned checkout", rules: [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }] } }));
  ok(await api("/api/admin/segments", { body: { name: "beta-testers", description: "Customers in the beta programme", ids: ["a-rather-long-unbroken-user-id-from-an-identity-provider-0001", "u-2"] } }));
  ok(await api("/api/admin/configs", { body: { name: "limits", schema: { type: "object", properties: { perMinute: { type: "integer" } } }, value: { perMinute: 60, note: "a-rather-long-unbroken-configuration-value-that-used-to-push-the-page-sideways" } } }));
  ok(await api("/api/admin/events", { body: { name: "purchase" } }));
  ok(await api("/api/admin/metrics", { body: { name: "purchases", kind: "count", event: "purchase" } }));
  ok(await api("/api/admin/universes", { body: { name: "web" }, headers: { "x-project-id": f.ts.projectId } }));
  ok(await api("/api/admin/experiments", { body: { name: "pricing-page", universe: "web", variants: [{ key: "control", weight: 50, value: "blue" }, { key: "annual", weight: 50, value: "green" }], allocation: [0, 1000] } }));
  ok(await api("/api/admin/alert-rules", { body: { name: "many-purchases", metricId: "purchases", threshold: 5, comparator: "gt" } }));
  const rollout = await api("/api/admin/rollouts", { body: { gate: "new-checkout", env: "prod", rules: [{ name: "everyone", conditions: [], passPercentage: 100 }], stages: [{ percent: 10, minutes: 60 }, { percent: 100, minutes: 0 }] } });
  ok(rollout);
  rolloutId = rollout.body.id;
  ok(await api("/api/sdk/v1/errors", { key: f.ts.serverKey, body: { errors: [{ type: "TypeError", message: "Cannot read properties of undefined (reading 'total')", stack: "TypeError: Cannot read properties of undefined (reading 'total')\n    at chargeCard (/srv/app/lib/a-very-deeply-nested/directory-structure/checkout-and-payments.js:42:17)" }] } }), 200, 202);
  errorId = (await api("/api/admin/errors")).body[0].id;
  const item = await api("/api/admin/ops", { body: { type: "bug", title: "Search is slow on the catalogue page for very long queries", priority: "high" } });
  ok(item);
  queueNumber = item.body.number;
  const connector = await api("/api/admin/connectors", { body: { provider: "webhook", name: "deploy hook", events: [], config: { url: "https://hooks.example.com/a/rather/long/path/for/a/webhook/receiver" } } });
  ok(connector);
  connectorId = connector.body.id;
  ok(await api("/api/admin/i18n/profiles", { body: { name: "english", locale: "en" } }));
  ok(await api("/api/admin/i18n/keys", { body: { profile_id: "english", keys: [{ key: "checkout.title", value: "Checkout" }] } }));
  ok(await api("/api/admin/tokens", { body: { name: "ci", access: "read-only" } }));
  page = await f.context.newPage();
  await signIn(f, page);
});
afterAll(async () => {
  await f?.close();
  if (SHOTS) console.log(`phone screenshots (390 × 844, light and dark): ${SHOTS}`);
});

/** Goes to a dashboard path in place (the router's own navigation) and waits until the page has loaded its data. */
async function open(path: string): Promise<void> {
  await page.evaluate((p) => {
    history.pushState(null, "", p);
    dispatchEvent(new PopStateEvent("popstate"));
  }, path);
  await page.waitForFunction((p) => location.pathname === p && !!document.querySelector("main h1") && !document.querySelector('main [role="status"]')?.textContent?.includes("Loading"), path);
  await page.waitForLoadState("networkidle");
}

/** The elements that stick out past the viewport's right edge, not inside something that scrolls them itself. */
async function overflow(): Promise<{ scrollWidth: number; culprits: string[] }> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const culprits: string[] = [];
    for (const el of Array.from(document.querySelectorAll("body *"))) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.right <= width + 0.5) continue;
      let clipped = false;
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        const style = getComputedStyle(p);
        if (["auto", "scroll", "hidden", "clip"].includes(style.overflowX) || style.position === "fixed") {
          clipped = true;
          break;
        }
      }
      if (!clipped) culprits.push(`${el.tagName.toLowerCase()}${el.className && typeof el.className === "string" ? `.${el.className.split(" ").join(".")}` : ""} right=${Math.round(box.right)}`);
    }
    return { scrollWidth: document.documentElement.scrollWidth, culprits: culprits.slice(0, 6) };
  });
}

async function setTheme(theme: "light" | "dark"): Promise<void> {
  await page.evaluate((t) => {
    document.documentElement.dataset.theme = t;
    // What applyTheme announces: the theme button's words follow.
    window.dispatchEvent(new Event("svc-theme-change"));
  }, theme);
}

/** With SVC_PHONE_SCREENSHOTS: the page as it is, at 390 × 844 in both themes (the viewport is put back after). */
async function phoneShots(name: string): Promise<void> {
  if (!SHOTS) return;
  const before = page.viewportSize();
  await page.setViewportSize(PHONE);
  mkdirSync(SHOTS, { recursive: true });
  for (const theme of ["light", "dark"] as const) {
    await setTheme(theme);
    await page.screenshot({ path: join(SHOTS, `${name}-${theme}.png`), fullPage: true });
  }
  await setTheme("light");
  if (before) await page.setViewportSize(before);
}

describe.skipIf(!chromiumAvailable)("the first hour, in a real browser", () => {
  test("item 17: the sidebar groups its links by job under headings, and folds into a menu on a phone", async () => {
    await page.setViewportSize(DESKTOP);
    await open("/");
    const nav = page.getByRole("navigation", { name: "Sections" });
    const groups = nav.getByRole("group");
    const named: Record<string, string[]> = {};
    for (const group of await groups.all()) {
      const name = (await group.getAttribute("aria-labelledby")) ? await page.locator(`#${await group.getAttribute("aria-labelledby")}`).textContent() ?? "" : "";
      named[name] = await group.getByRole("link").allInnerTexts();
    }
    expect(named).toEqual({
      Release: ["Killswitches", "Gates", "Gate templates", "Segments", "Configs", "Attributes", "Stale flags", "Rollouts", "Schedules", "Requests"],
      Experiment: ["Universes", "Experiments", "Metrics"],
      Observe: ["Events", "Errors", "Alert rules"],
      Work: ["Queue", "Connectors", "Translations"],
      Project: ["SDK keys", "Install the SDK", "GrowthBook SDKs", "Edge relays", "API tokens", "Flags as code", "Members", "Settings", "Audit trail"],
    });
    for (const name of Object.keys(named)) await nav.getByRole("heading", { name, exact: true }).waitFor();
    await nav.getByRole("group", { name: "Release" }).waitFor();
    expect(await page.getByRole("button", { name: "Menu" }).isVisible()).toBe(false);

    await page.setViewportSize(PHONE);
    const menu = page.getByRole("button", { name: "Menu" });
    await menu.waitFor();
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    expect(await nav.isVisible()).toBe(false);
    await menu.click();
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    await nav.waitFor({ state: "visible" });
    // Focus goes into the drawer; Escape closes it and gives focus back to the button.
    // The drawer moves focus in its own effect after it shows: wait for it (a timeout here is the failure), as a person would.
    await page.waitForFunction(() => document.activeElement?.closest("nav")?.getAttribute("aria-label") === "Sections", undefined, { timeout: 5000 });
    expect(await page.evaluate(() => document.activeElement?.closest("nav")?.getAttribute("aria-label"))).toBe("Sections");
    expect(await seriousViolations(page)).toEqual([]);
    await phoneShots("menu-open");
    await page.keyboard.press("Escape");
    await nav.waitFor({ state: "hidden" });
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain("Menu");
    // Following a link closes it too.
    await menu.click();
    await nav.getByRole("link", { name: "Errors" }).click();
    await page.getByRole("heading", { level: 1, name: "Errors" }).waitFor();
    await nav.waitFor({ state: "hidden" });
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    await page.setViewportSize(DESKTOP);
  });

  test("item 7: every page fits a 390 × 844 phone without scrolling sideways, light and dark, and stays axe-clean", async () => {
    await page.setViewportSize(DESKTOP);
    await open("/");
    const navPaths = await page.getByRole("navigation", { name: "Sections" }).getByRole("link").evaluateAll((links) => links.map((a) => new URL((a as HTMLAnchorElement).href).pathname));
    const details = [
      "/killswitches/checkout",
      "/gates/new-checkout",
      "/segments/beta-testers",
      "/configs/limits",
      "/metrics/purchases",
      "/experiments/pricing-page",
      `/rollouts/${rolloutId}`,
      `/errors/${errorId}`,
      `/queue/${queueNumber}`,
      `/connectors/${connectorId}`,
      "/i18n/english",
      "/account",
    ];
    // Every page of the registry: each navigation entry, and a detail page of each kind. The page declarations are read
    // from the modules' sources, so a page added later and missing here fails this test.
    const routes = [...navPaths, ...details];
    // A page is declared as `{ path: "/x", … }`, or as a list and its detail by the kit's `listAndDetail({ path: "/x", …, param: "name" })`.
    const declared = [...new Glob("src/modules/*/dashboard/*.tsx").scanSync(ROOT), "src/web/dashboard/home.tsx"].flatMap((file) => {
      const text = readFileSync(join(ROOT, file), "utf8");
      const pairs = [...text.matchAll(/listAndDetail\(\{ path: "(\/[^"]*)"[^\n]*?param: "(\w+)"/g)].flatMap((m) => [m[1]!, `${m[1]}/:${m[2]}`]);
      return [...[...text.matchAll(/\{ path: "(\/[^"]*)"/g)].map((m) => m[1]!).filter((path) => !text.includes(`listAndDetail({ path: "${path}"`)), ...pairs];
    });
    const pattern = (path: string) => new RegExp(`^${path.replace(/:[a-z]+/gi, "[^/]+")}$`);
    expect(declared.length).toBeGreaterThanOrEqual(30);
    expect(declared.filter((path) => !routes.some((route) => pattern(path).test(route)))).toEqual([]);
    expect(navPaths.length).toBeGreaterThanOrEqual(21);
    await page.setViewportSize(PHONE);
    const wide: Record<string, unknown> = {};
    const axe: Record<string, unknown> = {};
    for (const path of routes) {
      await open(path);
      for (const theme of ["light", "dark"] as const) {
        await setTheme(theme);
        const found = await overflow();
        if (found.scrollWidth > PHONE.width) wide[`${path} (${theme})`] = found;
        // Still axe-clean at this width (a table that scrolls in its own box must take keyboard focus).
        const violations = await seriousViolations(page);
        if (violations.length) axe[`${path} (${theme})`] = violations;
        if (SHOTS) {
          mkdirSync(SHOTS, { recursive: true });
          await page.screenshot({ path: join(SHOTS, `${path.replace(/\//g, "_").replace(/^_/, "") || "overview"}-${theme}.png`), fullPage: true });
        }
      }
    }
    await setTheme("light");
    expect(wide).toEqual({});
    expect(axe).toEqual({});
    await page.setViewportSize(DESKTOP);
  });

  test("item 8: /signin, /device and /setup read well in the dark (axe, both themes); the theme button says what it does and follows the system", async () => {
    // The sign-in pages follow the system's theme (they carry no script).
    const device = await fetch(`${f.ts.url}/auth/device/code`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code_challenge: pkceChallenge(randomBase62(64)), code_challenge_method: "S256", client_name: "svc CLI on laptop" }) });
    const deviceUrl = (await device.json()).verification_uri_complete as string;
    // A server nobody has set up yet, for its /setup page.
    const dataDir = tempDir();
    const store = await freshStoreUrl();
    const fresh = await startServer({ port: 0, host: "127.0.0.1", dataDir, logRequests: false, quiet: true, store });
    try {
      const setupUrl = /(http:\/\/[^"\s]+\/setup\?token=[^"\s]+)/.exec(readFileSync(join(dataDir, "outbox.log"), "utf8"))![1]!;
      // The browser is signed in on the first server only: the fresh one shows the sign-in form.
      const pages = { signin: `${fresh.url}/signin`, device: deviceUrl, setup: setupUrl };
      const found: Record<string, unknown> = {};
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const [name, url] of Object.entries(pages)) {
          await page.goto(url);
          await page.locator("main h1").waitFor();
          const button = page.locator("main button:not(.secondary):not(.danger), main .button:not(.secondary)").first();
          const contrast = await button.evaluate((el) => {
            const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
            const lum = (c: number[]) => {
              const [r, g, b] = c.map((v) => {
                const s = v / 255;
                return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
              });
              return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
            };
            const style = getComputedStyle(el);
            const [a, b] = [lum(rgb(style.color)), lum(rgb(style.backgroundColor))];
            return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
          });
          const violations = await seriousViolations(page);
          if (contrast < 4.5 || violations.length) found[`${name} (${scheme})`] = { contrast: Math.round(contrast * 10) / 10, violations };
        }
      }
      expect(found).toEqual({});
    } finally {
      await fresh.stop();
      await dropStore(store);
    }

    // The dashboard's theme button: its name says what pressing it does.
    await page.emulateMedia({ colorScheme: "light" });
    await page.evaluate(() => localStorage.removeItem("svc.theme"));
    await page.goto(`${f.ts.url}/killswitches`);
    await page.getByRole("heading", { level: 1, name: "Killswitches" }).waitFor();
    const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
    expect(await theme()).toBe("light");
    await page.getByRole("button", { name: "Switch to dark theme" }).waitFor();
    // No choice made: a system change after load is followed (the button's words too).
    await page.emulateMedia({ colorScheme: "dark" });
    await page.waitForFunction(() => document.documentElement.dataset.theme === "dark");
    await page.getByRole("button", { name: "Switch to light theme" }).waitFor();
    await page.emulateMedia({ colorScheme: "light" });
    await page.waitForFunction(() => document.documentElement.dataset.theme === "light");
    // A choice sticks: pressing the button picks dark, and the system going light again changes nothing.
    await page.getByRole("button", { name: "Switch to dark theme" }).click();
    expect(await theme()).toBe("dark");
    await page.getByRole("button", { name: "Switch to light theme" }).waitFor();
    expect(await page.evaluate(() => localStorage.getItem("svc.theme"))).toBe("dark");
    await page.emulateMedia({ colorScheme: "dark" });
    await page.emulateMedia({ colorScheme: "light" });
    await page.waitForTimeout(100);
    expect(await theme()).toBe("dark");
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Killswitches" }).waitFor();
    expect(await theme()).toBe("dark");
    await page.getByRole("button", { name: "Switch to light theme" }).click();
    expect(await theme()).toBe("light");
    await page.evaluate(() => localStorage.removeItem("svc.theme"));
  });

  test("item 16: an empty project's home is a checklist that ticks itself off; empty lists say what they are for and how to make the first", async () => {
    await page.setViewportSize(DESKTOP);
    const empty = await f.ts.newProject("Empty project");
    await page.goto(`${f.ts.url}/`);
    await page.getByRole("combobox", { name: "Project" }).selectOption(empty.projectId);
    await page.getByRole("heading", { level: 1, name: "Empty project" }).waitFor();
    const checklist = page.getByRole("region", { name: "Getting started" });
    await checklist.waitFor();
    const item = (name: RegExp) => checklist.getByRole("listitem").filter({ hasText: name });
    const done = async (name: RegExp) => (await item(name).getAttribute("data-done")) === "true";
    expect(await checklist.getByRole("listitem").count()).toBe(4);
    expect([await done(/killswitch/), await done(/Install the SDK/), await done(/Read a flag/), await done(/Invite a teammate/)]).toEqual([false, false, false, false]);
    // The exact install command for this server.
    expect(await item(/Install the SDK/).innerText()).toContain(`npm install ${f.ts.url}/sdk/svc-sdk.tgz`);
    expect(await checklist.innerText()).toContain("0 of 4 done");
    expect(await seriousViolations(page)).toEqual([]);
    await phoneShots("empty-project-overview");

    // Real state ticks it off: a killswitch, an SDK read with a server key, a teammate invited.
    ok(await f.ts.api("/api/admin/killswitches", { key: empty.adminKey, body: { name: "checkout" } }));
    await page.reload();
    await checklist.waitFor();
    await page.waitForFunction(() => document.querySelector('[data-step="killswitch"]')?.getAttribute("data-done") === "true");
    expect(await done(/Read a flag/)).toBe(false);
    const read = await fetch(`${f.ts.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": empty.serverKey } });
    expect(read.status).toBe(200);
    const owner = await f.ts.accessTokenFor("owner@example.com", empty.projectId);
    ok(await f.ts.api("/api/admin/invites", { key: owner, body: { email: "teammate@example.com", role: "editor" } }));
    await page.reload();
    await checklist.waitFor();
    await page.waitForFunction(() => document.querySelectorAll('[data-step][data-done="true"]').length === 4);
    // All done: it folds into one line.
    expect(await checklist.locator("details").getAttribute("open")).toBeNull();
    expect(await checklist.innerText()).toContain("4 of 4 done");

    // Empty list pages say what the thing is for and offer the way to make the first.
    for (const [path, purpose, how] of [
      ["/gates", /Gates decide who gets a feature/, "New gate"],
      ["/configs", /Configs are typed values/, "New config"],
      ["/experiments", /Experiments/, "svc experiments"],
      ["/errors", /Errors your services report/, "captureError"],
    ] as const) {
      await page.goto(f.ts.url + path);
      const guide = page.getByRole("main").locator(".empty-guide");
      await guide.waitFor();
      expect(await guide.innerText()).toMatch(purpose);
      expect(await guide.innerText()).toContain(how);
      await phoneShots(`empty-project${path.replace(/\//g, "-")}`);
    }
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole("combobox", { name: "Project" }).selectOption(f.ts.projectId);
  });
});
