import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { SQL } from "bun";
import { SVC_SOURCE, type ServeProcess, type StoreArgs, freshStoreArgs, run, startServe } from "./cli/process";
import { tempDir } from "./helpers";

/**
 * The ingest promise: a 202 means the events are durable. A real `svc serve`
 * process takes batches from several clients at once and is SIGKILLed in
 * the middle; after a restart every acknowledged batch is there whole, and
 * no batch is there in part (one batch is one transaction).
 */
let store: StoreArgs | undefined;
let server: ServeProcess | undefined;
afterAll(async () => {
  await server?.stop().catch(() => {});
  await store?.drop();
});

/** Stored events per batch id, read from the event store itself (the server is down). */
async function storedBatches(dataDir: string, url: string | undefined): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  if (url) {
    const sql = new SQL({ url, max: 1 });
    const rows = (await sql.unsafe("SELECT (props->>'batch')::int AS b, COUNT(*)::int AS n FROM events WHERE name = 'durable.tick' GROUP BY 1")) as { b: number; n: number }[];
    await sql.close();
    for (const r of rows) counts.set(Number(r.b), Number(r.n));
    return counts;
  }
  const db = new Database(join(dataDir, "events.db"), { readonly: true });
  for (const r of db.query("SELECT json_extract(props, '$.batch') AS b, COUNT(*) AS n FROM events WHERE name = 'durable.tick' GROUP BY b").all() as { b: number; n: number }[]) {
    counts.set(r.b, r.n);
  }
  db.close();
  return counts;
}

test("SIGKILL mid-ingest: every acknowledged batch is stored whole, no batch in part", async () => {
  const dir = tempDir();
  store = await freshStoreArgs();
  const init = await run([...SVC_SOURCE, "init", "--data", dir, ...store.args, "--json"]);
  expect(init.code).toBe(0);
  const { serverKey } = JSON.parse(init.stdout) as { serverKey: string };
  const serve = () => startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dir, "--no-request-log", ...store!.args]);
  server = await serve();
  const url = server.url;

  const acknowledged: number[] = [];
  /** Answers other than 202 while the server was up (there must be none). */
  const refused: string[] = [];
  let next = 0;
  const client = async () => {
    for (;;) {
      const batch = next++;
      const events = Array.from({ length: 1000 }, (_, i) => ({ name: "durable.tick", unitId: `u${i}`, value: 1, properties: { batch } }));
      try {
        const res = await fetch(`${url}/api/sdk/v1/events`, {
          method: "POST",
          headers: { "x-sdk-key": serverKey, "content-type": "application/json" },
          body: JSON.stringify({ events }),
        });
        if (res.status === 202) acknowledged.push(batch);
        else refused.push(`${res.status}: ${await res.text()}`);
      } catch {
        return; // the connection died with the server
      }
    }
  };
  const clients = Array.from({ length: 4 }, client);
  // Let the load run until a good number of batches is acknowledged, then kill without warning.
  while (acknowledged.length < 40) await Bun.sleep(20);
  server.proc.kill("SIGKILL");
  await server.proc.exited;
  await Promise.all(clients);
  server = undefined;
  expect(refused).toEqual([]);

  const stored = await storedBatches(dir, store.url);
  const missing = acknowledged.filter((b) => stored.get(b) !== 1000);
  expect(missing).toEqual([]);
  const partial = [...stored].filter(([, n]) => n !== 1000);
  expect(partial).toEqual([]);
  expect(stored.size).toBeGreaterThanOrEqual(acknowledged.length);

  // It starts again on the same files and takes events.
  server = await serve();
  const after = await fetch(`${server.url}/api/sdk/v1/events`, {
    method: "POST",
    headers: { "x-sdk-key": serverKey, "content-type": "application/json" },
    body: JSON.stringify({ events: [{ name: "durable.tick", properties: { batch: -1 } }] }),
  });
  expect(after.status).toBe(202);
}, 90_000);
