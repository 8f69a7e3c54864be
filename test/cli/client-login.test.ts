import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  USER_CODE,
  approveInBrowser,
  cliLogin,
  readCredentialsFile,
  removeSandboxes,
  sandbox,
  startClientTestServer,
  startSvc,
  svc,
  svcJson,
  type ClientTestServer,
} from "./client-helpers";

// Each test spawns the CLI several times and waits out device-flow polls.
setDefaultTimeout(60_000);

let ts: ClientTestServer;
let second: { projectId: string };
beforeAll(async () => {
  ts = await startClientTestServer();
  // Same owner, another organisation: whoami must list both.
  second = await ts.newProject("Second project");
});
// A test that stopped the clock (slow_down) lets it run on for the next, even when it failed.
afterEach(() => ts.clock.resume());
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

describe("svc login", () => {
  test("device flow end to end: credentials file fields, mode 0600, server_url; whoami works with it", async () => {
    const box = sandbox();
    const r = await cliLogin(ts, box);
    expect(r.stdout).toContain(`Signed in to ${ts.url} as owner@example.com`);
    expect(r.stderr).toMatch(/open http:\/\/127\.0\.0\.1:\d+\/device and enter the code [A-Z]{4}-[A-Z]{4}/);
    const creds = readCredentialsFile(box);
    // Exactly the spec's fields plus server_url: the access token's expiry follows from created_at (when this pair was issued) + 1 hour.
    expect(Object.keys(creds).sort()).toEqual(["access_token", "created_at", "project_id", "refresh_token", "server_url", "user_email"]);
    expect(creds.access_token).toStartWith("svc_at_");
    expect(creds.refresh_token).toStartWith("svc_rt_");
    expect(creds.project_id).toBe(ts.projectId);
    expect(creds.user_email).toBe("owner@example.com");
    expect(creds.server_url).toBe(ts.url);
    expect(Date.parse(creds.created_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(Date.parse(creds.created_at)).toBeLessThanOrEqual(Date.now());
    expect(statSync(box.credentialsPath).mode & 0o777).toBe(0o600);
    // No temp files or lock left beside it.
    expect(readdirSync(box.configDir)).toEqual(["credentials"]);

    // The token works against the real server, with the login's server_url (no --url).
    const me = await svcJson(box, ["whoami"]);
    expect(me.user.email).toBe("owner@example.com");
    expect(me.project).toEqual({ id: ts.projectId, name: "Main project" });
    expect(me.projectSource).toBe("login");
    expect(me.projects.map((p: any) => p.id).sort()).toEqual([ts.projectId, second.projectId].sort());

    const human = await svc(box, ["whoami"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Signed in to");
    expect(human.stdout).toContain(`Active project: Main project (${ts.projectId}), from login`);
    expect(human.stdout).toContain(second.projectId);
  });

  test("an existing 0644 credentials file ends up 0600 after login", async () => {
    const box = sandbox();
    mkdirSync(box.configDir, { recursive: true });
    writeFileSync(box.credentialsPath, "{}");
    chmodSync(box.credentialsPath, 0o644);
    await cliLogin(ts, box);
    expect(statSync(box.credentialsPath).mode & 0o777).toBe(0o600);
    expect(readCredentialsFile(box).access_token).toStartWith("svc_at_");
  });

  test("--project binds that project and preselects it on the approval page", async () => {
    const box = sandbox();
    const live = startSvc(box, ["login", "--no-browser", "--url", ts.url, "--project", second.projectId, "--json"]);
    const [, userCode] = await live.waitForStderr(USER_CODE);
    const opened = await live.waitForStderr(/\(or open (\S+)\)/);
    const url = new URL(opened[1]!);
    expect(url.searchParams.get("user_code")).toBe(userCode!);
    expect(url.searchParams.get("project_id")).toBe(second.projectId);
    await approveInBrowser(ts, "owner@example.com", userCode!, { projectId: second.projectId });
    const r = await live.result();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ user_email: "owner@example.com", project_id: second.projectId, server_url: ts.url });
    expect(readCredentialsFile(box).project_id).toBe(second.projectId);
    expect((await svcJson(box, ["whoami"])).project.id).toBe(second.projectId);
  });

  test("--project only preselects: the project approved in the browser is bound, with a warning", async () => {
    const box = sandbox();
    const live = startSvc(box, ["login", "--no-browser", "--url", ts.url, "--project", second.projectId, "--json"]);
    const [, userCode] = await live.waitForStderr(USER_CODE);
    await approveInBrowser(ts, "owner@example.com", userCode!, { projectId: ts.projectId });
    const r = await live.result();
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`you approved project ${ts.projectId} in the browser, not ${second.projectId}`);
    expect(JSON.parse(r.stdout).project_id).toBe(ts.projectId);
    expect(readCredentialsFile(box).project_id).toBe(ts.projectId);
  });

  test("opens $BROWSER (split on spaces) with the approval URL unless --no-browser", async () => {
    const box = sandbox();
    const script = join(box.root, "fake-browser.sh");
    const opened = join(box.root, "opened.txt");
    writeFileSync(script, `#!/bin/sh\nprintf '%s|%s\\n' "$1" "$2" > ${opened}\n`);
    chmodSync(script, 0o755);
    const live = startSvc(box, ["login", "--url", ts.url], { env: { BROWSER: `${script}  --new-window` } });
    const [, userCode] = await live.waitForStderr(USER_CODE);
    for (let i = 0; i < 100 && !existsSync(opened); i++) await Bun.sleep(20);
    const [flag, url] = readFileSync(opened, "utf8").trim().split("|");
    expect(flag).toBe("--new-window");
    expect(new URL(url!).searchParams.get("user_code")).toBe(userCode!);
    await approveInBrowser(ts, "owner@example.com", userCode!);
    expect((await live.result()).code).toBe(0);

    // --no-browser never runs it.
    const box2 = sandbox();
    const opened2 = join(box2.root, "opened.txt");
    writeFileSync(script, `#!/bin/sh\necho "$1" > ${opened2}\n`);
    await cliLogin(ts, box2, "owner@example.com", { env: { BROWSER: script } });
    expect(existsSync(opened2)).toBe(false);
  });

  test("denied in the browser: exit 1 with a clear message, no credentials written", async () => {
    const box = sandbox();
    const live = startSvc(box, ["login", "--no-browser", "--url", ts.url]);
    const [, userCode] = await live.waitForStderr(USER_CODE);
    await approveInBrowser(ts, "owner@example.com", userCode!, { action: "deny" });
    const r = await live.result();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Sign-in was denied in the browser.");
    expect(existsSync(box.credentialsPath)).toBe(false);
  });

  test("a code that expires before approval: exit 1 saying to run svc login again", async () => {
    const box = sandbox();
    const live = startSvc(box, ["login", "--no-browser", "--url", ts.url]);
    await live.waitForStderr(USER_CODE);
    ts.clock.advance(11 * 60_000);
    try {
      const r = await live.result();
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("The sign-in code expired before it was approved. Run `svc login` again.");
      expect(existsSync(box.credentialsPath)).toBe(false);
    } finally {
      ts.clock.advance(-11 * 60_000);
    }
  });

  test("slow_down: waits the longer interval the server names before polling again", async () => {
    const box = sandbox();
    // With the test clock stopped, the CLI's second poll looks too fast to the server: slow_down, interval 1 + 5 s
    // (this test server polls every second; the default two is tested in test/modules/device.test.ts).
    ts.clock.freeze(); // resumed after each test
    const live = startSvc(box, ["login", "--no-browser", "--url", ts.url]);
    const [, userCode] = await live.waitForStderr(USER_CODE);
    const interval = async () =>
      Number((await ts.store.one<{ interval_s: number }>("SELECT interval_s FROM device_codes WHERE user_code = ?", userCode!.replace("-", "")))!.interval_s);
    for (let i = 0; i < 200 && (await interval()) === 1; i++) await Bun.sleep(50);
    expect(await interval()).toBe(6);
    const slowedAt = Date.now();
    await approveInBrowser(ts, "owner@example.com", userCode!);
    ts.clock.advance(7_000);
    const r = await live.result();
    expect(r.code).toBe(0);
    expect(Date.now() - slowedAt).toBeGreaterThan(5_000);
    // It did not poll early again (that would have raised the interval once more).
    expect(await interval()).toBe(6);
  });

  test("a spinner on stderr while polling, only when stderr is a terminal", async () => {
    const box = sandbox();
    const live = startSvc(box, ["login", "--no-browser", "--url", ts.url], { terminal: true });
    const [, userCode] = await live.waitForStderr(USER_CODE);
    await live.waitForStderr(/⠋ Waiting for approval in the browser…/);
    await approveInBrowser(ts, "owner@example.com", userCode!);
    const r = await live.result();
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("\r\x1b[K");
    expect(r.stderr).toContain("Signed in to");

    const piped = await cliLogin(ts, sandbox());
    expect(piped.stderr).not.toContain("Waiting for approval");
  });

  test("--url naming a server other than the stored credentials' issuer: signs in there and replaces them, sending the old pair nowhere", async () => {
    const requests: string[] = [];
    const old = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        requests.push(`${req.method} ${new URL(req.url).pathname} ${req.headers.get("authorization")} ${await req.text()}`);
        return Response.json({});
      },
    });
    try {
      const box = sandbox();
      await cliLogin(ts, box);
      const before = readCredentialsFile(box);
      const stale = { ...before, access_token: "svc_at_from_the_old_server", refresh_token: "svc_rt_from_the_old_server", server_url: old.url.origin };
      writeFileSync(box.credentialsPath, JSON.stringify(stale));
      await cliLogin(ts, box);
      const after = readCredentialsFile(box);
      expect(after.server_url).toBe(ts.url);
      expect(after.access_token).not.toBe(stale.access_token);
      expect(requests).toEqual([]);
      expect((await svcJson(box, ["whoami"])).serverUrl).toBe(ts.url);
    } finally {
      old.stop(true);
    }
  });

  test("usage and network failures", async () => {
    const box = sandbox();
    const bad = await svc(box, ["login", "--url", "ftp://x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("not an http(s) URL");
    expect((await svc(box, ["login", "--bogus"])).code).toBe(2);
    const down = await svc(box, ["login", "--no-browser", "--url", "http://127.0.0.1:9"]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("could not reach http://127.0.0.1:9");
    expect(existsSync(box.credentialsPath)).toBe(false);
  });
});

describe("not signed in", () => {
  test("every server command exits 3 and says to run svc login", async () => {
    const box = sandbox();
    for (const args of [["whoami"], ["toggle", "x"], ["sdk", "keys", "list"], ["config", "get", "x"]]) {
      const r = await svc(box, args);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain("svc login");
      expect(r.stderr).toContain(box.credentialsPath);
    }
    const json = await svc(box, ["whoami", "--json"]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stderr).code).toBe("NOT_SIGNED_IN");
  });
});

describe("svc logout", () => {
  test("revokes the sign-in server-side, then deletes the file", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    const creds = readCredentialsFile(box);
    const r = await svc(box, ["logout"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Signed out owner@example.com from ${ts.url}.`);
    expect(r.stderr).toBe("");
    expect(existsSync(box.credentialsPath)).toBe(false);
    // The refresh token no longer rotates, and the whole sign-in (its access token) is gone.
    const refresh = await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: creds.refresh_token } });
    expect(refresh.status).toBe(400);
    expect(refresh.body.error).toBe("invalid_grant");
    expect((await ts.api("/api/admin/me", { key: creds.access_token })).status).toBe(401);
    // Again: nothing to do.
    const again = await svc(box, ["logout"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("Not signed in");
  });

  test("--url or SERVICE_URL naming another server: the refresh token goes only to its own server, which revokes it", async () => {
    // A second server that records every request's Authorization header and body.
    const requests: { method: string; path: string; authorization: string | null; body: string }[] = [];
    const other = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        requests.push({ method: req.method, path: new URL(req.url).pathname, authorization: req.headers.get("authorization"), body: await req.text() });
        return Response.json({});
      },
    });
    const otherUrl = other.url.origin;
    try {
      for (const [args, env] of [
        [["--url", otherUrl], {}],
        [[], { SERVICE_URL: otherUrl }],
      ] as const) {
        const box = sandbox();
        await cliLogin(ts, box);
        const creds = readCredentialsFile(box);
        const r = await svc(box, ["logout", "--json", ...args], { env });
        expect(JSON.stringify(requests)).not.toContain(creds.refresh_token);
        expect(requests).toEqual([]);
        expect(r.code).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ signedOut: true, revoked: true, server_url: ts.url });
        expect(r.stderr).toContain(`issued by ${ts.url}, not ${otherUrl}`);
        expect(r.stderr).toContain(`Nothing was sent to ${otherUrl}`);
        expect(existsSync(box.credentialsPath)).toBe(false);
        // Revoked where it was issued: it no longer rotates.
        const refresh = await ts.api("/auth/device/refresh", { key: null, body: { refresh_token: creds.refresh_token } });
        expect(refresh.status).toBe(400);
      }
    } finally {
      other.stop(true);
    }
  });

  test("with the server down the file is still deleted, with a warning", async () => {
    const box = sandbox();
    await cliLogin(ts, box);
    const creds = readCredentialsFile(box);
    writeFileSync(box.credentialsPath, JSON.stringify({ ...creds, server_url: "http://127.0.0.1:9" }));
    const r = await svc(box, ["logout", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ signedOut: true, revoked: false });
    expect(r.stderr).toContain("warning: could not revoke the session on the server");
    expect(r.stderr).toContain("deleted anyway");
    expect(existsSync(box.credentialsPath)).toBe(false);
    // The server never heard of it: that sign-in still works until it expires.
    expect((await ts.api("/api/admin/me", { key: creds.access_token })).status).toBe(200);
  });

  test("an unreadable credentials file is deleted", async () => {
    const box = sandbox();
    mkdirSync(box.configDir, { recursive: true });
    writeFileSync(box.credentialsPath, "not json");
    const r = await svc(box, ["logout"]);
    expect(r.code).toBe(0);
    expect(existsSync(box.credentialsPath)).toBe(false);
  });
});
