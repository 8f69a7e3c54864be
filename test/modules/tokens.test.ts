import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { startTestServer, type TestServer } from "../helpers";
import { MailCapture, deviceLogin, signInWithMagicLink } from "../browser";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

let ts: TestServer;
const mails = new MailCapture();

beforeAll(async () => {
  ts = await startTestServer({ signIn: { mailer: mails } });
});
afterAll(() => ts.stop());

const mint = (access: string, name = "ci", key?: string) => ts.api("/api/admin/tokens", { key, body: { name, access } });

describe("project API tokens", () => {
  test("an admin key mints a token shown once; only its hash is stored; the list never shows secrets", async () => {
    const res = await mint("read-write", "deploy bot");
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["access", "createdAt", "id", "name", "token"]);
    expect(res.body).toMatchObject({ name: "deploy bot", access: "read-write" });
    expect(res.body.id).toMatch(/^tok_\w+$/);
    expect(res.body.token).toMatch(/^svc_pat_[A-Za-z0-9]{40}$/);
    const row = (await ts.store.one("SELECT secret_hash, project_id, created_by FROM api_tokens WHERE id = ?", res.body.id)) as any;
    expect(row.secret_hash).toBe(sha256(res.body.token));
    expect(row.project_id).toBe(ts.projectId);
    expect(row.created_by).toMatch(/^admin-key:/);

    const list = await ts.api("/api/admin/tokens");
    expect(list.status).toBe(200);
    const listed = list.body.find((t: any) => t.id === res.body.id);
    expect(listed).toEqual({
      id: res.body.id,
      name: "deploy bot",
      access: "read-write",
      maskedToken: `svc_pat_…${res.body.token.slice(-4)}`,
      createdBy: row.created_by,
      createdAt: res.body.createdAt,
    });
    expect(list.text).not.toContain(res.body.token);
  });

  test("a read-only token reads but is FORBIDDEN on every write, and nothing changes", async () => {
    const token = (await mint("read-only")).body.token;
    const read = await ts.api("/api/admin/projects/current", { key: token });
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(ts.projectId);
    const write = await ts.api("/api/admin/killswitches", { key: token, body: { name: "read-only-write" } });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ code: "FORBIDDEN", error: "This token is read-only" });
    expect((await ts.api("/api/admin/killswitches/read-only-write")).status).toBe(404);
    const settings = await ts.api(`/api/admin/projects/${ts.projectId}`, { method: "PATCH", key: token, body: { name: "Read-only rename" } });
    expect(settings.status).toBe(403);
    expect((await ts.server.ctx.services.projects.get(ts.projectId)).name).toBe("Main project");
    expect((await ts.api("/api/admin/tokens", { key: token })).status).toBe(200);
    expect((await mint("read-only", "nested", token)).status).toBe(403);

    const me = await ts.api("/api/admin/me", { key: token });
    expect(me.body.credential).toEqual({ kind: "api_token", readOnly: true, role: null, permissions: ["read"] });
    expect(me.body.user.email).toMatch(/^api-token:tok_\w+@tokens\.local$/);
  });

  test("a read-write token writes its own project only, and manages neither keys, tokens nor settings", async () => {
    const token = (await mint("read-write")).body.token;
    const created = await ts.api("/api/admin/killswitches", { key: token, body: { name: "written-by-ci" } });
    expect(created.status).toBe(201);
    expect((await ts.api("/api/admin/killswitches/written-by-ci/toggle", { key: token, body: {} })).body.version).toBe(2);
    const settings = await ts.api(`/api/admin/projects/${ts.projectId}`, { method: "PATCH", key: token, body: { timezone: "Europe/Berlin" } });
    expect(settings.status).toBe(403);
    expect(settings.body.error).toBe("API tokens cannot manage keys, tokens, members or settings");
    expect((await ts.server.ctx.services.projects.get(ts.projectId)).timezone).toBe("UTC");
    const me = await ts.api("/api/admin/me", { key: token });
    expect(me.body.credential).toEqual({ kind: "api_token", readOnly: false, role: null, permissions: ["read", "write"] });

    const other = await ts.newProject("Other");
    const foreign = await ts.api("/api/admin/projects/current", { key: token, headers: { "x-project-id": other.projectId } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe("FORBIDDEN");

    const nested = await mint("read-write", "escalate", token);
    expect(nested.status).toBe(403);
    expect(nested.body.error).toBe("API tokens cannot manage keys, tokens, members or settings");
    const victim = (await mint("read-only", "victim")).body;
    expect((await ts.api(`/api/admin/tokens/${victim.id}`, { method: "DELETE", key: token })).status).toBe(403);
    expect((await ts.api("/api/admin/projects/current", { key: victim.token })).status).toBe(200);
  });

  test("a revoked token is UNAUTHORIZED; revoking twice or across projects is NOT_FOUND", async () => {
    const minted = (await mint("read-write", "short-lived")).body;
    const del = await ts.api(`/api/admin/tokens/${minted.id}`, { method: "DELETE" });
    expect(del.status).toBe(204);
    const after = await ts.api("/api/admin/projects/current", { key: minted.token });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe("UNAUTHORIZED");
    expect((await ts.api("/api/admin/tokens")).body.map((t: any) => t.id)).not.toContain(minted.id);
    expect((await ts.api(`/api/admin/tokens/${minted.id}`, { method: "DELETE" })).status).toBe(404);

    const other = await ts.newProject("Another");
    const theirs = (await mint("read-only", "theirs", other.adminKey)).body;
    const cross = await ts.api(`/api/admin/tokens/${theirs.id}`, { method: "DELETE" });
    expect(cross.status).toBe(404);
    expect(cross.body.code).toBe("NOT_FOUND");
    expect((await ts.api("/api/admin/projects/current", { key: theirs.token })).body.id).toBe(other.projectId);
    expect((await ts.api("/api/admin/tokens")).body.map((t: any) => t.id)).not.toContain(theirs.id);
  });

  test("no per-domain limits: a token works from any Origin, in bursts, on a project with a domain", async () => {
    const shop = await ts.newProject("Shop with a domain");
    expect((await ts.api(`/api/admin/projects/${shop.projectId}`, { method: "PATCH", key: shop.adminKey, body: { domain: "shop.example.com" } })).status).toBe(200);
    const token = (await mint("read-write", "ci", shop.adminKey)).body.token;
    const elsewhere = { origin: "https://elsewhere.example.com" };
    const reads = await Promise.all(Array.from({ length: 50 }, () => ts.api("/api/admin/projects/current", { key: token, headers: elsewhere })));
    expect(reads.map((r) => r.status)).toEqual(Array(50).fill(200));
    const write = await ts.api("/api/admin/killswitches", { key: token, headers: elsewhere, body: { name: "from-anywhere" } });
    expect(write.status).toBe(201);
    expect((await ts.api("/api/admin/killswitches/from-anywhere", { key: shop.adminKey })).status).toBe(200);
    // The same Origin is refused to the project's SDK keys, which are domain-bound.
    const sdk = await ts.api("/api/sdk/v1/snapshot?env=prod", { key: null, headers: { ...elsewhere, "x-sdk-key": shop.serverKey } });
    expect(sdk.status).toBe(403);
  });

  test("a signed-in person mints tokens with their access token", async () => {
    const browser = await signInWithMagicLink(ts, mails, "owner@example.com");
    const pair = await deviceLogin(ts, browser, ts.projectId);
    const res = await mint("read-only", "from a person", pair.access_token);
    expect(res.status).toBe(201);
    const row = await ts.store.one("SELECT created_by FROM api_tokens WHERE id = ?", res.body.id);
    expect(row).toEqual({ created_by: "owner@example.com" });
  });

  test("bad bodies: VALIDATION naming the field, malformed JSON BAD_REQUEST, no credential UNAUTHORIZED", async () => {
    const count = async () => ((await ts.store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM api_tokens")) as { n: number }).n;
    const before = await count();
    const access = await ts.api("/api/admin/tokens", { body: { name: "x", access: "admin" } });
    expect(access.status).toBe(400);
    expect(access.body.code).toBe("VALIDATION");
    expect(access.body.detail).toContain("access");
    const name = await ts.api("/api/admin/tokens", { body: { access: "read-only" } });
    expect(name.body.detail).toContain("name");
    const blank = await ts.api("/api/admin/tokens", { body: { name: "   ", access: "read-only" } });
    expect(blank.body.code).toBe("VALIDATION");
    const wrongType = await ts.api("/api/admin/tokens", { body: { name: 7, access: "read-only" } });
    expect(wrongType.body.code).toBe("VALIDATION");
    const malformed = await ts.api("/api/admin/tokens", { rawBody: '{"name":' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("BAD_REQUEST");
    expect((await ts.api("/api/admin/tokens", { key: null })).status).toBe(401);
    expect((await ts.api("/api/admin/tokens", { key: ts.serverKey })).status).toBe(403);
    expect((await ts.api("/api/admin/tokens", { key: "svc_pat_forged" })).status).toBe(401);
    expect(await count()).toBe(before);
  });
});
