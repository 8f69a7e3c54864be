import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { startServer, type RunningServer, type ServerOptions } from "../src/server";
import { pkceChallenge, randomBase62 } from "../src/lib/ids";
import { openStore, parseStoreTarget, type Store } from "../src/lib/store";
import { storeMigrations } from "../src/modules/index";
import { MODULE_ROUTES } from "../src/modules/route-table";

/**
 * The engine this run tests: `npm test` runs the suite twice (scripts/test.ts),
 * the second time with SVC_TEST_STORE naming a throwaway PostgreSQL cluster.
 */
export const TEST_PG_URL = process.env.SVC_TEST_STORE || "";
export const TEST_ENGINE: "sqlite" | "postgres" = TEST_PG_URL ? "postgres" : "sqlite";

let admin: SQL | undefined;
const adminSql = () => (admin ??= new SQL({ url: TEST_PG_URL, max: 4 }));
function databaseUrl(name: string): string {
  const url = new URL(TEST_PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
const newDatabaseName = () => `t_${randomBase62(12).toLowerCase()}`;

/** A new empty PostgreSQL database on the test cluster (undefined on SQLite runs: the data dir's file is used). */
export async function freshStoreUrl(): Promise<string | undefined> {
  if (!TEST_PG_URL) return undefined;
  const name = newDatabaseName();
  await adminSql().unsafe(`CREATE DATABASE ${name}`);
  return databaseUrl(name);
}

/**
 * A database with every store migration done, as the first start of a server leaves it (its epoch aside: a copy is
 * another database, so the server gives it its own). On PostgreSQL each migration's DDL made a test server's start
 * take 250 ms, and creating and dropping its database 200 ms more, hundreds of times a run: a copy of one migrated
 * template is made ahead, while the test that took the last one runs, and a test server's database is dropped
 * without waiting. At the end of the run (test/setup.ts) the drops still pending are awaited and the template and
 * the copy made ahead are dropped too, so a cluster of your own is left as it was found.
 */
let template: Promise<string> | undefined;
let ahead: Promise<string> | undefined;
export async function migratedStoreUrl(): Promise<string | undefined> {
  if (!TEST_PG_URL) return undefined;
  template ??= (async () => {
    const url = (await freshStoreUrl())!;
    const store = await openStore(parseStoreTarget(url, tmpdir()), { migrations: storeMigrations() });
    await store.close();
    return new URL(url).pathname.slice(1);
  })();
  template.catch(() => (template = undefined)); // a failure is thrown to this caller; the next one tries again
  const copy = async () => {
    const name = newDatabaseName();
    await adminSql().unsafe(`CREATE DATABASE ${name} TEMPLATE ${await template}`);
    return databaseUrl(name);
  };
  const taken = ahead ?? copy();
  ahead = copy();
  ahead.catch(() => {}); // awaited (and its failure thrown) by the next caller
  return taken;
}

/** Drops of test servers' databases not awaited by their `stop()`: awaited at the end of the run. */
const pendingDrops = new Set<Promise<void>>();

/** The end of a `bun test` run on PostgreSQL (test/setup.ts): pending drops, then the template and the copy made ahead. */
export async function dropTestDatabases(): Promise<void> {
  if (!TEST_PG_URL || !admin) return;
  await Promise.all(pendingDrops);
  const names = [await ahead?.then((url) => new URL(url).pathname.slice(1)).catch(() => undefined), await template?.catch(() => undefined)];
  for (const name of names) if (name) await adminSql().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  template = ahead = undefined;
  await admin.close();
  admin = undefined;
}

export async function dropStore(url: string | undefined): Promise<void> {
  if (!url || !TEST_PG_URL) return;
  const name = new URL(url).pathname.slice(1);
  await adminSql().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
}

export type ProjectKeys = { projectId: string; organisationId: string; adminKey: string; serverKey: string; clientKey: string };

export type ApiResponse<T = any> = { status: number; body: T; headers: Headers; text: string };

export type TestServer = ProjectKeys & {
  url: string;
  dataDir: string;
  server: RunningServer;
  /** The server's store, for assertions on what was stored (`await ts.store.one(sql, ...params)`). */
  store: Store;
  /** The `--store` value of this server (undefined: the data dir's SQLite file). */
  storeUrl: string | undefined;
  /** Calls the server; `key` defaults to the admin key (pass null for none). */
  api<T = any>(
    path: string,
    init?: { method?: string; body?: unknown; rawBody?: string; key?: string | null; headers?: Record<string, string> },
  ): Promise<ApiResponse<T>>;
  /** Another organisation with its own project and keys, on the same server. */
  newProject(name?: string, options?: { publicTicketCreation?: boolean; plan?: string }): Promise<ProjectKeys>;
  /**
   * A device-flow access token (what `svc login` stores) for a person, made
   * through the real device service: the person must be a member. Binds
   * `projectId` (default the main project) when they can reach it.
   */
  accessTokenFor(email: string, projectId?: string): Promise<string>;
  /** Adds a person to the organisation of `projectId` (default the main project) with a role: an owner's invitation, accepted by its link. */
  addMember(email: string, role: "owner" | "editor" | "viewer", projectId?: string): Promise<void>;
  stop(): Promise<void>;
};

export function tempDir(prefix = "svc-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A real server on a random port over a real SQLite file in a temp dir, with one project already made. */
export async function startTestServer(options: Partial<ServerOptions> = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir();
  const ownStore = options.store === undefined ? await migratedStoreUrl() : undefined;
  const storeUrl = options.store ?? ownStore;
  const server = await startServer({ port: 0, host: "127.0.0.1", dataDir, logRequests: false, quiet: true, ...options, store: storeUrl });
  const { projects, keys } = server.ctx.services;

  const newProject: TestServer["newProject"] = async (name = "Test project", opts = {}) => {
    const { organisation, project } = await projects.createOrganisationWithProject({
      projectName: name,
      ownerEmail: "owner@example.com",
      publicTicketCreation: opts.publicTicketCreation,
      plan: opts.plan,
    });
    return {
      projectId: project.id,
      organisationId: organisation.id,
      adminKey: (await keys.mint(project.id, { type: "admin" })).key,
      serverKey: (await keys.mint(project.id, { type: "server" })).key,
      clientKey: (await keys.mint(project.id, { type: "client" })).key,
    };
  };
  const main = await newProject("Main project", { publicTicketCreation: true });
  let tokenRequests = 0;
  const accessTokenFor: TestServer["accessTokenFor"] = async (email, projectId = main.projectId) => {
    const { device, identity } = server.ctx.services;
    const verifier = randomBase62(64);
    // A distinct client address per call keeps the device-code rate limit out of the way.
    const grant = await device.createCode({ codeChallenge: pkceChallenge(verifier), clientName: "test" }, { baseUrl: server.url, ip: `test-${tokenRequests++}` });
    const user = await identity.findMember(email);
    if (!user) throw new Error(`${email} is not a member of any organisation`);
    await device.confirm(user, { deviceCode: grant.device_code, action: "approve", projectId: (await identity.canAccess(user.id, projectId)) ? projectId : undefined });
    return (await device.exchange({ deviceCode: grant.device_code, codeVerifier: verifier })).access_token;
  };
  const addMember: TestServer["addMember"] = async (email, role, projectId = main.projectId) => {
    // An invitation is a membership only once accepted: invite, then use its link, through the real service.
    const { identity } = server.ctx.services;
    await identity.consumeMagicLink((await identity.createInvitation(projectId, { email, role })).token);
  };

  const api: TestServer["api"] = async (path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    const key = init.key === undefined ? main.adminKey : init.key;
    if (key) headers.authorization ??= `Bearer ${key}`;
    let body: string | undefined = init.rawBody;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers["content-type"] ??= "application/json";
    } else if (body !== undefined) headers["content-type"] ??= "application/json";
    const res = await fetch(server.url + path, { method: init.method ?? (body !== undefined ? "POST" : "GET"), headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed as any, headers: res.headers, text };
  };

  return {
    ...main,
    url: server.url,
    dataDir,
    server,
    store: server.store,
    storeUrl,
    api,
    newProject,
    accessTokenFor,
    addMember,
    async stop() {
      await server.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
      const dropping = dropStore(ownStore);
      pendingDrops.add(dropping);
      void dropping.finally(() => pendingDrops.delete(dropping));
    },
  };
}

/** Asserts an error body of the contract's shape and returns it. */
export function expectErrorShape(body: any): { error: string; code: string; detail?: string } {
  if (typeof body !== "object" || body === null || typeof body.error !== "string" || typeof body.code !== "string") {
    throw new Error(`not an error body: ${JSON.stringify(body)}`);
  }
  return body;
}

/**
 * Every route the server answers, as `{method, path}`: its own (added at start) and every module's from the route
 * table. Modules are added on demand (src/route-loading.ts): this does not add them, so that a test walking the
 * routes reaches each module through its stand-ins, as a request to a fresh server does.
 */
export function everyRoute(s: TestServer): { method: string; path: string }[] {
  const own = ((s.server.app as any).routes as { method: string; path: string }[]).map((r) => ({ method: String(r.method), path: String(r.path) }));
  const modules = Object.values(MODULE_ROUTES).flatMap((list) => list.map(([method, path]) => ({ method, path })));
  const seen = new Set<string>();
  return [...own, ...modules].filter((r) => !seen.has(`${r.method} ${r.path}`) && seen.add(`${r.method} ${r.path}`));
}
