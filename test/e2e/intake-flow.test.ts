/**
 * Issue 15's "Done when", end to end, on svc run as a child process
 * (`bun src/main.ts serve`, as `npm start` runs it):
 *
 * 1. a customer's page (a local HTTP server on the origin the project lists
 *    as its domain) files a feature request with the client key, by fetch in
 *    headless Chromium: the browser preflights and svc approves that origin;
 *    the item lands as `pending_approval`;
 * 2. the owner signs in to the dashboard (magic link from <data>/outbox.log)
 *    and approves it on the queue page;
 * 3. a webhook receiver and a Linear stand-in (local servers, Linear reached
 *    through SERVICE_LINEAR_API_URL and connected by its OAuth flow) hold
 *    their answer to the `ticket.approved` delivery, the server that sent it
 *    is SIGKILLed while the deliveries are pending, and restarted;
 * 4. after its lease, each delivery is sent again with the same
 *    Idempotency-Key; the receivers drop the repeat as docs/api.md tells them
 *    to, so each processed exactly one event: one distinct key per
 *    connector, two raw attempts, every webhook attempt's signature valid.
 *
 * On PostgreSQL the same again with two servers on one store: the page files
 * on one, the owner approves on the other, whichever sent the held
 * deliveries is killed, the survivor takes them over, the killed one comes
 * back, and both race for them: still one key each.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SQL, type Server } from "bun";
import type { BrowserContext, Page } from "playwright-core";
import { chromiumAvailable, newBrowserContext } from "../web/dashboard-support";
import { SVC_SOURCE, type ServeProcess, type StoreArgs, freshStoreArgs, run, startServe } from "../cli/process";
import { Browser } from "../browser";
import { TEST_ENGINE, tempDir } from "../helpers";
import { type Attempt, LINEAR_CLIENT_ID, LINEAR_CLIENT_SECRET, LinearStandIn, WebhookReceiver, ownerOfConnection } from "./receivers";

setDefaultTimeout(60_000);

const SECRET_KEY = "e2".repeat(32);
/** A killed server's claims are free again after this long (the default is 60 s). */
const LEASE_MS = 2000;
const TITLE = "Export to CSV";
const USE_CASE = "Monthly reports for the finance team";

let context: BrowserContext;
let site: Server<unknown>;
/** What the customer's page calls: the svc URL and the client key it embeds (set per test). */
let siteConfig = { svcUrl: "", clientKey: "" };
const cleanups: (() => unknown)[] = [];

/** The customer's site: one page with a feature-request form whose script posts to svc's public intake. */
function customerSite(): Server<unknown> {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () =>
      new Response(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body>
<h1>Shop</h1>
<form id="request"><label>Title <input name="title" required></label><label>Why <textarea name="useCase"></textarea></label><button>Request feature</button></form>
<p id="result" role="status"></p>
<script>
const SVC = ${JSON.stringify(siteConfig.svcUrl)}, KEY = ${JSON.stringify(siteConfig.clientKey)};
document.getElementById("request").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const out = document.getElementById("result");
  try {
    const res = await fetch(SVC + "/ops/feature-request", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-SDK-Key": KEY },
      body: JSON.stringify({ title: form.get("title"), useCase: form.get("useCase") }),
    });
    out.dataset.answer = JSON.stringify({ status: res.status, body: await res.json() });
  } catch (err) {
    out.dataset.answer = JSON.stringify({ error: String(err) });
  }
  out.textContent = "Thanks!";
});
</script></body></html>`,
        { headers: { "content-type": "text/html; charset=utf-8" } },
      ),
  });
}

beforeAll(async () => {
  if (!chromiumAvailable) return;
  site = customerSite();
  context = await newBrowserContext({ viewport: { width: 1280, height: 860 } });
});

afterAll(async () => {
  for (const fn of cleanups.reverse()) await fn();
  await context?.close();
  site?.stop(true);
});

type Keys = { projectId: string; ownerEmail: string; adminKey: string; clientKey: string };

/** One svc process of the flow; `start()` again after a SIGKILL brings it back on the same data dir and store. */
class Svc {
  proc: ServeProcess | undefined;
  readonly dataDir = tempDir("svc-e2e-");

  constructor(
    readonly name: string,
    private readonly store: StoreArgs,
    private readonly env: Record<string, string>,
  ) {
    cleanups.push(() => {
      if (this.proc && this.proc.proc.exitCode === null) this.proc.proc.kill("SIGKILL");
      rmSync(this.dataDir, { recursive: true, force: true });
    });
  }

  async start(): Promise<void> {
    this.proc = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", this.dataDir, ...this.store.args, "--no-request-log"], {
      env: this.env,
      timeoutMs: 30_000,
    });
  }

  get url(): string {
    return this.proc!.url;
  }

  get pid(): number {
    return this.proc!.proc.pid;
  }

  async kill(): Promise<void> {
    this.proc!.proc.kill("SIGKILL");
    expect(await this.proc!.proc.exited).not.toBe(0);
  }

  /** The newest sign-in link mailed to `email` (no SMTP: <data>/outbox.log, one JSON line per mail). */
  mailedLinks(email: string): string[] {
    const file = join(this.dataDir, "outbox.log");
    if (!existsSync(file)) return [];
    return readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((m) => m.to === email)
      .map((m) => m.link);
  }
}

async function api(base: string, key: string, path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(base + path, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${key}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    redirect: "manual",
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {}
  return { status: res.status, body, text, headers: res.headers };
}

async function waitFor<T>(check: () => T | Promise<T>, timeoutMs: number, what: string): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(25);
  }
}

type Flow = {
  store: StoreArgs;
  keys: Keys;
  webhook: WebhookReceiver;
  linear: LinearStandIn;
  webhookId: string;
  linearId: string;
  servers: Svc[];
};

/**
 * A fresh store with a project that takes public tickets (`svc init
 * --public-tickets`), its domain the customer's site, `count` servers on it,
 * and the two connectors, subscribed to ticket.approved: the webhook (its
 * secret handed to the receiver) and Linear, connected by OAuth against the
 * stand-in.
 */
async function setUp(count: number): Promise<Flow> {
  const store = await freshStoreArgs();
  cleanups.push(() => store.drop());
  const webhook = new WebhookReceiver();
  const linear = new LinearStandIn();
  cleanups.push(() => webhook.stop(), () => linear.stop());
  const env = {
    SERVICE_SECRET_KEY: SECRET_KEY,
    SERVICE_LINEAR_API_URL: linear.url,
    SERVICE_LINEAR_AUTHORIZE_URL: `${linear.url}/oauth/authorize`,
    SERVICE_LINEAR_CLIENT_ID: LINEAR_CLIENT_ID,
    SERVICE_LINEAR_CLIENT_SECRET: LINEAR_CLIENT_SECRET,
    SERVICE_CONNECTOR_LEASE_MS: String(LEASE_MS),
    SERVICE_CONNECTOR_POLL_MS: "100",
    SERVICE_CONNECTOR_RETRY_BASE_MS: "200",
    SERVICE_CONNECTOR_RETRY_MAX_MS: "1000",
    // The receivers are on 127.0.0.1: a loopback target, refused unless the operator allows private targets.
    SERVICE_CONNECTOR_PRIVATE_TARGETS: "allow",
  };
  const servers = Array.from({ length: count }, (_, i) => new Svc(String.fromCharCode(65 + i), store, env));
  const init = await run([...SVC_SOURCE, "init", "--data", servers[0]!.dataDir, ...store.args, "--project", "Shop", "--public-tickets", "--json"]);
  expect(init.code, init.stderr).toBe(0);
  const keys: Keys = JSON.parse(init.stdout);
  await Promise.all(servers.map((s) => s.start()));
  const base = servers[0]!.url;
  const siteOrigin = `http://127.0.0.1:${site.port}`;
  expect((await api(base, keys.adminKey, `/api/admin/projects/${keys.projectId}`, { method: "PATCH", body: { domain: siteOrigin } })).status).toBe(200);

  const hook = await api(base, keys.adminKey, "/api/admin/connectors", { body: { provider: "webhook", name: "approvals hook", events: ["ticket.approved"], config: { url: `${webhook.url}/hooks/svc` } } });
  expect(hook.status, hook.text).toBe(201);
  expect(hook.body.secret).toMatch(/^whsec_/);
  webhook.secret = hook.body.secret;

  const lin = await api(base, keys.adminKey, "/api/admin/connectors", { body: { provider: "linear", name: "approved to Linear", events: ["ticket.approved"] } });
  expect(lin.status, lin.text).toBe(201);
  // The OAuth dance as the browser does it: start, the vendor's authorize page (here: straight back with a code), the callback.
  const start = await api(base, keys.adminKey, `/api/admin/connectors/${lin.body.id}/oauth/start`, { body: {} });
  expect(start.status, start.text).toBe(200);
  const authorize = new URL(start.body.url);
  expect(authorize.origin + authorize.pathname).toBe(`${linear.url}/oauth/authorize`);
  expect(authorize.searchParams.get("client_id")).toBe(LINEAR_CLIENT_ID);
  expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
  // The callback completes only in a browser signed in to svc as someone who administers the project (issue 25).
  const owner = await ownerSession(servers[0]!, keys.ownerEmail);
  const back = await owner.get(`/oauth/connectors/callback?code=e2e-code&state=${encodeURIComponent(authorize.searchParams.get("state")!)}`);
  expect(back.status, back.text).toBe(303);
  expect(linear.tokenRequests).toBe(1);
  expect((await api(base, keys.adminKey, `/api/admin/connectors/${lin.body.id}`, { method: "PATCH", body: { config: { teamId: "team_shop" } } })).status).toBe(200);
  for (const id of [hook.body.id, lin.body.id]) expect((await api(base, keys.adminKey, `/api/admin/connectors/${id}`)).body).toMatchObject({ enabled: true, hasCredentials: true });
  return { store, keys, webhook, linear, webhookId: hook.body.id, linearId: lin.body.id, servers };
}

/** The owner signed in on `server` by the mailed link, as a cookie jar (not the Chromium context, whose dashboard sign-in comes later). */
async function ownerSession(server: Svc, email: string): Promise<Browser> {
  const browser = new Browser(server.url);
  await browser.get("/signin");
  const before = server.mailedLinks(email).length;
  const sent = await browser.postForm("/auth/magic-link", { email, csrf: browser.csrf });
  expect(sent.status, sent.text).toBe(200);
  const link = await waitFor(() => server.mailedLinks(email)[before], 5000, "the sign-in mail in outbox.log");
  const token = new URL(link).searchParams.get("token")!;
  await browser.get(`/auth/magic?token=${token}`);
  const done = await browser.postForm("/auth/magic", { token, csrf: browser.csrf });
  expect(done.status, done.text).toBe(303);
  return browser;
}

/** The customer's page files a feature request; answers svc's answer and what the browser saw on the wire. */
async function fileFromCustomerPage(svcUrl: string, clientKey: string) {
  siteConfig = { svcUrl, clientKey };
  const page = await context.newPage();
  const wire: { kind: string; method: string; status: number; allowOrigin: string | undefined }[] = [];
  // DevTools sees the CORS preflight, which Playwright's own events do not report.
  const cdp = await context.newCDPSession(page);
  const methods = new Map<string, string>();
  cdp.on("Network.requestWillBeSent", (e: any) => methods.set(e.requestId, e.request.method));
  cdp.on("Network.responseReceived", (e: any) => {
    if (!e.response.url.startsWith(svcUrl)) return;
    const headers = Object.fromEntries(Object.entries(e.response.headers as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]));
    wire.push({ kind: e.type, method: e.type === "Preflight" ? "OPTIONS" : (methods.get(e.requestId) ?? "?"), status: e.response.status, allowOrigin: headers["access-control-allow-origin"] });
  });
  await cdp.send("Network.enable");
  const origin = `http://127.0.0.1:${site.port}`;
  await page.goto(`${origin}/`);
  await page.getByLabel("Title").fill(TITLE);
  await page.getByLabel("Why").fill(USE_CASE);
  await page.getByRole("button", { name: "Request feature" }).click();
  await page.getByRole("status").filter({ hasText: "Thanks!" }).waitFor();
  const answer = JSON.parse((await page.getByRole("status").getAttribute("data-answer"))!);
  await waitFor(() => wire.length >= 2, 3000, "the preflight and the POST on the wire");
  await page.close();
  return { answer, wire, origin };
}

/** Signs the owner in on `server`'s dashboard by the mailed link and approves the item on the queue page. */
async function approveOnDashboard(server: Svc, email: string, number: number): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${server.url}/queue`);
  await page.waitForURL((url) => url.pathname === "/signin");
  const before = server.mailedLinks(email).length;
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Send sign-in link" }).click();
  const link = await waitFor(() => server.mailedLinks(email)[before], 5000, "the sign-in mail in outbox.log");
  await page.goto(link);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === "/queue");
  await page.getByText("1 item waits for approval.").waitFor();
  const name = `#${number} ${TITLE}`;
  await page.getByRole("button", { name: `Approve ${name}` }).click();
  await page.getByRole("status").filter({ hasText: `Approved ${name}` }).waitFor();
  return page;
}

/** Attempts that reached the receiver for the approval event. */
const approvals = (attempts: Attempt[]) => attempts.filter((a) => a.event === "ticket.approved");

/** The exactly-once verdict for one connector: raw attempts, distinct keys, what was processed. */
function verdict(receiver: WebhookReceiver | LinearStandIn) {
  const raw = approvals(receiver.attempts);
  return { raw: raw.length, distinctKeys: new Set(raw.map((a) => a.key)).size, processed: receiver.processed.size, duplicatesDropped: raw.filter((a) => a.duplicate).length };
}

/** Everything after the deliveries went out: receivers' view, the delivery logs, the item. */
async function expectExactlyOnce(flow: Flow, item: { id: string; number: number }, expectedRaw: number) {
  const base = flow.servers.find((s) => s.proc?.proc.exitCode === null)!.url;
  await waitFor(
    async () => {
      for (const id of [flow.webhookId, flow.linearId]) {
        const got = await api(base, flow.keys.adminKey, `/api/admin/connectors/${id}`);
        if (got.body?.deliveries?.delivered !== 1) return false;
      }
      return true;
    },
    20_000,
    "both deliveries recorded as delivered",
  );
  // Longer than a lease: a stray claim would have gone out by now.
  await Bun.sleep(LEASE_MS + 500);

  for (const receiver of [flow.webhook, flow.linear]) {
    const raw = approvals(receiver.attempts);
    const keys = new Set(raw.map((a) => a.key));
    // Exactly once as a receiver sees it: one distinct Idempotency-Key, processed once; every raw attempt carried it.
    expect(keys.size).toBe(1);
    expect(receiver.processed.size).toBe(1);
    expect(raw.length).toBe(expectedRaw);
    expect(raw.map((a) => a.attempt)).toEqual(Array.from({ length: expectedRaw }, (_, i) => i + 1));
    expect(raw.filter((a) => a.duplicate).length).toBe(expectedRaw - 1);
    expect(new Set(raw.map((a) => a.deliveryId)).size).toBe(1);
    expect([...keys][0]).toMatch(/^evt_/);
  }
  // Every webhook attempt was signed with the connector's secret (each anew), and nothing else arrived.
  expect(flow.webhook.attempts.length).toBe(expectedRaw);
  expect(flow.webhook.attempts.every((a) => a.signatureValid === true)).toBe(true);
  expect(flow.linear.attempts.length).toBe(expectedRaw);

  const [event] = [...flow.webhook.processed.values()];
  expect(event).toMatchObject({ type: "ticket.approved", projectId: flow.keys.projectId, test: false, data: { item: { id: item.id, number: item.number, type: "feature_request", status: "open", title: TITLE, useCase: USE_CASE, source: "intake" } } });
  expect(event.data.approvedBy).toContain(flow.keys.ownerEmail);
  expect(event.id).toBe(flow.webhook.attempts[0]!.key);
  // The same event reached Linear as one issue: same key, and the issue id Linear would refuse twice is stable too.
  const [issue] = [...flow.linear.issues.values()];
  expect(issue).toMatchObject({ teamId: "team_shop", title: `Approved feature request #${item.number}: ${TITLE}` });
  expect(issue.description).toContain(USE_CASE);
  expect(flow.linear.attempts[0]!.key).toBe(event.id);
  expect(new Set(flow.linear.attempts.map((a) => JSON.parse(a.body).variables.input.id)).size).toBe(1);

  // svc's own log agrees: one delivery per connector, delivered, after `expectedRaw` attempts.
  for (const id of [flow.webhookId, flow.linearId]) {
    const log = await api(base, flow.keys.adminKey, `/api/admin/connectors/${id}/deliveries`);
    expect(log.status).toBe(200);
    expect(log.body.map((d: any) => ({ eventId: d.eventId, status: d.status, attempts: d.attempts }))).toEqual([{ eventId: event.id, status: "delivered", attempts: expectedRaw }]);
  }
  expect((await api(base, flow.keys.adminKey, `/api/admin/ops/${item.id}`)).body.status).toBe("open");
}

/** Files from the page on `intakeServer`, checks the CORS on the wire and the pending item. */
async function fileAndCheck(flow: Flow, intakeServer: Svc) {
  const filed = await fileFromCustomerPage(intakeServer.url, flow.keys.clientKey);
  expect(filed.answer, JSON.stringify(filed)).toMatchObject({ status: 201 });
  const item = filed.answer.body as { id: string; number: number };
  // The browser preflighted (JSON and X-SDK-Key are not simple) and svc approved exactly the project's domain both times.
  expect(filed.wire.map((w) => `${w.method} ${w.status}`)).toEqual(["OPTIONS 204", "POST 201"]);
  for (const w of filed.wire) expect(w.allowOrigin).toBe(filed.origin);
  const stored = await api(intakeServer.url, flow.keys.adminKey, `/api/admin/ops/${item.id}`);
  expect(stored.body).toMatchObject({ number: item.number, type: "feature_request", status: "pending_approval", title: TITLE, useCase: USE_CASE, source: "intake" });
  return item;
}

/**
 * The deliveries as the store has them, read straight from it while no svc
 * may be running (SQLite: the data dir's file, read-only; PostgreSQL: the database).
 */
async function storedDeliveries(flow: Flow): Promise<{ connector_id: string; status: string; attempts: number; claimed_until: number }[]> {
  const sql = "SELECT connector_id, status, attempts, claimed_until FROM connector_deliveries WHERE event_type = 'ticket.approved' ORDER BY connector_id";
  const rows = flow.store.url
    ? await (async () => {
        const db = new SQL({ url: flow.store.url!, max: 1 });
        try {
          return (await db.unsafe(sql)) as any[];
        } finally {
          await db.close();
        }
      })()
    : (() => {
        const db = new Database(join(flow.servers[0]!.dataDir, "service.db"), { readonly: true });
        try {
          return db.query(sql).all() as any[];
        } finally {
          db.close();
        }
      })();
  return rows.map((r) => ({ connector_id: r.connector_id, status: r.status, attempts: Number(r.attempts), claimed_until: Number(r.claimed_until) }));
}

/** At the kill: both deliveries pending, one attempt counted, still leased (to the dead process). */
async function expectPendingAtKill(flow: Flow): Promise<void> {
  const rows = await storedDeliveries(flow);
  const now = Date.now();
  expect(rows.map((r) => ({ connector: r.connector_id, status: r.status, attempts: r.attempts, leased: r.claimed_until > now }))).toEqual(
    [flow.webhookId, flow.linearId].sort().map((connector) => ({ connector, status: "pending", attempts: 1, leased: true })),
  );
}

/** Both receivers hold one processed, unanswered approval delivery. */
const bothHeld = (flow: Flow) => waitFor(() => flow.webhook.heldCount === 1 && flow.linear.heldCount === 1, 15_000, "both receivers to hold the approval delivery");

describe.skipIf(!chromiumAvailable)(`intake to connectors, end to end (${TEST_ENGINE})`, () => {
  test("page on the project's domain → pending_approval → approved on the dashboard → webhook and Linear get one delivery each (one key), across a SIGKILL mid-delivery and a restart", async () => {
    const t0 = performance.now();
    const flow = await setUp(1);
    const [a] = flow.servers as [Svc];
    const item = await fileAndCheck(flow, a);

    flow.webhook.hold();
    flow.linear.hold();
    const dashboard = await approveOnDashboard(a, flow.keys.ownerEmail, item.number);
    await bothHeld(flow);
    // Both vendors processed the event, their answers are not back: the server dies with the deliveries pending.
    await a.kill();
    await expectPendingAtKill(flow);
    flow.webhook.release();
    flow.linear.release();
    await a.start();
    await expectExactlyOnce(flow, item, 2);
    await dashboard.close();
    const w = verdict(flow.webhook);
    const l = verdict(flow.linear);
    console.log(
      `intake e2e, one server, SIGKILL + restart (${TEST_ENGINE}): webhook ${w.raw} raw attempts / ${w.distinctKeys} key / ${w.duplicatesDropped} dropped; ` +
        `Linear ${l.raw} raw attempts / ${l.distinctKeys} key / ${l.duplicatesDropped} dropped; ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    expect(await a.proc!.stop()).toBe(0);
  });
});

describe.skipIf(!chromiumAvailable || TEST_ENGINE !== "postgres")("two servers on one PostgreSQL store (PostgreSQL only; skipped on SQLite, whose store is one server's file)", () => {
  test("filed on A, approved on B; the server holding the deliveries is SIGKILLed, the survivor takes over, the killed one restarts: one key per connector", async () => {
    const t0 = performance.now();
    const flow = await setUp(2);
    const [a, b] = flow.servers as [Svc, Svc];
    const processes = () => flow.servers.filter((s) => s.proc?.proc.exitCode === null).map((s) => ({ name: s.name, pid: s.pid }));
    for (const r of [flow.webhook, flow.linear]) r.identify = (port) => ownerOfConnection(port, r.port, processes()) ?? "?";

    const item = await fileAndCheck(flow, a);
    flow.webhook.hold();
    flow.linear.hold();
    const dashboard = await approveOnDashboard(b, flow.keys.ownerEmail, item.number);
    await bothHeld(flow);
    const firstSenders = [flow.webhook, flow.linear].map((r) => approvals(r.attempts)[0]!.sender);
    expect(firstSenders.every((s) => s === "A" || s === "B"), `senders ${firstSenders}`).toBe(true);
    // Kill whichever process sent a held delivery (one of them, or both if they split the work).
    const doomed = flow.servers.filter((s) => firstSenders.includes(s.name));
    for (const s of doomed) await s.kill();
    await expectPendingAtKill(flow);
    flow.webhook.release();
    flow.linear.release();
    const survivor = flow.servers.find((s) => !doomed.includes(s));
    if (survivor) {
      // The survivor takes the deliveries over once their lease runs out, before the dead one is back.
      await waitFor(() => flow.webhook.attempts.length === 2 && flow.linear.attempts.length === 2, LEASE_MS + 10_000, "the survivor's re-sends");
      for (const r of [flow.webhook, flow.linear]) expect(approvals(r.attempts)[1]!.sender).toBe(survivor.name);
    }
    await Promise.all(doomed.map((s) => s.start()));
    await expectExactlyOnce(flow, item, 2);
    await dashboard.close();
    const w = verdict(flow.webhook);
    const l = verdict(flow.linear);
    const senders = (r: WebhookReceiver | LinearStandIn) => approvals(r.attempts).map((x) => x.sender).join("→");
    console.log(
      `intake e2e, two servers on PostgreSQL: first attempts sent by ${firstSenders.join("/")} (webhook/Linear), killed ${doomed.map((s) => s.name).join("+")}; ` +
        `webhook ${w.raw} raw attempts (${senders(flow.webhook)}) / ${w.distinctKeys} key; Linear ${l.raw} raw attempts (${senders(flow.linear)}) / ${l.distinctKeys} key; ` +
        `${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    for (const s of [a, b]) expect(await s.proc!.stop()).toBe(0);
  });
});
