import { afterAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { TEST_PG_URL, dropStore, freshStoreUrl, startTestServer, tempDir, type TestServer } from "../helpers";

/**
 * SERVICE_ANALYTICS_URL: events go to another PostgreSQL through a local
 * spool. Needs a PostgreSQL cluster, so it runs on the PostgreSQL pass of
 * `npm test` (whose main store may be either engine: the upstream is its own database).
 */
const servers: TestServer[] = [];
const databases: string[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => {});
  for (const d of databases) await dropStore(d);
});

const HOUR = 3600;

test.skipIf(!TEST_PG_URL)("an unreachable upstream: ingest keeps accepting into the spool, series answer 503; once it is back the spool drains", async () => {
  const dataDir = tempDir();
  // Our own main store, kept across the restart (a test server drops the one it made itself).
  const store = (await freshStoreUrl())!;
  databases.push(store);
  const down = await startTestServer({ dataDir, store, analyticsUrl: "postgres://postgres@127.0.0.1:1/nowhere" });
  servers.push(down);
  const from = Math.floor(Date.now() / 1000 / HOUR) * HOUR;
  const events = Array.from({ length: 300 }, (_, i) => ({ name: "spooled.tick", unitId: `u${i}` }));
  const sent = await down.api("/api/sdk/v1/events", { key: down.serverKey, body: { events } });
  expect(sent.status).toBe(202);
  const query = { projectId: down.projectId, from, to: from + HOUR, bucket: HOUR, measure: { kind: "count" as const, event: "spooled.tick", filters: [] } };
  await expect(down.server.ctx.services.analytics.series(query)).rejects.toMatchObject({ status: 503 });
  await down.stop();

  // The same data directory (and so the same spool), now with a reachable upstream.
  const upstream = (await freshStoreUrl())!;
  databases.push(upstream);
  const up = await startTestServer({ dataDir, store, analyticsUrl: upstream });
  servers.push(up);
  const deadline = Date.now() + 10_000;
  let seen = 0;
  while (Date.now() < deadline && seen < 300) {
    seen = (await up.server.ctx.services.analytics.series({ ...query, projectId: down.projectId })).rows[0]!.v;
    if (seen < 300) await Bun.sleep(100);
  }
  expect(seen).toBe(300);

  // An upstream that answers with an error (its table is gone) is 502.
  const admin = new SQL({ url: upstream, max: 1 });
  await admin.unsafe("DROP TABLE event_hourly");
  await admin.close();
  await expect(up.server.ctx.services.analytics.series({ ...query, projectId: down.projectId })).rejects.toMatchObject({ status: 502 });
}, 60_000);
