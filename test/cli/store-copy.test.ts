/**
 * `svc store copy` (issue 10): SQLite → PostgreSQL → SQLite keeps every row,
 * a served copy answers with the original's keys and content, and a
 * non-empty target is refused. Needs PostgreSQL: runs in the PostgreSQL half of `npm test`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { TEST_ENGINE, dropStore, freshStoreUrl, tempDir } from "../helpers";
import { SVC_SOURCE, run, startServe } from "./process";

describe.skipIf(TEST_ENGINE !== "postgres")("svc store copy", () => {
  const made: string[] = [];
  afterAll(async () => {
    for (const url of made) await dropStore(url);
  });

  test("SQLite to PostgreSQL and back keeps every row; the copy serves the same keys and content", async () => {
    const dir = tempDir();
    const init = await run([...SVC_SOURCE, "init", "--data", dir, "--json"]);
    expect(init.code).toBe(0);
    const keys = JSON.parse(init.stdout) as { adminKey: string; serverKey: string; projectId: string };
    // Some content in the original.
    const original = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dir, "--no-request-log"]);
    const admin = { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" };
    expect((await fetch(`${original.url}/api/admin/killswitches`, { method: "POST", headers: admin, body: JSON.stringify({ name: "moved", value: true }) })).status).toBe(201);
    const before = await (await fetch(`${original.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": keys.serverKey } })).json();
    expect(await original.stop()).toBe(0);

    const pg = (await freshStoreUrl())!;
    made.push(pg);
    const copied = await run([...SVC_SOURCE, "store", "copy", "--from", `sqlite:${join(dir, "service.db")}`, "--to", pg, "--json"]);
    expect(copied.code, copied.stderr).toBe(0);
    const report = JSON.parse(copied.stdout) as { tables: Record<string, number> };
    expect(report.tables.killswitches).toBe(1);
    expect(report.tables.sdk_keys).toBe(3);
    expect(copied.stdout).not.toContain(new URL(pg).password || "\u0000");

    const onPg = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", tempDir(), "--store", pg, "--no-request-log"]);
    const after = await (await fetch(`${onPg.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": keys.serverKey } })).json();
    expect(after.killswitches).toEqual(before.killswitches);
    expect(after.revision).toBe(before.revision);
    // A new epoch: the copy never answers 304 to the original's tags.
    expect(after.epoch).not.toBe(before.epoch);
    // Writes keep working on the copy (identity sequences moved past the copied rows).
    expect((await fetch(`${onPg.url}/api/admin/killswitches/moved/toggle`, { method: "POST", headers: admin, body: "{}" })).status).toBe(200);
    expect(await onPg.stop()).toBe(0);

    const back = join(tempDir(), "service.db");
    const returned = await run([...SVC_SOURCE, "store", "copy", "--from", pg, "--to", `sqlite:${back}`, "--json"]);
    expect(returned.code, returned.stderr).toBe(0);
    const counts = (JSON.parse(returned.stdout) as { tables: Record<string, number> }).tables;
    expect(counts.killswitches).toBe(1);
    expect(counts.killswitch_versions).toBe(report.tables.killswitch_versions! + 1);
  }, 60_000);

  test("a target that holds data is refused and left as it was", async () => {
    const dir = tempDir();
    expect((await run([...SVC_SOURCE, "init", "--data", dir, "--json"])).code).toBe(0);
    const pg = (await freshStoreUrl())!;
    made.push(pg);
    expect((await run([...SVC_SOURCE, "init", "--store", pg, "--json"])).code).toBe(0);
    const refused = await run([...SVC_SOURCE, "store", "copy", "--from", `sqlite:${join(dir, "service.db")}`, "--to", pg]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("not empty");
    const again = await run([...SVC_SOURCE, "store", "copy", "--to", "mysql://x"]);
    expect(again.code).toBe(2);
  }, 60_000);
});
