import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliLogin, readCredentialsFile, removeSandboxes, sandbox, startClientTestServer, startSvc, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// Each test spawns the CLI several times and waits out device-flow polls.
setDefaultTimeout(60_000);

const HOUR = 3600_000;

let ts: ClientTestServer;
let second: ReturnType<ClientTestServer["newProject"]>;
let third: ReturnType<ClientTestServer["newProject"]>;
let foreign: { projectId: string; adminKey: string };

beforeAll(async () => {
  ts = await startClientTestServer();
  second = ts.newProject("Second");
  third = ts.newProject("Third");
  const { project } = ts.server.ctx.services.projects.createOrganisationWithProject({ projectName: "Foreign", ownerEmail: "stranger@example.com" });
  foreign = { projectId: project.id, adminKey: ts.server.ctx.services.keys.mint(project.id, { type: "admin" }).key };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

function writeCredentials(box: Sandbox, creds: Record<string, unknown>) {
  writeFileSync(box.credentialsPath, JSON.stringify(creds), { mode: 0o600 });
}

/** A fresh pair for the same sign-in, as another process would get it. */
async function rotate(refreshToken: string) {
  const r = await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: refreshToken } });
  expect(r.status).toBe(200);
  return r.body as { access_token: string; refresh_token: string; expires_in: number };
}

describe("credential precedence", () => {
  test("SERVICE_CLI_TOKEN wins over the credentials file (which is then not read)", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    const minted = await ts.api("/api/admin/tokens", { key: foreign.adminKey, body: { name: "ci", access: "read-only" } });
    expect(minted.status).toBe(201);
    const env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };

    const me = await svcJson(box, ["whoami"], { env });
    expect(me).toMatchObject({ credentialSource: "SERVICE_CLI_TOKEN", project: { id: foreign.projectId }, credential: { kind: "api_token", readOnly: true } });
    const keys = await svcJson(box, ["sdk", "keys", "list"], { env });
    expect(keys.map((k: any) => k.id)).toEqual((await ts.api("/api/admin/keys", { key: foreign.adminKey })).body.map((k: any) => k.id));

    // Read-only: writes are FORBIDDEN (exit 1) and change nothing.
    const write = await svc(box, ["sdk", "keys", "create"], { env });
    expect(write.code).toBe(1);
    expect(write.stderr).toContain("FORBIDDEN");
    expect((await ts.api("/api/admin/keys", { key: foreign.adminKey })).body.length).toBe(keys.length);

    // Even a broken credentials file does not matter then.
    writeFileSync(box.credentialsPath, "garbage");
    expect((await svc(box, ["whoami"], { env })).code).toBe(0);

    // A revoked or unknown token: not signed in (3), naming the variable.
    const bad = await svc(box, ["whoami"], { env: { ...env, SERVICE_CLI_TOKEN: "svc_pat_nope" } });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain("SERVICE_CLI_TOKEN");
  });

  test("project: --project, then the nearest .service file, then the login's project", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    const project = async (args: string[], cwd?: string) => {
      const me = await svcJson(box, ["whoami", ...args], { cwd });
      return [me.project.id, me.projectSource];
    };
    expect(await project([])).toEqual([ts.projectId, "login"]);

    const repo = join(box.root, "repo");
    const deep = join(repo, "src", "lib");
    mkdirSync(deep, { recursive: true });
    expect((await svc(box, ["bind", second.projectId], { cwd: repo })).code).toBe(0);
    expect(await project([], deep)).toEqual([second.projectId, ".service"]);
    expect(await project(["--project", third.projectId], deep)).toEqual([third.projectId, "--project"]);
    // The selected project is what commands act on.
    const keys = await svcJson(box, ["sdk", "keys", "list"], { cwd: deep });
    expect(keys.map((k: any) => k.id).sort()).toEqual((await ts.api("/api/admin/keys", { key: second.adminKey })).body.map((k: any) => k.id).sort());

    const broken = join(box.root, "broken");
    mkdirSync(broken);
    writeFileSync(join(broken, ".service"), "{}");
    const r = await svc(box, ["whoami"], { cwd: broken });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('has no "project_id"');
  });

  test("server: --url, then SERVICE_URL, then the file's server_url", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    const creds = readCredentialsFile(box);
    const dead = "http://127.0.0.1:9";
    writeCredentials(box, { ...creds, server_url: dead });
    expect((await svc(box, ["whoami"])).stderr).toContain(`could not reach ${dead}`);
    expect((await svc(box, ["whoami"], { env: { SERVICE_URL: ts.url } })).code).toBe(0);
    expect((await svc(box, ["whoami", "--url", ts.url], { env: { SERVICE_URL: dead } })).code).toBe(0);
    expect((await svc(box, ["whoami", "--url", "localhost:8080"])).code).toBe(2);
  });

  test("config.json's env is the default of toggle", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    expect((await ts.api("/api/admin/killswitches", { body: { name: "prefs" } })).status).toBe(201);
    writeFileSync(join(box.configDir, "config.json"), JSON.stringify({ env: "staging" }));
    expect((await svcJson(box, ["toggle", "prefs"])).env).toBe("staging");
    expect((await svcJson(box, ["toggle", "prefs", "--env", "dev"])).env).toBe("dev");
  });
});

describe("access-token refresh", () => {
  test("an access token the server refuses (401) is refreshed once; the new pair is on disk", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    const before = readCredentialsFile(box);
    ts.clock.advance(2 * HOUR);
    expect((await ts.api("/api/admin/me", { key: before.access_token })).status).toBe(401);
    const me = await svcJson(box, ["whoami"]);
    expect(me.user.email).toBe("owner@example.com");
    const after = readCredentialsFile(box);
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect({ ...after, access_token: 0, refresh_token: 0, created_at: 0 }).toEqual({ ...before, access_token: 0, refresh_token: 0, created_at: 0 });
    expect(Date.parse(after.created_at)).toBeGreaterThanOrEqual(Date.parse(before.created_at));
    expect((await ts.api("/api/admin/me", { key: after.access_token })).status).toBe(200);
  });

  test("a pair issued (created_at) over an hour ago is refreshed before the call", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    const before = readCredentialsFile(box);
    // The server still accepts the access token (its clock stands still): only the file says it is stale.
    writeCredentials(box, { ...before, created_at: new Date(Date.now() - HOUR - 1000).toISOString() });
    expect((await svc(box, ["sdk", "keys", "list"])).code).toBe(0);
    const after = readCredentialsFile(box);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(Date.parse(after.created_at)).toBeGreaterThan(Date.now() - 60_000);

    // A fresh pair is used as it is: no refresh.
    expect((await svc(box, ["sdk", "keys", "list"])).code).toBe(0);
    expect(readCredentialsFile(box).refresh_token).toBe(after.refresh_token);
  });

  test("two processes with an expired token at once both succeed and the sign-in survives", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    const before = readCredentialsFile(box);
    ts.clock.advance(2 * HOUR);
    const results = await Promise.all([svc(box, ["whoami", "--json"]), svc(box, ["sdk", "keys", "list", "--json"])]);
    for (const r of results) expect(r.code).toBe(0);
    const after = readCredentialsFile(box);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(existsSync(`${box.credentialsPath}.lock`)).toBe(false);
    // Reuse detection did not fire: the stored pair still works, long after the grace period.
    ts.clock.advance(60_000);
    expect((await ts.api("/api/admin/me", { key: after.access_token })).status).toBe(200);
    expect((await svc(box, ["whoami"])).code).toBe(0);
  });

  test("while another process holds the lock, a refresh waits and then uses the pair that process wrote", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    const before = readCredentialsFile(box);
    ts.clock.advance(2 * HOUR);
    const lock = `${box.credentialsPath}.lock`;
    writeFileSync(lock, "12345");
    const live = startSvc(box, ["whoami", "--json"]);
    await Bun.sleep(1500);
    expect(live.proc.exitCode).toBeNull();

    // "The other process": rotates and writes the new pair, then releases the lock.
    const pair = await rotate(before.refresh_token);
    writeCredentials(box, { ...before, access_token: pair.access_token, refresh_token: pair.refresh_token, created_at: new Date().toISOString() });
    await Bun.sleep(100);
    rmSync(lock);

    const r = await live.result();
    expect(r.code).toBe(0);
    // It did not spend the refresh token again: the file still holds exactly that pair, and it still rotates.
    expect(readCredentialsFile(box).refresh_token).toBe(pair.refresh_token);
    ts.clock.advance(60_000);
    await rotate(pair.refresh_token);
  });

  test("a stale lock (left by a crashed process) is taken over", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    ts.clock.advance(2 * HOUR);
    const lock = `${box.credentialsPath}.lock`;
    writeFileSync(lock, "99999");
    const old = new Date(Date.now() - 5 * 60_000);
    utimesSync(lock, old, old);
    const started = Date.now();
    expect((await svc(box, ["whoami"])).code).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(existsSync(lock)).toBe(false);
  });

  test("a sign-in revoked elsewhere: exit 3, asking to sign in again", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    const creds = readCredentialsFile(box);
    expect((await ts.api("/auth/device/revoke", { key: null, body: { token: creds.refresh_token } })).status).toBe(200);
    const r = await svc(box, ["whoami"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("run `svc login`");
  });
});
