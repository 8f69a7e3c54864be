import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Browser as Chromium, type Page, chromium } from "playwright-core";
import { Browser } from "../browser";
import { type TestServer, startTestServer, tempDir } from "../helpers";
import { CHROMIUM, SCREENSHOT_DIR, capture, chromiumAvailable } from "./dashboard-support";

// A server without SMTP (issue 27, item 12): the sign-in page and the Members page say the link is in the outbox
// file on the server instead of "check your mail", and an owner copies a pending invitation's link from Members.
// Not the shared fixture: that one captures mail, and here mail must go where it goes on a fresh install.
setDefaultTimeout(90_000);

let ts: TestServer;
let browser: Chromium;
let page: Page;
let outbox: string;

const linksTo = (email: string): string[] =>
  readFileSync(outbox, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { to: string; link: string })
    .filter((l) => l.to === email)
    .map((l) => l.link);

beforeAll(async () => {
  if (!chromiumAvailable) return;
  ts = await startTestServer();
  outbox = join(ts.dataDir, "outbox.log");
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await ts?.stop();
});

describe.skipIf(!chromiumAvailable)("no mail server: where the links went", () => {
  test("sign-in says the link is in the outbox file; Members says so on invite, and an owner copies a pending invitation's link that works", async () => {
    await page.goto(`${ts.url}/`);
    await page.waitForURL((url) => url.pathname === "/signin");
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByRole("button", { name: /sign-in link|send/i }).click();
    await page.getByRole("heading", { name: "Find the link on the server" }).waitFor();
    expect(await page.locator("body").innerText()).toContain(`No mail server is set: the link is in outbox.log, in the data directory on the server.`);
    expect(await page.locator("body").innerText()).not.toContain("Check your mail");

    await page.goto(linksTo("owner@example.com").at(-1)!);
    await page.getByRole("button", { name: /sign in/i }).click();
    await page.waitForURL((url) => url.pathname === "/");
    await page.goto(`${ts.url}/members`);
    await page.getByRole("heading", { level: 1, name: "Members" }).waitFor();
    const form = page.locator("form", { has: page.getByRole("heading", { name: "Invite someone" }) });
    await form.getByText(`No mail server is set: the link is in ${outbox} on the server`).waitFor();

    await form.getByLabel("Email").fill("dana@example.com");
    await form.getByRole("button", { name: "Send invitation" }).click();
    await page.getByText(`Invited dana@example.com. No mail server is set: the link is in ${outbox} on the server`).waitFor();
    const mailed = linksTo("dana@example.com");
    expect(mailed).toHaveLength(1);

    await page.getByRole("button", { name: "Copy link for dana@example.com" }).click();
    const field = page.getByRole("textbox", { name: "Invitation link for dana@example.com" });
    await field.waitFor();
    const link = await field.inputValue();
    expect(link).toMatch(new RegExp(`^${ts.url}/auth/magic\\?token=[A-Za-z0-9]{43}$`));
    expect(link).not.toBe(mailed[0]);
    await page.getByText("A new invitation link for dana@example.com is below; the one sent before no longer works").waitFor();
    const { light, dark } = await capture(page, "members-invite-link");
    expect({ light, dark }).toEqual({ light: [], dark: [] });

    // The copied link is the one that works: it makes Dana a member.
    const dana = new Browser(ts.url);
    await dana.get("/signin");
    expect((await dana.postForm("/auth/magic", { token: new URL(link).searchParams.get("token")!, csrf: dana.csrf })).status).toBeLessThan(400);
    const members = (await ts.api("/api/admin/members")).body as { email: string; status: string }[];
    expect(members.find((m) => m.email === "dana@example.com")?.status).toBe("active");
  });
});
