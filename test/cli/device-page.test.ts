import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { BrowserContext } from "playwright-core";
import { chromiumAvailable as available, newBrowserContext } from "../web/dashboard-support";
import { USER_CODE, readCredentialsFile, removeSandboxes, sandbox, startClientTestServer, startSvc, type ClientTestServer } from "./client-helpers";

setDefaultTimeout(90_000);

let ts: ClientTestServer;
let context: BrowserContext;

beforeAll(async () => {
  if (!available) return;
  ts = await startClientTestServer();
  context = await newBrowserContext();
});
afterAll(async () => {
  await context?.close();
  await ts?.stop();
  removeSandboxes();
});

describe.skipIf(!available)("the device approval page in a real browser", () => {
  test("sign in through the pages, check the code, Approve: svc login finishes signed in", async () => {
    const box = sandbox();
    const login = startSvc(box, ["login", "--no-browser", "--url", ts.url]);
    const [, userCode] = await login.waitForStderr(USER_CODE);
    const [, approvalUrl] = await login.waitForStderr(/\(or open (\S+)\)/);

    const page = await context.newPage();
    // Not signed in yet: the approval URL leads to the sign-in page, which remembers where to come back to.
    await page.goto(approvalUrl!);
    expect(new URL(page.url()).pathname).toBe("/signin");
    const mailsBefore = ts.mails.sent.length;
    await page.fill("#email", "owner@example.com");
    await page.click("button[type=submit]");
    await page.waitForLoadState();
    const mail = ts.mails.sent.slice(mailsBefore).find((m) => m.to === "owner@example.com");
    expect(mail).toBeDefined();

    // The magic link, opened in the same browser, then its one-click confirmation.
    await page.goto(mail!.url);
    await page.click("button[type=submit]");
    await page.waitForURL((url) => url.pathname === "/device");
    expect(await page.locator(".code").innerText()).toBe(userCode!);
    expect(await page.locator("main").innerText()).toContain("owner@example.com");

    await page.click("button[value=approve]");
    await page.waitForLoadState();
    expect(await page.locator("h1").innerText()).toBe("Device approved");

    const r = await login.result();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Signed in to");
    const creds = readCredentialsFile(box);
    expect(creds).toMatchObject({ user_email: "owner@example.com", project_id: ts.projectId, server_url: ts.url });
    expect((await ts.api("/api/admin/me", { key: creds.access_token })).body.user.email).toBe("owner@example.com");
  });
});
