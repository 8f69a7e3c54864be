/**
 * A server makes its modules' services on demand (issue 32, start-up; docs/architecture.md "Services are made on
 * demand"): before its first answer only what that answer needs, the rest once it has gone out.
 */
import { afterAll, expect, test } from "bun:test";
import { closeServices, createServices, madeServices, makeEveryService } from "../../src/app";
import { MODULES } from "../../src/modules";
import { TEST_ENGINE, type TestServer, dropStore, freshStoreUrl, startTestServer, tempDir } from "../helpers";

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

test("before its first answer a server has made only the services it needed; after it, every one, timers included", async () => {
  const s = await startTestServer();
  servers.push(s);
  const before = madeServices(s.server.ctx.services);
  // What the start itself asked for (the test server's project and keys among them), and no more.
  expect(before).toEqual(expect.arrayContaining(["keys", "snapshots", "operations", "identity"]));
  for (const name of ["killswitches", "configs", "gates", "experiments", "schedules", "usage", "alerts", "connectors"]) expect(before).not.toContain(name);
  const health = await fetch(`${s.url}/healthz`);
  expect(health.status).toBe(200);
  await s.server.firstAnswer;
  expect(madeServices(s.server.ctx.services)).toEqual(MODULES.map((m) => m.name));
});

test("a request before the first answer makes what it needs and is answered as usual: a killswitch written, published in the snapshot", async () => {
  const s = await startTestServer();
  servers.push(s);
  expect(madeServices(s.server.ctx.services)).not.toContain("killswitches");
  const created = await s.api("/api/admin/killswitches", { body: { name: "early", value: true } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const snapshot = await fetch(`${s.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": s.serverKey } });
  expect(snapshot.status).toBe(200);
  expect(((await snapshot.json()) as { killswitches: Record<string, unknown> }).killswitches.early).toBeDefined();
});

test("change kinds and every service are there on demand; made eagerly (the CLI's way) the services are the same", async () => {
  const s = await startTestServer();
  servers.push(s);
  // The registry makes the modules' kinds when first read.
  expect(s.server.ctx.changes!.names()).toEqual(expect.arrayContaining(["killswitch.set", "config.publish"]));
  makeEveryService(s.server.ctx.services);
  expect(madeServices(s.server.ctx.services)).toEqual(MODULES.map((m) => m.name));
  const eager = createServices(s.server.store);
  expect(madeServices(eager)).toEqual(MODULES.map((m) => m.name));
  await closeServices(eager);
});

test("a bad secret key for connectors still stops the start, though their service is made after the first answer", async () => {
  await expect(startTestServer({ connectors: { secretKey: "not-a-key" } })).rejects.toThrow(/32 bytes/);
});

test("a server's start and its first answer load no Elysia and no TypeBox; the app is built after that answer", async () => {
  const dataDir = tempDir("svc-start-modules-");
  const storeUrl = TEST_ENGINE === "postgres" ? await freshStoreUrl() : undefined;
  // A process of its own: in this one, other tests' apps have loaded it long since.
  const child = Bun.spawn([process.execPath, "test/fixtures/start-modules.ts"], {
    env: { ...process.env, DATA_DIR: dataDir, SERVICE_STORE_URL: storeUrl ?? "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (storeUrl) await dropStore(storeUrl);
  expect(code, err).toBe(0);
  const seen = JSON.parse(out.trim().split("\n").at(-1)!) as { atStart: number; atAnswer: number; afterwards: number; commonJsCopies: number; health: number; snapshot: number };
  expect(seen).toMatchObject({ atStart: 0, atAnswer: 0, health: 200, snapshot: 401 });
  // One Elysia and one TypeBox, the ES modules: no require() loaded their CommonJS builds beside them.
  expect(seen.commonJsCopies).toBe(0);
  // Built then: the app's routes answer (the snapshot without a key is refused by the app's auth), Elysia loaded.
  expect(seen.afterwards).toBeGreaterThan(0);
});
