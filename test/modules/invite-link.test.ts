import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Browser, MailCapture } from "../browser";
import { expectErrorShape, startTestServer, type TestServer } from "../helpers";

// Without SMTP, links go only to <data>/outbox.log (issue 27, item 12): the server says so where the person is
// told to check their mail, /me tells the dashboard whether mail is configured, and an owner can get a new link
// for a pending invitation to pass on by hand (audited, never logged).
const tokenOf = (url: string) => new URL(url).searchParams.get("token")!;

function outboxLines(ts: TestServer): { to: string; link: string }[] {
  return readFileSync(join(ts.dataDir, "outbox.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
}

describe("no mail server: the outbox", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
  });
  afterAll(() => ts.stop());

  test("the sign-in answer names the outbox file instead of 'check your mail'", async () => {
    const b = new Browser(ts.url);
    await b.get("/signin");
    const json = await b.postJson("/auth/magic-link", { email: "owner@example.com" }, { "x-csrf-token": b.csrf });
    expect(json.status).toBe(200);
    expect(JSON.parse(json.text)).toEqual({ ok: true, message: `If this address belongs to an account, a sign-in link is on its way. No mail server is set: the link is in outbox.log, in the data directory on the server.` });
    const page = await b.postForm("/auth/magic-link", { email: "owner@example.com", csrf: b.csrf });
    expect(page.status).toBe(200);
    expect(page.text).toContain(`No mail server is set: the link is in outbox.log, in the data directory on the server.`);
    expect(page.text).not.toContain("Check your mail");
    // Anyone may ask: the answer names the file, never the server's path to it.
    expect(json.text + page.text).not.toContain(ts.dataDir);
    expect(outboxLines(ts).filter((l) => l.to === "owner@example.com")).toHaveLength(2);
  });

  test("/me says mail is not configured; the outbox path only to an owner", async () => {
    const owner = await ts.accessTokenFor("owner@example.com");
    expect((await ts.api("/api/admin/me", { key: owner })).body.mail).toEqual({ configured: false, outbox: join(ts.dataDir, "outbox.log") });
    await ts.addMember("ed@example.com", "editor");
    expect((await ts.api("/api/admin/me", { key: await ts.accessTokenFor("ed@example.com") })).body.mail).toEqual({ configured: false });
    expect((await ts.api("/api/admin/me")).body.mail).toEqual({ configured: false });
  });

  test("an owner gets a new link for a pending invitation: it accepts it, the first one no longer does, the trail records it without the link", async () => {
    const owner = await ts.accessTokenFor("owner@example.com");
    expect((await ts.api("/api/admin/invites", { key: owner, body: { email: "dana@example.com", role: "viewer" } })).status).toBe(201);
    const first = outboxLines(ts).findLast((l) => l.to === "dana@example.com")!.link;
    const invited = (await ts.api("/api/admin/members", { key: owner })).body.find((m: any) => m.email === "dana@example.com");

    const res = await ts.api("/api/admin/members/dana@example.com/invite-link", { key: owner, method: "POST" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ email: "dana@example.com", link: expect.stringMatching(new RegExp(`^${ts.url}/auth/magic\\?token=[A-Za-z0-9]{43}$`)), expiresAt: invited.expiresAt });
    expect(res.body.link).not.toBe(first);
    // Not mailed again: the owner passes it on.
    expect(outboxLines(ts).filter((l) => l.to === "dana@example.com")).toHaveLength(1);

    const audit = (await ts.api("/api/admin/audit?resource=member", { key: owner })).body.entries.find((e: any) => e.action === "member.invite.link");
    expect(audit).toMatchObject({ action: "member.invite.link", subjectName: "dana@example.com", actorEmail: "owner@example.com", detail: { role: "viewer", expiresAt: invited.expiresAt } });
    expect(JSON.stringify(audit)).not.toContain(tokenOf(res.body.link));

    const stale = new Browser(ts.url);
    await stale.get("/signin");
    expect((await stale.postForm("/auth/magic", { token: tokenOf(first), csrf: stale.csrf })).status).toBe(400);
    const fresh = new Browser(ts.url);
    await fresh.get("/signin");
    const accepted = await fresh.postForm("/auth/magic", { token: tokenOf(res.body.link), csrf: fresh.csrf });
    expect(accepted.status).toBeLessThan(400);
    expect((await ts.api("/api/admin/members", { key: owner })).body.find((m: any) => m.email === "dana@example.com")).toMatchObject({ status: "active", role: "viewer" });
    // Accepted: there is no pending invitation left to copy.
    const after = await ts.api("/api/admin/members/dana@example.com/invite-link", { key: owner, method: "POST" });
    expect(after.status).toBe(404);
    expect(expectErrorShape(after.body).code).toBe("NOT_FOUND");
  });

  test("only an owner: editors, admin keys and API tokens are refused, and nothing changes", async () => {
    const owner = await ts.accessTokenFor("owner@example.com");
    expect((await ts.api("/api/admin/invites", { key: owner, body: { email: "lee@example.com" } })).status).toBe(201);
    const before = await ts.store.one("SELECT token_hash FROM invitations WHERE email = 'lee@example.com'");
    await ts.addMember("ed2@example.com", "editor");
    for (const key of [await ts.accessTokenFor("ed2@example.com"), ts.adminKey]) {
      const res = await ts.api("/api/admin/members/lee@example.com/invite-link", { key, method: "POST" });
      expect(res.status).toBe(403);
      expect(expectErrorShape(res.body).code).toBe("FORBIDDEN");
    }
    expect(await ts.store.one("SELECT token_hash FROM invitations WHERE email = 'lee@example.com'")).toEqual(before);
    expect((await ts.api("/api/admin/members/nobody@example.com/invite-link", { key: owner, method: "POST" })).status).toBe(404);
  });
});

describe("with a mail server", () => {
  test("/me says mail is configured and names no file; the sign-in answer says check your mail", async () => {
    const ts = await startTestServer({ signIn: { mailer: new MailCapture() } });
    try {
      const owner = await ts.accessTokenFor("owner@example.com");
      expect((await ts.api("/api/admin/me", { key: owner })).body.mail).toEqual({ configured: true });
      const b = new Browser(ts.url);
      await b.get("/signin");
      const json = await b.postJson("/auth/magic-link", { email: "owner@example.com" }, { "x-csrf-token": b.csrf });
      expect(JSON.parse(json.text).message).toBe("If this address belongs to an account, a sign-in link is on its way. Check your mail.");
    } finally {
      await ts.stop();
    }
  });
});
