import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { createServer, type Server as NetServer } from "node:net";
import { join } from "node:path";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { startTestServer, tempDir, type TestServer } from "../helpers";
import { Browser, MailCapture, deviceLogin, fieldValue, signInWithMagicLink, testClock } from "../browser";
import { signInOptionsFromEnv } from "../../src/modules/identity/options";
import { unsealPendingLogin } from "../../src/modules/identity/oidc";
import { UsageError } from "../../src/lib/usage-error";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const tokenOf = (url: string) => new URL(url).searchParams.get("token")!;

describe("magic-link sign-in", () => {
  let ts: TestServer;
  const mails = new MailCapture();
  const clock = testClock();

  beforeAll(async () => {
    ts = await startTestServer({ signIn: { mailer: mails, now: clock.now, rateLimits: { magicLinkPerIp: { limit: 1000, windowMs: 60_000 } } } });
  });
  afterAll(() => ts.stop());

  test("the sign-in page sets a CSRF cookie and mirrors it in the form, with strict page headers", async () => {
    const b = new Browser(ts.url);
    const page = await b.get("/signin?redirect=/device");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(b.csrf).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(fieldValue(page.text, "csrf")).toBe(b.csrf);
    expect(fieldValue(page.text, "redirect")).toBe("/device");
    expect(page.text).not.toContain("Sign in with SSO");
    // An unsafe redirect in the query is dropped, not echoed.
    const unsafe = await b.get("/signin?redirect=//evil.example/x");
    expect(fieldValue(unsafe.text, "redirect")).toBe("");
  });

  test("a member's link is single use: the GET only shows a button, the POST opens a session", async () => {
    const b = new Browser(ts.url);
    await b.get("/signin");
    const sent = await b.postForm("/auth/magic-link", { email: "Owner@Example.com", csrf: b.csrf });
    expect(sent.status).toBe(200);
    expect(sent.text).toContain("Check your mail");
    const mail = mails.lastTo("owner@example.com")!;
    expect(mail.reason).toBe("sign-in");
    expect(mail.url.startsWith(`${ts.url}/auth/magic?token=`)).toBe(true);
    const token = tokenOf(mail.url);
    // Only the hash is stored.
    const row = (await ts.store.one("SELECT token_hash, email, used_at FROM sign_in_links WHERE token_hash = ?", sha256(token))) as any;
    expect(row).toEqual({ token_hash: sha256(token), email: "owner@example.com", used_at: null });
    expect(await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM sign_in_links WHERE token_hash = ?", token)).toEqual({ n: 0 });

    // A mail scanner's GETs do not use it.
    for (let i = 0; i < 2; i++) {
      const page = await b.get(`/auth/magic?token=${token}`);
      expect(page.status).toBe(200);
      expect(fieldValue(page.text, "token")).toBe(token);
    }
    const done = await b.postForm("/auth/magic", { token, csrf: b.csrf });
    expect(done.status).toBe(303);
    expect(done.location).toBe("/");
    const sessionCookie = done.setCookies.find((c) => c.startsWith("svc_session="))!;
    expect(sessionCookie).toContain("HttpOnly");
    expect(sessionCookie).toContain("SameSite=Lax");
    expect(sessionCookie).toContain("Path=/");
    expect(sessionCookie).toContain(`Max-Age=${30 * 24 * 3600}`);
    expect(sessionCookie).not.toContain("Secure");
    const session = b.cookies.get("svc_session")!;
    const stored = await ts.store.one("SELECT s.token_hash, u.email FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?", sha256(session));
    expect(stored).toEqual({ token_hash: sha256(session), email: "owner@example.com" });

    const account = await b.get("/signin");
    expect(account.text).toContain("Signed in as <strong>owner@example.com</strong>");
    expect(account.text).toContain("Main project");

    // Second use: refused (JSON caller gets the error body, a form gets a page).
    const again = await b.postJson("/auth/magic", { token }, { "x-csrf-token": b.csrf });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ code: "BAD_REQUEST", error: "This sign-in link is invalid, used or expired" });
    const againForm = await b.postForm("/auth/magic", { token, csrf: b.csrf });
    expect(againForm.status).toBe(400);
    expect(againForm.headers.get("content-type")).toContain("text/html");
    const page = await b.get(`/auth/magic?token=${token}`);
    expect(page.status).toBe(400);
    expect(page.text).toContain("Link expired");
  });

  test("an unknown address gets the same answer and no mail, no link", async () => {
    const b = new Browser(ts.url);
    await b.get("/signin");
    const links = async () => ((await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM sign_in_links")) as { n: number }).n;
    const before = { mails: mails.sent.length, links: await links() };
    const json = await b.postJson("/auth/magic-link", { email: "stranger@example.com" }, { "x-csrf-token": b.csrf });
    const member = await b.postJson("/auth/magic-link", { email: "owner@example.com" }, { "x-csrf-token": b.csrf });
    expect(json.status).toBe(200);
    expect(json.body).toEqual(member.body);
    expect(json.body.ok).toBe(true);
    expect(mails.sent.length).toBe(before.mails + 1);
    expect(mails.sent.at(-1)!.to).toBe("owner@example.com");
    expect(await links()).toBe(before.links + 1);
  });

  test("a link expires after 15 minutes", async () => {
    const b = new Browser(ts.url);
    await b.get("/signin");
    await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf });
    const token = tokenOf(mails.lastTo("owner@example.com")!.url);
    clock.advance(15 * 60_000 + 1);
    const page = await b.get(`/auth/magic?token=${token}`);
    expect(page.status).toBe(400);
    const late = await b.postJson("/auth/magic", { token }, { "x-csrf-token": b.csrf });
    expect(late.status).toBe(400);
    expect(late.body.code).toBe("BAD_REQUEST");
    expect(b.cookies.has("svc_session")).toBe(false);
  });

  test("CSRF: no token, a wrong token, a foreign Origin, or no Origin/Referer is FORBIDDEN and sends nothing", async () => {
    const b = new Browser(ts.url);
    await b.get("/signin");
    const before = mails.sent.length;
    const noToken = await b.postJson("/auth/magic-link", { email: "owner@example.com" });
    expect(noToken.status).toBe(403);
    expect(noToken.body).toMatchObject({ code: "FORBIDDEN", error: "CSRF check failed" });
    expect(noToken.body.detail).toContain("csrf");
    const wrong = await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: "x".repeat(32) });
    expect(wrong.status).toBe(403);
    const noCookie = new Browser(ts.url);
    expect((await noCookie.postJson("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf })).status).toBe(403);

    b.origin = "https://evil.example";
    const foreign = await b.postJson("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toBe("Cross-site request refused");
    b.origin = null;
    expect((await b.postJson("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf })).status).toBe(403);
    expect(mails.sent.length).toBe(before);
    // A same-origin Referer stands in for a missing Origin.
    const referred = await b.postJson("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf }, { referer: `${ts.url}/signin` });
    expect(referred.status).toBe(200);
    expect(mails.sent.length).toBe(before + 1);
  });

  test("the redirect travels with the link and must be a local path", async () => {
    const b = new Browser(ts.url);
    await b.get("/signin");
    await b.postForm("/auth/magic-link", { email: "owner@example.com", redirect: "/device?user_code=BCDF-GHJK", csrf: b.csrf });
    const token = tokenOf(mails.lastTo("owner@example.com")!.url);
    const done = await b.postForm("/auth/magic", { token, csrf: b.csrf });
    expect(done.location).toBe("/device?user_code=BCDF-GHJK");

    for (const redirect of ["//evil.example/x", "https://evil.example/", "/\\evil.example"]) {
      const res = await b.postJson("/auth/magic-link", { email: "owner@example.com", redirect }, { "x-csrf-token": b.csrf });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("VALIDATION");
      expect(res.body.detail).toContain("redirect");
    }
  });

  test("malformed JSON is BAD_REQUEST and a wrong type is VALIDATION naming the field", async () => {
    const b = new Browser(ts.url);
    await b.get("/signin");
    const malformed = await b.postJson("/auth/magic-link", '{"email":', { "x-csrf-token": b.csrf });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("BAD_REQUEST");
    const wrongType = await b.postJson("/auth/magic-link", { email: 5 }, { "x-csrf-token": b.csrf });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.code).toBe("VALIDATION");
    expect(wrongType.body.detail).toContain("email");
    const notEmail = await b.postJson("/auth/magic-link", { email: "not an email" }, { "x-csrf-token": b.csrf });
    expect(notEmail.body.code).toBe("VALIDATION");
  });

  test("requests are rate-limited per address with 429 and Retry-After", async () => {
    const b = new Browser(ts.url);
    await b.get("/signin");
    for (let i = 0; i < 5; i++) {
      expect((await b.postJson("/auth/magic-link", { email: "limited@example.com" }, { "x-csrf-token": b.csrf })).status).toBe(200);
    }
    const limited = await b.postJson("/auth/magic-link", { email: "limited@example.com" }, { "x-csrf-token": b.csrf });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: "Too many requests", code: "BAD_REQUEST" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another address is not affected; the window ends.
    expect((await b.postJson("/auth/magic-link", { email: "other@example.com" }, { "x-csrf-token": b.csrf })).status).toBe(200);
    clock.advance(15 * 60_000);
    expect((await b.postJson("/auth/magic-link", { email: "limited@example.com" }, { "x-csrf-token": b.csrf })).status).toBe(200);
  });

  test("requests are also rate-limited per client address", async () => {
    const limited = await startTestServer({ signIn: { mailer: new MailCapture(), rateLimits: { magicLinkPerIp: { limit: 2, windowMs: 60_000 } } } });
    try {
      const b = new Browser(limited.url);
      await b.get("/signin");
      const send = (email: string) => b.postJson("/auth/magic-link", { email }, { "x-csrf-token": b.csrf });
      expect((await send("a@example.com")).status).toBe(200);
      expect((await send("b@example.com")).status).toBe(200);
      const third = await send("c@example.com");
      expect(third.status).toBe(429);
      expect(third.headers.get("retry-after")).toMatch(/^\d+$/);
    } finally {
      await limited.stop();
    }
  });

  test("logout needs the CSRF token, ends the session and clears the cookie", async () => {
    const b = await signInWithMagicLink(ts, mails, "owner@example.com");
    const session = b.cookies.get("svc_session")!;
    expect((await b.postForm("/auth/logout", { csrf: "" })).status).toBe(403);
    const out = await b.postForm("/auth/logout", { csrf: b.csrf });
    expect(out.status).toBe(303);
    expect(out.location).toBe("/signin");
    expect(b.cookies.has("svc_session")).toBe(false);
    const row = (await ts.store.one("SELECT revoked_at FROM sessions WHERE token_hash = ?", sha256(session))) as { revoked_at: string | null };
    expect(row.revoked_at).not.toBeNull();
    // The old cookie no longer works even if replayed.
    b.cookies.set("svc_session", session);
    expect((await b.get("/signin")).text).not.toContain("Signed in as");
  });

  test("X-Forwarded-Proto from an untrusted peer is ignored: no Secure cookie, and its https Origin is not ours", async () => {
    const b = new Browser(ts.url);
    await b.get("/signin");
    await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf });
    const token = tokenOf(mails.lastTo("owner@example.com")!.url);
    const done = await b.postForm("/auth/magic", { token, csrf: b.csrf }, { "x-forwarded-proto": "https" });
    expect(done.status).toBe(303);
    expect(done.setCookies.find((c) => c.startsWith("svc_session="))).not.toContain("Secure");
  });

  test("cookies are Secure when a trusted proxy says the browser came over https", async () => {
    const own = await startTestServer({ signIn: { mailer: mails }, network: { trustedProxies: ["loopback"] } });
    try {
      const b = new Browser(own.url);
      await b.get("/signin");
      await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf });
      const token = tokenOf(mails.lastTo("owner@example.com")!.url);
      b.origin = own.url.replace("http:", "https:");
      const done = await b.postForm("/auth/magic", { token, csrf: b.csrf }, { "x-forwarded-proto": "https" });
      expect(done.status).toBe(303);
      expect(done.setCookies.find((c) => c.startsWith("svc_session="))).toContain("Secure");
    } finally {
      await own.stop();
    }
  });
});

describe("invites and members", () => {
  let ts: TestServer;
  const mails = new MailCapture();

  beforeAll(async () => {
    ts = await startTestServer({ signIn: { mailer: mails } });
  });
  afterAll(() => ts.stop());

  test("an owner invites a person, who gets a 7-day link and can sign in", async () => {
    const owner = await ts.accessTokenFor("owner@example.com");
    const res = await ts.api("/api/admin/invites", { key: owner, body: { email: "New@Example.com", role: "viewer" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email: "new@example.com", role: "viewer", organisationId: ts.organisationId, organisationName: "Main project organisation" });
    const mail = mails.lastTo("new@example.com")!;
    expect(mail.reason).toBe("invite");
    const link = (await ts.store.one("SELECT created_at, expires_at FROM sign_in_links WHERE token_hash = ?", sha256(tokenOf(mail.url)))) as any;
    expect(Date.parse(link.expires_at) - Date.parse(link.created_at)).toBe(7 * 24 * 3600_000);

    const b = new Browser(ts.url);
    await b.get(new URL(mail.url).pathname + new URL(mail.url).search);
    const done = await b.postForm("/auth/magic", { token: tokenOf(mail.url), csrf: b.csrf });
    expect(done.status).toBe(303);
    expect((await b.get("/signin")).text).toContain("new@example.com");

    const members = await ts.api("/api/admin/members");
    expect(members.status).toBe(200);
    expect(members.body.map((m: any) => [m.email, m.role])).toEqual([
      ["owner@example.com", "owner"],
      ["new@example.com", "viewer"],
    ]);
    expect((await ts.api("/api/admin/members?q=NEW")).body.map((m: any) => m.email)).toEqual(["new@example.com"]);
    // The default role is editor.
    expect((await ts.api("/api/admin/invites", { key: owner, body: { email: "default@example.com" } })).body.role).toBe("editor");
  });

  test("inviting a member again is ALREADY_EXISTS; bad bodies are VALIDATION or BAD_REQUEST", async () => {
    const owner = await ts.accessTokenFor("owner@example.com");
    await ts.api("/api/admin/invites", { key: owner, body: { email: "twice@example.com" } });
    const again = await ts.api("/api/admin/invites", { key: owner, body: { email: "twice@example.com" } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("ALREADY_EXISTS");
    const role = await ts.api("/api/admin/invites", { key: owner, body: { email: "x@example.com", role: "admin" } });
    expect(role.status).toBe(400);
    expect(role.body.code).toBe("VALIDATION");
    expect(role.body.detail).toContain("role");
    const email = await ts.api("/api/admin/invites", { key: owner, body: { email: "nope" } });
    expect(email.body.detail).toContain("email");
    const malformed = await ts.api("/api/admin/invites", { key: owner, rawBody: "{" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("BAD_REQUEST");
    const members = (await ts.api("/api/admin/members")).body.map((m: any) => m.email);
    expect(members).not.toContain("x@example.com");
    expect(members).not.toContain("nope");
  });

  test("only a signed-in owner manages people: SDK keys and API tokens never grant organisation-wide membership", async () => {
    expect((await ts.api("/api/admin/invites", { key: null, body: { email: "a@example.com" } })).status).toBe(401);
    expect((await ts.api("/api/admin/invites", { key: ts.serverKey, body: { email: "a@example.com" } })).status).toBe(403);
    // Issue 8: one project's admin key used to add people to the whole organisation.
    const byAdminKey = await ts.api("/api/admin/invites", { body: { email: "a@example.com" } });
    expect(byAdminKey.status).toBe(403);
    expect(byAdminKey.body.error).toContain("SDK keys cannot add, remove or re-role people");
    const rw = (await ts.api("/api/admin/tokens", { body: { name: "ci", access: "read-write" } })).body.token;
    const byToken = await ts.api("/api/admin/invites", { key: rw, body: { email: "a@example.com" } });
    expect(byToken.status).toBe(403);
    expect(byToken.body.code).toBe("FORBIDDEN");
    expect((await ts.api("/api/admin/members", { key: rw })).status).toBe(200);
    expect((await ts.api("/api/admin/members")).body.map((m: any) => m.email)).not.toContain("a@example.com");
    expect(await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM users WHERE email = 'a@example.com'")).toEqual({ n: 0 });

    const other = await ts.newProject("Elsewhere");
    await ts.addMember("elsewhere@example.com", "editor", other.projectId);
    expect((await ts.api("/api/admin/members")).body.map((m: any) => m.email)).not.toContain("elsewhere@example.com");
    expect((await ts.api("/api/admin/members", { key: other.adminKey })).body.map((m: any) => m.email)).toContain("elsewhere@example.com");
    const foreign = await ts.api("/api/admin/members", { headers: { "x-project-id": other.projectId } });
    expect(foreign.status).toBe(403);
  });

  test("roles are enforced: a viewer reads, an editor writes, only an owner manages keys, tokens, members and settings", async () => {
    await ts.addMember("viewer@example.com", "viewer");
    await ts.addMember("editor@example.com", "editor");
    const viewer = await ts.accessTokenFor("viewer@example.com");
    const editor = await ts.accessTokenFor("editor@example.com");
    const owner = await ts.accessTokenFor("owner@example.com");

    // Reads: everyone.
    for (const key of [viewer, editor, owner]) expect((await ts.api("/api/admin/killswitches", { key })).status).toBe(200);
    // Writes: editors and owners.
    const viewerWrite = await ts.api("/api/admin/killswitches", { key: viewer, body: { name: "by-viewer" } });
    expect(viewerWrite.status).toBe(403);
    expect(viewerWrite.body.error).toBe("Your role (viewer) cannot make changes");
    expect((await ts.api("/api/admin/killswitches/by-viewer")).status).toBe(404);
    expect((await ts.api("/api/admin/killswitches", { key: editor, body: { name: "by-editor" } })).status).toBe(201);
    // Managing keys, tokens and settings: owners only.
    for (const [method, path, body] of [
      ["POST", "/api/admin/keys", { type: "server" }],
      ["POST", "/api/admin/tokens", { name: "ci", access: "read-only" }],
      ["PATCH", `/api/admin/projects/${ts.projectId}`, { name: "Renamed by editor" }],
      ["POST", "/api/admin/invites", { email: "by-editor@example.com" }],
    ] as const) {
      const r = await ts.api(path, { method, key: editor, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.code).toBe("FORBIDDEN");
    }
    expect((await ts.server.ctx.services.projects.get(ts.projectId)).name).toBe("Main project");
    expect((await ts.api("/api/admin/keys", { key: owner, body: { type: "server" } })).status).toBe(201);
    const me = await ts.api("/api/admin/me", { key: viewer });
    expect(me.body.credential).toEqual({ kind: "user_token", readOnly: true, role: "viewer", permissions: ["read"] });
  });

  test("owners change roles and remove people; the last owner stays", async () => {
    const owner = await ts.accessTokenFor("owner@example.com");
    await ts.addMember("promote@example.com", "viewer");
    const promoted = await ts.api("/api/admin/members/promote@example.com", { method: "PATCH", key: owner, body: { role: "editor" } });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ email: "promote@example.com", role: "editor" });
    const editor = await ts.accessTokenFor("promote@example.com");
    expect((await ts.api("/api/admin/killswitches", { key: editor, body: { name: "after-promotion" } })).status).toBe(201);
    // An admin key cannot change people.
    expect((await ts.api("/api/admin/members/promote@example.com", { method: "PATCH", body: { role: "owner" } })).status).toBe(403);
    expect((await ts.api("/api/admin/members/promote@example.com", { method: "PATCH", key: owner, body: { role: "boss" } })).body.code).toBe("VALIDATION");
    expect((await ts.api("/api/admin/members/nobody@example.com", { method: "PATCH", key: owner, body: { role: "viewer" } })).status).toBe(404);

    const lastOwner = await ts.api("/api/admin/members/owner@example.com", { method: "PATCH", key: owner, body: { role: "viewer" } });
    expect(lastOwner.status).toBe(403);
    expect(lastOwner.body.error).toBe("An organisation needs at least one owner");
    expect((await ts.api("/api/admin/members/owner@example.com", { method: "DELETE", key: owner })).status).toBe(403);

    expect((await ts.api("/api/admin/members/promote@example.com", { method: "DELETE", key: owner })).status).toBe(204);
    // Removed: their CLI sign-in ended with the removal (issue 25), so their access token is refused outright.
    expect((await ts.api("/api/admin/killswitches", { key: editor })).status).toBe(401);
    expect((await ts.api("/api/admin/members")).body.map((m: any) => m.email)).not.toContain("promote@example.com");
  });

  test("a signed-in owner invites a teammate from the browser page", async () => {
    const b = await signInWithMagicLink(ts, mails, "owner@example.com");
    const account = await b.get("/signin");
    expect(account.text).toContain('action="/auth/invite"');
    expect(fieldValue(account.text, "csrf")).toBe(b.csrf);

    const sent = await b.postForm("/auth/invite", { email: "Teammate@Example.com", project_id: ts.projectId, role: "viewer", csrf: b.csrf });
    expect(sent.status).toBe(200);
    expect(sent.text).toContain("Invitation sent");
    expect(mails.lastTo("teammate@example.com")!.reason).toBe("invite");
    const members = (await ts.api("/api/admin/members")).body.map((m: any) => [m.email, m.role]);
    expect(members).toContainEqual(["teammate@example.com", "viewer"]);

    // Again: ALREADY_EXISTS, shown as a page; nothing added twice.
    const again = await b.postForm("/auth/invite", { email: "teammate@example.com", project_id: ts.projectId, csrf: b.csrf });
    expect(again.status).toBe(409);
    expect((await ts.api("/api/admin/members")).body.filter((m: any) => m.email === "teammate@example.com")).toHaveLength(1);
  });

  test("browser invites need the CSRF token, a session, the owner role and an organisation of one's own", async () => {
    // A member of the main organisation only (test projects are all owned by owner@example.com).
    await ts.addMember("solo@example.com", "owner");
    const b = await signInWithMagicLink(ts, mails, "solo@example.com");
    const noCsrf = await b.postForm("/auth/invite", { email: "x1@example.com", project_id: ts.projectId });
    expect(noCsrf.status).toBe(403);

    const anonymous = new Browser(ts.url);
    await anonymous.get("/signin");
    const noSession = await anonymous.postForm("/auth/invite", { email: "x2@example.com", project_id: ts.projectId, csrf: anonymous.csrf });
    expect(noSession.status).toBe(401);

    const other = await ts.newProject("Not mine");
    const foreign = await b.postForm("/auth/invite", { email: "x3@example.com", project_id: other.projectId, csrf: b.csrf });
    expect(foreign.status).toBe(403);
    const bad = await b.postForm("/auth/invite", { email: "not-an-email", project_id: ts.projectId, csrf: b.csrf });
    expect(bad.status).toBe(400);

    await ts.addMember("plain-editor@example.com", "editor");
    const editor = await signInWithMagicLink(ts, mails, "plain-editor@example.com");
    const notOwner = await editor.postForm("/auth/invite", { email: "x4@example.com", project_id: ts.projectId, csrf: editor.csrf });
    expect(notOwner.status).toBe(403);
    expect(notOwner.text).toContain("cannot invite people");

    const everyone = [...(await ts.api("/api/admin/members")).body, ...(await ts.api("/api/admin/members", { key: other.adminKey })).body].map((m: any) => m.email);
    for (const email of ["x1@example.com", "x2@example.com", "x3@example.com", "x4@example.com"]) expect(everyone).not.toContain(email);
  });
});

describe("invitations wait for acceptance; each organisation's trail keeps to itself (issue 25)", () => {
  let ts: TestServer;
  const mails = new MailCapture();

  beforeAll(async () => {
    ts = await startTestServer({ signIn: { mailer: mails } });
  });
  afterAll(() => ts.stop());

  const membershipsOf = async (email: string, organisationId: string) =>
    ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = ? AND m.organisation_id = ?", email, organisationId);

  test("a person of another organisation invited here reaches nothing until they accept; meanwhile Members lists them as invited", async () => {
    const theirs = await ts.newProject("Pat's own");
    await ts.addMember("pat@example.com", "editor", theirs.projectId);
    const pat = await ts.accessTokenFor("pat@example.com", theirs.projectId);
    const owner = await ts.accessTokenFor("owner@example.com");

    const invited = await ts.api("/api/admin/invites", { key: owner, body: { email: "Pat@Example.com", role: "viewer" } });
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({
      email: "pat@example.com",
      role: "viewer",
      organisationId: ts.organisationId,
      organisationName: "Main project organisation",
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
      status: "invited",
    });
    expect(Date.parse(invited.body.expiresAt) - Date.parse(invited.body.createdAt)).toBe(7 * 24 * 3600_000);
    // Not a member: their sign-in does not reach this organisation's projects.
    expect(await membershipsOf("pat@example.com", ts.organisationId)).toEqual({ n: 0 });
    const refused = await ts.api("/api/admin/killswitches", { key: pat, headers: { "x-project-id": ts.projectId } });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("FORBIDDEN");
    expect((await ts.api("/api/admin/me", { key: pat })).body.projects.map((p: any) => p.id)).toEqual([theirs.projectId]);
    const listed = (await ts.api("/api/admin/members")).body.find((m: any) => m.email === "pat@example.com");
    expect(listed).toEqual({ email: "pat@example.com", role: "viewer", status: "invited", joinedAt: null, invitedAt: invited.body.createdAt, expiresAt: invited.body.expiresAt });
    expect((await ts.api("/api/admin/members")).body.find((m: any) => m.email === "owner@example.com")).toMatchObject({ status: "active", joinedAt: expect.any(String) });
    // Invited once is enough while it is pending.
    const again = await ts.api("/api/admin/invites", { key: owner, body: { email: "pat@example.com" } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("ALREADY_EXISTS");
    // A pending invitation's role can change; it applies on acceptance.
    expect((await ts.api("/api/admin/members/pat@example.com", { method: "PATCH", key: owner, body: { role: "editor" } })).body).toMatchObject({ role: "editor", status: "invited" });

    // The link's page asks them to accept; accepting makes them a member and signs them in.
    const mail = mails.lastTo("pat@example.com")!;
    const b = new Browser(ts.url);
    const page = await b.get(new URL(mail.url).pathname + new URL(mail.url).search);
    expect(page.status).toBe(200);
    expect(page.text).toContain("invited to join");
    expect(page.text).toContain("Main project organisation");
    expect(await membershipsOf("pat@example.com", ts.organisationId)).toEqual({ n: 0 });
    expect((await b.postForm("/auth/magic", { token: tokenOf(mail.url), csrf: b.csrf })).status).toBe(303);
    expect(await membershipsOf("pat@example.com", ts.organisationId)).toEqual({ n: 1 });
    expect((await ts.api("/api/admin/members")).body.find((m: any) => m.email === "pat@example.com")).toEqual({ email: "pat@example.com", role: "editor", status: "active", joinedAt: expect.any(String) });
    expect((await ts.api("/api/admin/killswitches", { key: pat, headers: { "x-project-id": ts.projectId } })).status).toBe(200);
    // Used once.
    const b2 = new Browser(ts.url);
    await b2.get("/signin");
    expect((await b2.postForm("/auth/magic", { token: tokenOf(mail.url), csrf: b2.csrf })).status).toBe(400);
  });

  test("a withdrawn invitation's link joins nobody; a new account is made only on acceptance", async () => {
    const owner = await ts.accessTokenFor("owner@example.com");
    expect((await ts.api("/api/admin/invites", { key: owner, body: { email: "gone@example.com" } })).status).toBe(201);
    expect(await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM users WHERE email = 'gone@example.com'")).toEqual({ n: 0 });
    expect((await ts.api("/api/admin/members/gone@example.com", { method: "DELETE", key: owner })).status).toBe(204);
    expect((await ts.api("/api/admin/members")).body.map((m: any) => m.email)).not.toContain("gone@example.com");
    const b = new Browser(ts.url);
    await b.get("/signin");
    const used = await b.postForm("/auth/magic", { token: tokenOf(mails.lastTo("gone@example.com")!.url), csrf: b.csrf });
    expect(used.status).toBe(400);
    expect(await membershipsOf("gone@example.com", ts.organisationId)).toEqual({ n: 0 });
    const trail = (await ts.api("/api/admin/audit?resource=member")).body.entries.map((e: any) => [e.action, e.subjectName]);
    expect(trail).toContainEqual(["member.uninvite", "gone@example.com"]);

    // Someone with an account elsewhere: the withdrawn link does not even sign them in.
    const theirs = await ts.newProject("Kim's own");
    await ts.addMember("kim@example.com", "editor", theirs.projectId);
    expect((await ts.api("/api/admin/invites", { key: owner, body: { email: "kim@example.com" } })).status).toBe(201);
    expect((await ts.api("/api/admin/members/kim@example.com", { method: "DELETE", key: owner })).status).toBe(204);
    const kim = new Browser(ts.url);
    await kim.get("/signin");
    expect((await kim.postForm("/auth/magic", { token: tokenOf(mails.lastTo("kim@example.com")!.url), csrf: kim.csrf })).status).toBe(400);
    expect(kim.cookies.has("svc_session")).toBe(false);
    expect(await membershipsOf("kim@example.com", ts.organisationId)).toEqual({ n: 0 });
  });

  test("a member's sign-ins and CLI sign-ins for another organisation stay out of this organisation's trail", async () => {
    const theirs = await ts.newProject("Sam's own");
    await ts.addMember("sam@example.com", "editor", theirs.projectId);
    await ts.addMember("sam@example.com", "editor");
    const seqOf = async (key?: string) => ((await ts.api("/api/admin/audit?limit=1", { key })).body.entries[0]?.seq ?? 0) as number;
    const since = await seqOf();

    // Sam signs in to the browser, approves a CLI for the other organisation's project, signs it out, signs out.
    const sam = await signInWithMagicLink(ts, mails, "sam@example.com");
    const pair = await deviceLogin(ts, sam, theirs.projectId);
    expect((await ts.api("/auth/device/revoke", { key: null, body: { token: pair.refresh_token } })).body).toEqual({ revoked: true });
    expect((await sam.postJson("/auth/logout", { csrf: sam.csrf })).status).toBe(200);

    const ours = (await ts.api("/api/admin/audit?limit=500")).body.entries.filter((e: any) => e.seq > since);
    expect(ours.filter((e: any) => e.actorEmail === "sam@example.com" || e.subjectName === "sam@example.com").map((e: any) => e.action)).toEqual([]);
    const theirTrail = (await ts.api("/api/admin/audit?limit=500", { key: theirs.adminKey })).body.entries.filter((e: any) => e.actorEmail === "sam@example.com");
    for (const action of ["device.approve", "device.token.mint", "device.token.revoke"]) expect(theirTrail.map((e: any) => e.action)).toContain(action);
    expect(theirTrail.find((e: any) => e.action === "device.approve").detail).toMatchObject({ projectId: theirs.projectId });
    // A browser sign-in opens no organisation in particular: neither trail shows it.
    expect(theirTrail.filter((e: any) => e.seq > since).map((e: any) => e.action)).not.toContain("session.signin");
  });
});

describe("first run and headless owner", () => {
  test("a fresh server prints one setup link; the first person creates organisation, project and owner", async () => {
    const dataDir = tempDir();
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SERVICE_")) env[k] = v;
    const proc = Bun.spawn([process.execPath, "src/main.ts", "serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, "--no-request-log"], {
      cwd: join(import.meta.dir, "../.."),
      env,
      stdout: "pipe",
      stderr: "pipe",
    });
    const stderrLines: any[] = [];
    let stdout = "";
    const drain = async (stream: ReadableStream<Uint8Array>, onText: (text: string) => void) => {
      const reader = stream.getReader();
      const decoder = new TextDecoder();
      for (let r = await reader.read(); !r.done; r = await reader.read()) onText(decoder.decode(r.value, { stream: true }));
    };
    const readStdout = drain(proc.stdout, (text) => (stdout += text));
    let buffer = "";
    const readStderr = drain(proc.stderr, (text) => {
      buffer += text;
      let i: number;
      while ((i = buffer.indexOf("\n")) !== -1) {
        try {
          stderrLines.push(JSON.parse(buffer.slice(0, i)));
        } catch {}
        buffer = buffer.slice(i + 1);
      }
    });
    const waitFor = async <T>(find: () => T | undefined, what: string): Promise<T> => {
      for (let i = 0; i < 200; i++) {
        const found = find();
        if (found) return found;
        await Bun.sleep(50);
      }
      throw new Error(`timed out waiting for ${what}; stdout: ${stdout} stderr: ${JSON.stringify(stderrLines)}`);
    };
    try {
      const base = await waitFor(() => /listening on (http:\/\/\S+)/.exec(stdout)?.[1], "listening");
      const setupUrl = await waitFor(() => /^ {2}First-run setup: open (\S+)$/m.exec(stdout)?.[1], "setup link");
      expect(stdout.match(/First-run setup: open/g)).toHaveLength(1);
      expect(setupUrl.startsWith(`${base}/setup?token=`)).toBe(true);
      // The JSON log line says where the link is, without the link.
      const setupLog = await waitFor(() => stderrLines.find((l) => String(l.msg).startsWith("first-run setup")), "setup log line");
      expect(JSON.stringify(setupLog)).not.toContain("token=");
      const setupPath = new URL(setupUrl).pathname + new URL(setupUrl).search;
      const token = tokenOf(setupUrl);

      const b = new Browser(base);
      const page = await b.get(setupPath);
      expect(page.status).toBe(200);
      expect(fieldValue(page.text, "token")).toBe(token);
      const fields = { token, email: "First@Example.com", organisation: "Acme", project: "Shop", csrf: b.csrf };
      expect((await b.postForm("/setup", { ...fields, csrf: "" })).status).toBe(403);
      expect((await b.postForm("/setup", { ...fields, project: "   " })).status).toBe(400);
      const done = await b.postForm("/setup", fields);
      // The page that hands out the project's first keys (first-day.test.ts checks them).
      expect(done.status).toBe(200);
      expect(done.text).toContain("Your project is ready");
      const account = await b.get("/signin");
      expect(account.text).toContain("first@example.com");
      expect(account.text).toContain("Shop");

      const db = new Database(join(dataDir, "service.db"), { readonly: true });
      try {
        const owner = db
          .query(
            `SELECT o.name AS organisation, p.name AS project, u.email, m.role FROM organisations o JOIN projects p ON p.organisation_id = o.id
             JOIN memberships m ON m.organisation_id = o.id JOIN users u ON u.id = m.user_id`,
          )
          .all();
        expect(owner).toEqual([{ organisation: "Acme", project: "Shop", email: "first@example.com", role: "owner" }]);
      } finally {
        db.close();
      }

      const second = new Browser(base);
      await second.get("/signin");
      expect((await second.postForm("/setup", { ...fields, email: "second@example.com", csrf: second.csrf })).status).toBe(400);
      expect((await second.get(setupPath)).text).toContain("Already set up");

      // Without SMTP every link goes to <data>/outbox.log (0600), never to the server log (issue 8).
      await second.postForm("/auth/magic-link", { email: "first@example.com", csrf: second.csrf });
      const outbox = join(dataDir, "outbox.log");
      const entries = await waitFor(() => {
        const lines = existsSync(outbox) ? readFileSync(outbox, "utf8").trim().split("\n").map((l) => JSON.parse(l)) : [];
        return lines.some((l) => l.to === "first@example.com") ? lines : undefined;
      }, "the magic link in the outbox");
      expect(statSync(outbox).mode & 0o777).toBe(0o600);
      const magic = entries.find((l: any) => l.to === "first@example.com");
      expect(Object.keys(magic)).toEqual(["ts", "to", "subject", "link"]);
      expect(magic.link.startsWith(`${base}/auth/magic?token=`)).toBe(true);
      expect(entries[0].link).toBe(setupUrl);
      expect(stdout).toMatch(/"msg":"mail delivery","delivery":"[^"]*outbox\.log/);
      const serverLog = stdout + JSON.stringify(stderrLines);
      expect(serverLog).not.toContain(magic.link);
      expect(serverLog).not.toContain(new URL(magic.link).searchParams.get("token")!);
    } finally {
      proc.kill();
      await proc.exited;
      await Promise.all([readStdout, readStderr]);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("SERVICE_ADMIN_EMAIL makes that person owner of the first organisation, without a setup link", async () => {
    const mails = new MailCapture();
    const ts = await startTestServer({ adminEmail: "ops@example.com", signIn: { mailer: mails } });
    try {
      const rows = await ts.store.all("SELECT o.name, m.role FROM memberships m JOIN users u ON u.id = m.user_id JOIN organisations o ON o.id = m.organisation_id WHERE u.email = 'ops@example.com'");
      expect(rows).toEqual([{ name: "Default organisation", role: "owner" }]);
      expect(await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM sign_in_links WHERE purpose = 'setup'")).toEqual({ n: 0 });
      const b = await signInWithMagicLink(ts, mails, "ops@example.com");
      expect((await b.get("/signin")).text).toContain("Default project");
    } finally {
      await ts.stop();
    }
  });
});

describe("SMTP delivery", () => {
  type SmtpSession = { commands: string[]; data: string; delivered: boolean };
  let smtp: NetServer;
  const sessions: SmtpSession[] = [];

  beforeAll(async () => {
    // A stand-in SMTP server speaking just enough of RFC 5321.
    smtp = createServer((socket) => {
      const session: SmtpSession = { commands: [], data: "", delivered: false };
      sessions.push(session);
      let buffer = "";
      let inData = false;
      socket.write("220 stand-in ESMTP\r\n");
      socket.on("data", (chunk) => {
        buffer += chunk.toString();
        let i: number;
        while ((i = buffer.indexOf("\r\n")) !== -1) {
          const line = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          if (inData) {
            if (line === ".") {
              inData = false;
              session.delivered = true;
              socket.write("250 queued\r\n");
            } else session.data += `${line}\n`;
            continue;
          }
          session.commands.push(line);
          const verb = line.split(" ")[0]!.toUpperCase();
          if (verb === "EHLO") socket.write("250-stand-in\r\n250-AUTH PLAIN\r\n250 8BITMIME\r\n");
          else if (verb === "AUTH") socket.write("235 accepted\r\n");
          else if (verb === "MAIL" || verb === "RCPT") socket.write("250 ok\r\n");
          else if (verb === "DATA") {
            inData = true;
            socket.write("354 go ahead\r\n");
          } else if (verb === "QUIT") socket.end("221 bye\r\n");
          else socket.write("502 not here\r\n");
        }
      });
    });
    await new Promise<void>((done) => smtp.listen(0, "127.0.0.1", done));
  });
  afterAll(() => new Promise<void>((done) => smtp.close(() => done())));

  test("the link is mailed over SMTP (?tls=off) with AUTH PLAIN, and it works", async () => {
    const port = (smtp.address() as { port: number }).port;
    // A plain-text stand-in: `?tls=off` (without it smtp:// requires STARTTLS; see test/modules/mail.test.ts).
    const ts = await startTestServer({ signIn: { smtpUrl: `smtp://mailer:p%40ss@127.0.0.1:${port}?tls=off`, mailFrom: "svc <svc@example.com>" } });
    try {
      const b = new Browser(ts.url);
      await b.get("/signin");
      expect((await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf })).status).toBe(200);
      // nodemailer closes the connection after the message without a QUIT.
      for (let i = 0; i < 100 && !sessions.some((s) => s.delivered); i++) await Bun.sleep(20);
      const session = sessions.at(-1)!;
      expect(session.commands[0]).toStartWith("EHLO ");
      const auth = session.commands.find((c) => c.startsWith("AUTH PLAIN "))!;
      expect(Buffer.from(auth.slice("AUTH PLAIN ".length), "base64").toString()).toBe("\0mailer\0p@ss");
      expect(session.commands).toContain("MAIL FROM:<svc@example.com>");
      expect(session.commands).toContain("RCPT TO:<owner@example.com>");
      expect(session.data).toContain("Subject: Your svc sign-in link");
      expect(session.data).toMatch(/^To: <?owner@example\.com>?$/m);
      // A line longer than 76 characters makes the body quoted-printable: undo it.
      const body = /^Content-Transfer-Encoding: quoted-printable$/im.test(session.data)
        ? session.data.replace(/=\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
        : session.data;
      const url = /(http:\/\/\S+\/auth\/magic\?token=\w+)/.exec(body)![1]!;
      await b.get(new URL(url).pathname + new URL(url).search);
      expect((await b.postForm("/auth/magic", { token: tokenOf(url), csrf: b.csrf })).status).toBe(303);
    } finally {
      await ts.stop();
    }
  });
});

/**
 * A local OpenID provider: discovery, JWKS, authorize (auto-approving; it
 * sends `iss` back, RFC 9207), token (checks client auth, PKCE and the
 * redirect URI, and signs real RS256 id_tokens). `state` bends its answers.
 */
async function standInProvider(clientId: string, clientSecret: string) {
  const keys = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const jwk = { ...(await crypto.subtle.exportKey("jwk", keys.publicKey)), kid: "k1", use: "sig", alg: "RS256" };
  const codes = new Map<string, { nonce: string; challenge: string; redirectUri: string }>();
  const fresh = () => ({
    email: "owner@example.com",
    subject: "user-1",
    claims: (c: Record<string, unknown>) => c,
    tamper: false,
    /** The `iss` the authorization response carries (null: the real issuer). */
    callbackIss: null as string | null,
    /** A canned answer of the token endpoint instead of tokens. */
    tokenFailure: null as null | { status: number; type: string; body: string },
  });
  const state = {
    ...fresh(),
    tokenCalls: 0,
    authorizeParams: null as URLSearchParams | null,
    /** Every code_verifier the token endpoint received. */
    verifiers: [] as string[],
  };
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const issuer = url.origin;
      if (url.pathname === "/.well-known/openid-configuration") {
        return Response.json({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["client_secret_basic"],
          authorization_response_iss_parameter_supported: true,
        });
      }
      if (url.pathname === "/jwks") return Response.json({ keys: [jwk] });
      if (url.pathname === "/authorize") {
        state.authorizeParams = url.searchParams;
        const code = crypto.randomUUID();
        codes.set(code, { nonce: url.searchParams.get("nonce")!, challenge: url.searchParams.get("code_challenge")!, redirectUri: url.searchParams.get("redirect_uri")! });
        const back = new URL(url.searchParams.get("redirect_uri")!);
        back.searchParams.set("code", code);
        back.searchParams.set("state", url.searchParams.get("state")!);
        back.searchParams.set("iss", state.callbackIss ?? issuer);
        return Response.redirect(back.toString(), 302);
      }
      if (url.pathname === "/token" && request.method === "POST") {
        state.tokenCalls++;
        // RFC 6749 §2.3.1: id and secret are form-urlencoded before base64 (openid-client encodes even "-").
        const basic = /^Basic (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
        const [id, secret] = Buffer.from(basic, "base64").toString().split(":").map((part) => decodeURIComponent(part.replaceAll("+", " ")));
        if (id !== clientId || secret !== clientSecret) return Response.json({ error: "invalid_client" }, { status: 401 });
        const form = new URLSearchParams(await request.text());
        state.verifiers.push(form.get("code_verifier") ?? "");
        if (state.tokenFailure) return new Response(state.tokenFailure.body, { status: state.tokenFailure.status, headers: { "content-type": state.tokenFailure.type } });
        const grant = codes.get(form.get("code") ?? "");
        codes.delete(form.get("code") ?? "");
        const verifierHash = createHash("sha256").update(form.get("code_verifier") ?? "").digest("base64url");
        if (!grant || verifierHash !== grant.challenge || form.get("redirect_uri") !== grant.redirectUri) {
          return Response.json({ error: "invalid_grant" }, { status: 400 });
        }
        const now = Math.floor(Date.now() / 1000);
        const claims = state.claims({
          iss: issuer,
          aud: clientId,
          sub: state.subject,
          email: state.email,
          email_verified: true,
          nonce: grant.nonce,
          iat: now,
          exp: now + 300,
        });
        const signingInput = `${b64({ alg: "RS256", kid: "k1", typ: "JWT" })}.${b64(claims)}`;
        const signature = Buffer.from(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", keys.privateKey, new TextEncoder().encode(signingInput)));
        if (state.tamper) signature[0] = signature[0]! ^ 0xff;
        return Response.json({ access_token: "at", token_type: "Bearer", expires_in: 300, id_token: `${signingInput}.${signature.toString("base64url")}` });
      }
      return new Response("not found", { status: 404 });
    },
  });
  return {
    issuer: `http://127.0.0.1:${server.port}`,
    state,
    /** Back to an honest provider for owner@example.com, subject user-1. */
    reset: () => Object.assign(state, fresh()),
    stop: () => server.stop(true),
  };
}

/** start → provider → callback; returns the callback answer. */
async function oidcRoundTrip(b: Browser, redirect = "/device") {
  const start = await b.get(`/auth/oidc/start?redirect=${encodeURIComponent(redirect)}`);
  expect(start.status).toBe(303);
  const atProvider = await b.get(start.location!);
  expect(atProvider.status).toBe(302);
  return b.get(atProvider.location!);
}

describe("OIDC sign-in", () => {
  let ts: TestServer;
  let provider: Awaited<ReturnType<typeof standInProvider>>;
  const mails = new MailCapture();

  beforeAll(async () => {
    provider = await standInProvider("svc-client", "s3cret");
    ts = await startTestServer({ signIn: { oidc: { issuer: provider.issuer, clientId: "svc-client", clientSecret: "s3cret" }, mailer: mails } });
  });
  afterAll(async () => {
    await ts.stop();
    provider.stop();
  });
  beforeEach(() => provider.reset());

  const sessionCount = async () => ((await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM sessions")) as { n: number }).n;
  const userIdOf = async (email: string) => ((await ts.store.one("SELECT id FROM users WHERE email = ?", email)) as { id: string }).id;
  const bindingOf = async (subject: string) =>
    (await ts.store.one<{ issuer: string; subject: string; user_id: string; email: string; created_at: string; last_used_at: string }>(
      "SELECT issuer, subject, user_id, email, created_at, last_used_at FROM user_identities WHERE issuer = ? AND subject = ?",
      provider.issuer,
      subject,
    )) ?? null;
  const signedInAs = async (b: Browser) => /Signed in as <strong>([^<]+)<\/strong>/.exec((await b.get("/signin")).text)?.[1] ?? null;
  // Invited and accepted: only members sign in.
  const invite = async (email: string) => {
    await ts.addMember(email, "editor");
  };

  test("the sign-in page offers SSO; the code flow with PKCE, state and nonce opens a session bound to issuer + subject", async () => {
    const b = new Browser(ts.url);
    expect((await b.get("/signin")).text).toContain("Sign in with SSO");
    const start = await b.get("/auth/oidc/start?redirect=%2Fdevice");
    expect(start.status).toBe(303);
    // The cookie is <state>.<browserKey>; only the state travels to the provider.
    const [cookieState, browserKey] = b.cookies.get("svc_oidc")!.split(".");
    expect(b.cookies.get("svc_oidc")).toMatch(/^[A-Za-z0-9]{32}\.[A-Za-z0-9]{43}$/);
    const params = new URL(start.location!).searchParams;
    expect(params.get("state")).toBe(cookieState!);
    expect(start.location!).not.toContain(browserKey!);
    expect(params.get("client_id")).toBe("svc-client");
    expect(params.get("response_type")).toBe("code");
    expect(params.get("code_challenge_method")).toBe("S256");
    expect(params.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    expect(params.get("redirect_uri")).toBe(`${ts.url}/auth/oidc/callback`);
    expect(params.get("scope")!.split(" ")).toEqual(expect.arrayContaining(["openid", "email"]));
    expect(params.get("nonce")).toMatch(/^\w{32}$/);

    const atProvider = await b.get(start.location!);
    const done = await b.get(atProvider.location!);
    expect(done.status).toBe(303);
    expect(done.location).toBe("/device");
    expect(b.cookies.has("svc_session")).toBe(true);
    expect(b.cookies.has("svc_oidc")).toBe(false);
    expect(await signedInAs(b)).toBe("owner@example.com");
    expect(await bindingOf("user-1")).toMatchObject({ issuer: provider.issuer, subject: "user-1", user_id: await userIdOf("owner@example.com"), email: "owner@example.com" });
  });

  test("a second sign-in after the provider changed the email reaches the same account, and updates the binding", async () => {
    await invite("alice@example.com");
    provider.state.subject = "alice-sub";
    provider.state.email = "alice@example.com";
    const first = new Browser(ts.url);
    expect((await oidcRoundTrip(first)).status).toBe(303);
    const bound = (await bindingOf("alice-sub"))!;
    expect(bound).toMatchObject({ user_id: await userIdOf("alice@example.com"), email: "alice@example.com" });

    await Bun.sleep(5);
    // The provider now sends an address nobody here has: the subject, not the email, decides.
    provider.state.email = "Alice.Renamed@Corp.Example";
    const second = new Browser(ts.url);
    const done = await oidcRoundTrip(second);
    expect(done.status).toBe(303);
    expect(await signedInAs(second)).toBe("alice@example.com");
    const after = (await bindingOf("alice-sub"))!;
    expect(after.email).toBe("alice.renamed@corp.example");
    expect(after.created_at).toBe(bound.created_at);
    expect(after.last_used_at > bound.last_used_at).toBe(true);
    expect(await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM user_identities WHERE user_id = ?", await userIdOf("alice@example.com"))).toEqual({ n: 1 });
  });

  test("a new subject claiming an email already bound to another subject at this issuer is refused (403)", async () => {
    expect((await oidcRoundTrip(new Browser(ts.url))).status).toBe(303); // owner@example.com is bound to user-1
    expect((await bindingOf("user-1"))?.user_id).toBe(await userIdOf("owner@example.com"));
    provider.state.subject = "impostor";
    const sessions = await sessionCount();
    const b = new Browser(ts.url);
    const refused = await oidcRoundTrip(b);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("linked to another identity at that provider");
    expect(b.cookies.has("svc_session")).toBe(false);
    expect(await sessionCount()).toBe(sessions);
    expect(await bindingOf("impostor")).toBeNull();
  });

  test("a bound account that left every organisation is refused, though the provider still vouches for it", async () => {
    await invite("carol@example.com");
    provider.state.subject = "carol-sub";
    provider.state.email = "carol@example.com";
    expect((await oidcRoundTrip(new Browser(ts.url))).status).toBe(303);
    await ts.store.run("DELETE FROM memberships WHERE user_id = ?", await userIdOf("carol@example.com"));
    const b = new Browser(ts.url);
    const refused = await oidcRoundTrip(b);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("no longer belongs to any organisation");
    expect(b.cookies.has("svc_session")).toBe(false);
  });

  test("someone without an account is refused (403) and nothing is bound", async () => {
    provider.state.subject = "stranger-sub";
    provider.state.email = "stranger@example.com";
    const stranger = new Browser(ts.url);
    const refused = await oidcRoundTrip(stranger);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("stranger@example.com has no account");
    expect(stranger.cookies.has("svc_session")).toBe(false);
    expect(await bindingOf("stranger-sub")).toBeNull();
  });

  test("email_verified must be true: a missing or false claim is refused (401)", async () => {
    const cases: [string, (c: Record<string, unknown>) => Record<string, unknown>, string][] = [
      ["missing", ({ email_verified: _, ...rest }) => rest, "no email_verified claim"],
      ["false", (c) => ({ ...c, email_verified: false }), "has not verified this email address"],
      ["string", (c) => ({ ...c, email_verified: "true" }), "has not verified this email address"],
    ];
    provider.state.subject = "unverified-sub";
    for (const [name, claims, message] of cases) {
      provider.state.claims = claims;
      const sessions = await sessionCount();
      const b = new Browser(ts.url);
      const refused = await oidcRoundTrip(b);
      expect([name, refused.status]).toEqual([name, 401]);
      expect(refused.text).toContain(message);
      expect(b.cookies.has("svc_session")).toBe(false);
      expect(await sessionCount()).toBe(sessions);
    }
    expect(await bindingOf("unverified-sub")).toBeNull();
  });

  test("SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL=true accepts a provider that lacks email_verified", async () => {
    const options = signInOptionsFromEnv({
      SERVICE_OIDC_ISSUER: provider.issuer,
      SERVICE_OIDC_CLIENT_ID: "svc-client",
      SERVICE_OIDC_CLIENT_SECRET: "s3cret",
      SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL: "true",
    });
    const lax = await startTestServer({ signIn: { ...options, mailer: new MailCapture() } });
    try {
      for (const claims of [({ email_verified: _, ...rest }: Record<string, unknown>) => rest, (c: Record<string, unknown>) => ({ ...c, email_verified: false })]) {
        provider.state.claims = claims;
        const b = new Browser(lax.url);
        expect((await oidcRoundTrip(b)).status).toBe(303);
        expect(await signedInAs(b)).toBe("owner@example.com");
      }
    } finally {
      await lax.stop();
    }
  });

  test("a bad signature, wrong audience, nonce, issuer or response issuer, or an expired id_token is refused (401, no session)", async () => {
    const cases: [string, () => void, string][] = [
      ["signature", () => (provider.state.tamper = true), "signature does not verify"],
      ["audience", () => (provider.state.claims = (c) => ({ ...c, aud: "someone-else" })), "meant for another client"],
      ["nonce", () => (provider.state.claims = (c) => ({ ...c, nonce: "replayed" })), "nonce does not match"],
      ["expired", () => (provider.state.claims = (c) => ({ ...c, exp: Math.floor(Date.now() / 1000) - 3600 })), "has expired"],
      ["issuer", () => (provider.state.claims = (c) => ({ ...c, iss: "https://other.example" })), "another issuer"],
      ["mix-up", () => (provider.state.callbackIss = "https://other.example"), "does not belong to this sign-in"],
    ];
    provider.state.subject = "tampered-sub";
    for (const [name, breakIt, message] of cases) {
      provider.reset();
      provider.state.subject = "tampered-sub";
      breakIt();
      const sessions = await sessionCount();
      const b = new Browser(ts.url);
      const done = await oidcRoundTrip(b);
      expect([name, done.status]).toEqual([name, 401]);
      expect([name, done.text.includes(message)]).toEqual([name, true]);
      expect(b.cookies.has("svc_session")).toBe(false);
      expect(await sessionCount()).toBe(sessions);
    }
    expect(await bindingOf("tampered-sub")).toBeNull();
  });

  test("the callback must reach the browser that started it, with its state and key, once", async () => {
    // No cookie at all (another browser opened the victim's callback link).
    const victim = new Browser(ts.url);
    const start = await victim.get("/auth/oidc/start");
    const callback = (await victim.get(start.location!)).location!;
    const calls = provider.state.tokenCalls;
    const crossed = await new Browser(ts.url).get(callback);
    expect(crossed.status).toBe(401);
    const pendingFor = async (state: string) => ((await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM oidc_logins WHERE state_hash = ?", sha256(state))) as { n: number }).n;
    const victimState = new URL(callback).searchParams.get("state")!;
    expect(await pendingFor(victimState)).toBe(1); // a callback without the cookie does not spend the victim's sign-in

    // The right state with another browser's key: refused, and the pending login is spent.
    const [state] = victim.cookies.get("svc_oidc")!.split(".");
    const forger = new Browser(ts.url);
    forger.cookies.set("svc_oidc", `${state}.${"x".repeat(43)}`);
    const forged = await forger.get(callback);
    expect(forged.status).toBe(401);
    expect(forged.text).toContain("started in another browser");
    expect(await pendingFor(state!)).toBe(0);
    expect((await victim.get(callback)).status).toBe(401);

    // Two sign-ins started in one browser: the first one's callback no longer matches the cookie's state.
    const b = new Browser(ts.url);
    const firstCallback = (await b.get((await b.get("/auth/oidc/start")).location!)).location!;
    const secondCallback = (await b.get((await b.get("/auth/oidc/start")).location!)).location!;
    const cookieAfterSecond = b.cookies.get("svc_oidc")!;
    const mismatched = await b.get(firstCallback);
    expect(mismatched.status).toBe(401);
    expect(mismatched.text).toContain("started in another browser or has expired");
    expect(await pendingFor(new URL(firstCallback).searchParams.get("state")!)).toBe(1); // refused before its pending login is touched
    expect(b.cookies.has("svc_session")).toBe(false);
    expect(provider.state.tokenCalls).toBe(calls);

    // A replay of a finished callback with its cookie.
    b.cookies.set("svc_oidc", cookieAfterSecond);
    expect((await b.get(secondCallback)).status).toBe(303);
    b.cookies.delete("svc_session");
    b.cookies.set("svc_oidc", cookieAfterSecond);
    const replay = await b.get(secondCallback);
    expect(replay.status).toBe(401);
    expect(replay.text).toContain("already used or has expired");
    expect(b.cookies.has("svc_session")).toBe(false);

    const denied = await new Browser(ts.url).get("/auth/oidc/callback?error=access_denied&error_description=no");
    expect(denied.status).toBe(401);
  });

  test("a pending login keeps the PKCE verifier and nonce sealed under the browser's key, and is single use", async () => {
    const b = new Browser(ts.url);
    const start = await b.get("/auth/oidc/start");
    const [state, browserKey] = b.cookies.get("svc_oidc")!.split(".") as [string, string];
    const nonce = new URL(start.location!).searchParams.get("nonce")!;
    const rows = (await ts.store.all("SELECT * FROM oidc_logins WHERE state_hash = ?", sha256(state))) as Record<string, string>[];
    expect(rows.length).toBe(1);
    const row = rows[0]!;
    expect(Object.keys(row).sort()).toEqual(["created_at", "expires_at", "redirect", "sealed", "state_hash"]);
    const sealed = row.sealed!;
    const callback = (await b.get(start.location!)).location!;
    expect((await b.get(callback)).status).toBe(303);
    const verifier = provider.state.verifiers.at(-1)!;
    expect(verifier.length).toBeGreaterThanOrEqual(43);

    // Neither secret is in the row, in clear or merely encoded; nor is the state or the browser's key.
    const stored = JSON.stringify(row);
    const decoded = Buffer.from(sealed, "base64url").toString("latin1");
    for (const secret of [verifier, nonce, state, browserKey]) {
      expect(stored).not.toContain(secret);
      expect(decoded).not.toContain(secret);
    }
    // What is sealed is exactly those two, and only this browser's key opens it.
    expect(unsealPendingLogin(browserKey, sha256(state), sealed)).toEqual({ codeVerifier: verifier, nonce });
    expect(unsealPendingLogin(`${browserKey.slice(0, -1)}${browserKey.endsWith("A") ? "B" : "A"}`, sha256(state), sealed)).toBeNull();
    expect(unsealPendingLogin(browserKey, sha256("another state"), sealed)).toBeNull();
    // Used once, gone.
    expect(await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM oidc_logins WHERE state_hash = ?", sha256(state))).toEqual({ n: 0 });
  });

  test("a provider that is down or answers garbage gives a 502 page (a refused code 401), never a 500", async () => {
    const failures: [string, { status: number; type: string; body: string }, number, string][] = [
      ["token endpoint down", { status: 503, type: "text/html", body: "<h1>maintenance</h1>" }, 502, "answered HTTP 503"],
      ["not JSON", { status: 200, type: "text/html", body: "<h1>hello</h1>" }, 502, "did not answer JSON"],
      ["no id_token", { status: 200, type: "application/json", body: JSON.stringify({ access_token: "at", token_type: "Bearer" }) }, 502, "id_token"],
      ["server_error", { status: 500, type: "application/json", body: JSON.stringify({ error: "server_error" }) }, 502, "answered HTTP 500"],
      ["invalid_client", { status: 401, type: "application/json", body: JSON.stringify({ error: "invalid_client" }) }, 502, "invalid_client"],
      ["invalid_grant", { status: 400, type: "application/json", body: JSON.stringify({ error: "invalid_grant" }) }, 401, "refused the authorization code"],
    ];
    for (const [name, failure, status, message] of failures) {
      provider.state.tokenFailure = failure;
      const b = new Browser(ts.url);
      const done = await oidcRoundTrip(b);
      expect([name, done.status]).toEqual([name, status]);
      expect([name, done.headers.get("content-type")]).toEqual([name, "text/html; charset=utf-8"]);
      expect([name, done.text.includes(message)]).toEqual([name, true]);
      expect(b.cookies.has("svc_session")).toBe(false);
    }

    // An issuer nobody answers at: the start page says so (502) and leaves no pending login.
    const gone = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const deadIssuer = `http://127.0.0.1:${gone.port}`;
    gone.stop(true);
    const dead = await startTestServer({ signIn: { oidc: { issuer: deadIssuer, clientId: "svc-client", clientSecret: "s3cret" }, mailer: new MailCapture() } });
    try {
      for (let i = 0; i < 2; i++) {
        const res = await new Browser(dead.url).get("/auth/oidc/start");
        expect(res.status).toBe(502);
        expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
        expect(res.text).toContain("could not be reached");
      }
      expect(await dead.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM oidc_logins")).toEqual({ n: 0 });
      expect((await new Browser(dead.url).get("/signin")).status).toBe(200);
    } finally {
      await dead.stop();
    }
  });

  test("SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL is true or false; a plain-http issuer only on this machine", () => {
    const base = { SERVICE_OIDC_ISSUER: "https://id.example.com", SERVICE_OIDC_CLIENT_ID: "svc", SERVICE_OIDC_CLIENT_SECRET: "s" };
    expect(signInOptionsFromEnv({ ...base, SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL: "true" }).oidc).toEqual({
      issuer: "https://id.example.com",
      clientId: "svc",
      clientSecret: "s",
      allowUnverifiedEmail: true,
    });
    expect(signInOptionsFromEnv({ ...base, SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL: "false" }).oidc?.allowUnverifiedEmail).toBe(false);
    expect(signInOptionsFromEnv(base).oidc?.allowUnverifiedEmail).toBeUndefined();
    for (const bad of ["yes", "TRUE", "1"]) {
      expect(() => signInOptionsFromEnv({ ...base, SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL: bad })).toThrow(UsageError);
      expect(() => signInOptionsFromEnv({ ...base, SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL: bad })).toThrow("must be true or false");
    }
    expect(() => signInOptionsFromEnv({ SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL: "true" })).toThrow(UsageError);
    for (const local of ["http://127.0.0.1:9000", "http://localhost:9000/realms/x", "http://[::1]:9000"]) {
      expect(signInOptionsFromEnv({ ...base, SERVICE_OIDC_ISSUER: local }).oidc?.issuer).toBe(local);
    }
    for (const remote of ["http://id.example.com", "http://10.0.0.5:9000", "http://127.0.0.1.nip.io"]) {
      expect(() => signInOptionsFromEnv({ ...base, SERVICE_OIDC_ISSUER: remote })).toThrow("must be https://");
    }
  });

  test("without OIDC configured the SSO paths are NOT_FOUND pages", async () => {
    const plain = await startTestServer();
    try {
      const res = await new Browser(plain.url).get("/auth/oidc/start");
      expect(res.status).toBe(404);
      expect((await new Browser(plain.url).get("/signin")).text).not.toContain("SSO");
    } finally {
      await plain.stop();
    }
  });
});

describe("sign-in settings from the environment", () => {
  test("reads SMTP and OIDC; refuses partial or malformed values", () => {
    expect(
      signInOptionsFromEnv({
        SERVICE_SMTP_URL: "smtps://u:p@mail.example.com",
        SERVICE_SMTP_FROM: "svc <svc@example.com>",
        SERVICE_OIDC_ISSUER: "https://id.example.com/",
        SERVICE_OIDC_CLIENT_ID: "svc",
        SERVICE_OIDC_CLIENT_SECRET: "s",
      }),
    ).toEqual({
      smtpUrl: "smtps://u:p@mail.example.com",
      mailFrom: "svc <svc@example.com>",
      oidc: { issuer: "https://id.example.com", clientId: "svc", clientSecret: "s" },
    });
    expect(signInOptionsFromEnv({})).toEqual({});
    expect(() => signInOptionsFromEnv({ SERVICE_OIDC_ISSUER: "https://id.example.com" })).toThrow("OIDC needs all of");
    expect(() => signInOptionsFromEnv({ SERVICE_SMTP_URL: "http://mail.example.com" })).toThrow("SERVICE_SMTP_URL must start with");
  });
});
