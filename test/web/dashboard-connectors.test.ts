import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { verify } from "../../src/modules/connectors/signing";
import { VendorStandIn, standInEnv, withEnv } from "../support/vendor-standin";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;
let vendor: VendorStandIn;
let restoreEnv: () => void;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  vendor = new VendorStandIn();
  restoreEnv = withEnv(standInEnv(vendor.url));
  f = await startDashboardFixture();
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/connectors");
});
afterAll(async () => {
  await f?.close();
  vendor?.stop();
  restoreEnv?.();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

const row = (name: string) => page.getByRole("row").filter({ has: page.getByRole("rowheader", { name, exact: true }) });
const stored = async () => (await f.ts.api("/api/admin/connectors")).body as any[];

describe.skipIf(!chromiumAvailable)("connectors in the dashboard", () => {
  test("create a webhook: per-provider fields, a refusal on its field, the signing secret once; enable/disable from the list", async () => {
    await page.getByRole("heading", { level: 1, name: "Connectors" }).waitFor();
    await page.getByText("No connectors yet.").waitFor();
    await page.getByRole("button", { name: "New connector" }).click();
    const dialog = page.getByRole("dialog", { name: "New connector" });
    await valueBecomes(dialog.getByLabel("Provider"), "webhook");
    await dialog.getByLabel("Name").fill("intake");
    await dialog.getByRole("checkbox", { name: "alert.firing" }).check();
    await dialog.getByLabel("URL").fill("ftp://nowhere.example");
    await dialog.getByRole("button", { name: "Create connector" }).click();
    const url = dialog.getByLabel("URL");
    await dialog.getByRole("alert").filter({ hasText: "config.url" }).waitFor();
    expect(await url.getAttribute("aria-invalid")).toBe("true");
    await noSeriousViolations("connector-create-invalid");

    // The form follows the provider: a GitHub trigger asks for owner, repo and a token or an App.
    await dialog.getByLabel("Provider").selectOption("github_trigger");
    await dialog.getByLabel("Owner").waitFor();
    await dialog.getByLabel("User access token").waitFor();
    await dialog.getByLabel("GitHub App private key (PEM)").waitFor();
    await dialog.getByLabel("Provider").selectOption("webhook");
    await dialog.getByLabel("URL").fill(`${vendor.url}/dash-hook`);
    await dialog.getByRole("button", { name: "Create connector" }).click();
    const done = page.getByRole("dialog", { name: "Webhook intake created" });
    const secret = await done.getByRole("textbox", { name: "The new signing secret" }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await noSeriousViolations("connector-secret");
    await done.getByRole("button", { name: "Done" }).click();
    await page.getByRole("status").filter({ hasText: "Created connector intake" }).waitFor();
    const [hook] = await stored();
    expect(hook).toMatchObject({ name: "intake", provider: "webhook", events: ["bug.created", "alert.firing"], config: { url: `${vendor.url}/dash-hook` }, enabled: true });
    expect(await page.content()).not.toContain(secret);
    await noSeriousViolations("connectors");

    await row("intake").getByRole("switch", { name: "intake enabled" }).click();
    await page.getByRole("status").filter({ hasText: "Disabled connector intake" }).waitFor();
    expect((await stored())[0].enabled).toBe(false);
    await row("intake").getByRole("switch", { name: "intake enabled" }).click();
    await page.getByRole("status").filter({ hasText: "Enabled connector intake" }).waitFor();
    expect((await stored())[0].enabled).toBe(true);

    // Its page: test-fire through the real path, the delivery log shows it.
    vendor.on("/dash-hook", () => ({ status: 200 }));
    await row("intake").getByRole("link", { name: "intake" }).click();
    await page.getByRole("heading", { level: 1, name: "intake" }).waitFor();
    await page.getByRole("button", { name: "Send test event" }).click();
    await page.getByRole("status").filter({ hasText: "Test bug.created delivered: HTTP 200" }).waitFor();
    const sent = vendor.to("/dash-hook").at(-1)!;
    expect(verify(secret, sent.body, sent.headers["x-svc-signature"]!)).toBe(true);
    const log = page.getByRole("table", { name: "Deliveries, newest first" });
    await log.getByRole("row").filter({ hasText: "delivered" }).first().waitFor();
    await noSeriousViolations("connector-detail");

    // A failing target: the log says why, and Retry sends it again.
    vendor.on("/dash-hook", () => ({ status: 500, body: "receiver broke" }));
    await page.getByRole("button", { name: "Send test event" }).click();
    await page.getByRole("status").filter({ hasText: "Test bug.created failed: HTTP 500" }).waitFor();
    const failed = log.getByRole("row").filter({ hasText: "receiver broke" });
    await failed.waitFor();
    vendor.on("/dash-hook", () => ({ status: 200 }));
    await failed.getByRole("button", { name: /^Retry bug.created/ }).click();
    await page.getByRole("status").filter({ hasText: "Queued bug.created again" }).waitFor();
    await page.waitForFunction(() => !document.body.innerText.includes("receiver broke"), undefined, { timeout: 15_000 });
  });

  test("an OAuth connector: created not connected, Connect runs the provider's flow and comes back enabled; edit its channel; delete", async () => {
    await page.goto(`${f.ts.url}/connectors`);
    await page.getByRole("button", { name: "New connector" }).click();
    const dialog = page.getByRole("dialog", { name: "New connector" });
    await dialog.getByLabel("Provider").selectOption("slack");
    await dialog.getByText("Its settings (channel) are set after connecting it.").waitFor();
    await dialog.getByLabel("Name").fill("alerts");
    await dialog.getByRole("checkbox", { name: "bug.created" }).uncheck();
    await dialog.getByRole("checkbox", { name: "alert.firing" }).check();
    await dialog.getByRole("button", { name: "Create connector" }).click();
    await page.getByRole("status").filter({ hasText: "Created connector alerts" }).waitFor();
    expect(await row("alerts").getByRole("cell").nth(1).innerText()).toBe("not connected");

    // The vendor's authorize page says yes at once; its token endpoint checks the code.
    vendor.on("/slack-authorize", (r) => {
      const back = new URL(r.query.get("redirect_uri")!);
      back.searchParams.set("code", "dash-code");
      back.searchParams.set("state", r.query.get("state")!);
      return { status: 302, headers: { location: back.toString() } };
    });
    vendor.on("/slack/oauth.v2.access", (r) => (new URLSearchParams(r.body).get("code") === "dash-code" ? { body: { ok: true, access_token: "xoxb-dash", scope: "chat:write" } } : { body: { ok: false, error: "invalid_code" } }));
    await row("alerts").getByRole("link", { name: "alerts" }).click();
    await page.getByRole("heading", { level: 1, name: "alerts" }).waitFor();
    expect(await page.getByRole("switch", { name: "alerts enabled" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Connect to Slack" }).click();
    await page.getByRole("status").filter({ hasText: "Connected: the connector is enabled" }).waitFor();
    expect(new URL(page.url()).search).toBe("");
    const slack = (await stored()).find((c) => c.name === "alerts");
    expect(slack).toMatchObject({ enabled: true, hasCredentials: true, credentialFields: ["accessToken"] });
    await page.getByRole("button", { name: "Reconnect" }).waitFor();

    await page.getByRole("button", { name: "Edit connector" }).click();
    const edit = page.getByRole("dialog", { name: "Edit connector alerts" });
    await edit.getByLabel("Channel (optional)").fill("#ops");
    await edit.getByRole("button", { name: "Save connector" }).click();
    await page.getByRole("status").filter({ hasText: "Saved connector alerts" }).waitFor();
    expect((await stored()).find((c) => c.name === "alerts").config).toEqual({ channel: "#ops" });
    vendor.on("/slack/chat.postMessage", () => ({ body: { ok: true } }));
    await page.getByRole("button", { name: "Send test event" }).click();
    await page.getByRole("status").filter({ hasText: "Test alert.firing delivered: HTTP 200" }).waitFor();
    expect(vendor.to("/slack/chat.postMessage").at(-1)!.json()).toMatchObject({ channel: "#ops" });
    await noSeriousViolations("connector-oauth");

    await page.getByRole("button", { name: "Delete connector" }).click();
    await page.getByRole("dialog", { name: "Delete alerts?" }).getByRole("button", { name: "Delete connector" }).click();
    await page.getByRole("heading", { level: 1, name: "Connectors" }).waitFor();
    expect((await stored()).map((c) => c.name)).toEqual(["intake"]);
  });
});
