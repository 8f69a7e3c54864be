import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { type Param, PostgresStore, SqliteStore } from "../../src/lib/store";
import { TEST_ENGINE, tempDir } from "../helpers";
import { type InitOutput, type ServeProcess, type StoreArgs, SVC_SOURCE, adminGet, freshStoreArgs, run, startServe } from "./process";

const svc = (...args: string[]) => [...SVC_SOURCE, ...args];
const dirs: string[] = [];
const servers: ServeProcess[] = [];

function dataDir(): string {
  const dir = tempDir("svc-cli-");
  dirs.push(dir);
  return dir;
}

const stores = new Map<string, StoreArgs>();

/** The store of a data dir's `svc`: on PostgreSQL runs a fresh database per dir (`--store URL`), else the dir's service.db. */
async function storeOf(dir: string): Promise<StoreArgs> {
  let store = stores.get(dir);
  if (!store) stores.set(dir, (store = await freshStoreArgs()));
  return store;
}

async function serve(dir: string, extra: string[] = [], env?: Record<string, string>): Promise<ServeProcess> {
  const server = await startServe(svc("serve", "--port", "0", "--host", "127.0.0.1", "--data", dir, ...(await storeOf(dir)).args, ...extra), { env });
  servers.push(server);
  return server;
}

async function init(dir: string, ...extra: string[]): Promise<InitOutput> {
  const result = await run(svc("init", "--data", dir, ...(await storeOf(dir)).args, "--json", ...extra));
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout);
}

/** Rows of the data dir's store (its PostgreSQL database on PostgreSQL runs), read beside a running server. */
async function storeRows<T>(dir: string, sql: string, ...params: Param[]): Promise<T[]> {
  const url = (await storeOf(dir)).url;
  const store = url ? new PostgresStore(url, { max: 1 }) : new SqliteStore(join(dir, "service.db"));
  try {
    return await store.all<T>(sql, ...params);
  } finally {
    await store.close();
  }
}

/** Whether anything was created for the data dir: its SQLite file, or any table in its PostgreSQL database. */
async function storeCreated(dir: string): Promise<boolean> {
  const url = (await storeOf(dir)).url;
  if (!url) return existsSync(join(dir, "service.db"));
  const rows = await storeRows<{ n: number }>(dir, "SELECT CAST(COUNT(*) AS INTEGER) AS n FROM information_schema.tables WHERE table_schema = 'public'");
  return rows[0]!.n > 0;
}

function projectRows(dir: string): Promise<{ id: string; name: string }[]> {
  return storeRows(dir, "SELECT id, name FROM projects ORDER BY created_at");
}

/** Projects of a backup file (always SQLite). */
function backupProjectRows(file: string): { id: string; name: string }[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.query("SELECT id, name FROM projects ORDER BY created_at").all() as { id: string; name: string }[];
  } finally {
    db.close();
  }
}

afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null) await s.stop();
  for (const store of stores.values()) await store.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("svc help", () => {
  test("lists every command with a one-line description, and examples", async () => {
    const { code, stdout, stderr } = await run(svc("help"));
    expect(code).toBe(0);
    expect(stderr).toBe("");
    const lines = stdout.split("\n");
    const start = lines.indexOf("Commands:");
    const end = lines.indexOf("Examples:");
    expect(start).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    const commands = lines.slice(start + 1, end).filter((l) => l.trim() !== "");
    const names = commands.map((l) => {
      const m = /^ {2}([a-z][a-z0-9 -]*?) {2,}(\S.*)$/.exec(l);
      expect(m, `command line "${l}"`).not.toBeNull();
      return m![1]!;
    });
    for (const required of ["serve", "init", "backup", "healthcheck", "version", "help"]) expect(names).toContain(required);

    const examples = lines.slice(end + 1).filter((l) => l.trim() !== "");
    expect(examples.length).toBeGreaterThan(0);
    for (const e of examples) expect(e).toMatch(/\bsvc \S/);

    // Every listed command has its own help page with usage and examples.
    for (const name of names.filter((n) => n !== "help")) {
      const page = await run(svc("help", ...name.split(" ")));
      expect(page.code, `svc help ${name}`).toBe(0);
      expect(page.stdout).toContain(`Usage: svc ${name}`);
      expect(page.stdout).toContain("Examples:");
    }
  });

  test("no arguments and --help print the same overview", async () => {
    const help = await run(svc("help"));
    expect((await run(svc())).stdout).toBe(help.stdout);
    expect((await run(svc("--help"))).stdout).toBe(help.stdout);
  });

  test("svc help serve shows its flags, env and examples", async () => {
    const { code, stdout } = await run(svc("help", "serve"));
    expect(code).toBe(0);
    expect(stdout).toStartWith("svc serve: ");
    for (const flag of ["--port", "--host", "--data", "--no-request-log"]) expect(stdout).toContain(flag);
    expect(stdout).toContain("Examples:\n  svc serve");
    expect((await run(svc("serve", "--help"))).stdout).toBe(stdout);
  });

  test("help for an unknown topic exits 2", async () => {
    const { code, stdout, stderr } = await run(svc("help", "nope"));
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain('unknown command "nope"');
  });
});

describe("usage errors", () => {
  test("an unknown command exits 2 with a clear message", async () => {
    const { code, stdout, stderr } = await run(svc("frobnicate"));
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain('svc: unknown command "frobnicate"');
    expect(stderr).toContain("svc help");
  });

  test("an unknown flag exits 2 and names the flag", async () => {
    const { code, stderr } = await run(svc("serve", "--bogus"));
    expect(code).toBe(2);
    expect(stderr).toContain("--bogus");
    expect(stderr).toContain("svc help serve");
  });

  test("a bad port exits 2 without starting", async () => {
    const dir = dataDir();
    for (const [args, env] of [
      [["--port", "99999"], undefined],
      [["--port", "abc"], undefined],
      [[], { PORT: "x" }],
    ] as const) {
      const { code, stderr } = await run(svc("serve", "--data", dir, ...(await storeOf(dir)).args, ...args), { env });
      expect(code).toBe(2);
      expect(stderr).toContain("--port");
    }
    expect(await storeCreated(dir)).toBe(false);
  });

  test("a flag missing its value exits 2", async () => {
    const { code, stderr } = await run(svc("init", "--data"));
    expect(code).toBe(2);
    expect(stderr).toContain("--data");
  });
});

test("svc version prints the package version", async () => {
  const pkg = JSON.parse(readFileSync(join(import.meta.dir, "../../package.json"), "utf8"));
  const text = await run(svc("version"));
  expect(text.code).toBe(0);
  expect(text.stdout.trim()).toBe(`svc ${pkg.version} (bun ${Bun.version})`);
  const json = await run(svc("version", "--json"));
  expect(JSON.parse(json.stdout)).toEqual({ version: pkg.version, bun: Bun.version });
});

describe("svc init", () => {
  test("--json prints exactly the documented keys; two inits make two projects", async () => {
    const dir = dataDir();
    const first = await init(dir);
    expect(Object.keys(first).sort()).toEqual(["adminKey", "clientKey", "organisationId", "ownerEmail", "projectId", "serverKey"]);
    expect(first.adminKey).toMatch(/^sdk_admin_[A-Za-z0-9]+$/);
    expect(first.clientKey).toMatch(/^sdk_client_[A-Za-z0-9]+$/);
    expect(first.serverKey).toMatch(/^sdk_server_[A-Za-z0-9]+$/);
    expect(first.ownerEmail).toBe("owner@example.com");

    const second = await init(dir, "--project", "Shop", "--owner", "me@example.com");
    expect(second.projectId).not.toBe(first.projectId);
    expect(second.organisationId).not.toBe(first.organisationId);
    expect(second.ownerEmail).toBe("me@example.com");
    expect(new Set([first.adminKey, second.adminKey, first.serverKey, second.serverKey]).size).toBe(4);

    const rows = await projectRows(dir);
    expect(rows.map((r) => r.id)).toEqual([first.projectId, second.projectId]);
    expect(rows[1]!.name).toBe("Shop");
  });

  test("--plan and --public-tickets are stored on the project; the defaults are pro and off", async () => {
    const dir = dataDir();
    const plain = await init(dir);
    const chosen = await init(dir, "--plan", "free", "--public-tickets");
    const row = async (id: string) => (await storeRows(dir, "SELECT plan, public_ticket_creation AS \"publicTickets\" FROM projects WHERE id = ?", id))[0];
    expect(await row(plain.projectId)).toEqual({ plan: "pro", publicTickets: 0 });
    expect(await row(chosen.projectId)).toEqual({ plan: "free", publicTickets: 1 });
    expect(await storeRows(dir, "SELECT type FROM sdk_keys WHERE project_id = ? ORDER BY type", chosen.projectId)).toEqual([{ type: "admin" }, { type: "client" }, { type: "server" }]);
  });

  test("without --json it prints the keys for a human", async () => {
    const dir = dataDir();
    const { code, stdout } = await run(svc("init", "--data", dir, ...(await storeOf(dir)).args));
    expect(code).toBe(0);
    expect(stdout).toMatch(/admin +sdk_admin_[A-Za-z0-9]+/);
    expect(stdout).toMatch(/client +sdk_client_[A-Za-z0-9]+/);
    expect(stdout).toMatch(/server +sdk_server_[A-Za-z0-9]+/);
  });

  test("bad values exit 2 and create nothing", async () => {
    const dir = dataDir();
    for (const args of [["--owner", "not-an-email"], ["--plan", "gold"], ["--project", "  "]]) {
      const { code, stdout, stderr } = await run(svc("init", "--data", dir, ...(await storeOf(dir)).args, "--json", ...args));
      expect(code, args.join(" ")).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toContain(args[0]!);
    }
    expect(await storeCreated(dir)).toBe(false);
  });

  test("works beside a running server, which accepts the new admin key at once", async () => {
    const dir = dataDir();
    const first = await init(dir);
    const server = await serve(dir);
    expect((await adminGet(`${server.url}/api/admin/projects/current`, first.adminKey)).body.id).toBe(first.projectId);

    const second = await init(dir, "--project", "Second");
    const res = await adminGet(`${server.url}/api/admin/projects/current`, second.adminKey);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(second.projectId);
    expect(res.body.name).toBe("Second");
    // The first project's key still sees only its own project.
    expect((await adminGet(`${server.url}/api/admin/projects/${second.projectId}`, first.adminKey)).status).toBe(403);
    expect(await server.stop()).toBe(0);
  });
});

describe("svc serve", () => {
  test("prints `listening on` and one JSON log line per request, with the request id", async () => {
    const dir = dataDir();
    const keys = await init(dir);
    const server = await serve(dir);
    expect(server.listeningLine).toBe(`listening on http://127.0.0.1:${server.port}`);

    const echoed = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": "trace-123.abc" } });
    expect(echoed.status).toBe(200);
    expect(echoed.headers.get("x-request-id")).toBe("trace-123.abc");
    const generated = await fetch(`${server.url}/api/admin/projects/current`, { headers: { authorization: `Bearer ${keys.adminKey}` } });
    expect(generated.status).toBe(200);
    const generatedId = generated.headers.get("x-request-id")!;
    expect(generatedId).toMatch(/^[A-Za-z0-9]{8,}$/);
    // An id that is not a safe token is replaced, never echoed into logs.
    const unsafe = await fetch(`${server.url}/api/admin/projects/current`, { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(unsafe.status).toBe(401);
    const unsafeId = unsafe.headers.get("x-request-id")!;
    expect(unsafeId).not.toContain(" ");

    const isRequest = (id: string) => (l: string) => l.startsWith("{") && JSON.parse(l).requestId === id;
    const first = JSON.parse(await server.waitForLine(isRequest("trace-123.abc")));
    expect(first).toMatchObject({ level: "info", msg: "request", method: "GET", path: "/healthz", status: 200, requestId: "trace-123.abc" });
    expect(typeof first.durationMs).toBe("number");
    expect(typeof first.ts).toBe("string");
    const second = JSON.parse(await server.waitForLine(isRequest(generatedId)));
    expect(second).toMatchObject({ method: "GET", path: "/api/admin/projects/current", status: 200 });
    const third = JSON.parse(await server.waitForLine(isRequest(unsafeId)));
    expect(third.status).toBe(401);

    expect(await server.stop()).toBe(0);
    const requestLines = server.lines().filter((l) => l.includes('"msg":"request"'));
    expect(requestLines).toHaveLength(3);
    // Secrets never reach the log.
    expect(server.lines().join("\n")).not.toContain(keys.adminKey);
  });

  test("the request line carries the status actually sent, for errors and early answers too", async () => {
    const dir = dataDir();
    const keys = await init(dir);
    const server = await serve(dir);
    const admin = { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" };
    const cases: [string, string, RequestInit][] = [
      ["log-validation", "/api/admin/keys", { method: "POST", headers: admin, body: '{"type":"root"}' }],
      ["log-no-route", "/nothing-here", {}],
      ["log-too-large", "/api/admin/keys", { method: "POST", headers: admin, body: "x".repeat(1024 * 1024 + 1) }],
      // (A CORS preflight on an SDK path is SDK traffic now: counted in /metrics, not logged unless it fails.)
      // The public intake's preflight (a route of the ops module) is an early answer of no project's domain: 403.
      ["log-intake-preflight", "/ops/bug", { method: "OPTIONS", headers: { origin: "https://nobody.example.com", "access-control-request-method": "POST" } }],
    ];
    for (const [id, path, init] of cases) {
      const res = await fetch(server.url + path, { ...init, headers: { ...(init.headers as Record<string, string>), "x-request-id": id } });
      await res.arrayBuffer();
      const line = JSON.parse(await server.waitForLine((l) => l.startsWith("{") && JSON.parse(l).requestId === id));
      expect(line, id).toMatchObject({ msg: "request", method: init.method ?? "GET", path, status: res.status });
    }
    expect(await server.stop()).toBe(0);
    for (const [id] of cases) expect(server.lines().filter((l) => l.includes(`"requestId":"${id}"`)), id).toHaveLength(1);
  });

  test("--no-request-log keeps request lines out of stdout", async () => {
    const server = await serve(dataDir(), ["--no-request-log"]);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    expect(server.lines().some((l) => l.includes('"msg":"request"'))).toBe(false);
  });

  test("PORT, SERVICE_DATA_DIR and SERVICE_STORE_URL are read from the environment", async () => {
    const dir = dataDir();
    const keys = await init(dir);
    // On PostgreSQL runs the store comes from SERVICE_STORE_URL (the data dir then only holds the outbox).
    const url = (await storeOf(dir)).url;
    const server = await startServe(svc("serve", "--host", "127.0.0.1"), { env: { PORT: "0", SERVICE_DATA_DIR: dir, ...(url ? { SERVICE_STORE_URL: url } : {}) } });
    servers.push(server);
    expect((await adminGet(`${server.url}/api/admin/projects/current`, keys.adminKey)).body.id).toBe(keys.projectId);
    expect(await server.stop()).toBe(0);
  });

  test("SIGTERM lets an in-flight request finish, stores its write, then exits 0", async () => {
    const dir = dataDir();
    const keys = await init(dir);
    const server = await serve(dir);

    // A request whose body arrives slowly is in flight when the signal comes.
    const body = JSON.stringify({ type: "server", name: "in-flight" });
    const socket = connect(server.port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    let response = "";
    socket.on("data", (d) => (response += d.toString()));
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.write(
      `POST /api/admin/keys HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${keys.adminKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
    );
    await Bun.sleep(200);
    server.proc.kill("SIGTERM");
    await server.waitForLine((l) => l.includes('"msg":"shutting down"'));
    await Bun.sleep(200);
    expect(server.proc.exitCode).toBeNull();
    socket.write(body.slice(5));
    await closed;

    expect(response).toStartWith("HTTP/1.1 201");
    const minted = JSON.parse(response.slice(response.indexOf("\r\n\r\n") + 4));
    expect(minted.name).toBe("in-flight");
    expect(await server.proc.exited).toBe(0);

    expect(await storeRows(dir, "SELECT name FROM sdk_keys WHERE id = ?", minted.id)).toEqual([{ name: "in-flight" }]);
    // New connections are refused once it has stopped.
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });
});

describe("SERVICE_INIT_ADMIN_KEY", () => {
  const chosen = `sdk_admin_${"Ab3".repeat(10)}xy`;

  test("on an empty data dir creates the first project around that key; later starts keep it", async () => {
    const dir = dataDir();
    const server = await serve(dir, [], { SERVICE_INIT_ADMIN_KEY: chosen, SERVICE_ADMIN_EMAIL: "ops@example.com" });
    const res = await adminGet(`${server.url}/api/admin/projects/current`, chosen);
    expect(res.status).toBe(200);
    expect(res.body.ownerEmail).toBe("ops@example.com");
    expect(await server.stop()).toBe(0);

    const again = await serve(dir, [], { SERVICE_INIT_ADMIN_KEY: chosen });
    expect((await adminGet(`${again.url}/api/admin/projects/current`, chosen)).body.id).toBe(res.body.id);
    expect(await again.stop()).toBe(0);
    expect(await projectRows(dir)).toHaveLength(1);
  });

  test("is ignored when the database already has a project", async () => {
    const dir = dataDir();
    await init(dir);
    const server = await serve(dir, [], { SERVICE_INIT_ADMIN_KEY: chosen });
    expect((await adminGet(`${server.url}/api/admin/projects/current`, chosen)).status).toBe(401);
    expect(await server.stop()).toBe(0);
    expect(await projectRows(dir)).toHaveLength(1);
  });

  test("an invalid key exits 2 before creating anything", async () => {
    for (const bad of ["sdk_admin_short", "sdk_server_" + "a".repeat(32), `sdk_admin_${"a".repeat(31)}-`]) {
      const dir = dataDir();
      const { code, stdout, stderr } = await run(svc("serve", "--port", "0", "--data", dir, ...(await storeOf(dir)).args), { env: { SERVICE_INIT_ADMIN_KEY: bad } });
      expect(code, bad).toBe(2);
      expect(stdout).not.toContain("listening on");
      expect(stderr).toContain("SERVICE_INIT_ADMIN_KEY");
      expect(await storeCreated(dir)).toBe(false);
    }
  });
});

describe("svc backup", () => {
  // `svc backup` copies SQLite files (VACUUM INTO); on PostgreSQL it refuses and names pg_dump (the last test here).
  test.skipIf(TEST_ENGINE === "postgres")("writes a valid SQLite copy while the server runs, and never overwrites", async () => {
    const dir = dataDir();
    const a = await init(dir);
    const server = await serve(dir);
    const b = await init(dir, "--project", "After start");
    const out = join(dataDir(), "backup.db");

    const result = await run(svc("backup", "--data", dir, "--out", out));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(out);
    const rows = backupProjectRows(out);
    expect(rows.map((r) => r.id)).toEqual([a.projectId, b.projectId]);
    const copy = new Database(out, { readonly: true });
    try {
      expect(copy.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      expect((copy.query("SELECT count(*) AS n FROM sdk_keys").get() as { n: number }).n).toBe(6);
    } finally {
      copy.close();
    }

    const jsonOut = join(dataDir(), "backup.json.db");
    const json = await run(svc("backup", "--data", dir, "--out", jsonOut, "--json"));
    expect(json.code).toBe(0);
    // The data directory's key travels with the copy (issue 27, item 18).
    expect(JSON.parse(json.stdout)).toEqual({ out: jsonOut, secretKey: `${jsonOut}.secret.key` });
    expect(backupProjectRows(jsonOut)).toHaveLength(2);

    const size = statSync(out).size;
    const again = await run(svc("backup", "--data", dir, "--out", out));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists");
    expect(statSync(out).size).toBe(size);
    expect(await server.stop()).toBe(0);
  });

  test.skipIf(TEST_ENGINE === "postgres")("refuses an existing non-database file, a missing database and a missing --out", async () => {
    const spare = dataDir();
    const existing = join(spare, "notes.txt");
    writeFileSync(existing, "keep me");
    const dir = dataDir();
    await init(dir);
    const overwrite = await run(svc("backup", "--data", dir, "--out", existing));
    expect(overwrite.code).toBe(1);
    expect(readFileSync(existing, "utf8")).toBe("keep me");

    const missing = await run(svc("backup", "--data", dataDir(), "--out", join(spare, "x.db")));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no database");
    expect(existsSync(join(spare, "x.db"))).toBe(false);

    const noOut = await run(svc("backup", "--data", dir));
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toContain("--out");
  });

  test("a PostgreSQL store is refused with the pg_dump command to use instead, and no file is written", async () => {
    const out = join(dataDir(), "pg.db");
    // Refused before connecting: no server needs to listen there.
    const result = await run(svc("backup", "--store", "postgres://svc:hunter2pw@127.0.0.1:1/svc", "--out", out));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("pg_dump");
    // The password never; the hint does name the key file to keep (secret.key).
    expect(result.stderr).not.toContain("hunter2pw");
    expect(existsSync(out)).toBe(false);
  });
});

describe("svc healthcheck", () => {
  test("exits 0 against a live server and 1 against a dead port", async () => {
    const server = await serve(dataDir(), ["--no-request-log"]);
    const live = await run(svc("healthcheck", "--port", String(server.port)));
    expect(live.code).toBe(0);
    expect(live.stdout).toContain("healthy");
    const viaEnv = await run(svc("healthcheck"), { env: { PORT: String(server.port) } });
    expect(viaEnv.code).toBe(0);
    const json = await run(svc("healthcheck", "--port", String(server.port), "--json"));
    expect(JSON.parse(json.stdout)).toEqual({ healthy: true, url: `http://127.0.0.1:${server.port}/healthz` });
    expect(await server.stop()).toBe(0);

    const dead = await run(svc("healthcheck", "--port", String(server.port), "--timeout-ms", "1000"));
    expect(dead.code).toBe(1);
    expect(dead.stderr).toContain("unhealthy");
    const deadJson = await run(svc("healthcheck", "--port", String(server.port), "--timeout-ms", "1000", "--json"));
    expect(deadJson.code).toBe(1);
    expect(JSON.parse(deadJson.stdout)).toMatchObject({ healthy: false });
  });

  test("a bad timeout is a usage error", async () => {
    const { code } = await run(svc("healthcheck", "--timeout-ms", "0"));
    expect(code).toBe(2);
  });
});
