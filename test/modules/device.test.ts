import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { startTestServer, type TestServer } from "../helpers";
import { Browser, MailCapture, deviceLogin, fieldValue, pkcePair, signInWithMagicLink, testClock } from "../browser";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

let ts: TestServer;
let owner: Browser;
const mails = new MailCapture();
const clock = testClock();

beforeAll(async () => {
  ts = await startTestServer({ signIn: { mailer: mails, now: clock.now, rateLimits: { deviceCodePerIp: { limit: 1000, windowMs: 60_000 } } } });
  owner = await signInWithMagicLink(ts, mails, "owner@example.com");
});
afterAll(() => ts.stop());

async function newCode(body: Record<string, unknown> = {}) {
  const { verifier, challenge } = pkcePair();
  const res = await ts.api("/auth/device/code", { key: null, body: { code_challenge: challenge, code_challenge_method: "S256", ...body } });
  expect(res.status).toBe(200);
  return { ...res.body, verifier } as { device_code: string; user_code: string; verification_uri_complete: string; verifier: string };
}

const poll = (code: { device_code: string; verifier: string }, verifier = code.verifier) =>
  ts.api("/auth/device/token", { key: null, body: { device_code: code.device_code, code_verifier: verifier, grant_type: "urn:ietf:params:oauth:grant-type:device_code" } });

/** Steps the clock past the poll interval so the next poll is on time. */
const wait = (seconds = 2) => clock.advance(seconds * 1000);

describe("device code", () => {
  test("answers the RFC 8628 fields; JSON and form bodies both work", async () => {
    const { challenge } = pkcePair();
    const res = await ts.api("/auth/device/code", { key: null, body: { code_challenge: challenge, code_challenge_method: "S256", client_name: "svc CLI" } });
    expect(res.status).toBe(200);
    expect(res.body.user_code).toMatch(USER_CODE);
    expect(res.body.device_code).toMatch(/^\w{43}$/);
    expect(res.body).toMatchObject({
      verification_uri: `${ts.url}/device`,
      verification_uri_complete: `${ts.url}/device?user_code=${res.body.user_code}`,
      expires_in: 600,
      interval: 2,
    });
    const stored = await ts.store.one("SELECT device_code_hash, client_name, status FROM device_codes WHERE device_code_hash = ?", sha256(res.body.device_code));
    expect(stored).toEqual({ device_code_hash: sha256(res.body.device_code), client_name: "svc CLI", status: "pending" });

    const form = await fetch(`${ts.url}/auth/device/code`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ code_challenge: challenge, code_challenge_method: "S256" }).toString(),
    });
    expect(form.status).toBe(200);
    expect(((await form.json()) as any).user_code).toMatch(USER_CODE);
  });

  test("refuses plain PKCE, a malformed challenge, missing fields and malformed JSON", async () => {
    const { challenge } = pkcePair();
    const plain = await ts.api("/auth/device/code", { key: null, body: { code_challenge: challenge, code_challenge_method: "plain" } });
    expect(plain.status).toBe(400);
    expect(plain.body.code).toBe("VALIDATION");
    expect(plain.body.detail).toContain("code_challenge_method");
    const short = await ts.api("/auth/device/code", { key: null, body: { code_challenge: "abc", code_challenge_method: "S256" } });
    expect(short.body.detail).toContain("code_challenge");
    const missing = await ts.api("/auth/device/code", { key: null, body: {} });
    expect(missing.body.code).toBe("VALIDATION");
    const malformed = await ts.api("/auth/device/code", { key: null, rawBody: "{nope" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("BAD_REQUEST");
  });

  test("creation is rate-limited per client with 429 and Retry-After", async () => {
    const limited = await startTestServer({ signIn: { rateLimits: { deviceCodePerIp: { limit: 2, windowMs: 60_000 } } } });
    try {
      const { challenge } = pkcePair();
      const body = { code_challenge: challenge, code_challenge_method: "S256" };
      expect((await limited.api("/auth/device/code", { key: null, body })).status).toBe(200);
      expect((await limited.api("/auth/device/code", { key: null, body })).status).toBe(200);
      const third = await limited.api("/auth/device/code", { key: null, body });
      expect(third.status).toBe(429);
      expect(third.body.code).toBe("BAD_REQUEST");
      expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await limited.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM device_codes")).toEqual({ n: 2 });
    } finally {
      await limited.stop();
    }
  });
});

describe("approval page and confirm", () => {
  test("without a session /device sends the browser to sign in and back", async () => {
    const code = await newCode();
    const res = await new Browser(ts.url).get(`/device?user_code=${code.user_code}`);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/signin?redirect=${encodeURIComponent(`/device?user_code=${code.user_code}`)}`);
  });

  test("the page shows the code, the projects to bind and approve/deny; unknown codes get the entry form", async () => {
    const other = await ts.newProject("Second org project");
    const code = await newCode({ client_name: "laptop" });
    const page = await owner.get(`/device?user_code=${code.user_code.toLowerCase().replace("-", "")}&project_id=${other.projectId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(code.user_code);
    expect(page.text).toContain("laptop");
    expect(page.text).toContain(`value="${ts.projectId}"`);
    expect(page.text).toContain(`<option value="${other.projectId}" selected>`);
    expect(fieldValue(page.text, "csrf")).toBe(owner.csrf);
    expect(page.text).toContain('value="approve"');
    expect(page.text).toContain('value="deny"');
    const unknown = await owner.get("/device?user_code=BBBB-BBBB");
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('name="user_code"');
    expect((await owner.get("/device")).text).toContain("Enter the code");
  });

  test("confirm needs a session, the CSRF token and a reachable project", async () => {
    const code = await newCode();
    const anonymous = new Browser(ts.url);
    await anonymous.get("/signin");
    const noSession = await anonymous.postJson("/auth/device/confirm", { user_code: code.user_code, action: "approve" }, { "x-csrf-token": anonymous.csrf });
    expect(noSession.status).toBe(401);
    expect(noSession.body.code).toBe("UNAUTHORIZED");
    const noCsrf = await owner.postJson("/auth/device/confirm", { user_code: code.user_code, action: "approve" });
    expect(noCsrf.status).toBe(403);

    // A person invited only to the main organisation cannot bind a project of another one.
    const foreign = await ts.newProject("Not yours");
    await ts.addMember("dev@example.com", "editor");
    const dev = await signInWithMagicLink(ts, mails, "dev@example.com");
    const forbidden = await dev.postJson("/auth/device/confirm", { user_code: code.user_code, action: "approve", project_id: foreign.projectId }, { "x-csrf-token": dev.csrf });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe("FORBIDDEN");
    const unknown = await owner.postJson("/auth/device/confirm", { user_code: "BBBB-BBBB", action: "approve" }, { "x-csrf-token": owner.csrf });
    expect(unknown.status).toBe(404);
    const badAction = await owner.postJson("/auth/device/confirm", { user_code: code.user_code, action: "maybe" }, { "x-csrf-token": owner.csrf });
    expect(badAction.body.code).toBe("VALIDATION");
    // Naming no request at all is a malformed body, not an unknown request.
    const unnamed = await owner.postJson("/auth/device/confirm", { action: "approve" }, { "x-csrf-token": owner.csrf });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.code).toBe("VALIDATION");
    expect(unnamed.body.detail).toContain("device_code");
    expect(unnamed.body.detail).toContain("user_code");
    expect(await ts.store.one("SELECT status FROM device_codes WHERE device_code_hash = ?", sha256(code.device_code))).toEqual({ status: "pending" });

    const ok = await owner.postJson("/auth/device/confirm", { device_code: code.device_code, action: "approve" }, { "x-csrf-token": owner.csrf });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ status: "approved", user_code: code.user_code, project_id: ts.projectId });
    const twice = await owner.postJson("/auth/device/confirm", { device_code: code.device_code, action: "deny" }, { "x-csrf-token": owner.csrf });
    expect(twice.status).toBe(400);
  });
});

describe("token polling", () => {
  test("end to end: pending, approve in the browser, one pair, then invalid_grant on a second redeem", async () => {
    const code = await newCode({ client_name: "svc CLI" });
    const pending = await poll(code);
    expect(pending.status).toBe(400);
    expect(pending.body).toMatchObject({ error: "authorization_pending", code: "BAD_REQUEST" });
    expect(typeof pending.body.error_description).toBe("string");

    const page = await owner.get(new URL(code.verification_uri_complete).pathname + new URL(code.verification_uri_complete).search);
    const approved = await owner.postForm("/auth/device/confirm", { user_code: fieldValue(page.text, "user_code")!, action: "approve", project_id: ts.projectId, csrf: owner.csrf });
    expect(approved.status).toBe(200);
    expect(approved.text).toContain("Device approved");

    wait();
    const tokens = await poll(code);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: "Bearer", expires_in: 3600, project_id: ts.projectId, user_email: "owner@example.com" });
    expect(tokens.body.access_token).toMatch(/^svc_at_\w+$/);
    expect(tokens.body.refresh_token).toMatch(/^svc_rt_\w+$/);
    const rows = await ts.store.all("SELECT token_hash, kind FROM device_tokens WHERE token_hash IN (?, ?) ORDER BY kind", sha256(tokens.body.access_token), sha256(tokens.body.refresh_token));
    expect(rows).toEqual([
      { token_hash: sha256(tokens.body.access_token), kind: "access" },
      { token_hash: sha256(tokens.body.refresh_token), kind: "refresh" },
    ]);
    const plaintext = await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM device_tokens WHERE token_hash IN (?, ?)", tokens.body.access_token, tokens.body.refresh_token);
    expect(plaintext).toEqual({ n: 0 });

    const me = await ts.api("/api/admin/projects/current", { key: tokens.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(ts.projectId);

    wait();
    const again = await poll(code);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
  });

  test("polling faster than the interval is slow_down, and the interval grows by 5 seconds", async () => {
    const code = await newCode();
    expect((await poll(code)).body.error).toBe("authorization_pending");
    const fast = await poll(code);
    expect(fast.body).toMatchObject({ error: "slow_down", interval: 7 });
    wait(2);
    expect((await poll(code)).body).toMatchObject({ error: "slow_down", interval: 12 });
    wait(12);
    expect((await poll(code)).body.error).toBe("authorization_pending");
    wait(11);
    expect((await poll(code)).body.error).toBe("slow_down");
  });

  test("a wrong or missing code_verifier is refused, and the right one still works", async () => {
    const code = await newCode();
    await owner.postJson("/auth/device/confirm", { user_code: code.user_code, action: "approve" }, { "x-csrf-token": owner.csrf });
    const wrong = await poll(code, pkcePair().verifier);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    const missing = await ts.api("/auth/device/token", { key: null, body: { device_code: code.device_code } });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe("VALIDATION");
    expect(missing.body.detail).toContain("code_verifier");
    const badGrant = await ts.api("/auth/device/token", { key: null, body: { device_code: code.device_code, code_verifier: code.verifier, grant_type: "password" } });
    expect(badGrant.body.code).toBe("VALIDATION");
    wait();
    expect((await poll(code)).status).toBe(200);
  });

  test("unknown device codes are invalid_grant; denied ones access_denied; expired ones expired_token", async () => {
    expect((await poll({ device_code: "nope", verifier: pkcePair().verifier })).body.error).toBe("invalid_grant");

    const denied = await newCode();
    const deny = await owner.postForm("/auth/device/confirm", { user_code: denied.user_code, action: "deny", csrf: owner.csrf });
    expect(deny.text).toContain("Device denied");
    expect((await poll(denied)).body.error).toBe("access_denied");

    const late = await newCode();
    clock.advance(601_000);
    expect((await poll(late)).body.error).toBe("expired_token");
    const tooLate = await owner.postJson("/auth/device/confirm", { user_code: late.user_code, action: "approve" }, { "x-csrf-token": owner.csrf });
    expect(tooLate.status).toBe(400);
  });
});

describe("refresh, revoke and access", () => {
  test("refresh rotates the pair; the old refresh token is spent", async () => {
    const first = await deviceLogin(ts, owner);
    const second = await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: first.refresh_token } });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ token_type: "Bearer", expires_in: 3600, project_id: ts.projectId, user_email: "owner@example.com" });
    expect(second.body.access_token).not.toBe(first.access_token);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect((await ts.api("/api/admin/projects/current", { key: second.body.access_token })).status).toBe(200);
    const spent = (await ts.store.one("SELECT rotated_at FROM device_tokens WHERE token_hash = ?", sha256(first.refresh_token))) as any;
    expect(spent.rotated_at).not.toBeNull();
  });

  test("rotation is strict: the previous refresh token, presented again even at once, revokes the whole sign-in", async () => {
    const first = await deviceLogin(ts, owner);
    const second = (await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: first.refresh_token } })).body;
    // No grace window (issue 8): a replay a second later is a copy, not a retry, and gets nothing.
    clock.advance(1_000);
    const replay = await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: first.refresh_token } });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    expect(replay.body.access_token).toBeUndefined();
    // The whole family is gone: the current access token and refresh token too.
    expect((await ts.api("/api/admin/projects/current", { key: second.access_token })).status).toBe(401);
    expect((await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: second.refresh_token } })).body.error).toBe("invalid_grant");
    const family = await ts.store.one("SELECT f.revoked_reason FROM token_families f JOIN device_tokens t ON t.family_id = f.id WHERE t.token_hash = ?", sha256(second.refresh_token));
    expect(family).toEqual({ revoked_reason: "refresh token reused" });
    expect(await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM device_tokens WHERE grace_payload IS NOT NULL")).toEqual({ n: 0 });
  });

  test("an older refresh token is refused the same way", async () => {
    const first = await deviceLogin(ts, owner);
    const second = (await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: first.refresh_token } })).body;
    const third = (await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: second.refresh_token } })).body;
    const stale = await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: first.refresh_token } });
    expect(stale.body.error).toBe("invalid_grant");
    expect((await ts.api("/api/admin/projects/current", { key: third.access_token })).status).toBe(401);
    const family = await ts.store.one("SELECT f.revoked_reason FROM token_families f JOIN device_tokens t ON t.family_id = f.id WHERE t.token_hash = ?", sha256(third.refresh_token));
    expect(family).toEqual({ revoked_reason: "refresh token reused" });
  });

  test("revoke ends the whole sign-in, by refresh or access token; unknown tokens answer revoked false", async () => {
    const a = await deviceLogin(ts, owner);
    const res = await ts.api("/auth/device/revoke", { key: null, body: { token: a.refresh_token } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revoked: true });
    const unauthorized = await ts.api("/api/admin/projects/current", { key: a.access_token });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.body.code).toBe("UNAUTHORIZED");
    expect((await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: a.refresh_token } })).body.error).toBe("invalid_grant");

    const b = await deviceLogin(ts, owner);
    expect((await ts.api("/auth/device/revoke", { key: null, body: { token: b.access_token } })).body).toEqual({ revoked: true });
    expect((await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: b.refresh_token } })).status).toBe(400);
    expect((await ts.api("/auth/device/revoke", { key: null, body: { token: "svc_rt_unknown" } })).body).toEqual({ revoked: false });
    expect((await ts.api("/auth/device/revoke", { key: null, body: {} })).body.code).toBe("VALIDATION");
  });

  test("an access token expires after an hour; the refresh token then still works", async () => {
    const pair = await deviceLogin(ts, owner);
    clock.advance(3600_000);
    expect((await ts.api("/api/admin/projects/current", { key: pair.access_token })).status).toBe(401);
    const renewed = await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: pair.refresh_token } });
    expect(renewed.status).toBe(200);
    expect((await ts.api("/api/admin/projects/current", { key: renewed.body.access_token })).status).toBe(200);
  });

  test("the access token reaches every project of the person's organisations, chosen by X-Project-Id", async () => {
    const second = await ts.newProject("Second organisation");
    const pair = await deviceLogin(ts, owner, ts.projectId);
    const current = await ts.api("/api/admin/projects/current", { key: pair.access_token });
    expect(current.body.id).toBe(ts.projectId);
    const selected = await ts.api("/api/admin/projects/current", { key: pair.access_token, headers: { "x-project-id": second.projectId } });
    expect(selected.status).toBe(200);
    expect(selected.body.id).toBe(second.projectId);
    const patched = await ts.api(`/api/admin/projects/${second.projectId}`, {
      method: "PATCH",
      key: pair.access_token,
      headers: { "x-project-id": second.projectId },
      body: { name: "Renamed by a person" },
    });
    expect(patched.status).toBe(200);
    expect((await ts.server.ctx.services.projects.get(second.projectId)).name).toBe("Renamed by a person");

    const me = await ts.api("/api/admin/me", { key: pair.access_token });
    expect(me.status).toBe(200);
    expect(me.body.user).toEqual({ email: "owner@example.com" });
    expect(me.body.project).toEqual({ id: ts.projectId, name: "Main project" });
    expect(me.body.credential).toEqual({ kind: "user_token", readOnly: false, role: "owner", permissions: ["read", "write", "manage", "members"] });
    const ids = me.body.projects.map((p: any) => p.id);
    expect(ids).toContain(ts.projectId);
    expect(ids).toContain(second.projectId);
    expect(me.body.projects.find((p: any) => p.id === second.projectId)).toEqual({
      id: second.projectId,
      name: "Renamed by a person",
      organisationId: second.organisationId,
      organisationName: "Second organisation organisation",
    });
    const meSelected = await ts.api("/api/admin/me", { key: pair.access_token, headers: { "x-project-id": second.projectId } });
    expect(meSelected.body.project.id).toBe(second.projectId);
  });

  test("a project of an organisation the person is not in is FORBIDDEN, and nothing changes", async () => {
    const foreign = await ts.newProject("Foreign");
    await ts.addMember("member@example.com", "owner");
    const member = await signInWithMagicLink(ts, mails, "member@example.com");
    const pair = await deviceLogin(ts, member);
    expect(pair.project_id).toBe(ts.projectId);
    const res = await ts.api(`/api/admin/projects/${foreign.projectId}`, {
      method: "PATCH",
      key: pair.access_token,
      headers: { "x-project-id": foreign.projectId },
      body: { name: "Hijacked" },
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("FORBIDDEN");
    expect((await ts.server.ctx.services.projects.get(foreign.projectId)).name).toBe("Foreign");
    const me = await ts.api("/api/admin/me", { key: pair.access_token });
    expect(me.body.projects.map((p: any) => p.id)).toEqual([ts.projectId]);
  });

  test("/me for an admin key names its actor and its one project; without credentials it is UNAUTHORIZED", async () => {
    const me = await ts.api("/api/admin/me");
    expect(me.status).toBe(200);
    expect(me.body.user.email).toMatch(/^admin-key:key_\w+@keys\.local$/);
    expect(me.body.project).toEqual({ id: ts.projectId, name: "Main project" });
    expect(me.body.projects).toEqual([{ id: ts.projectId, name: "Main project", organisationId: ts.organisationId, organisationName: "Main project organisation" }]);
    expect(me.body.credential).toEqual({ kind: "admin_key", readOnly: false, role: null, permissions: ["read", "write", "manage"] });
    expect((await ts.api("/api/admin/me", { key: null })).status).toBe(401);
    expect((await ts.api("/api/admin/me", { key: "svc_at_forged" })).status).toBe(401);
  });
});

describe("removing a member (issue 25)", () => {
  test("ends every CLI sign-in of theirs in the removal's transaction, with audit rows; refresh no longer rotates; adding them again revives none", async () => {
    const elsewhere = await ts.newProject("Leaver's other organisation");
    await ts.addMember("leaver@example.com", "editor");
    await ts.addMember("leaver@example.com", "editor", elsewhere.projectId);
    const leaver = await signInWithMagicLink(ts, mails, "leaver@example.com");
    const here = await deviceLogin(ts, leaver, ts.projectId);
    const there = await deviceLogin(ts, leaver, elsewhere.projectId);
    expect((await ts.api("/api/admin/killswitches", { key: here.access_token })).status).toBe(200);
    const ownerPair = await deviceLogin(ts, owner, ts.projectId);
    const familyIds = (
      await ts.store.all<{ family_id: string }>("SELECT family_id FROM device_tokens WHERE token_hash IN (?, ?) ORDER BY family_id", sha256(here.refresh_token), sha256(there.refresh_token))
    ).map((r) => r.family_id);
    expect(familyIds.length).toBe(2);

    const removed = await ts.api("/api/admin/members/leaver@example.com", { method: "DELETE", key: ownerPair.access_token });
    expect(removed.status).toBe(204);
    // Revoked, or already deleted by the cleanup job (which deletes revoked sign-ins): never live.
    const families = await ts.store.all<{ revoked_at: string | null; revoked_reason: string | null }>(
      `SELECT revoked_at, revoked_reason FROM token_families WHERE id IN (?, ?)`,
      familyIds[0]!,
      familyIds[1]!,
    );
    for (const family of families) expect(family).toEqual({ revoked_at: expect.any(String), revoked_reason: "member removed" });
    const check = async () => {
      for (const pair of [here, there]) {
        expect((await ts.api("/api/admin/killswitches", { key: pair.access_token })).status).toBe(401);
        expect((await ts.api("/api/admin/killswitches", { key: pair.access_token, headers: { "x-project-id": elsewhere.projectId } })).status).toBe(401);
        const refreshed = await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: pair.refresh_token } });
        expect(refreshed.status).toBe(400);
        expect(refreshed.body.error).toBe("invalid_grant");
      }
    };
    await check();
    // The removing organisation's trail says so; the other organisation learns nothing.
    const trail = (await ts.api("/api/admin/audit?limit=50")).body.entries;
    const revokes = trail.filter((e: any) => e.action === "device.token.revoke" && e.detail?.reason === "member removed");
    expect(revokes.length).toBe(2);
    expect(revokes.every((e: any) => e.actorEmail === "owner@example.com" && e.projectId === null)).toBe(true);
    expect(revokes.map((e: any) => e.subjectId).sort()).toEqual(familyIds);
    expect(revokes.map((e: any) => e.detail.projectId).sort()).toEqual([null, ts.projectId].sort());
    expect(trail.find((e: any) => e.action === "member.remove" && e.subjectName === "leaver@example.com").detail).toEqual({ role: "editor", cliSignInsRevoked: 2 });
    const theirs = (await ts.api("/api/admin/audit?limit=50", { key: elsewhere.adminKey })).body.entries;
    expect(theirs.some((e: any) => e.detail?.reason === "member removed" || e.action === "member.remove")).toBe(false);

    // Added again (and accepted): the old sign-ins stay dead; a new one works.
    await ts.addMember("leaver@example.com", "editor");
    await check();
    const fresh = await deviceLogin(ts, await signInWithMagicLink(ts, mails, "leaver@example.com"), ts.projectId);
    expect((await ts.api("/api/admin/killswitches", { key: fresh.access_token })).status).toBe(200);
  });
});

describe("refresh token lifetime", () => {
  test("a refresh token works for 30 days; rotations renew it, but a sign-in ends after 90 days however often it is used", async () => {
    // Its own server and clock: moving months ahead would end the sessions the other tests use.
    const ownMails = new MailCapture();
    const ownClock = testClock();
    const own = await startTestServer({ signIn: { mailer: ownMails, now: ownClock.now } });
    try {
      const browser = await signInWithMagicLink(own, ownMails, "owner@example.com");
      const first = await deviceLogin(own, browser);
      const stored = (await own.store.one("SELECT created_at, expires_at FROM device_tokens WHERE token_hash = ?", sha256(first.refresh_token))) as any;
      expect(Date.parse(stored.expires_at) - Date.parse(stored.created_at)).toBe(30 * 24 * 3600_000);

      // Unused for 30 days: expired (expiry is not reuse, so the sign-in is not marked revoked).
      const idle = await deviceLogin(own, browser);
      ownClock.advance(30 * 24 * 3600_000 - 60_000);
      let current = (await own.api("/auth/device/refresh", { key: null, body: { refresh_token: first.refresh_token } })).body;
      expect(typeof current.refresh_token).toBe("string");
      ownClock.advance(60_001);
      const late = await own.api("/auth/device/refresh", { key: null, body: { refresh_token: idle.refresh_token } });
      expect(late.body).toMatchObject({ error: "invalid_grant", code: "BAD_REQUEST" });
      expect(late.body.error_description).toContain("expired");

      // Refreshed every 20 days, the first sign-in still ends 90 days after it began (issue 8: a sign-in used to never end).
      for (const _day of [50, 70]) {
        ownClock.advance(20 * 24 * 3600_000);
        const next = await own.api("/auth/device/refresh", { key: null, body: { refresh_token: current.refresh_token } });
        expect(next.status).toBe(200);
        current = next.body;
      }
      // Day 90 minus a minute: the access token handed out expires with the sign-in, not an hour later.
      const family = (await own.store.one("SELECT f.created_at FROM token_families f JOIN device_tokens t ON t.family_id = f.id WHERE t.token_hash = ?", sha256(current.refresh_token))) as { created_at: string };
      const end = Date.parse(family.created_at) + 90 * 24 * 3600_000;
      ownClock.advance(end - 60_000 - ownClock.now());
      const lastRefresh = await own.api("/auth/device/refresh", { key: null, body: { refresh_token: current.refresh_token } });
      expect(lastRefresh.status).toBe(200);
      expect(lastRefresh.body.expires_in).toBe(60);
      ownClock.advance(60_000);
      const over = await own.api("/auth/device/refresh", { key: null, body: { refresh_token: lastRefresh.body.refresh_token } });
      expect(over.status).toBe(400);
      expect(over.body.error).toBe("invalid_grant");
      expect((await own.api("/api/admin/projects/current", { key: lastRefresh.body.access_token })).status).toBe(401);
    } finally {
      await own.stop();
    }
  });
});
