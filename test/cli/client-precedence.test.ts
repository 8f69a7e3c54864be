import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { saveDeviceSignIn, readCredentialsFile, removeSandboxes, sandbox, startClientTestServer, startSvc, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";
import { ROOT, SVC_SOURCE } from "./process";

// Each test spawns the CLI several times (a refresh waits out a held lock).
setDefaultTimeout(60_000);

const HOUR = 3600_000;

let ts: ClientTestServer;
let second: Awaited<ReturnType<ClientTestServer["newProject"]>>;
let third: Awaited<ReturnType<ClientTestServer["newProject"]>>;
let foreign: { projectId: string; adminKey: string };

beforeAll(async () => {
  ts = await startClientTestServer();
  second = await ts.newProject("Second");
  third = await ts.newProject("Third");
  const { project } = await ts.server.ctx.services.projects.createOrganisationWithProject({ projectName: "Foreign", ownerEmail: "stranger@example.com" });
  foreign = { projectId: project.id, adminKey: (await ts.server.ctx.services.keys.mint(project.id, { type: "admin" })).key };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

function writeCredentials(box: Sandbox, creds: Record<string, unknown>) {
  writeFileSync(box.credentialsPath, JSON.stringify(creds), { mode: 0o600 });
}

type Recorded = { method: string; path: string; authorization: string | null; body: string };

/**
 * A second local HTTP server that records every request's method, path,
 * Authorization header and body. It answers `answer(path)`, else 401 (which
 * would make a client refresh there too).
 */
function startRecorder(answer: (path: string) => Response | undefined = () => undefined) {
  const requests: Recorded[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      requests.push({ method: req.method, path, authorization: req.headers.get("authorization"), body: await req.text() });
      return answer(path) ?? Response.json({ error: "Unauthorized", code: "UNAUTHORIZED" }, { status: 401 });
    },
  });
  recorders.push(server);
  return { url: server.url.origin, requests, seen: () => JSON.stringify(requests) };
}
const recorders: ReturnType<typeof Bun.serve>[] = [];
afterAll(() => {
  for (const r of recorders.splice(0)) r.stop(true);
});

/** Neither token of the stored pair appears in any header or body the recorder got. */
function expectNoStoredToken(recorder: ReturnType<typeof startRecorder>, creds: Record<string, any>) {
  expect(recorder.seen()).not.toContain(creds.access_token);
  expect(recorder.seen()).not.toContain(creds.refresh_token);
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
    await saveDeviceSignIn(ts, box);
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
    await saveDeviceSignIn(ts, box);
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

  test("server: the credentials file's server_url; --url and SERVICE_URL may only name that same server", async () => {
    const box = sandbox();
    await saveDeviceSignIn(ts, box);
    const creds = readCredentialsFile(box);
    // The same server spelled another way (upper-case scheme, trailing slash) is the same server.
    const sameServer = `${ts.url.replace("http://", "HTTP://")}/`;
    expect((await svc(box, ["whoami", "--url", sameServer])).code).toBe(0);
    expect((await svc(box, ["whoami"], { env: { SERVICE_URL: sameServer } })).code).toBe(0);
    const dead = "http://127.0.0.1:9";
    writeCredentials(box, { ...creds, server_url: dead });
    expect((await svc(box, ["whoami"])).stderr).toContain(`could not reach ${dead}`);
    expect((await svc(box, ["whoami", "--url", "localhost:8080"])).code).toBe(2);
    // A file that does not say which server issued it is sent nowhere.
    const { server_url: _, ...withoutServer } = creds;
    writeCredentials(box, withoutServer);
    const unnamed = await svc(box, ["whoami", "--url", ts.url]);
    expect(unnamed.code).toBe(3);
    expect(unnamed.stderr).toContain("server_url");
  });

  test("config.json's env is the default of toggle", async () => {
    const box = sandbox();
    await saveDeviceSignIn(ts, box);
    expect((await ts.api("/api/admin/killswitches", { body: { name: "prefs" } })).status).toBe(201);
    writeFileSync(join(box.configDir, "config.json"), JSON.stringify({ env: "staging" }));
    expect((await svcJson(box, ["toggle", "prefs"])).env).toBe("staging");
    expect((await svcJson(box, ["toggle", "prefs", "--env", "dev"])).env).toBe("dev");
  });
});

describe("stored credentials go only to the server that issued them", () => {
  test("a --url or SERVICE_URL naming another server: exit 3 naming both and `svc login --url`, nothing sent (fresh or expired pair)", async () => {
    const box = sandbox();
    await saveDeviceSignIn(ts, box);
    const creds = readCredentialsFile(box);
    const other = startRecorder();
    for (const expired of [false, true]) {
      // Expired: the client would refresh first; fresh: it would send the access token (and refresh on the 401).
      writeCredentials(box, { ...creds, created_at: expired ? new Date(Date.now() - 2 * HOUR).toISOString() : creds.created_at });
      for (const [args, env] of [
        [["--url", other.url], {}],
        [[], { SERVICE_URL: other.url }],
        [["--url", `${other.url}/`], { SERVICE_URL: ts.url }],
      ] as const) {
        for (const command of [["whoami"], ["sdk", "keys", "list"], ["toggle", "x", "--on"]]) {
          const r = await svc(box, [...command, ...args], { env });
          const what = `${command.join(" ")} ${JSON.stringify({ args, env, expired })}`;
          expectNoStoredToken(other, creds);
          expect(other.requests, what).toEqual([]);
          expect(r.code, what).toBe(3);
          expect(r.stderr, what).toContain(`issued by ${ts.url}`);
          expect(r.stderr, what).toContain(other.url);
          expect(r.stderr, what).toContain(`svc login --url ${other.url}\``);
        }
      }
    }
    const json = await svc(box, ["whoami", "--json", "--url", other.url]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stderr)).toMatchObject({ code: "NOT_SIGNED_IN" });
    expect(other.requests).toEqual([]);
    expectNoStoredToken(other, creds);
    // The stored pair was neither spent nor changed, and still works where it was issued.
    expect(readCredentialsFile(box).refresh_token).toBe(creds.refresh_token);
    expect((await svc(box, ["whoami"])).code).toBe(0);
  });

  test("a pair that another process swapped for another server's while this one waited to refresh is not sent", async () => {
    // This process is for `other` (its file said so); the pair it finds under the lock was issued by the real server.
    const box = sandbox();
    await saveDeviceSignIn(ts, box);
    const real = readCredentialsFile(box);
    const other = startRecorder();
    const stale = { ...real, access_token: "svc_at_stale", refresh_token: "svc_rt_stale", server_url: other.url, created_at: new Date(Date.now() - 2 * HOUR).toISOString() };
    writeCredentials(box, stale);
    const lock = `${box.credentialsPath}.lock`;
    writeFileSync(lock, "12345");
    const live = startSvc(box, ["whoami"]);
    await Bun.sleep(1500);
    expect(live.proc.exitCode).toBeNull();
    writeCredentials(box, real);
    rmSync(lock);
    const r = await live.result();
    expectNoStoredToken(other, real);
    expect(other.requests).toEqual([]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`replaced while this command ran by a sign-in to ${ts.url}`);
    expect(readCredentialsFile(box).refresh_token).toBe(real.refresh_token);
  });

  test("a redirect from the issuing server is not followed: the refresh token is not re-sent to its Location", async () => {
    const box = sandbox();
    await saveDeviceSignIn(ts, box);
    const creds = readCredentialsFile(box);
    const other = startRecorder();
    const redirector = startRecorder((path) => new Response(null, { status: 307, headers: { location: `${other.url}${path}` } }));
    writeCredentials(box, { ...creds, server_url: redirector.url, created_at: new Date(Date.now() - 2 * HOUR).toISOString() });
    const r = await svc(box, ["whoami"]);
    expectNoStoredToken(other, creds);
    expect(other.requests).toEqual([]);
    expect(redirector.requests.map((q) => q.path)).toEqual(["/auth/device/refresh"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("redirect");
  });

  test("SERVICE_CLI_TOKEN still goes where --url or SERVICE_URL say, and the stored pair stays home", async () => {
    const box = sandbox();
    await saveDeviceSignIn(ts, box);
    const creds = readCredentialsFile(box);
    const me = { user: { email: "ci@example.com" }, project: { id: "prj_other", name: "Other" }, projects: [], credential: { kind: "api_token", readOnly: true } };
    const other = startRecorder((path) => (path === "/api/admin/me" ? Response.json(me) : undefined));
    const token = "svc_pat_given_explicitly";
    for (const [args, env] of [
      [["--url", other.url], { SERVICE_CLI_TOKEN: token }],
      [[], { SERVICE_CLI_TOKEN: token, SERVICE_URL: other.url }],
    ] as const) {
      other.requests.length = 0;
      const r = await svcJson(box, ["whoami", ...args], { env });
      expect(r).toMatchObject({ serverUrl: other.url, credentialSource: "SERVICE_CLI_TOKEN", project: { id: "prj_other" } });
      expect(other.requests.map((q) => [q.path, q.authorization])).toEqual([["/api/admin/me", `Bearer ${token}`]]);
    }
    expectNoStoredToken(other, creds);
  });

  test("svc mcp follows the same rule: with SERVICE_URL naming another server, tools answer how to sign in there, and nothing is sent", async () => {
    const box = sandbox();
    await saveDeviceSignIn(ts, box);
    const creds = readCredentialsFile(box);
    const other = startRecorder();
    const transport = new StdioClientTransport({
      command: SVC_SOURCE[0]!,
      args: [...SVC_SOURCE.slice(1), "mcp"],
      env: { PATH: process.env.PATH ?? "", HOME: box.home, SERVICE_CONFIG_DIR: box.configDir, SERVICE_URL: other.url },
      cwd: ROOT,
      stderr: "pipe",
    });
    const client = new Client({ name: "svc-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      for (const name of ["whoami", "list_sdk_keys"]) {
        const result = (await client.callTool({ name, arguments: {} })) as CallToolResult;
        expectNoStoredToken(other, creds);
        expect(other.requests).toEqual([]);
        expect(result.isError).toBe(true);
        const text = result.content[0]!.type === "text" ? result.content[0]!.text : "";
        expect(text).toContain(`issued by ${ts.url}`);
        expect(text).toContain(`svc login --url ${other.url}`);
      }
    } finally {
      await client.close();
    }
    expect(other.requests).toEqual([]);
    expectNoStoredToken(other, creds);
  });
});

describe("secrets on the command line", () => {
  test("`sdk keys revoke <secret>` (instead of the id): exit 2, the secret is neither sent nor printed, only its masked form", async () => {
    const box = sandbox();
    await saveDeviceSignIn(ts, box);
    const minted = await ts.api("/api/admin/keys", { body: { type: "server", name: "pasted" } });
    expect(minted.status).toBe(201);
    const secret: string = minted.body.key;
    const r = await svc(box, ["sdk", "keys", "revoke", secret]);
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(r.stdout + r.stderr).not.toContain(secret.slice(0, -4));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`sdk_server_…${secret.slice(-4)}`);
    expect(r.stderr).toContain("svc sdk keys list");
    // Still live: nothing was revoked.
    expect((await ts.api("/api/admin/keys")).body.some((k: any) => k.id === minted.body.id)).toBe(true);

    // Not sent either: a server that records everything hears nothing.
    const other = startRecorder();
    writeCredentials(box, { ...readCredentialsFile(box), server_url: other.url });
    for (const args of [[secret], [secret, "--json"], ["svc_pat_0123456789abcdef"]]) {
      const again = await svc(box, ["sdk", "keys", "revoke", ...args]);
      expect(other.seen()).not.toContain(args[0]!.slice(4));
      expect(again.stdout + again.stderr).not.toContain(args[0]!);
      expect(again.code).toBe(2);
    }
    expect(other.requests).toEqual([]);
  });
});

describe("access-token refresh", () => {
  test("an access token the server refuses (401) is refreshed once; the new pair is on disk", async () => {
    const box = sandbox();
    await saveDeviceSignIn(ts, box);
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
    await saveDeviceSignIn(ts, box);
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
    await saveDeviceSignIn(ts, box);
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
    await saveDeviceSignIn(ts, box);
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
    await saveDeviceSignIn(ts, box);
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
    await saveDeviceSignIn(ts, box);
    const creds = readCredentialsFile(box);
    expect((await ts.api("/auth/device/revoke", { key: null, body: { token: creds.refresh_token } })).status).toBe(200);
    const r = await svc(box, ["whoami"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("run `svc login`");
  });
});
