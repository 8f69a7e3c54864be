import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { createServer, type Server as NetServer } from "node:net";
import { join } from "node:path";
import { rmSync } from "node:fs";
import { startTestServer, tempDir, type TestServer } from "../helpers";
import { Browser, MailCapture, fieldValue, signInWithMagicLink, testClock } from "../browser";
import { signInOptionsFromEnv } from "../../src/modules/identity/options";

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
    const row = ts.server.db.query("SELECT token_hash, email, used_at FROM sign_in_links WHERE token_hash = ?").get(sha256(token)) as any;
    expect(row).toEqual({ token_hash: sha256(token), email: "owner@example.com", used_at: null });
    expect(ts.server.db.query("SELECT COUNT(*) AS n FROM sign_in_links WHERE token_hash = ?").get(token)).toEqual({ n: 0 });

    // A mail scanner's GETs do not use it.
    for (let i = 0; i < 2; i++) {
      const page = await b.get(`/auth/magic?token=${token}`);
      expect(page.status).toBe(200);
      expect(fieldValue(page.text, "token")).toBe(token);
    }
    const done = await b.postForm("/auth/magic", { token, csrf: b.csrf });
    expect(done.status).toBe(303);
    expect(done.location).toBe("/signin");
    const sessionCookie = done.setCookies.find((c) => c.startsWith("svc_session="))!;
    expect(sessionCookie).toContain("HttpOnly");
    expect(sessionCookie).toContain("SameSite=Lax");
    expect(sessionCookie).toContain("Path=/");
    expect(sessionCookie).toContain(`Max-Age=${30 * 24 * 3600}`);
    expect(sessionCookie).not.toContain("Secure");
    const session = b.cookies.get("svc_session")!;
    const stored = ts.server.db.query("SELECT s.token_hash, u.email FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?").get(sha256(session));
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
    const links = () => (ts.server.db.query("SELECT COUNT(*) AS n FROM sign_in_links").get() as { n: number }).n;
    const before = { mails: mails.sent.length, links: links() };
    const json = await b.postJson("/auth/magic-link", { email: "stranger@example.com" }, { "x-csrf-token": b.csrf });
    const member = await b.postJson("/auth/magic-link", { email: "owner@example.com" }, { "x-csrf-token": b.csrf });
    expect(json.status).toBe(200);
    expect(json.body).toEqual(member.body);
    expect(json.body.ok).toBe(true);
    expect(mails.sent.length).toBe(before.mails + 1);
    expect(mails.sent.at(-1)!.to).toBe("owner@example.com");
    expect(links()).toBe(before.links + 1);
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
    const row = ts.server.db.query("SELECT revoked_at FROM sessions WHERE token_hash = ?").get(sha256(session)) as { revoked_at: string | null };
    expect(row.revoked_at).not.toBeNull();
    // The old cookie no longer works even if replayed.
    b.cookies.set("svc_session", session);
    expect((await b.get("/signin")).text).not.toContain("Signed in as");
  });

  test("cookies are Secure when the browser reached us over https", async () => {
    const b = new Browser(ts.url);
    await b.get("/signin");
    await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf });
    const token = tokenOf(mails.lastTo("owner@example.com")!.url);
    b.origin = ts.url.replace("http:", "https:");
    const done = await b.postForm("/auth/magic", { token, csrf: b.csrf }, { "x-forwarded-proto": "https" });
    expect(done.status).toBe(303);
    expect(done.setCookies.find((c) => c.startsWith("svc_session="))).toContain("Secure");
  });
});

describe("invites and members", () => {
  let ts: TestServer;
  const mails = new MailCapture();

  beforeAll(async () => {
    ts = await startTestServer({ signIn: { mailer: mails } });
  });
  afterAll(() => ts.stop());

  test("an admin key invites a person, who gets a 7-day link and can sign in", async () => {
    const res = await ts.api("/api/admin/invites", { body: { email: "New@Example.com", role: "admin" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email: "new@example.com", role: "admin", organisationId: ts.organisationId, organisationName: "Main project organisation" });
    const mail = mails.lastTo("new@example.com")!;
    expect(mail.reason).toBe("invite");
    const link = ts.server.db.query("SELECT created_at, expires_at FROM sign_in_links WHERE token_hash = ?").get(sha256(tokenOf(mail.url))) as any;
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
      ["new@example.com", "admin"],
    ]);
    expect((await ts.api("/api/admin/members?q=NEW")).body.map((m: any) => m.email)).toEqual(["new@example.com"]);
  });

  test("inviting a member again is ALREADY_EXISTS; bad bodies are VALIDATION or BAD_REQUEST", async () => {
    await ts.api("/api/admin/invites", { body: { email: "twice@example.com" } });
    const again = await ts.api("/api/admin/invites", { body: { email: "twice@example.com" } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("ALREADY_EXISTS");
    const role = await ts.api("/api/admin/invites", { body: { email: "x@example.com", role: "owner" } });
    expect(role.status).toBe(400);
    expect(role.body.code).toBe("VALIDATION");
    expect(role.body.detail).toContain("role");
    const email = await ts.api("/api/admin/invites", { body: { email: "nope" } });
    expect(email.body.detail).toContain("email");
    const malformed = await ts.api("/api/admin/invites", { rawBody: "{" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("BAD_REQUEST");
    const members = (await ts.api("/api/admin/members")).body.map((m: any) => m.email);
    expect(members).not.toContain("x@example.com");
    expect(members).not.toContain("nope");
  });

  test("credentials: none is UNAUTHORIZED, a server key and API tokens are FORBIDDEN; members stay per organisation", async () => {
    expect((await ts.api("/api/admin/invites", { key: null, body: { email: "a@example.com" } })).status).toBe(401);
    expect((await ts.api("/api/admin/invites", { key: ts.serverKey, body: { email: "a@example.com" } })).status).toBe(403);
    const rw = (await ts.api("/api/admin/tokens", { body: { name: "ci", access: "read-write" } })).body.token;
    const byToken = await ts.api("/api/admin/invites", { key: rw, body: { email: "a@example.com" } });
    expect(byToken.status).toBe(403);
    expect(byToken.body.code).toBe("FORBIDDEN");
    expect((await ts.api("/api/admin/members", { key: rw })).status).toBe(200);

    const other = ts.newProject("Elsewhere");
    await ts.api("/api/admin/invites", { key: other.adminKey, body: { email: "elsewhere@example.com" } });
    expect((await ts.api("/api/admin/members")).body.map((m: any) => m.email)).not.toContain("elsewhere@example.com");
    expect((await ts.api("/api/admin/members", { key: other.adminKey })).body.map((m: any) => m.email)).toContain("elsewhere@example.com");
    const foreign = await ts.api("/api/admin/members", { headers: { "x-project-id": other.projectId } });
    expect(foreign.status).toBe(403);
  });

  test("a signed-in person invites a teammate from the browser page", async () => {
    const b = await signInWithMagicLink(ts, mails, "owner@example.com");
    const account = await b.get("/signin");
    expect(account.text).toContain('action="/auth/invite"');
    expect(fieldValue(account.text, "csrf")).toBe(b.csrf);

    const sent = await b.postForm("/auth/invite", { email: "Teammate@Example.com", project_id: ts.projectId, role: "member", csrf: b.csrf });
    expect(sent.status).toBe(200);
    expect(sent.text).toContain("Invitation sent");
    expect(mails.lastTo("teammate@example.com")!.reason).toBe("invite");
    const members = (await ts.api("/api/admin/members")).body.map((m: any) => [m.email, m.role]);
    expect(members).toContainEqual(["teammate@example.com", "member"]);

    // Again: ALREADY_EXISTS, shown as a page; nothing added twice.
    const again = await b.postForm("/auth/invite", { email: "teammate@example.com", project_id: ts.projectId, csrf: b.csrf });
    expect(again.status).toBe(409);
    expect((await ts.api("/api/admin/members")).body.filter((m: any) => m.email === "teammate@example.com")).toHaveLength(1);
  });

  test("browser invites need the CSRF token, a session, and an organisation of one's own", async () => {
    // A member of the main organisation only (test projects are all owned by owner@example.com).
    expect((await ts.api("/api/admin/invites", { body: { email: "solo@example.com" } })).status).toBe(201);
    const b = await signInWithMagicLink(ts, mails, "solo@example.com");
    const noCsrf = await b.postForm("/auth/invite", { email: "x1@example.com", project_id: ts.projectId });
    expect(noCsrf.status).toBe(403);

    const anonymous = new Browser(ts.url);
    await anonymous.get("/signin");
    const noSession = await anonymous.postForm("/auth/invite", { email: "x2@example.com", project_id: ts.projectId, csrf: anonymous.csrf });
    expect(noSession.status).toBe(401);

    const other = ts.newProject("Not mine");
    const foreign = await b.postForm("/auth/invite", { email: "x3@example.com", project_id: other.projectId, csrf: b.csrf });
    expect(foreign.status).toBe(403);
    const bad = await b.postForm("/auth/invite", { email: "not-an-email", project_id: ts.projectId, csrf: b.csrf });
    expect(bad.status).toBe(400);

    const everyone = [...(await ts.api("/api/admin/members")).body, ...(await ts.api("/api/admin/members", { key: other.adminKey })).body].map((m: any) => m.email);
    for (const email of ["x1@example.com", "x2@example.com", "x3@example.com"]) expect(everyone).not.toContain(email);
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
      const setupLine = await waitFor(() => stderrLines.find((l) => l.msg === "first-run setup"), "setup link");
      expect(stderrLines.filter((l) => l.msg === "first-run setup")).toHaveLength(1);
      expect(setupLine.url.startsWith(`${base}/setup?token=`)).toBe(true);
      const setupPath = new URL(setupLine.url).pathname + new URL(setupLine.url).search;
      const token = tokenOf(setupLine.url);

      const b = new Browser(base);
      const page = await b.get(setupPath);
      expect(page.status).toBe(200);
      expect(fieldValue(page.text, "token")).toBe(token);
      const fields = { token, email: "First@Example.com", organisation: "Acme", project: "Shop", csrf: b.csrf };
      expect((await b.postForm("/setup", { ...fields, csrf: "" })).status).toBe(403);
      expect((await b.postForm("/setup", { ...fields, project: "   " })).status).toBe(400);
      const done = await b.postForm("/setup", fields);
      expect(done.status).toBe(303);
      expect(done.location).toBe("/signin");
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

      // Without SMTP the link goes to the log.
      await second.postForm("/auth/magic-link", { email: "first@example.com", csrf: second.csrf });
      const logged = await waitFor(() => stderrLines.find((l) => l.msg === "magic link"), "magic link log line");
      expect(logged.email).toBe("first@example.com");
      expect(logged.url.startsWith(`${base}/auth/magic?token=`)).toBe(true);
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
      const rows = ts.server.db
        .query("SELECT o.name, m.role FROM memberships m JOIN users u ON u.id = m.user_id JOIN organisations o ON o.id = m.organisation_id WHERE u.email = 'ops@example.com'")
        .all();
      expect(rows).toEqual([{ name: "Default organisation", role: "owner" }]);
      expect(ts.server.db.query("SELECT COUNT(*) AS n FROM sign_in_links WHERE purpose = 'setup'").get()).toEqual({ n: 0 });
      const b = await signInWithMagicLink(ts, mails, "ops@example.com");
      expect((await b.get("/signin")).text).toContain("Default project");
    } finally {
      await ts.stop();
    }
  });
});

describe("SMTP delivery", () => {
  type SmtpSession = { commands: string[]; data: string };
  let smtp: NetServer;
  const sessions: SmtpSession[] = [];

  beforeAll(async () => {
    // A stand-in SMTP server speaking just enough of RFC 5321.
    smtp = createServer((socket) => {
      const session: SmtpSession = { commands: [], data: "" };
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

  test("the link is mailed over SMTP with AUTH PLAIN, and it works", async () => {
    const port = (smtp.address() as { port: number }).port;
    const ts = await startTestServer({ signIn: { smtpUrl: `smtp://mailer:p%40ss@127.0.0.1:${port}`, mailFrom: "svc <svc@example.com>" } });
    try {
      const b = new Browser(ts.url);
      await b.get("/signin");
      expect((await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf })).status).toBe(200);
      for (let i = 0; i < 100 && !sessions.some((s) => s.commands.includes("QUIT")); i++) await Bun.sleep(20);
      const session = sessions.at(-1)!;
      expect(session.commands[0]).toStartWith("EHLO ");
      const auth = session.commands.find((c) => c.startsWith("AUTH PLAIN "))!;
      expect(Buffer.from(auth.slice("AUTH PLAIN ".length), "base64").toString()).toBe("\0mailer\0p@ss");
      expect(session.commands).toContain("MAIL FROM:<svc@example.com>");
      expect(session.commands).toContain("RCPT TO:<owner@example.com>");
      expect(session.data).toContain("Subject: Your svc sign-in link");
      expect(session.data).toContain("To: <owner@example.com>");
      const url = /(http:\/\/\S+\/auth\/magic\?token=\w+)/.exec(session.data)![1]!;
      await b.get(new URL(url).pathname + new URL(url).search);
      expect((await b.postForm("/auth/magic", { token: tokenOf(url), csrf: b.csrf })).status).toBe(303);
    } finally {
      await ts.stop();
    }
  });
});

/** A local OpenID provider: discovery, JWKS, authorize (auto-approving), token (checks PKCE and client auth). */
async function standInProvider(clientId: string, clientSecret: string) {
  const keys = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const jwk = { ...(await crypto.subtle.exportKey("jwk", keys.publicKey)), kid: "k1", use: "sig", alg: "RS256" };
  const codes = new Map<string, { nonce: string; challenge: string; redirectUri: string }>();
  const state = {
    email: "owner@example.com",
    claims: (c: Record<string, unknown>) => c,
    tamper: false,
    tokenCalls: 0,
    authorizeParams: null as URLSearchParams | null,
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
          token_endpoint_auth_methods_supported: ["client_secret_basic"],
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
        return Response.redirect(back.toString(), 302);
      }
      if (url.pathname === "/token" && request.method === "POST") {
        state.tokenCalls++;
        if (request.headers.get("authorization") !== `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`) {
          return Response.json({ error: "invalid_client" }, { status: 401 });
        }
        const form = new URLSearchParams(await request.text());
        const grant = codes.get(form.get("code") ?? "");
        codes.delete(form.get("code") ?? "");
        const verifierHash = createHash("sha256").update(form.get("code_verifier") ?? "").digest("base64url");
        if (!grant || verifierHash !== grant.challenge || form.get("redirect_uri") !== grant.redirectUri) {
          return Response.json({ error: "invalid_grant" }, { status: 400 });
        }
        const now = Math.floor(Date.now() / 1000);
        const claims = state.claims({ iss: issuer, aud: clientId, sub: "user-1", email: state.email, email_verified: true, nonce: grant.nonce, iat: now, exp: now + 300 });
        const signingInput = `${b64({ alg: "RS256", kid: "k1", typ: "JWT" })}.${b64(claims)}`;
        const signature = Buffer.from(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", keys.privateKey, new TextEncoder().encode(signingInput)));
        if (state.tamper) signature[0] = signature[0]! ^ 0xff;
        return Response.json({ access_token: "at", token_type: "Bearer", id_token: `${signingInput}.${signature.toString("base64url")}` });
      }
      return new Response("not found", { status: 404 });
    },
  });
  return { issuer: `http://127.0.0.1:${server.port}`, state, stop: () => server.stop(true) };
}

describe("OIDC sign-in", () => {
  let ts: TestServer;
  let provider: Awaited<ReturnType<typeof standInProvider>>;

  beforeAll(async () => {
    provider = await standInProvider("svc-client", "s3cret");
    ts = await startTestServer({ signIn: { oidc: { issuer: provider.issuer, clientId: "svc-client", clientSecret: "s3cret" }, mailer: new MailCapture() } });
  });
  afterAll(async () => {
    await ts.stop();
    provider.stop();
  });

  /** start → provider → callback; returns the callback answer. */
  async function roundTrip(b: Browser, redirect = "/device") {
    const start = await b.get(`/auth/oidc/start?redirect=${encodeURIComponent(redirect)}`);
    expect(start.status).toBe(303);
    const atProvider = await b.get(start.location!);
    expect(atProvider.status).toBe(302);
    return b.get(atProvider.location!);
  }

  test("the sign-in page offers SSO; the code flow with PKCE, state and nonce opens a session", async () => {
    const b = new Browser(ts.url);
    expect((await b.get("/signin")).text).toContain("Sign in with SSO");
    provider.state.email = "owner@example.com";
    const done = await roundTrip(b);
    const params = provider.state.authorizeParams!;
    expect(params.get("client_id")).toBe("svc-client");
    expect(params.get("response_type")).toBe("code");
    expect(params.get("code_challenge_method")).toBe("S256");
    expect(params.get("redirect_uri")).toBe(`${ts.url}/auth/oidc/callback`);
    expect(params.get("scope")).toContain("openid");
    expect(params.get("nonce")).toMatch(/^\w{32}$/);
    expect(done.status).toBe(303);
    expect(done.location).toBe("/device");
    expect(b.cookies.has("svc_session")).toBe(true);
    expect(b.cookies.has("svc_oidc")).toBe(false);
    expect((await b.get("/signin")).text).toContain("Signed in as <strong>owner@example.com</strong>");
  });

  test("a bad signature, wrong audience, wrong nonce or an expired id_token is refused", async () => {
    const cases: [string, () => void][] = [
      ["signature", () => (provider.state.tamper = true)],
      ["audience", () => (provider.state.claims = (c) => ({ ...c, aud: "someone-else" }))],
      ["nonce", () => (provider.state.claims = (c) => ({ ...c, nonce: "replayed" }))],
      ["expired", () => (provider.state.claims = (c) => ({ ...c, exp: Math.floor(Date.now() / 1000) - 3600 }))],
      ["issuer", () => (provider.state.claims = (c) => ({ ...c, iss: "https://other.example" }))],
    ];
    for (const [name, breakIt] of cases) {
      provider.state.tamper = false;
      provider.state.claims = (c) => c;
      breakIt();
      const b = new Browser(ts.url);
      const done = await roundTrip(b);
      expect([name, done.status]).toEqual([name, 401]);
      expect(b.cookies.has("svc_session")).toBe(false);
    }
    provider.state.tamper = false;
    provider.state.claims = (c) => c;
  });

  test("someone without an account is refused; so is a callback from another browser or a replay", async () => {
    provider.state.email = "stranger@example.com";
    const stranger = new Browser(ts.url);
    const refused = await roundTrip(stranger);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("stranger@example.com has no account");
    expect(stranger.cookies.has("svc_session")).toBe(false);
    provider.state.email = "owner@example.com";

    // The state cookie binds the callback to the browser that started it.
    const victim = new Browser(ts.url);
    const start = await victim.get("/auth/oidc/start");
    const atProvider = await victim.get(start.location!);
    const attacker = new Browser(ts.url);
    const calls = provider.state.tokenCalls;
    const crossed = await attacker.get(atProvider.location!);
    expect(crossed.status).toBe(401);
    expect(provider.state.tokenCalls).toBe(calls);

    const b = new Browser(ts.url);
    const first = await b.get("/auth/oidc/start");
    const back = (await b.get(first.location!)).location!;
    const stateCookie = b.cookies.get("svc_oidc")!;
    expect((await b.get(back)).status).toBe(303);
    b.cookies.set("svc_oidc", stateCookie);
    expect((await b.get(back)).status).toBe(401);

    const denied = await new Browser(ts.url).get("/auth/oidc/callback?error=access_denied&error_description=no");
    expect(denied.status).toBe(401);
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
  test("reads SMTP, the public URL and OIDC; refuses partial or malformed values", () => {
    expect(
      signInOptionsFromEnv({
        SERVICE_PUBLIC_URL: "https://flags.example.com/",
        SERVICE_SMTP_URL: "smtps://u:p@mail.example.com",
        SERVICE_SMTP_FROM: "svc <svc@example.com>",
        SERVICE_OIDC_ISSUER: "https://id.example.com/",
        SERVICE_OIDC_CLIENT_ID: "svc",
        SERVICE_OIDC_CLIENT_SECRET: "s",
      }),
    ).toEqual({
      publicUrl: "https://flags.example.com",
      smtpUrl: "smtps://u:p@mail.example.com",
      mailFrom: "svc <svc@example.com>",
      oidc: { issuer: "https://id.example.com", clientId: "svc", clientSecret: "s" },
    });
    expect(signInOptionsFromEnv({})).toEqual({});
    expect(() => signInOptionsFromEnv({ SERVICE_OIDC_ISSUER: "https://id.example.com" })).toThrow("OIDC needs all of");
    expect(() => signInOptionsFromEnv({ SERVICE_SMTP_URL: "http://mail.example.com" })).toThrow("SERVICE_SMTP_URL must start with");
    expect(() => signInOptionsFromEnv({ SERVICE_PUBLIC_URL: "not a url" })).toThrow("SERVICE_PUBLIC_URL is not a URL");
  });
});
