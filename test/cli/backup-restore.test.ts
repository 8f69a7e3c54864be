/**
 * `svc backup` and `svc restore` (issue 16): the round trip (backup, restore
 * into an empty data dir, start) brings back the same resources and keys,
 * and an SDK holding an old ETag gets the full snapshot, not a stale 304;
 * restore refuses a non-empty data dir, a corrupt file, a non-svc SQLite
 * file, a missing file and a newer schema, writing nothing; `svc serve`
 * refuses a database migrated by a newer svc. The round trip is SQLite's
 * (PostgreSQL backs up with pg_dump); the PostgreSQL run checks that both
 * commands say so.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verify } from "../../src/modules/connectors/signing";
import { TEST_ENGINE, TEST_PG_URL, tempDir } from "../helpers";
import { VendorStandIn } from "../support/vendor-standin";
import { SVC_SOURCE, run, startServe, type ServeProcess } from "./process";

const serve = (dir: string) => startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dir, "--no-request-log"]);

async function initialised(): Promise<{ dir: string; keys: { adminKey: string; serverKey: string; projectId: string } }> {
  const dir = tempDir();
  const init = await run([...SVC_SOURCE, "init", "--data", dir, "--project", "Shop", "--json"]);
  expect(init.code, init.stderr).toBe(0);
  return { dir, keys: JSON.parse(init.stdout) };
}

/** A valid backup of a freshly initialised data dir. */
async function backupFile(): Promise<string> {
  const { dir } = await initialised();
  const out = join(tempDir(), "svc.db");
  const made = await run([...SVC_SOURCE, "backup", "--data", dir, "--out", out, "--json"]);
  expect(made.code, made.stderr).toBe(0);
  return out;
}

/** Runs `svc restore` expecting a refusal: exit status, code and message on stderr as JSON, and nothing written. */
async function refused(args: string[], exitCode: number, code: string, message: RegExp): Promise<void> {
  const target = join(tempDir(), "restored");
  const r = await run([...SVC_SOURCE, "restore", ...args, "--data", target, "--json"]);
  expect(r.code, r.stderr).toBe(exitCode);
  expect(r.stdout).toBe("");
  const body = JSON.parse(r.stderr);
  expect(body.code).toBe(code);
  expect(body.error).toMatch(message);
  expect(existsSync(target)).toBe(false);
}

describe.skipIf(TEST_ENGINE !== "sqlite")("backup, restore into an empty data dir, start", () => {
  const servers: ServeProcess[] = [];
  afterAll(async () => {
    for (const s of servers) if (s.proc.exitCode === null) await s.stop();
  });

  test("the same resources and keys come back; an old ETag gets the full snapshot, then the new one a 304", async () => {
    const { dir, keys } = await initialised();
    const original = await serve(dir);
    servers.push(original);
    const admin = { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" };
    const post = async (path: string, body: unknown, method = "POST") => {
      const res = await fetch(`${original.url}${path}`, { method, headers: admin, body: JSON.stringify(body) });
      expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300);
      return res.json() as Promise<any>;
    };
    await post("/api/admin/killswitches", { name: "checkout", value: true });
    await post("/api/admin/configs", { name: "limits", schema: { type: "object" }, value: { perMinute: 60 } });
    await post("/api/admin/configs/limits", { prod: { perMinute: 90 } }, "PATCH");
    await post("/api/admin/gates", { name: "new-checkout", rules: [{ conditions: [{ attr: "country", op: "in", value: ["de"] }], passPercentage: 50 }] });
    const minted = await post("/api/admin/keys", { type: "server", name: "backend" });
    const sdk = { "x-sdk-key": minted.key as string };
    const events = await fetch(`${original.url}/api/sdk/v1/events`, {
      method: "POST",
      headers: { ...sdk, "content-type": "application/json" },
      body: JSON.stringify({ events: [{ name: "purchase", unitId: "u1" }, { name: "purchase", unitId: "u2" }] }),
    });
    expect(events.status).toBe(202);

    const polled = await fetch(`${original.url}/api/sdk/v1/snapshot?env=prod`, { headers: sdk });
    expect(polled.status).toBe(200);
    const etag = polled.headers.get("etag")!;
    const before = (await polled.json()) as any;
    expect(before.configs.limits.value).toEqual({ perMinute: 90 });
    expect((await fetch(`${original.url}/api/sdk/v1/snapshot?env=prod`, { headers: { ...sdk, "if-none-match": etag } })).status).toBe(304);
    const adminBefore = {
      killswitch: await (await fetch(`${original.url}/api/admin/killswitches/checkout`, { headers: admin })).json(),
      config: await (await fetch(`${original.url}/api/admin/configs/limits`, { headers: admin })).json(),
      gate: await (await fetch(`${original.url}/api/admin/gates/new-checkout`, { headers: admin })).json(),
      keys: ((await (await fetch(`${original.url}/api/admin/keys`, { headers: admin })).json()) as { id: string }[]).map((k) => k.id).sort(),
    };
    expect(await original.stop()).toBe(0);

    const backups = tempDir();
    const out = join(backups, "svc.db");
    const eventsOut = join(backups, "svc-events.db");
    const made = await run([...SVC_SOURCE, "backup", "--data", dir, "--out", out, "--events-out", eventsOut, "--json"]);
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toEqual({ out, eventsOut, secretKey: `${out}.secret.key` });
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(statSync(eventsOut).mode & 0o777).toBe(0o600);

    const fresh = join(tempDir(), "data");
    const restored = await run([...SVC_SOURCE, "restore", "--from", out, "--events-from", eventsOut, "--data", fresh, "--json"]);
    expect(restored.code, restored.stderr).toBe(0);
    const report = JSON.parse(restored.stdout);
    expect(report).toMatchObject({ restored: join(fresh, "service.db"), from: out, projects: [{ id: keys.projectId, name: "Shop" }], events: { restored: join(fresh, "events.db"), rows: 2 }, warnings: [] });
    expect(report.tables).toMatchObject({ killswitches: 1, configs: 1, gates: 1, sdk_keys: 4 });
    expect(report.rows).toBeGreaterThan(10);
    // Only the two databases and the secret key, 0600, no temporary file left behind.
    expect(readdirSync(fresh).sort()).toEqual(["events.db", "secret.key", "service.db"]);
    expect(statSync(join(fresh, "service.db")).mode & 0o777).toBe(0o600);
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    // The copy carries no epoch: the first start mints a new one, whatever inode the file got.
    const copy = new Database(join(fresh, "service.db"), { readonly: true });
    expect(copy.query("SELECT key FROM store_meta WHERE key IN ('epoch', 'file_identity')").all()).toEqual([]);
    copy.close();

    const back = await serve(fresh);
    servers.push(back);
    // The SDK still holds the old tag: a full 200, never a stale 304.
    const again = await fetch(`${back.url}/api/sdk/v1/snapshot?env=prod`, { headers: { ...sdk, "if-none-match": etag } });
    expect(again.status).toBe(200);
    const after = (await again.json()) as any;
    const newTag = again.headers.get("etag")!;
    expect(newTag).not.toBe(etag);
    expect(after.epoch).not.toBe(before.epoch);
    expect({ ...after, epoch: "" }).toEqual({ ...before, epoch: "" });
    expect((await fetch(`${back.url}/api/sdk/v1/snapshot?env=prod`, { headers: { ...sdk, "if-none-match": newTag } })).status).toBe(304);
    // The admin key and every resource came back as they were.
    const adminAfter = {
      killswitch: await (await fetch(`${back.url}/api/admin/killswitches/checkout`, { headers: admin })).json(),
      config: await (await fetch(`${back.url}/api/admin/configs/limits`, { headers: admin })).json(),
      gate: await (await fetch(`${back.url}/api/admin/gates/new-checkout`, { headers: admin })).json(),
      keys: ((await (await fetch(`${back.url}/api/admin/keys`, { headers: admin })).json()) as { id: string }[]).map((k) => k.id).sort(),
    };
    expect(adminAfter).toEqual(adminBefore);
    // Writes work on the restored database.
    expect((await fetch(`${back.url}/api/admin/killswitches/checkout/toggle`, { method: "POST", headers: admin, body: "{}" })).status).toBe(200);
    expect(await back.stop()).toBe(0);
  }, 90_000);

  test("the secret key travels with the backup: a restored webhook connector still signs and delivers (issue 27, item 18)", async () => {
    const vendor = new VendorStandIn();
    try {
      const { dir, keys } = await initialised();
      const env = { SERVICE_CONNECTOR_PRIVATE_TARGETS: "allow" };
      const serveWith = (data: string) => startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", data, "--no-request-log"], { env });
      const admin = { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" };
      const original = await serveWith(dir);
      servers.push(original);
      const created = await fetch(`${original.url}/api/admin/connectors`, {
        method: "POST",
        headers: admin,
        body: JSON.stringify({ provider: "webhook", name: "sink", events: ["killswitch.toggled"], config: { url: `${vendor.url}/hook` } }),
      });
      expect(created.status, await created.clone().text()).toBe(201);
      const { id, secret } = (await created.json()) as { id: string; secret: string };
      const fire = async (url: string) => {
        const res = await fetch(`${url}/api/admin/connectors/${id}/test`, { method: "POST", headers: admin, body: "{}" });
        return { status: res.status, body: (await res.json()) as any };
      };
      const first = await fire(original.url);
      expect(first.status).toBe(200);
      expect(first.body.delivery.status).toBe("delivered");
      expect(await original.stop()).toBe(0);
      const keyBefore = readFileSync(join(dir, "secret.key"), "utf8");

      const out = join(tempDir(), "svc.db");
      const made = await run([...SVC_SOURCE, "backup", "--data", dir, "--out", out, "--json"]);
      expect(made.code, made.stderr).toBe(0);
      expect(JSON.parse(made.stdout)).toEqual({ out, secretKey: `${out}.secret.key` });
      expect(readFileSync(`${out}.secret.key`, "utf8")).toBe(keyBefore);
      expect(statSync(`${out}.secret.key`).mode & 0o777).toBe(0o600);

      const fresh = join(tempDir(), "data");
      const restored = await run([...SVC_SOURCE, "restore", "--from", out, "--data", fresh, "--json"]);
      expect(restored.code, restored.stderr).toBe(0);
      expect(JSON.parse(restored.stdout)).toMatchObject({ secretKey: { restored: join(fresh, "secret.key"), from: `${out}.secret.key` }, warnings: [] });
      expect(readFileSync(join(fresh, "secret.key"), "utf8")).toBe(keyBefore);
      expect(statSync(join(fresh, "secret.key")).mode & 0o777).toBe(0o600);

      vendor.clear();
      const back = await serveWith(fresh);
      servers.push(back);
      const again = await fire(back.url);
      expect(again.status).toBe(200);
      expect(again.body.delivery.status).toBe("delivered");
      const [received] = vendor.to("/hook");
      expect(received).toBeDefined();
      expect(verify(secret, received!.body, received!.headers["x-svc-signature"] ?? null)).toBe(true);
      expect(await back.stop()).toBe(0);

      // Without the key beside it, a backup holding sealed credentials is refused (nothing written) ...
      rmSync(`${out}.secret.key`);
      await refused(["--from", out], 1, "SECRET_KEY_MISSING", /1 connector\(s\) hold credentials sealed with key [0-9a-f]{8}/);
      // ... and so is another key, named or in the environment.
      const wrong = join(tempDir(), "other.key");
      writeFileSync(wrong, `${"ab".repeat(32)}\n`, { mode: 0o600 });
      await refused(["--from", out, "--secret-key", wrong], 1, "SECRET_KEY_MISMATCH", /sealed with key [0-9a-f]{8}; .*other\.key is key [0-9a-f]{8}/);
      // --without-secret-key restores anyway, saying what must be entered again.
      const bare = join(tempDir(), "data");
      const anyway = await run([...SVC_SOURCE, "restore", "--from", out, "--without-secret-key", "--data", bare, "--json"]);
      expect(anyway.code, anyway.stderr).toBe(0);
      expect(JSON.parse(anyway.stdout).warnings).toEqual([expect.stringContaining("1 connector(s) hold credentials sealed with a secret key that was not restored")]);
      expect(existsSync(join(bare, "secret.key"))).toBe(false);
      // The right key named by --secret-key restores.
      const named = join(tempDir(), "kept.key");
      writeFileSync(named, keyBefore, { mode: 0o600 });
      const third = join(tempDir(), "data");
      const ok = await run([...SVC_SOURCE, "restore", "--from", out, "--secret-key", named, "--data", third, "--json"]);
      expect(ok.code, ok.stderr).toBe(0);
      expect(readFileSync(join(third, "secret.key"), "utf8")).toBe(keyBefore);
      expect(statSync(join(third, "secret.key")).mode & 0o777).toBe(0o600);
    } finally {
      vendor.stop();
    }
  }, 120_000);

  test("a scheduled backup restores too (human output names the projects and how to start)", async () => {
    const { dir } = await initialised();
    const backups = tempDir();
    const s = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dir, "--no-request-log", "--backup-dir", backups, "--backup-every", "1h"]);
    servers.push(s);
    await s.waitForLine((l) => l.includes('"backup written"'));
    expect(await s.stop()).toBe(0);
    const [file] = readdirSync(backups).filter((name) => name !== "secret.key");
    expect(file).toMatch(/^service-\d{8}T\d{6}Z\.db$/);
    // The server's key sits beside its backups, 0600, and restore puts it back.
    expect(readFileSync(join(backups, "secret.key"), "utf8")).toBe(readFileSync(join(dir, "secret.key"), "utf8"));
    expect(statSync(join(backups, "secret.key")).mode & 0o777).toBe(0o600);
    const fresh = join(tempDir(), "data");
    const r = await run([...SVC_SOURCE, "restore", "--from", join(backups, file!), "--data", fresh]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("1 project(s) (Shop)");
    expect(readFileSync(join(fresh, "secret.key"), "utf8")).toBe(readFileSync(join(dir, "secret.key"), "utf8"));
    expect(statSync(join(fresh, "secret.key")).mode & 0o777).toBe(0o600);
    expect(r.stdout).toContain(`svc serve --data ${fresh}`);
  }, 60_000);

  test("refuses a data dir that holds service.db, and leaves it as it was", async () => {
    const out = await backupFile();
    const { dir } = await initialised();
    const db = join(dir, "service.db");
    const bytes = readFileSync(db);
    const listing = readdirSync(dir).sort();
    const r = await run([...SVC_SOURCE, "restore", "--from", out, "--data", dir, "--json"]);
    expect(r.code).toBe(1);
    const body = JSON.parse(r.stderr);
    expect(body.code).toBe("ALREADY_EXISTS");
    expect(body.error).toContain(`${dir} already holds a database`);
    expect(body.hint).toContain("--data NEW_DIR");
    expect(readFileSync(db).equals(bytes)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(listing);
    // Without --json: one line and the hint, exit 1.
    const plain = await run([...SVC_SOURCE, "restore", "--from", out, "--data", dir]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain("already holds a database");
  }, 60_000);

  test("refuses a corrupt file, a truncated one, a non-svc SQLite file, a non-SQLite file and a missing one", async () => {
    const good = await backupFile();
    const bytes = readFileSync(good);
    const page = 4096;
    expect(bytes.length).toBeGreaterThan(page * 60);

    const corrupt = join(tempDir(), "corrupt.db");
    const damaged = Buffer.from(bytes);
    for (let i = page * 40; i < page * 40 + 3000; i++) damaged[i] = 0x55;
    writeFileSync(corrupt, damaged);
    await refused(["--from", corrupt], 1, "CORRUPT", /failed SQLite's integrity check/);

    const truncated = join(tempDir(), "truncated.db");
    writeFileSync(truncated, bytes);
    truncateSync(truncated, page * 30);
    await refused(["--from", truncated], 1, "CORRUPT", /integrity check/);

    const other = join(tempDir(), "other.db");
    const db = new Database(other, { create: true });
    db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('hi')");
    db.close();
    await refused(["--from", other], 1, "NOT_A_BACKUP", /is a SQLite database but not an svc database/);

    const text = join(tempDir(), "notes.txt");
    writeFileSync(text, "not a database at all\n".repeat(200));
    await refused(["--from", text], 1, "NOT_A_BACKUP", /is not a SQLite database/);

    await refused(["--from", join(tempDir(), "nowhere.db")], 1, "NOT_FOUND", /no backup at/);
    await refused([], 2, "USAGE", /--from FILE is required/);
    // The good file restores, so the refusals above were about the files.
    const target = join(tempDir(), "ok");
    expect((await run([...SVC_SOURCE, "restore", "--from", good, "--data", target, "--json"])).code).toBe(0);
  }, 60_000);

  test("refuses a backup migrated by a newer svc, and `svc serve` refuses such a database at start", async () => {
    const { dir } = await initialised();
    const db = new Database(join(dir, "service.db"));
    db.run("INSERT INTO schema_migrations (module, step, name, applied_at) VALUES ('billing', 0, 'from a newer svc', '2030-01-01T00:00:00.000Z')");
    db.close();

    const out = join(tempDir(), "newer.db");
    expect((await run([...SVC_SOURCE, "backup", "--data", dir, "--out", out])).code).toBe(0);
    await refused(["--from", out], 1, "SCHEMA_TOO_NEW", /migrated by a newer svc \(billing: 1 steps, this binary knows 0\)/);

    const started = await run([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dir], { timeoutMs: 20_000 });
    expect(started.code).toBe(1);
    expect(started.stdout).not.toContain("listening on");
    expect(started.stderr).toContain("migrated by a newer svc (billing");
    expect(started.stderr).toContain("migrations only go forward");
    expect(started.stderr).toContain("newer svc binary");
    // Left as it was: the foreign row is still there, nothing applied over it.
    const check = new Database(join(dir, "service.db"), { readonly: true });
    expect(check.query("SELECT name FROM schema_migrations WHERE module = 'billing'").all()).toEqual([{ name: "from a newer svc" }]);
    check.close();
  }, 60_000);

  test("refuses a live database (a -wal beside it) and an existing events.db", async () => {
    const { dir } = await initialised();
    const live = join(tempDir(), "live.db");
    writeFileSync(live, readFileSync(join(dir, "service.db")));
    writeFileSync(`${live}-wal`, "x".repeat(100));
    await refused(["--from", live], 1, "NOT_A_BACKUP", /write-ahead log beside it/);

    const out = await backupFile();
    const target = tempDir();
    writeFileSync(join(target, "events.db"), "");
    const r = await run([...SVC_SOURCE, "restore", "--from", out, "--events-from", out, "--data", target, "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr)).toMatchObject({ code: "ALREADY_EXISTS", error: expect.stringContaining("already holds analytics events") });
    expect(readdirSync(target)).toEqual(["events.db"]);
    // A service.db backup is not an events backup.
    await refused(["--from", out, "--events-from", out], 1, "NOT_A_BACKUP", /not svc's analytics events/);
  }, 60_000);
});

describe("on PostgreSQL the commands name pg_dump and pg_restore", () => {
  const pg = TEST_PG_URL || "postgres://svc@127.0.0.1:1/svc";

  test("svc restore --store postgres://… is a usage error naming pg_restore", async () => {
    const r = await run([...SVC_SOURCE, "restore", "--from", "svc.dump", "--store", pg, "--json"]);
    expect(r.code).toBe(2);
    const body = JSON.parse(r.stderr);
    expect(body.code).toBe("USAGE");
    expect(body.hint).toContain("pg_restore");
  });

  test("svc serve --backup-dir on PostgreSQL is refused at start, pointing at pg_dump", async () => {
    const dir = tempDir();
    const r = await run([...SVC_SOURCE, "serve", "--port", "0", "--data", dir, "--store", pg, "--backup-dir", join(dir, "b")], { timeoutMs: 20_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("pg_dump");
    expect(existsSync(join(dir, "b"))).toBe(false);
  });
});
