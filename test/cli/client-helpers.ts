import { expect } from "bun:test";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import type { Subprocess } from "bun";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { Browser, MailCapture, deviceLogin, runningTestClock, signInWithMagicLink } from "../browser";
import { startTestServer, tempDir, type TestServer } from "../helpers";
import { ROOT, SVC_SOURCE, type RunResult } from "./process";
import { credentialsFromTokenResponse, writeCredentials } from "../../src/cli/user-files";

/** Variables of the parent that would change what the CLI under test does. */
const CLIENT_ENV = ["SERVICE_CLI_TOKEN", "SERVICE_URL", "SERVICE_CONFIG_DIR", "BROWSER", "HOME", "PORT", "HOST", "SERVICE_DATA_DIR", "SERVICE_STORE_URL"];

/** A user's machine: a HOME, a config dir (SERVICE_CONFIG_DIR) and a working directory, all fresh. */
export type Sandbox = { root: string; home: string; configDir: string; cwd: string; credentialsPath: string };

const sandboxes: string[] = [];

export function sandbox(): Sandbox {
  const root = tempDir("svc-cli-");
  sandboxes.push(root);
  const s = { root, home: join(root, "home"), configDir: join(root, "config"), cwd: join(root, "work"), credentialsPath: join(root, "config", "credentials") };
  for (const dir of [s.home, s.cwd]) mkdirSync(dir, { recursive: true });
  return s;
}

/** Deletes every sandbox this test file made. */
export function removeSandboxes(): void {
  for (const dir of sandboxes.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export type SvcOptions = {
  env?: Record<string, string | undefined>;
  cwd?: string;
  timeoutMs?: number;
  /** Run on a pseudo-terminal (script(1)); stdout and stderr then arrive merged, as `stderr`. */
  terminal?: boolean;
};

const shellQuote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

export function envFor(box: Sandbox, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !CLIENT_ENV.includes(k)) env[k] = v;
  env.HOME = box.home;
  env.SERVICE_CONFIG_DIR = box.configDir;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/**
 * `svc mcp` on the sandbox, as an agent starts it. `call` answers a tool's
 * text and whether it is an error (a content other than text throws);
 * `body` a tool's JSON answer, expecting it not to be an error.
 */
export async function mcpSession(box: Sandbox, env: Record<string, string>) {
  const transport = new StdioClientTransport({ command: SVC_SOURCE[0]!, args: [...SVC_SOURCE.slice(1), "mcp"], env: envFor(box, env), cwd: ROOT, stderr: "pipe" });
  const client = new Client({ name: "svc-test", version: "1.0.0" });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    const first = r.content[0]!;
    if (first.type !== "text") throw new Error("expected text content");
    return { isError: r.isError ?? false, text: first.text };
  };
  const body = async (name: string, args: Record<string, unknown>) => {
    const r = await call(name, args);
    expect([name, r.isError]).toEqual([name, false]);
    return JSON.parse(r.text);
  };
  return { client, call, body, close: () => client.close() };
}

export type LiveSvc = {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** stderr so far. */
  stderr(): string;
  /** Resolves with the first match of `pattern` in stderr. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  result(): Promise<RunResult>;
};

/** Starts `svc ARGS` from source as a user would on that sandbox. */
export function startSvc(box: Sandbox, args: string[], options: SvcOptions = {}): LiveSvc {
  const command = [...SVC_SOURCE, ...args];
  const proc = Bun.spawn(options.terminal ? ["script", "-qfec", command.map(shellQuote).join(" "), "/dev/null"] : command, {
    cwd: options.cwd ?? box.cwd,
    env: envFor(box, options.env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: options.timeoutMs ?? 60_000,
  });
  let stderr = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) stderr += decoder.decode(r.value, { stream: true });
  };
  const stdoutText = options.terminal ? collect(proc.stdout).then(() => "") : new Response(proc.stdout).text();
  const stderrDone = collect(proc.stderr);
  return {
    proc,
    stderr: () => stderr,
    async waitForStderr(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = pattern.exec(stderr);
        if (m) return m;
        if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`no ${pattern} in stderr (exit ${proc.exitCode}):\n${stderr}`);
        await Bun.sleep(20);
      }
    },
    async result() {
      const [stdout, code] = await Promise.all([stdoutText, proc.exited, stderrDone]);
      return { code, stdout, stderr };
    },
  };
}

export async function svc(box: Sandbox, args: string[], options: SvcOptions = {}): Promise<RunResult> {
  return startSvc(box, args, options).result();
}

/** `svc ... --json` that must succeed; its stdout parsed. */
export async function svcJson<T = any>(box: Sandbox, args: string[], options: SvcOptions = {}): Promise<T> {
  const r = await svc(box, [...args, "--json"], options);
  if (r.code !== 0) throw new Error(`svc ${args.join(" ")} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

export function readCredentialsFile(box: Sandbox): Record<string, any> {
  return JSON.parse(readFileSync(box.credentialsPath, "utf8"));
}

/** A server whose sign-in mails and clock the test holds. */
export type ClientTestServer = TestServer & { mails: MailCapture; clock: ReturnType<typeof runningTestClock>; browsers: Map<string, Browser> };

const UNLIMITED = { limit: 10_000, windowMs: 60_000 };

export async function startClientTestServer(): Promise<ClientTestServer> {
  const mails = new MailCapture();
  // Runs with real time: a sign-in approved after the CLI's first poll then succeeds at the next one, not after a
  // slow_down (a clock standing still made every poll but the first look early).
  const clock = runningTestClock();
  const ts = await startTestServer({
    // Polls every second, not two: the CLI tests run `svc login` about 25 times per engine, each waiting one interval
    // (the others save a sign-in with saveDeviceSignIn, which waits for none).
    signIn: { mailer: mails, now: clock.now, rateLimits: { magicLinkPerEmail: UNLIMITED, magicLinkPerIp: UNLIMITED, deviceCodePerIp: UNLIMITED }, deviceIntervalS: 1 },
  });
  return Object.assign(ts, { mails, clock, browsers: new Map<string, Browser>() });
}

/** A browser signed in as `email` (through the magic-link pages), kept for the server's lifetime. */
async function browserOf(ts: ClientTestServer, email: string): Promise<Browser> {
  let browser = ts.browsers.get(email);
  if (!browser) {
    browser = await signInWithMagicLink(ts, ts.mails, email, new Browser(ts.url));
    ts.browsers.set(email, browser);
  }
  return browser;
}

/**
 * Approves the device code `userCode` as `email` through the real pages:
 * magic-link sign-in, the approval page, the form post with the session
 * cookie and CSRF token. Answers the approval page's HTML.
 */
export async function approveInBrowser(ts: ClientTestServer, email: string, userCode: string, options: { projectId?: string; action?: "approve" | "deny" } = {}): Promise<string> {
  const browser = await browserOf(ts, email);
  const page = await browser.get(`/device?user_code=${encodeURIComponent(userCode)}`);
  if (page.status !== 200) throw new Error(`device page answered ${page.status}: ${page.text}`);
  const fields: Record<string, string> = { user_code: userCode, action: options.action ?? "approve", csrf: browser.csrf };
  if (options.projectId) fields.project_id = options.projectId;
  const confirmed = await browser.postForm("/auth/device/confirm", fields);
  if (confirmed.status !== 200) throw new Error(`confirm answered ${confirmed.status}: ${confirmed.text}`);
  return page.text;
}

export const USER_CODE = /enter the code ([A-Z]{4}-[A-Z]{4})/;

/**
 * The sign-in `svc login` leaves in the sandbox, without its process and its poll (a second each): the same device
 * flow over HTTP (deviceLogin: a code with PKCE, approved by `email`'s signed-in browser, exchanged once), the
 * credentials written by the CLI's own code. For tests of what the CLI does with a sign-in; client-login.test.ts
 * tests `svc login` itself.
 */
export async function saveDeviceSignIn(ts: ClientTestServer, box: Sandbox, email = "owner@example.com"): Promise<void> {
  const tokens = await deviceLogin(ts, await browserOf(ts, email));
  writeCredentials(credentialsFromTokenResponse(tokens, { server_url: ts.url, project_id: null, user_email: "" }), envFor(box));
}

/** `svc login --no-browser` approved in the browser by `email`; returns the CLI's result. */
export async function cliLogin(
  ts: ClientTestServer,
  box: Sandbox,
  email = "owner@example.com",
  options: { args?: string[]; projectId?: string; env?: Record<string, string> } = {},
): Promise<RunResult> {
  const live = startSvc(box, ["login", "--no-browser", "--url", ts.url, ...(options.args ?? [])], { env: options.env });
  const [, userCode] = await live.waitForStderr(USER_CODE);
  await approveInBrowser(ts, email, userCode!, { projectId: options.projectId });
  const result = await live.result();
  if (result.code !== 0) throw new Error(`svc login exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}
