import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Browser, MailCapture, signInWithMagicLink } from "../browser";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

// The dashboard calls /api/admin with the browser's session cookie: the same routes and rules as the CLI.
let ts: TestServer;
const mails = new MailCapture();
let owner: Browser;

beforeAll(async () => {
  ts = await startTestServer({ signIn: { mailer: mails, rateLimits: { magicLinkPerIp: { limit: 1000, windowMs: 60_000 } } } });
  owner = await signInWithMagicLink(ts, mails, "owner@example.com");
  expect((await ts.api("/api/admin/killswitches", { body: { name: "checkout" } })).status).toBe(201);
});
afterAll(() => ts.stop());

/** A fetch as the browser's own page script would make it: cookies, Origin, and the CSRF header unless told otherwise. */
async function pageFetch(browser: Browser, path: string, init: { method?: string; body?: unknown; csrf?: string | null; origin?: string | null; project?: string | null } = {}) {
  const headers: Record<string, string> = { cookie: [...browser.cookies].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("; ") };
  const method = init.method ?? (init.body !== undefined ? "POST" : "GET");
  const project = init.project === undefined ? ts.projectId : init.project;
  if (project) headers["x-project-id"] = project;
  if (method !== "GET") {
    const origin = init.origin === undefined ? ts.url : init.origin;
    if (origin) headers.origin = origin;
    const csrf = init.csrf === undefined ? browser.csrf : init.csrf;
    if (csrf) headers["x-csrf-token"] = csrf;
  }
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(ts.url + path, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe("the session cookie on /api/admin", () => {
  test("reads: /me lists the person's projects; a project's resources answer with X-Project-Id", async () => {
    const me = await pageFetch(owner, "/api/admin/me", { project: null });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe("owner@example.com");
    expect(me.body.projects.map((p: any) => p.id)).toContain(ts.projectId);
    expect(me.body.credential.kind).toBe("session");
    const inProject = await pageFetch(owner, "/api/admin/me");
    expect(inProject.status).toBe(200);
    expect(inProject.body.credential).toMatchObject({ kind: "session", role: "owner" });
    const list = await pageFetch(owner, "/api/admin/killswitches");
    expect(list.status).toBe(200);
    expect(list.body.map((k: any) => k.name)).toEqual(["checkout"]);
  });

  test("a write with the CSRF token from our own origin goes through the same service and is audited as the person", async () => {
    const toggled = await pageFetch(owner, "/api/admin/killswitches/checkout/toggle", { body: { env: "prod" } });
    expect(toggled.status).toBe(200);
    expect(toggled.body).toMatchObject({ env: "prod", value: true, version: 2 });
    const stored = (await ts.api("/api/admin/killswitches/checkout")).body;
    expect(stored.envs.prod).toMatchObject({ value: true, version: 2, updatedBy: "owner@example.com" });
  });

  test("a write without the CSRF token, with a wrong one, or from another origin is refused and changes nothing", async () => {
    const before = (await ts.api("/api/admin/killswitches/checkout")).body;
    for (const init of [{ csrf: null }, { csrf: "x".repeat(32) }, { origin: "https://evil.example" }, { origin: null }]) {
      const refused = await pageFetch(owner, "/api/admin/killswitches/checkout/toggle", { body: { env: "prod" }, ...init });
      expect(refused.status).toBe(403);
      expectErrorShape(refused.body);
    }
    expect((await ts.api("/api/admin/killswitches/checkout")).body).toEqual(before);
  });

  test("the role holds: a viewer reads but cannot write; a project of another organisation is refused", async () => {
    await ts.addMember("viewer@example.com", "viewer");
    const viewer = await signInWithMagicLink(ts, mails, "viewer@example.com");
    expect((await pageFetch(viewer, "/api/admin/killswitches")).status).toBe(200);
    const write = await pageFetch(viewer, "/api/admin/killswitches/checkout/toggle", { body: {} });
    expect(write.status).toBe(403);
    expect(write.body.error).toContain("viewer");
    const other = await ts.newProject("Elsewhere");
    const foreign = await pageFetch(owner, "/api/admin/killswitches", { project: other.projectId });
    // owner@example.com owns every test organisation; a stranger's session is what must be refused.
    expect(foreign.status).toBe(200);
    const stranger = await pageFetch(viewer, "/api/admin/killswitches", { project: other.projectId });
    expect(stranger.status).toBe(403);
  });

  test("after sign-out the cookie is refused at once; a bearer header wins over a cookie", async () => {
    const b = await signInWithMagicLink(ts, mails, "owner@example.com", new Browser(ts.url));
    const cookie = b.cookies.get("svc_session")!;
    expect((await pageFetch(b, "/api/admin/killswitches")).status).toBe(200);
    expect((await b.postForm("/auth/logout", { csrf: b.csrf })).status).toBe(303);
    b.cookies.set("svc_session", cookie);
    const ended = await pageFetch(b, "/api/admin/killswitches");
    expect(ended.status).toBe(401);
    expect(ended.body.detail).toContain("/signin");
    // A bad bearer with a good cookie is still a bad bearer: the header decides.
    const res = await fetch(`${ts.url}/api/admin/killswitches`, { headers: { authorization: "Bearer sdk_admin_nope", cookie: `svc_session=${owner.cookies.get("svc_session")}` } });
    expect(res.status).toBe(401);
  });
});

describe("the CSRF cookie lives as long as the session", () => {
  test("sign-in and every dashboard page issue it again with a 30-day lifetime, keeping its token", async () => {
    const b = await signInWithMagicLink(ts, mails, "owner@example.com", new Browser(ts.url));
    const token = b.csrf;
    const page = await b.get("/killswitches");
    expect(page.status).toBe(200);
    const renewed = page.setCookies.find((c) => c.startsWith("svc_csrf="));
    expect(renewed).toContain(`svc_csrf=${token}`);
    expect(renewed).toContain("Max-Age=2592000");
    // A browser whose CSRF cookie expired gets a fresh one from the next page, and its writes work again.
    b.cookies.delete("svc_csrf");
    const again = await b.get("/");
    expect(again.status).toBe(200);
    expect(b.csrf).toMatch(/^[A-Za-z0-9]{32}$/);
    expect((await pageFetch(b, "/api/admin/killswitches/checkout/toggle", { body: { env: "dev" } })).status).toBe(200);
  });
});
