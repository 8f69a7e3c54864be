/**
 * Request logs under SDK load: admin, auth and intake requests keep their JSON line; SDK polls (snapshot, stream
 * connects, OFREP) are logged only when they fail or with --log-sdk-requests; SERVICE_LOG_LEVEL filters lines.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { LogLevel } from "../../src/lib/log";
import { type TestServer, startTestServer, tempDir } from "../helpers";

type Line = { level: string; msg: string; method?: string; path?: string; status?: number; requestId?: string };

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

/** A server whose log lines are collected (parsed) instead of written. */
async function loggedServer(options: { logSdkRequests?: boolean; logLevel?: LogLevel } = {}) {
  const lines: Line[] = [];
  const s = await startTestServer({ logRequests: true, quiet: false, logSink: (line) => void lines.push(JSON.parse(line)), ...options });
  servers.push(s);
  return { s, lines, requests: () => lines.filter((l) => l.msg === "request") };
}

async function poll(s: TestServer, path: string, headers: Record<string, string> = {}, key: string | null = s.serverKey): Promise<Response> {
  const r = await fetch(s.url + path, { headers: { ...(key ? { "x-sdk-key": key } : {}), ...headers } });
  await r.arrayBuffer();
  return r;
}

async function ofrep(s: TestServer, key = s.serverKey): Promise<number> {
  const r = await fetch(`${s.url}/ofrep/v1/evaluate/flags`, {
    method: "POST",
    headers: { "x-sdk-key": key, "content-type": "application/json" },
    body: JSON.stringify({ context: { env: "prod" } }),
  });
  await r.arrayBuffer();
  return r.status;
}

/** Connects to the stream, reads its first event, disconnects. */
async function streamConnect(s: TestServer): Promise<void> {
  const controller = new AbortController();
  const r = await fetch(`${s.url}/api/sdk/v1/stream?env=prod`, { headers: { "x-sdk-key": s.serverKey }, signal: controller.signal });
  expect(r.status).toBe(200);
  const reader = r.body!.getReader();
  await reader.read();
  controller.abort();
  await reader.cancel().catch(() => {});
}

/** Lets the afterResponse hooks of the requests just made run. */
const settle = () => Bun.sleep(50);

describe("request logs", () => {
  test("by default, N successful polls write no line; a failed poll, an admin and an intake request do", async () => {
    const { s, requests } = await loggedServer();
    const first = await poll(s, "/api/sdk/v1/snapshot?env=prod");
    const etag = first.headers.get("etag")!;
    const N = 20;
    for (let i = 0; i < N; i++) expect((await poll(s, "/api/sdk/v1/snapshot?env=prod", { "if-none-match": etag })).status).toBe(304);
    for (let i = 0; i < 3; i++) expect(await ofrep(s)).toBe(200);
    await streamConnect(s);
    await settle();
    expect(requests()).toEqual([]);

    const unauthorized = await poll(s, "/api/sdk/v1/snapshot?env=prod", {}, "sdk_server_nosuchkeynosuchkey00");
    expect(unauthorized.status).toBe(401);
    expect(await ofrep(s, "sdk_server_nosuchkeynosuchkey00")).toBe(401);
    const admin = await s.api("/api/admin/projects/current");
    expect(admin.status).toBe(200);
    const intake = await s.api("/api/sdk/v1/events", { key: s.serverKey, body: { events: [{ name: "logs.test" }] } });
    expect(intake.status).toBe(202);
    await settle();
    const logged = requests().map((l) => `${l.method} ${l.path} ${l.status}`);
    expect(logged).toEqual([
      "GET /api/sdk/v1/snapshot 401",
      "POST /ofrep/v1/evaluate/flags 401",
      "GET /api/admin/projects/current 200",
      "POST /api/sdk/v1/events 202",
    ]);
    for (const line of requests()) {
      expect(line.level).toBe("info");
      expect(line.requestId).toBeTruthy();
    }
    expect(requests()[0]!.requestId).toBe(unauthorized.headers.get("x-request-id")!);
  });

  test("--log-sdk-requests logs successful polls too, the fast path's included", async () => {
    const { s, requests } = await loggedServer({ logSdkRequests: true });
    const first = await poll(s, "/api/sdk/v1/snapshot?env=prod");
    const etag = first.headers.get("etag")!;
    const again = await poll(s, "/api/sdk/v1/snapshot?env=prod", { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(await ofrep(s)).toBe(200);
    await streamConnect(s);
    await settle();
    const logged = requests().map((l) => `${l.method} ${l.path} ${l.status}`);
    expect(logged).toEqual([
      "GET /api/sdk/v1/snapshot 200",
      "GET /api/sdk/v1/snapshot 304",
      "POST /ofrep/v1/evaluate/flags 200",
      "GET /api/sdk/v1/stream 200",
    ]);
    expect(requests()[1]!.requestId).toBe(again.headers.get("x-request-id")!);
  });

  test("SERVICE_LOG_LEVEL=warn hides info lines (requests included), keeps warnings", async () => {
    const { s, lines } = await loggedServer({ logLevel: "warn" });
    expect((await s.api("/api/admin/projects/current")).status).toBe(200);
    expect((await poll(s, "/api/sdk/v1/snapshot?env=prod", {}, "sdk_server_nosuchkeynosuchkey00")).status).toBe(401);
    s.server.ctx.log.warn("a warning for the test");
    s.server.ctx.log.info("an info line for the test");
    await settle();
    expect(lines.filter((l) => l.level === "info" || l.level === "debug")).toEqual([]);
    expect(lines.some((l) => l.level === "warn" && l.msg === "a warning for the test")).toBe(true);
  });

  test("debug shows debug lines; the default (info) does not", async () => {
    const debug = await loggedServer({ logLevel: "debug" });
    debug.s.server.ctx.log.debug?.("a debug line");
    expect(debug.lines.some((l) => l.level === "debug" && l.msg === "a debug line")).toBe(true);
    const info = await loggedServer();
    info.s.server.ctx.log.debug?.("a debug line");
    expect(info.lines.some((l) => l.level === "debug")).toBe(false);
  });
});

  test("/healthz from Bun's native table answers, counts and logs as the Elysia route does (which a request with a body reaches)", async () => {
    const { s, requests } = await loggedServer();
    const native = await fetch(`${s.url}/healthz`, { headers: { "x-request-id": "probe-native" } });
    const head = await fetch(`${s.url}/healthz`, { method: "HEAD" });
    // The pipeline's route: the app's own handler, and a GET that declares a body (Bun's table hands it on).
    const routed = await s.server.app.handle(new Request(`${s.url}/healthz`, { headers: { "x-request-id": "probe-routed" } }));
    const withBody = await new Promise<string>((done, fail) => {
      let text = "";
      void Bun.connect({
        hostname: "127.0.0.1",
        port: s.server.port,
        socket: {
          open: (socket) => void socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nX-Request-Id: probe-body\r\nConnection: close\r\n\r\n{}"),
          data: (_socket, chunk) => void (text += chunk.toString()),
          close: () => done(text),
          error: (_socket, err) => fail(err),
        },
      });
    });
    for (const [r, id] of [[native, "probe-native"], [routed, "probe-routed"]] as const) {
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/json;charset=utf-8");
      expect(r.headers.get("x-request-id")).toBe(id);
      expect(await r.text()).toBe('{"ok":true}');
    }
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("application/json;charset=utf-8");
    expect(head.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(await head.text()).toBe("");
    expect(withBody).toStartWith("HTTP/1.1 200 ");
    expect(withBody.toLowerCase()).toContain("x-request-id: probe-body");
    expect(withBody).toEndWith('{"ok":true}');
    await settle();
    expect(requests().map((l) => `${l.method} ${l.path} ${l.status} ${l.requestId}`)).toEqual([
      "GET /healthz 200 probe-native",
      `HEAD /healthz 200 ${head.headers.get("x-request-id")}`,
      "GET /healthz 200 probe-routed",
      "GET /healthz 200 probe-body",
    ]);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toContain('svc_http_requests_total{method="GET",route="/healthz",status="200"} 3\n');
    expect(metrics).toContain('svc_http_requests_total{method="HEAD",route="/healthz",status="200"} 1\n');
  });

describe("svc serve settings", () => {
  const bun = process.execPath;
  const main = join(import.meta.dir, "../../src/main.ts");

  test("a bad SERVICE_LOG_LEVEL or SERVICE_LOG_SDK_REQUESTS is a usage error naming the choices", async () => {
    const dir = tempDir();
    try {
      const level = Bun.spawnSync([bun, main, "serve", "--port", "0", "--data", dir], { env: { ...process.env, SERVICE_LOG_LEVEL: "loud" } });
      expect(level.exitCode).toBe(2);
      expect(level.stderr.toString()).toContain('SERVICE_LOG_LEVEL: must be one of debug, info, warn, error (was "loud")');
      const sdk = Bun.spawnSync([bun, main, "serve", "--port", "0", "--data", dir], { env: { ...process.env, SERVICE_LOG_SDK_REQUESTS: "yes" } });
      expect(sdk.exitCode).toBe(2);
      expect(sdk.stderr.toString()).toContain("SERVICE_LOG_SDK_REQUESTS: must be 1");
      const token = Bun.spawnSync([bun, main, "serve", "--port", "0", "--data", dir], { env: { ...process.env, SERVICE_METRICS_TOKEN: "short" } });
      expect(token.exitCode).toBe(2);
      expect(token.stderr.toString()).toContain("SERVICE_METRICS_TOKEN: must be 16-512 characters");
      expect(token.stderr.toString()).not.toContain("short");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("svc serve --log-sdk-requests (and SERVICE_LOG_SDK_REQUESTS=1) log polls on stdout; without, only the failed one", async () => {
    const dir = tempDir();
    try {
      const init = Bun.spawnSync([bun, main, "init", "--data", dir, "--json"]);
      expect(init.exitCode, init.stderr.toString()).toBe(0);
      const { serverKey } = JSON.parse(init.stdout.toString());
      const run = async (args: string[], env: Record<string, string>) => {
        const proc = Bun.spawn([bun, main, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dir, ...args], {
          env: { ...process.env, SVC_TEST_STORE: "", SERVICE_STORE_URL: "", ...env },
          stdout: "pipe",
          stderr: "pipe",
        });
        const reader = proc.stdout.getReader();
        const decoder = new TextDecoder();
        let out = "";
        let url = "";
        while (!url) {
          const chunk = await reader.read();
          if (chunk.done) throw new Error(`serve exited: ${await new Response(proc.stderr).text()}`);
          out += decoder.decode(chunk.value, { stream: true });
          url = /listening on (http:\/\/\S+)/.exec(out)?.[1] ?? "";
        }
        for (let i = 0; i < 3; i++) await (await fetch(`${url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": serverKey } })).arrayBuffer();
        await (await fetch(`${url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": "sdk_server_nosuchkeynosuchkey00" } })).arrayBuffer();
        proc.kill("SIGTERM");
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) out += decoder.decode(chunk.value, { stream: true });
        expect(await proc.exited).toBe(0);
        return out
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as Line)
          .filter((l) => l.msg === "request")
          .map((l) => l.status);
      };
      expect(await run([], {})).toEqual([401]);
      expect(await run(["--log-sdk-requests"], {})).toEqual([200, 200, 200, 401]);
      expect(await run([], { SERVICE_LOG_SDK_REQUESTS: "1" })).toEqual([200, 200, 200, 401]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
