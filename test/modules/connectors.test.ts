import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { emitEvent } from "../../src/lib/outbox";
import { SecretBox } from "../../src/modules/connectors/secrets";
import { sign, verify } from "../../src/modules/connectors/signing";
import { type TestServer, dropStore, freshStoreUrl, startTestServer, tempDir } from "../helpers";
import { VendorStandIn, standInEnv, waitFor, withEnv } from "../support/vendor-standin";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let ts: TestServer;
let vendor: VendorStandIn;
let restoreEnv: () => void;

beforeAll(async () => {
  vendor = new VendorStandIn();
  restoreEnv = withEnv(standInEnv(vendor.url));
  ts = await startTestServer();
});

afterAll(async () => {
  await ts.stop();
  vendor.stop();
  restoreEnv();
});

async function webhook(path: string, events = ["killswitch.toggled"]) {
  const res = await ts.api("/api/admin/connectors", { body: { provider: "webhook", name: `hook ${path}`, events, config: { url: `${vendor.url}${path}` } } });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

let kswSeq = 0;
/** A committed change that emits killswitch.toggled (the outbox, through the killswitches module). */
async function toggleSomething(): Promise<void> {
  const name = `ks-${kswSeq++}`;
  expect((await ts.api("/api/admin/killswitches", { body: { name } })).status).toBe(201);
  expect((await ts.api(`/api/admin/killswitches/${name}/toggle`, { body: { env: "prod" } })).status).toBe(200);
}

describe("create, read, update, delete", () => {
  test("a webhook: UUID id, the signing secret once, never again in any read", async () => {
    const created = await webhook("/hook-crud", ["bug.created", "alert.firing", "bug.created"]);
    expect(created.id).toMatch(UUID);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
    const got = await ts.api(`/api/admin/connectors/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: created.id, provider: "webhook", kind: "webhook", events: ["bug.created", "alert.firing"], enabled: true, hasCredentials: true, credentialFields: ["signingSecret"], deliveries: { pending: 0, delivered: 0, failed: 0 } });
    expect(got.text).not.toContain(created.secret);
    const list = await ts.api("/api/admin/connectors");
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(created.secret);
    expect((list.body as any[]).some((c) => c.id === created.id)).toBe(true);
  });

  test("OAuth providers start disabled with an empty config and no credentials", async () => {
    for (const provider of ["linear", "slack", "google_sheets"]) {
      const res = await ts.api("/api/admin/connectors", { body: { provider, name: `${provider} one`, events: ["bug.created"] } });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(["id"]);
      const got = await ts.api(`/api/admin/connectors/${res.body.id}`);
      expect(got.body).toMatchObject({ provider, kind: "oauth", enabled: false, config: {}, hasCredentials: false, credentialFields: [] });
      // Not connected: cannot be enabled.
      const enable = await ts.api(`/api/admin/connectors/${res.body.id}/enable`, { method: "POST" });
      expect(enable.status).toBe(400);
      expect(enable.body.code).toBe("VALIDATION");
      expect(enable.body.detail).toContain("oauth/start");
    }
    const withConfig = await ts.api("/api/admin/connectors", { body: { provider: "slack", name: "x", events: [], config: { channel: "#a" } } });
    expect(withConfig.status).toBe(400);
    expect(withConfig.body.detail).toStartWith("config:");
    const withToken = await ts.api("/api/admin/connectors", { body: { provider: "linear", name: "x", events: [], accessToken: "lin_x" } });
    expect(withToken.status).toBe(400);
    expect(withToken.body.detail).toStartWith("accessToken:");
  });

  test("validation names the field", async () => {
    const cases: [unknown, string][] = [
      [{ provider: "teams", name: "x", events: [] }, "provider"],
      [{ provider: "webhook", name: "x", events: ["bug.made"], config: { url: "https://a.example" } }, "events[0]"],
      [{ provider: "webhook", name: "x", events: [], config: { url: "ftp://a.example" } }, "config.url"],
      [{ provider: "webhook", name: "x", events: [], config: {} }, "config.url"],
      [{ provider: "webhook", name: "x", events: [], config: { url: "https://a.example", extra: 1 } }, "config.extra"],
      [{ provider: "webhook", events: [], config: { url: "https://a.example" } }, "name"],
      [{ provider: "webhook", name: "x", config: { url: "https://a.example" } }, "events"],
      [{ provider: "webhook", name: "x", events: [], config: { url: "https://a.example" }, color: "red" }, "color"],
      [{ provider: "cursor_trigger", config: { repoUrl: "https://github.com/a/b" } }, "apiKey"],
      [{ provider: "github_trigger", config: { owner: "a", repo: "b" } }, "accessToken"],
      [{ provider: "github_trigger", config: { owner: "a", repo: "b" }, appId: "1" }, "privateKey"],
      [{ provider: "github_trigger", config: { owner: "a", repo: "b" }, appId: "1", privateKey: "not a pem" }, "privateKey"],
      [{ provider: "github_trigger", config: { owner: "a", repo: "b" }, accessToken: "t", appId: "1", privateKey: "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----" }, "accessToken"],
      [{ provider: "github_trigger", config: { owner: "a" }, accessToken: "t" }, "config.repo"],
      [{ provider: "jules_trigger", config: { source: "sources/x" }, fireToken: "t", apiKey: "k" }, "fireToken"],
      [{ provider: "claude_trigger", config: {} }, "config.routineId"],
    ];
    for (const [body, field] of cases) {
      const res = await ts.api("/api/admin/connectors", { body });
      expect({ body, status: res.status, code: res.body?.code }).toEqual({ body, status: 400, code: "VALIDATION" });
      expect(res.body.detail).toContain(field);
    }
    expect((await ts.api("/api/admin/connectors/not-a-connector")).status).toBe(404);
    expect((await ts.api("/api/admin/connectors/not-a-connector/deliveries")).status).toBe(404);
  });

  test("trigger creates are idempotent by natural key: re-create updates the row and answers the same id", async () => {
    const first = await ts.api("/api/admin/connectors", { body: { provider: "github_trigger", config: { owner: "Acme", repo: "Web" }, accessToken: "ghp_first" } });
    expect(first.status).toBe(201);
    const again = await ts.api("/api/admin/connectors", { body: { provider: "github_trigger", name: "CI", events: ["error.new"], config: { owner: "acme", repo: "web", eventType: "svc" }, accessToken: "ghp_second" } });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    const got = await ts.api(`/api/admin/connectors/${first.body.id}`);
    expect(got.body).toMatchObject({ name: "CI", events: ["error.new"], config: { owner: "acme", repo: "web", eventType: "svc" }, enabled: true, credentialFields: ["accessToken"] });
    const rows = await ts.store.all<{ id: string }>("SELECT id FROM connectors WHERE provider = 'github_trigger' AND natural_key = 'acme/web'");
    expect(rows.length).toBe(1);

    // Concurrent creates of one routine: one row, one id for all.
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => ts.api("/api/admin/connectors", { body: { provider: "claude_trigger", config: { routineId: "trig_same" }, fireToken: `sk-ant-oat01-${i}` } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect((await ts.store.all("SELECT id FROM connectors WHERE provider = 'claude_trigger' AND natural_key = 'trig_same'")).length).toBe(1);

    // Other triggers' natural keys.
    const cursor = await ts.api("/api/admin/connectors", { body: { provider: "cursor_trigger", config: { repoUrl: "https://GitHub.com/acme/web.git/" }, apiKey: "key_1" } });
    const cursorAgain = await ts.api("/api/admin/connectors", { body: { provider: "cursor_trigger", config: { repoUrl: "https://github.com/acme/web" }, apiKey: "key_2" } });
    expect([cursor.status, cursorAgain.status]).toEqual([201, 200]);
    expect(cursorAgain.body.id).toBe(cursor.body.id);
    const jules = await ts.api("/api/admin/connectors", { body: { provider: "jules_trigger", config: { source: "sources/github/acme/web" }, apiKey: "AIza1" } });
    const julesAgain = await ts.api("/api/admin/connectors", { body: { provider: "jules_trigger", config: { source: "sources/github/acme/web" }, apiKey: "AIza2" } });
    expect([jules.status, julesAgain.status]).toEqual([201, 200]);
    expect(julesAgain.body.id).toBe(jules.body.id);
  });

  test("PATCH, enable/disable, delete; each write audited", async () => {
    const { id } = await webhook("/hook-patch");
    const patched = await ts.api(`/api/admin/connectors/${id}`, { method: "PATCH", body: { name: "renamed", events: ["error.new", "error.regressed"], config: { url: `${vendor.url}/hook-patch-2` } } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: "renamed", events: ["error.new", "error.regressed"], config: { url: `${vendor.url}/hook-patch-2` } });
    const off = await ts.api(`/api/admin/connectors/${id}/disable`, { method: "POST" });
    expect(off.body.enabled).toBe(false);
    const on = await ts.api(`/api/admin/connectors/${id}`, { method: "PATCH", body: { enabled: true } });
    expect(on.body.enabled).toBe(true);
    expect((await ts.api(`/api/admin/connectors/${id}`, { method: "PATCH", body: { config: { url: null } } })).status).toBe(400);
    expect((await ts.api(`/api/admin/connectors/${id}`, { method: "PATCH", body: { apiKey: "x" } })).status).toBe(400);
    expect((await ts.api(`/api/admin/connectors/${id}`, { method: "PATCH", body: { provider: "slack" } })).status).toBe(400);
    const rotated = await ts.api(`/api/admin/connectors/${id}/rotate-secret`, { method: "POST" });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect((await ts.api(`/api/admin/connectors/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await ts.api(`/api/admin/connectors/${id}`)).status).toBe(404);
    const audit = await ts.store.all<{ action: string; detail: string | null }>("SELECT action, detail FROM audit_log WHERE subject_id = ? ORDER BY seq", id);
    expect(audit.map((a) => a.action)).toEqual(["connector.create", "connector.update", "connector.disable", "connector.update", "connector.secret.rotate", "connector.delete"]);
    expect(audit.map((a) => a.detail ?? "").join("")).not.toContain("whsec_");

    // A trigger's target may not move onto another's.
    const a = await ts.api("/api/admin/connectors", { body: { provider: "jules_trigger", config: { source: "sources/a" }, apiKey: "k" } });
    await ts.api("/api/admin/connectors", { body: { provider: "jules_trigger", config: { source: "sources/b" }, apiKey: "k" } });
    const clash = await ts.api(`/api/admin/connectors/${a.body.id}`, { method: "PATCH", body: { config: { source: "sources/b" } } });
    expect(clash.status).toBe(409);
  });

  test("another project's connector is not found", async () => {
    const { id } = await webhook("/hook-other");
    const other = await ts.newProject("Other");
    expect((await ts.api(`/api/admin/connectors/${id}`, { key: other.adminKey })).status).toBe(404);
    expect((await ts.api(`/api/admin/connectors/${id}`, { method: "DELETE", key: other.adminKey })).status).toBe(404);
  });
});

describe("credentials at rest", () => {
  test("sealed with AES-GCM: the raw row holds no plain secret, and opens only on its own row", async () => {
    const token = "github_pat_VerySecretValue0123456789";
    const res = await ts.api("/api/admin/connectors", { body: { provider: "github_trigger", config: { owner: "sealed", repo: "repo" }, accessToken: token } });
    const row = await ts.store.one<{ credentials: string; config: string }>("SELECT credentials, config FROM connectors WHERE id = ?", res.body.id);
    expect(row!.credentials).toStartWith("v1.");
    expect(row!.credentials).not.toContain(token);
    expect(row!.credentials).not.toContain(Buffer.from(token).toString("base64"));
    expect(row!.config).not.toContain(token);
    const box = ts.server.ctx.services.connectors.box;
    expect(box.openJson(row!.credentials, res.body.id)).toEqual({ accessToken: token });
    expect(() => box.open(row!.credentials, "another-connector")).toThrow(/integrity/);
    // Another key cannot open it, and says why.
    expect(() => SecretBox.open({ secretKey: "ab".repeat(32) }).open(row!.credentials, res.body.id)).toThrow(/SERVICE_SECRET_KEY/);
    const get = await ts.api(`/api/admin/connectors/${res.body.id}`);
    expect(get.text).not.toContain(token);
  });

  test("the key file is created 0600 in the data dir", () => {
    const path = join(ts.dataDir, "secret.key");
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(ts.server.ctx.services.connectors.box.source).toBe("file");
  });

  test("SERVICE_SECRET_KEY: hex or base64 of 32 bytes, anything else refused", () => {
    const hex = "0f".repeat(32);
    expect(SecretBox.open({ secretKey: hex }).keyId).toBe(SecretBox.open({ secretKey: Buffer.from(hex, "hex").toString("base64") }).keyId);
    expect(() => SecretBox.open({ secretKey: "short" })).toThrow(/32 bytes/);
  });
});

describe("delivery", () => {
  test("an event is fanned out, retried after failures with the same idempotency key, signed, and logged", async () => {
    let calls = 0;
    vendor.on("/hook-retry", () => (++calls <= 2 ? { status: 503, body: "down" } : { status: 200, body: { ok: true } }));
    const { id, secret } = await webhook("/hook-retry");
    await toggleSomething();
    await waitFor(() => vendor.to("/hook-retry").some((r) => r.status === 200), 10_000, "a successful delivery");
    const got = vendor.to("/hook-retry");
    expect(got.length).toBe(3);
    const keys = new Set(got.map((r) => r.headers["idempotency-key"]));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^evt_/);
    expect(got.map((r) => r.headers["x-svc-attempt"])).toEqual(["1", "2", "3"]);
    for (const r of got) {
      expect(verify(secret, r.body, r.headers["x-svc-signature"]!)).toBe(true);
      expect(r.headers["x-svc-event"]).toBe("killswitch.toggled");
      expect(r.headers["x-svc-delivery"]).toMatch(/^dlv_/);
    }
    const envelope = got[2]!.json();
    expect(envelope).toMatchObject({ id: [...keys][0], type: "killswitch.toggled", projectId: ts.projectId, test: false, data: { env: "prod", action: "killswitch.toggle", value: true, previous: false } });
    const log = await waitFor(async () => {
      const res = await ts.api(`/api/admin/connectors/${id}/deliveries`);
      return res.body[0]?.status === "delivered" ? res.body : null;
    });
    expect(log.length).toBe(1);
    expect(log[0]).toMatchObject({ eventType: "killswitch.toggled", status: "delivered", attempts: 3, lastStatus: 200, lastError: null });
    expect(log[0].log.map((a: any) => a.status)).toEqual([503, 503, 200]);
    expect(log[0].log[0]).toMatchObject({ error: "HTTP 503", response: "down" });
  });

  test("gives up after the attempt budget: failed, then a manual retry sends it again", async () => {
    let up = false;
    vendor.on("/hook-down", () => (up ? { status: 204 } : { status: 500 }));
    const { id } = await webhook("/hook-down");
    await toggleSomething();
    const failed = await waitFor(async () => {
      const res = await ts.api(`/api/admin/connectors/${id}/deliveries?status=failed`);
      return res.body[0];
    }, 15_000, "a failed delivery");
    expect(failed.attempts).toBe(4);
    expect(vendor.to("/hook-down").length).toBe(4);
    up = true;
    const retried = await ts.api(`/api/admin/connectors/${id}/deliveries/${failed.id}/retry`, { method: "POST" });
    expect(retried.status).toBe(200);
    await waitFor(async () => (await ts.api(`/api/admin/connectors/${id}/deliveries/${failed.id}`)).body.status === "delivered");
    expect(vendor.to("/hook-down").length).toBe(5);
  });

  test("only enabled connectors that subscribe to the type hear it; a disabled one's deliveries wait", async () => {
    vendor.on("/hook-sub", () => ({ status: 200 }));
    const subscribed = await webhook("/hook-sub");
    const other = await webhook("/hook-nosub", ["bug.created"]);
    const paused = await webhook("/hook-paused");
    await ts.api(`/api/admin/connectors/${paused.id}/disable`, { method: "POST" });
    const before = vendor.to("/hook-sub").length;
    await toggleSomething();
    await waitFor(() => vendor.to("/hook-sub").length > before);
    await Bun.sleep(300);
    expect(vendor.to("/hook-nosub").length).toBe(0);
    expect(vendor.to("/hook-paused").length).toBe(0);
    expect((await ts.api(`/api/admin/connectors/${other.id}/deliveries`)).body).toEqual([]);
    expect((await ts.api(`/api/admin/connectors/${paused.id}/deliveries`)).body).toEqual([]);
    expect(subscribed.id).toMatch(UUID);
  });

  test("test-fire goes through the same path, once, and answers the attempt", async () => {
    vendor.on("/hook-test", () => ({ status: 202, body: "queued" }));
    const { id, secret } = await webhook("/hook-test", ["alert.firing"]);
    const res = await ts.api(`/api/admin/connectors/${id}/test`, { body: {} });
    expect(res.status).toBe(200);
    expect(res.body.done).toBe(true);
    expect(res.body.delivery).toMatchObject({ test: true, eventType: "alert.firing", status: "delivered", attempts: 1, lastStatus: 202 });
    const sent = vendor.to("/hook-test").at(-1)!;
    expect(verify(secret, sent.body, sent.headers["x-svc-signature"]!)).toBe(true);
    expect(sent.json()).toMatchObject({ type: "alert.firing", test: true, data: { test: true } });
    // A failing target: failed after one attempt, with the error.
    vendor.on("/hook-test", () => ({ status: 401, body: "bad signature" }));
    const failing = await ts.api(`/api/admin/connectors/${id}/test`, { body: { type: "bug.created" } });
    expect(failing.body.delivery).toMatchObject({ status: "failed", attempts: 1, lastStatus: 401, lastError: "HTTP 401" });
    expect((await ts.api(`/api/admin/connectors/${id}/test`, { body: { type: "nope" } })).status).toBe(400);
  });

  test("an unreachable target is retried with the network error in the log", async () => {
    const res = await ts.api("/api/admin/connectors", { body: { provider: "webhook", name: "nowhere", events: ["bug.created"], config: { url: "http://127.0.0.1:9/nothing" } } });
    const fired = await ts.api(`/api/admin/connectors/${res.body.id}/test`, { body: {} });
    expect(fired.body.delivery.status).toBe("failed");
    expect(fired.body.delivery.lastStatus).toBeNull();
    expect(fired.body.delivery.lastError).toStartWith("network:");
  });

  test("signatures: verify accepts the header over the exact body and refuses anything else", () => {
    const now = Math.floor(Date.now() / 1000);
    const header = sign("whsec_abc", '{"a":1}', now);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verify("whsec_abc", '{"a":1}', header, now)).toBe(true);
    expect(verify("whsec_abc", '{"a":2}', header, now)).toBe(false);
    expect(verify("whsec_abd", '{"a":1}', header, now)).toBe(false);
    expect(verify("whsec_abc", '{"a":1}', header, now + 600)).toBe(false);
    expect(verify("whsec_abc", '{"a":1}', null, now)).toBe(false);
  });
});

describe("events other modules emit", () => {
  test("config.published, alert and error events reach a subscribed webhook with their documented payloads", async () => {
    vendor.on("/hook-all", () => ({ status: 200 }));
    await webhook("/hook-all", ["config.published", "error.new", "error.regressed", "alert.firing", "alert.resolved"]);
    // config.published: a create (no event), a PATCH with a value (one event, every env), a draft published (one event).
    expect((await ts.api("/api/admin/configs", { body: { name: "limits", schema: { type: "object" }, value: { max: 1 } } })).status).toBe(201);
    expect((await ts.api("/api/admin/configs/limits", { method: "PATCH", body: { value: { max: 2 } } })).status).toBe(200);
    expect((await ts.api("/api/admin/configs/limits/drafts", { method: "PUT", body: { env: "prod", value: { max: 3 } }, headers: { "x-project-id": ts.projectId } })).status).toBe(200);
    expect((await ts.api("/api/admin/configs/limits/publish", { body: { env: "prod" } })).status).toBe(200);
    // error.new, then resolved, then again: error.regressed.
    const ingest = () => ts.api("/api/sdk/v1/errors", { key: ts.serverKey, body: { errors: [{ message: "boom at checkout", type: "TypeError" }] } });
    expect((await ingest()).status).toBeLessThan(300);
    const errors = await ts.api("/api/admin/errors");
    const errorId = errors.body[0].id;
    expect((await ts.api(`/api/admin/errors/${errorId}`, { method: "PATCH", body: { status: "resolved" } })).status).toBe(200);
    expect((await ingest()).status).toBeLessThan(300);
    const types = await waitFor(() => {
      const seen = vendor.to("/hook-all").map((r) => r.json().type as string);
      return seen.filter((t) => t === "config.published").length >= 2 && seen.includes("error.new") && seen.includes("error.regressed") ? seen : null;
    });
    expect(types.filter((t) => t === "config.published").length).toBe(2);
    const bodies = vendor.to("/hook-all").map((r) => r.json());
    expect(bodies.find((b) => b.data.action === "config.update").data).toMatchObject({ name: "limits", versions: { dev: 2, staging: 2, prod: 2 } });
    expect(bodies.find((b) => b.data.action === "config.publish").data).toMatchObject({ name: "limits", versions: { prod: 3 } });
    expect(bodies.find((b) => b.type === "error.new").data).toMatchObject({ errorId, type: "TypeError", message: "boom at checkout", count: 1 });
    expect(bodies.find((b) => b.type === "error.regressed").data).toMatchObject({ errorId, occurrences: 1 });
  });

  test("alert.firing and alert.resolved carry the rule, value and window", async () => {
    vendor.on("/hook-alerts", () => ({ status: 200 }));
    await webhook("/hook-alerts", ["alert.firing", "alert.resolved"]);
    const base = Math.floor(Date.now() / 60_000) * 60 - 6 * 3600;
    const at = (s: number) => (base + s) * 1000;
    expect((await ts.api("/api/admin/events", { body: { name: "job.failed" } })).status).toBe(201);
    expect((await ts.api("/api/admin/metrics", { body: { name: "failures", kind: "count", event: "job.failed" } })).status).toBe(201);
    const rule = await ts.api("/api/admin/alert-rules", { body: { name: "failing-jobs", metricId: "failures", threshold: 2, comparator: "gt", windowHours: 1 } });
    expect(rule.status).toBe(201);
    const sent = await ts.api("/api/sdk/v1/events", { key: ts.serverKey, body: { events: [600, 700, 800].map((s, i) => ({ name: "job.failed", unitId: `u${i}`, ts: at(s) })) } });
    expect(sent.status).toBe(202);
    const { alerts } = ts.server.ctx.services;
    expect((await alerts.evaluateDue(at(1800))).transitions.map((t) => t.kind)).toEqual(["fire"]);
    expect((await alerts.evaluateDue(at(1800 + 7200))).transitions.map((t) => t.kind)).toEqual(["resolve"]);
    const bodies = await waitFor(() => (vendor.to("/hook-alerts").length >= 2 ? vendor.to("/hook-alerts").map((r) => r.json()) : null));
    // Deliveries are sent concurrently (several in flight per connector), so the two may arrive in either order.
    expect(bodies.map((b) => b.type).sort()).toEqual(["alert.firing", "alert.resolved"]);
    expect(bodies.find((b) => b.type === "alert.firing").data).toMatchObject({ ruleId: rule.body.id, rule: "failing-jobs", value: 3, comparator: "gt", threshold: 2, windowHours: 1, from: base + 1800 - 3600, to: base + 1800 });
    expect(bodies.find((b) => b.type === "alert.resolved").data).toMatchObject({ rule: "failing-jobs", value: 0 });
  });

  test("an event emitted in a rolled-back transaction is never delivered", async () => {
    vendor.on("/hook-rollback", () => ({ status: 200 }));
    await webhook("/hook-rollback", ["bug.created"]);
    await ts.store
      .write(async (tx) => {
        await emitEvent(tx, { projectId: ts.projectId, type: "bug.created", payload: { title: "never" } });
        throw new Error("rolled back");
      })
      .catch(() => {});
    await ts.store.write((tx) => emitEvent(tx, { projectId: ts.projectId, type: "bug.created", payload: { title: "kept" } }));
    await waitFor(() => vendor.to("/hook-rollback").length >= 1);
    await Bun.sleep(300);
    expect(vendor.to("/hook-rollback").map((r) => r.json().data.title)).toEqual(["kept"]);
  });
});

describe("nothing lost across a restart", () => {
  test("deliveries pending when the server stops are delivered once by the next server on the same store", async () => {
    const dataDir = tempDir();
    const storeUrl = await freshStoreUrl();
    let up = false;
    vendor.on("/hook-restart", () => (up ? { status: 200 } : { status: 503 }));
    // A budget that outlasts the outage.
    const restore = withEnv({ SERVICE_CONNECTOR_MAX_ATTEMPTS: "100" });
    const first = await startTestServer({ dataDir, store: storeUrl });
    const create = await first.api("/api/admin/connectors", { body: { provider: "webhook", name: "restart", events: ["bug.created"], config: { url: `${vendor.url}/hook-restart` } } });
    expect(create.status).toBe(201);
    for (let i = 0; i < 20; i++) await first.store.write((tx) => emitEvent(tx, { projectId: first.projectId, type: "bug.created", payload: { n: i } }));
    await waitFor(() => new Set(vendor.to("/hook-restart").map((r) => r.headers["idempotency-key"])).size === 20, 10_000, "first attempts");
    await first.server.stop();
    // Events emitted while no server runs are delivered too.
    const offline = await startTestServer({ dataDir, store: storeUrl });
    await offline.server.ctx.services.connectors.drainer.close();
    for (let i = 20; i < 25; i++) await offline.store.write((tx) => emitEvent(tx, { projectId: first.projectId, type: "bug.created", payload: { n: i } }));
    await offline.server.stop();
    up = true;
    const second = await startTestServer({ dataDir, store: storeUrl });
    try {
      const ok = await waitFor(() => {
        const delivered = vendor.to("/hook-restart").filter((r) => r.status === 200);
        return delivered.length >= 25 ? delivered : null;
      }, 15_000, "25 deliveries");
      await Bun.sleep(300);
      const okNow = vendor.to("/hook-restart").filter((r) => r.status === 200);
      expect(okNow.length).toBe(25);
      expect(new Set(ok.map((r) => r.json().data.n)).size).toBe(25);
      const rows = await second.store.all<{ status: string }>("SELECT status FROM connector_deliveries WHERE connector_id = ?", create.body.id);
      expect(rows.length).toBe(25);
      expect(rows.every((r) => r.status === "delivered")).toBe(true);
    } finally {
      restore();
      await second.server.stop();
      await dropStore(storeUrl);
    }
  }, 60_000);
});
