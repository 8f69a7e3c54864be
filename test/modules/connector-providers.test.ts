/**
 * Each provider's vendor call, checked against a local stand-in that
 * verifies the request's shape: the OAuth flow (state, PKCE, code exchange,
 * refresh) for slack, linear and google_sheets, and the trigger providers'
 * run/dispatch calls.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, createVerify, generateKeyPairSync } from "node:crypto";
import { type TestServer, startTestServer } from "../helpers";
import { type Browser, MailCapture, signInWithMagicLink } from "../browser";
import { verify } from "../../src/modules/connectors/signing";
import { type Recorded, VendorStandIn, standInEnv, withEnv } from "../support/vendor-standin";

let ts: TestServer;
let vendor: VendorStandIn;
let restoreEnv: () => void;
/** The owner's signed-in browser: an OAuth callback completes only in a session that administers the project (issue 25). */
let owner: Browser;

beforeAll(async () => {
  vendor = new VendorStandIn();
  restoreEnv = withEnv(standInEnv(vendor.url));
  const mails = new MailCapture();
  ts = await startTestServer({ signIn: { mailer: mails } });
  owner = await signInWithMagicLink(ts, mails, "owner@example.com");
});

afterAll(async () => {
  await ts.stop();
  vendor.stop();
  restoreEnv();
});

const form = (r: Recorded) => new URLSearchParams(r.body);
const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

async function create(body: Record<string, unknown>): Promise<string> {
  const res = await ts.api("/api/admin/connectors", { body });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function fire(id: string, type = "bug.created") {
  const res = await ts.api(`/api/admin/connectors/${id}/test`, { body: { type } });
  expect(res.status).toBe(200);
  return res.body.delivery;
}

/**
 * The browser's part of the OAuth flow: start, the vendor's authorize page
 * (checked here), the redirect back with a code; answers what the token
 * endpoint was asked.
 */
async function connect(id: string, authorizePath: string, tokenPath: string, tokens: Record<string, unknown>): Promise<{ authorize: URL; token: URLSearchParams }> {
  const start = await ts.api(`/api/admin/connectors/${id}/oauth/start`, { body: {} });
  expect(start.status).toBe(200);
  const authorize = new URL(start.body.url);
  expect(authorize.origin + authorize.pathname).toBe(`${vendor.url}${authorizePath}`);
  const state = authorize.searchParams.get("state")!;
  let challenge = "";
  challenge = authorize.searchParams.get("code_challenge")!;
  expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
  expect(authorize.searchParams.get("redirect_uri")).toBe(`${ts.url}/oauth/connectors/callback`);
  vendor.on(tokenPath, (r) => {
    const f = form(r);
    // PKCE: the verifier sent now must hash to the challenge the browser carried.
    if (s256(f.get("code_verifier") ?? "") !== challenge || f.get("code") !== "the-code") return { status: 400, body: { error: "invalid_grant" } };
    return { body: tokens };
  });
  const back = await owner.get(`/oauth/connectors/callback?code=the-code&state=${encodeURIComponent(state)}`);
  expect(back.status).toBe(303);
  expect(back.location).toBe(`/connectors/${id}?connected=1`);
  // The state is single use.
  const again = await owner.get(`/oauth/connectors/callback?code=the-code&state=${encodeURIComponent(state)}`);
  expect(again.status).toBe(400);
  const token = form(vendor.to(tokenPath).at(-1)!);
  return { authorize, token };
}

describe("OAuth providers", () => {
  test("slack: authorize with state + PKCE, code exchange, enabled; chat.postMessage with the bot token", async () => {
    const id = await create({ provider: "slack", name: "alerts", events: ["alert.firing"] });
    const { authorize, token } = await connect(id, "/slack-authorize", "/slack/oauth.v2.access", { ok: true, access_token: "xoxb-bot-token", token_type: "bot", scope: "chat:write" });
    expect(authorize.searchParams.get("client_id")).toBe("slack-client");
    expect(authorize.searchParams.get("scope")).toContain("chat:write");
    expect(token.get("client_id")).toBe("slack-client");
    expect(token.get("client_secret")).toBe("slack-secret");
    expect(token.get("grant_type")).toBe("authorization_code");
    const got = await ts.api(`/api/admin/connectors/${id}`);
    expect(got.body).toMatchObject({ enabled: true, hasCredentials: true, credentialFields: ["accessToken"] });
    expect(got.text).not.toContain("xoxb-bot-token");
    const audit = await ts.store.all<{ action: string }>("SELECT action FROM audit_log WHERE subject_id = ? ORDER BY seq", id);
    expect(audit.map((a) => a.action)).toEqual(["connector.create", "connector.connect"]);

    // No channel yet: the delivery says what to set.
    const noChannel = await fire(id, "alert.firing");
    expect(noChannel.lastError).toContain("config.channel");
    expect((await ts.api(`/api/admin/connectors/${id}`, { method: "PATCH", body: { config: { channel: "C0123456789" } } })).status).toBe(200);
    vendor.on("/slack/chat.postMessage", () => ({ body: { ok: true, ts: "1.2" } }));
    const ok = await fire(id, "alert.firing");
    expect(ok).toMatchObject({ status: "delivered", lastStatus: 200 });
    const post = vendor.to("/slack/chat.postMessage").at(-1)!;
    expect(post.method).toBe("POST");
    expect(post.headers.authorization).toBe("Bearer xoxb-bot-token");
    expect(post.headers["content-type"]).toStartWith("application/json");
    expect(post.json()).toMatchObject({ channel: "C0123456789" });
    expect(post.json().text).toContain("Alert firing: checkout-errors");
    // Slack says no with 200 {ok: false}.
    vendor.on("/slack/chat.postMessage", () => ({ body: { ok: false, error: "channel_not_found" } }));
    const refused = await fire(id, "alert.firing");
    expect(refused).toMatchObject({ status: "failed", lastStatus: 200, lastError: "slack: channel_not_found" });
  });

  test("linear: tokens refreshed before they expire; issueCreate with a stable issue id", async () => {
    const id = await create({ provider: "linear", name: "bugs", events: ["bug.created"] });
    const { authorize } = await connect(id, "/linear-authorize", "/linear/oauth/token", { access_token: "lin_oauth_first", token_type: "Bearer", expires_in: 30, refresh_token: "lin_refresh_1", scope: "read write issues:create" });
    expect(authorize.searchParams.get("response_type")).toBe("code");
    expect((await ts.api(`/api/admin/connectors/${id}`, { method: "PATCH", body: { config: { teamId: "team_9", labelIds: ["lbl_1"] } } })).status).toBe(200);
    // The token expires within a minute: refreshed first.
    vendor.on("/linear/oauth/token", (r) => (form(r).get("grant_type") === "refresh_token" && form(r).get("refresh_token") === "lin_refresh_1" ? { body: { access_token: "lin_oauth_second", expires_in: 86400, refresh_token: "lin_refresh_2" } } : { status: 400, body: { error: "invalid_grant" } }));
    vendor.on("/linear/graphql", () => ({ body: { data: { issueCreate: { success: true, issue: { id: "x", identifier: "ENG-1", url: "https://linear.app/x" } } } } }));
    const d = await fire(id);
    expect(d).toMatchObject({ status: "delivered", lastStatus: 200 });
    const call = vendor.to("/linear/graphql").at(-1)!;
    expect(call.headers.authorization).toBe("Bearer lin_oauth_second");
    const body = call.json();
    expect(body.query).toContain("issueCreate");
    expect(body.variables.input).toMatchObject({ teamId: "team_9", labelIds: ["lbl_1"], title: "[test] Bug #42: Checkout button does nothing on Safari" });
    expect(body.variables.input.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body.variables.input.description).toContain(d.eventId);
    // The refreshed tokens are stored (sealed): the next send needs no refresh.
    const refreshes = vendor.to("/linear/oauth/token").length;
    await fire(id);
    expect(vendor.to("/linear/oauth/token").length).toBe(refreshes);
    expect(vendor.to("/linear/graphql").at(-1)!.headers.authorization).toBe("Bearer lin_oauth_second");
    // GraphQL errors come with 200.
    vendor.on("/linear/graphql", () => ({ body: { errors: [{ message: "Team not found" }] } }));
    expect(await fire(id)).toMatchObject({ status: "failed", lastError: "linear: Team not found" });
  });

  test("google_sheets: values.append of one row", async () => {
    const id = await create({ provider: "google_sheets", name: "log", events: ["error.new"] });
    const { authorize } = await connect(id, "/google-authorize", "/google-token", { access_token: "ya29.token", expires_in: 3600, refresh_token: "1//refresh", token_type: "Bearer" });
    expect(authorize.searchParams.get("access_type")).toBe("offline");
    expect(authorize.searchParams.get("scope")).toBe("https://www.googleapis.com/auth/spreadsheets");
    expect((await ts.api(`/api/admin/connectors/${id}`, { method: "PATCH", body: { config: { spreadsheetId: "sheet_123", range: "Events" } } })).status).toBe(200);
    vendor.on("/sheets/", () => ({ body: { updates: { updatedRows: 1 } } }));
    const d = await fire(id, "error.new");
    expect(d.status).toBe("delivered");
    const call = vendor.to("/sheets/").at(-1)!;
    expect(call.path).toBe("/sheets/v4/spreadsheets/sheet_123/values/Events:append");
    expect(call.query.get("valueInputOption")).toBe("RAW");
    expect(call.headers.authorization).toBe("Bearer ya29.token");
    const row = call.json().values[0];
    expect(row[1]).toBe("error.new");
    expect(row[3]).toBe(d.eventId);
  });

  test("the callback refuses an unknown state and reports a vendor's refusal", async () => {
    const unknown = await fetch(`${ts.url}/oauth/connectors/callback?code=x&state=nope`, { redirect: "manual" });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("unknown, used or expired");
    const id = await create({ provider: "slack", name: "refused", events: ["bug.created"] });
    const start = await ts.api(`/api/admin/connectors/${id}/oauth/start`, { body: { returnTo: "/connectors" } });
    const state = new URL(start.body.url).searchParams.get("state")!;
    const back = await owner.get(`/oauth/connectors/callback?error=access_denied&state=${state}`);
    expect(back.status).toBe(303);
    expect(back.location).toStartWith("/connectors?oauth_error=");
    expect((await ts.api(`/api/admin/connectors/${id}`)).body.enabled).toBe(false);
    // Only OAuth providers have a flow; returnTo stays on this server.
    const hook = await create({ provider: "webhook", name: "h", events: [], config: { url: "https://a.example" } });
    expect((await ts.api(`/api/admin/connectors/${hook}/oauth/start`, { body: {} })).status).toBe(400);
    expect((await ts.api(`/api/admin/connectors/${id}/oauth/start`, { body: { returnTo: "https://evil.example" } })).status).toBe(400);
    expect((await ts.api(`/api/admin/connectors/${id}/oauth/start`, { body: { returnTo: "//evil.example" } })).status).toBe(400);
  });
});

describe("trigger providers", () => {
  test("github_trigger with a user token: repository_dispatch", async () => {
    const id = await create({ provider: "github_trigger", config: { owner: "acme", repo: "web" }, accessToken: "github_pat_abc" });
    vendor.on("/github/repos/acme/web/dispatches", () => ({ status: 204 }));
    const d = await fire(id);
    expect(d).toMatchObject({ status: "delivered", lastStatus: 204 });
    const call = vendor.to("/github/repos/acme/web/dispatches").at(-1)!;
    expect(call.headers.authorization).toBe("Bearer github_pat_abc");
    expect(call.headers.accept).toBe("application/vnd.github+json");
    expect(call.headers["x-github-api-version"]).toBe("2022-11-28");
    const body = call.json();
    expect(body.event_type).toBe("bug.created");
    expect(Object.keys(body.client_payload).length).toBeLessThanOrEqual(10);
    expect(body.client_payload).toMatchObject({ event_id: d.eventId, type: "bug.created", project_id: ts.projectId, test: true });
  });

  test("github_trigger with a GitHub App: JWT, installation token, then the dispatch", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
    const id = await create({ provider: "github_trigger", config: { owner: "acme", repo: "app", eventType: "svc-event" }, appId: 4242, privateKey: pem });
    const jwtOk = (auth: string | undefined) => {
      const [h, p, sig] = (auth ?? "").replace(/^Bearer /, "").split(".");
      if (!h || !p || !sig) return false;
      const valid = createVerify("RSA-SHA256").update(`${h}.${p}`).verify(publicKey, Buffer.from(sig, "base64url"));
      return valid && JSON.parse(Buffer.from(p, "base64url").toString()).iss === "4242";
    };
    vendor.on("/github/repos/acme/app/installation", (r) => (jwtOk(r.headers.authorization) ? { body: { id: 77 } } : { status: 401 }));
    vendor.on("/github/app/installations/77/access_tokens", (r) => (jwtOk(r.headers.authorization) ? { status: 201, body: { token: "ghs_installation", expires_at: new Date(Date.now() + 3600_000).toISOString() } } : { status: 401 }));
    vendor.on("/github/repos/acme/app/dispatches", (r) => (r.headers.authorization === "Bearer ghs_installation" ? { status: 204 } : { status: 401 }));
    expect(await fire(id)).toMatchObject({ status: "delivered", lastStatus: 204 });
    expect(vendor.to("/github/repos/acme/app/dispatches").at(-1)!.json().event_type).toBe("svc-event");
    // The installation token is kept: a second event makes no new one.
    await fire(id);
    expect(vendor.to("/github/app/installations/77/access_tokens").length).toBe(1);
  });

  test("claude_trigger: the routine's fire call with its token and the beta header", async () => {
    const id = await create({ provider: "claude_trigger", config: { routineId: "trig_01abc" }, fireToken: "sk-ant-oat01-fire" });
    vendor.on("/claude/", () => ({ body: { type: "routine_fire", claude_code_session_id: "s1", claude_code_session_url: "https://claude.ai/code/s1" } }));
    expect(await fire(id)).toMatchObject({ status: "delivered" });
    const call = vendor.to("/claude/").at(-1)!;
    expect(call.path).toBe("/claude/v1/claude_code/routines/trig_01abc/fire");
    expect(call.headers.authorization).toBe("Bearer sk-ant-oat01-fire");
    expect(call.headers["anthropic-beta"]).toBe("experimental-cc-routine-2026-04-01");
    expect(call.json().text).toContain("Bug #42");
  });

  test("cursor_trigger: launch an agent on the repository", async () => {
    const id = await create({ provider: "cursor_trigger", config: { repoUrl: "https://github.com/acme/web", ref: "main" }, apiKey: "key_cursor" });
    vendor.on("/cursor/v0/agents", () => ({ status: 201, body: { id: "bc_1", status: "CREATING" } }));
    expect(await fire(id)).toMatchObject({ status: "delivered", lastStatus: 201 });
    const call = vendor.to("/cursor/v0/agents").at(-1)!;
    expect(call.headers.authorization).toBe("Bearer key_cursor");
    expect(call.json()).toMatchObject({ source: { repository: "https://github.com/acme/web", ref: "main" } });
    expect(call.json().prompt.text).toContain("Bug #42");
  });

  test("jules_trigger: create a session on the source", async () => {
    const id = await create({ provider: "jules_trigger", config: { source: "sources/github/acme/web", startingBranch: "develop" }, apiKey: "AIzaJules" });
    vendor.on("/jules/v1alpha/sessions", () => ({ body: { name: "sessions/1", id: "1" } }));
    expect(await fire(id)).toMatchObject({ status: "delivered" });
    const call = vendor.to("/jules/v1alpha/sessions").at(-1)!;
    expect(call.headers["x-goog-api-key"]).toBe("AIzaJules");
    expect(call.json()).toMatchObject({ sourceContext: { source: "sources/github/acme/web", githubRepoContext: { startingBranch: "develop" } } });
    expect(call.json().prompt).toContain("Bug #42");
    expect(call.json().title).toContain("Bug #42");
  });

  test("every vendor call carries the idempotency key, event and delivery ids", async () => {
    const withKeys = vendor.requests.filter((r) => r.headers["x-svc-delivery"]);
    expect(withKeys.length).toBeGreaterThan(8);
    for (const r of withKeys) {
      expect(r.headers["idempotency-key"]).toMatch(/^evt_/);
      expect(r.headers["x-svc-event"]).toBeTruthy();
      expect(r.headers["user-agent"]).toStartWith("svc-connectors/");
    }
  });
});

describe("from the public intake to the connectors", () => {
  test("a feature request filed with a client key and approved reaches a webhook and Linear once each, signed and as an issue", async () => {
    const hook = await ts.api("/api/admin/connectors", { body: { provider: "webhook", name: "approvals", events: ["feature_request.created", "ticket.approved"], config: { url: `${vendor.url}/e2e-hook` } } });
    expect(hook.status).toBe(201);
    const linearId = await create({ provider: "linear", name: "approved to linear", events: ["ticket.approved"] });
    await connect(linearId, "/linear-authorize", "/linear/oauth/token", { access_token: "lin_e2e", expires_in: 86400 });
    expect((await ts.api(`/api/admin/connectors/${linearId}`, { method: "PATCH", body: { config: { teamId: "team_e2e" } } })).status).toBe(200);
    vendor.on("/e2e-hook", () => ({ status: 204 }));
    vendor.on("/linear/graphql", () => ({ body: { data: { issueCreate: { success: true, issue: { id: "i", identifier: "ENG-7", url: "u" } } } } }));
    const before = vendor.to("/linear/graphql").length;

    const filed = await ts.api("/ops/feature-request", { key: null, headers: { "x-sdk-key": ts.clientKey }, body: { title: "Export to CSV", useCase: "Monthly reports" } });
    expect(filed.status).toBe(201);
    const item = (await ts.api(`/api/admin/ops/${filed.body.id}`)).body;
    expect(item.status).toBe("pending_approval");
    expect((await ts.api(`/api/admin/ops/${filed.body.id}/approve`, { method: "POST" })).status).toBe(200);

    const hooks = await (async () => {
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const got = vendor.to("/e2e-hook");
        if (got.length >= 2 && vendor.to("/linear/graphql").length > before) return got;
        await Bun.sleep(25);
      }
      throw new Error("deliveries did not arrive");
    })();
    await Bun.sleep(300);
    // Both are emitted by the approval (a public item fires nothing while pending), in one transaction: either may arrive first.
    expect(vendor.to("/e2e-hook").map((r) => r.json().type).sort()).toEqual(["feature_request.created", "ticket.approved"]);
    expect(hooks.find((r) => r.json().type === "feature_request.created")!.json().data.source).toBe("public");
    const approved = hooks.find((r) => r.json().type === "ticket.approved")!.json();
    expect(approved.data.item).toMatchObject({ id: filed.body.id, title: "Export to CSV", status: "open", useCase: "Monthly reports" });
    const secretCheck = await ts.store.one<{ credentials: string }>("SELECT credentials FROM connectors WHERE id = ?", hook.body.id);
    const { signingSecret } = ts.server.ctx.services.connectors.box.openJson<{ signingSecret: string }>(secretCheck!.credentials, hook.body.id);
    for (const r of hooks) expect(verify(signingSecret, r.body, r.headers["x-svc-signature"]!)).toBe(true);
    const issues = vendor.to("/linear/graphql").slice(before);
    expect(issues.length).toBe(1);
    expect(issues[0]!.json().variables.input).toMatchObject({ teamId: "team_e2e", title: `Approved feature request #${item.number}: Export to CSV` });
    expect(issues[0]!.json().variables.input.description).toContain("useCase: Monthly reports");
  });
});
