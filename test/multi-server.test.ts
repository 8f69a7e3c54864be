/**
 * Several `svc serve` processes on one PostgreSQL (issue 10): versions stay
 * gapless under concurrent writers on different servers, a publish reaches
 * every server's SSE stream within 1 s, a revoked key is refused everywhere
 * within 1 s, and a server killed mid-load loses no acknowledged write.
 * PostgreSQL runs only (`npm test` runs the suite on both engines).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SVC_SOURCE, type ServeProcess, startServe } from "./cli/process";
import { TEST_ENGINE, dropStore, freshStoreUrl, tempDir } from "./helpers";

const ADMIN_KEY = "sdk_admin_MultiServerTestKey0123456789";

async function startServers(count: number, storeUrl: string): Promise<ServeProcess[]> {
  const servers: ServeProcess[] = [];
  // All at once: the first start's bootstrap and migrations run under locks, once.
  await Promise.all(
    Array.from({ length: count }, async () => {
      const s = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", tempDir(), "--store", storeUrl, "--no-request-log"], {
        env: { SERVICE_INIT_ADMIN_KEY: ADMIN_KEY },
        timeoutMs: 30_000,
      });
      servers.push(s);
    }),
  );
  return servers;
}

async function call(base: string, path: string, init: { method?: string; body?: unknown; key?: string } = {}) {
  const res = await fetch(base + path, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${init.key ?? ADMIN_KEY}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe.skipIf(TEST_ENGINE !== "postgres")("three servers on one PostgreSQL", () => {
  let storeUrl: string;
  let servers: ServeProcess[] = [];

  beforeAll(async () => {
    storeUrl = (await freshStoreUrl())!;
    servers = await startServers(3, storeUrl);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop().catch(() => 0)));
    await dropStore(storeUrl);
  });

  test("one first project for all three (bootstrap under a lock)", async () => {
    const projects = await Promise.all(servers.map((s) => call(s.url, "/api/admin/projects/current")));
    expect(projects.map((p) => p.status)).toEqual([200, 200, 200]);
    expect(new Set(projects.map((p) => p.body.id)).size).toBe(1);
  });

  test("3 × 100 concurrent toggles spread over the servers give version 301, gapless", async () => {
    const created = await call(servers[0]!.url, "/api/admin/killswitches", { body: { name: "checkout" } });
    expect(created.status).toBe(201);
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => call(servers[i % 3]!.url, `/api/admin/killswitches/checkout/toggle`, { body: { env: "prod" } })),
    );
    expect(results.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([]);
    const versions = results.map((r) => r.body.version as number).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: 300 }, (_, i) => i + 2));
    for (const s of servers) {
      const got = await call(s.url, "/api/admin/killswitches/checkout");
      expect(got.body.envs.prod.version).toBe(301);
    }
    const history = await call(servers[1]!.url, "/api/admin/killswitches/checkout/history?env=prod&limit=1000");
    expect(history.status).toBe(200);
    const seen = (history.body as { version: number }[]).map((h) => h.version).sort((a, b) => a - b);
    expect(seen).toEqual(Array.from({ length: 301 }, (_, i) => i + 1));
  }, 60_000);

  test("a publish through one server reaches another's SSE stream within 1 s, and a third's snapshot", async () => {
    const minted = await call(servers[0]!.url, "/api/admin/keys", { body: { type: "server", name: "sse" } });
    expect(minted.status).toBe(201);
    const serverKey = minted.body.key as string;
    await call(servers[0]!.url, "/api/admin/killswitches", { body: { name: "sse-flag" } });
    const controller = new AbortController();
    const res = await fetch(`${servers[1]!.url}/api/sdk/v1/stream?env=prod`, { headers: { "x-sdk-key": serverKey }, signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    const nextSnapshot = async (): Promise<{ revision: number; killswitches: Record<string, { value: boolean }> }> => {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end !== -1) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event.split("\n").find((l) => l.startsWith("data: "));
          if (data) return JSON.parse(data.slice(6));
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("stream ended");
        buffer += decoder.decode(value, { stream: true });
      }
    };
    const first = await nextSnapshot();
    const started = performance.now();
    const toggled = await call(servers[0]!.url, "/api/admin/killswitches/sse-flag/toggle", { body: { env: "prod" } });
    expect(toggled.status).toBe(200);
    let seen = first;
    while (seen.killswitches["sse-flag"]?.value === first.killswitches["sse-flag"]?.value) seen = await nextSnapshot();
    const elapsed = performance.now() - started;
    controller.abort();
    expect(seen.revision).toBeGreaterThan(first.revision);
    expect(elapsed).toBeLessThan(1000);
    // The third server's snapshot answers the new content too (from memory once rebuilt).
    const deadline = Date.now() + 1000;
    let value: boolean | undefined;
    while (Date.now() < deadline) {
      const snap = await fetch(`${servers[2]!.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": serverKey } });
      value = ((await snap.json()) as { killswitches: Record<string, { value: boolean }> }).killswitches["sse-flag"]?.value;
      if (value === seen.killswitches["sse-flag"]!.value) break;
      await Bun.sleep(50);
    }
    expect(value).toBe(seen.killswitches["sse-flag"]!.value);
  }, 30_000);

  test("a key revoked through one server is refused by the others within 1 s", async () => {
    const minted = await call(servers[0]!.url, "/api/admin/keys", { body: { type: "server", name: "to-revoke" } });
    const { key, id } = minted.body as { key: string; id: string };
    // Both other servers have it cached from a successful poll.
    for (const s of servers.slice(1)) {
      const ok = await fetch(`${s.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": key } });
      expect(ok.status).toBe(200);
    }
    const revoked = await call(servers[0]!.url, `/api/admin/keys/${id}`, { method: "DELETE" });
    expect([200, 204]).toContain(revoked.status);
    const started = performance.now();
    for (const s of servers.slice(1)) {
      let status = 200;
      while (status === 200 && performance.now() - started < 1000) {
        status = (await fetch(`${s.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": key } })).status;
        if (status === 200) await Bun.sleep(20);
      }
      expect(status).toBe(401);
    }
    expect(performance.now() - started).toBeLessThan(1000);
  }, 30_000);

  test("SIGKILL mid-load, restart: every acknowledged write is there", async () => {
    const victim = servers[2]!;
    await call(victim.url, "/api/admin/killswitches", { body: { name: "crash" } });
    const acknowledged: number[] = [];
    let stop = false;
    const load = (async () => {
      while (!stop) {
        try {
          const r = await call(victim.url, "/api/admin/killswitches/crash/toggle", { body: { env: "dev" } });
          if (r.status === 200) acknowledged.push(r.body.version as number);
        } catch {
          return; // the server is gone
        }
      }
    })();
    await Bun.sleep(400);
    victim.proc.kill("SIGKILL");
    await victim.proc.exited;
    stop = true;
    await load;
    expect(acknowledged.length).toBeGreaterThan(5);
    const restarted = (await startServers(1, storeUrl))[0]!;
    servers[2] = restarted;
    const history = await call(restarted.url, "/api/admin/killswitches/crash/history?env=dev&limit=1000");
    const stored = new Set((history.body as { version: number }[]).map((h) => h.version));
    expect(acknowledged.filter((v) => !stored.has(v))).toEqual([]);
    // And nothing half-done: the versions are gapless from 1.
    expect([...stored].sort((a, b) => a - b)).toEqual(Array.from({ length: stored.size }, (_, i) => i + 1));
  }, 60_000);
});
