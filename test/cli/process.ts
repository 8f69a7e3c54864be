import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { dropStore, freshStoreUrl } from "../helpers";

export const ROOT = resolve(import.meta.dir, "../..");
export const BUN = join(ROOT, "node_modules/.bin/bun");
/** `svc` from source, the way `npm start` runs it. */
export const SVC_SOURCE = [BUN, join(ROOT, "src/main.ts")];

/** Variables that would change what a spawned `svc` does; tests set them explicitly. */
const SVC_ENV = ["PORT", "HOST", "SERVICE_DATA_DIR", "SERVICE_STORE_URL", "SERVICE_INIT_ADMIN_KEY", "SERVICE_ADMIN_EMAIL"];

function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !SVC_ENV.includes(k)) env[k] = v;
  return { ...env, ...extra };
}

/**
 * The store a spawned `svc serve` / `svc init` should use: on PostgreSQL runs
 * `--store URL` of a fresh database (drop it when done), on SQLite runs no
 * flag (the `--data` directory's service.db).
 */
export type StoreArgs = { args: string[]; url: string | undefined; drop(): Promise<void> };

export async function freshStoreArgs(): Promise<StoreArgs> {
  const url = await freshStoreUrl();
  return { args: url ? ["--store", url] : [], url, drop: () => dropStore(url) };
}

export type SpawnOptions = { env?: Record<string, string>; cwd?: string };

export type RunResult = { code: number; stdout: string; stderr: string };

/** Runs a command to completion; stdout and stderr are captured. */
export async function run(cmd: string[], options: SpawnOptions & { timeoutMs?: number } = {}): Promise<RunResult> {
  const proc = Bun.spawn(cmd, { cwd: options.cwd ?? ROOT, env: childEnv(options.env), stdout: "pipe", stderr: "pipe", timeout: options.timeoutMs ?? 30_000 });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

export type ServeProcess = {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  port: number;
  /** `http://127.0.0.1:PORT`, whatever host the server bound. */
  url: string;
  /** The `listening on` line as printed. */
  listeningLine: string;
  /** Every stdout line so far. */
  lines(): string[];
  stderr(): string;
  /** Resolves with the first stdout line (old or new) that `match` accepts. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Sends SIGTERM and returns the exit code. */
  stop(): Promise<number>;
};

const LISTENING = /^listening on http:\/\/(.+):(\d+)$/;

/** Starts `... serve` and waits for its `listening on http://HOST:PORT` line. */
export async function startServe(cmd: string[], options: SpawnOptions & { timeoutMs?: number } = {}): Promise<ServeProcess> {
  const proc = Bun.spawn(cmd, { cwd: options.cwd ?? ROOT, env: childEnv(options.env), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const lines: string[] = [];
  let stderr = "";
  let waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];

  void (async () => {
    const reader = proc.stdout.getReader();
    const decoder = new TextDecoder();
    let partial = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      partial += decoder.decode(chunk.value, { stream: true });
      const parts = partial.split("\n");
      partial = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        waiters = waiters.filter((w) => (w.match(line) ? (w.resolve(line), false) : true));
      }
    }
  })();
  const stderrDone = new Response(proc.stderr).text().then((text) => {
    stderr = text;
  });

  const waitForLine = (match: (line: string) => boolean, timeoutMs = 10_000) => {
    const seen = lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<string>((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching line within ${timeoutMs} ms; stdout:\n${lines.join("\n")}\nstderr:\n${stderr}`)), timeoutMs);
      waiters.push({
        match,
        resolve: (line) => {
          clearTimeout(timer);
          resolvePromise(line);
        },
      });
      void proc.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`exited with ${code} before the line appeared; stdout:\n${lines.join("\n")}\nstderr:\n${stderr}`));
      });
    });
  };

  let listeningLine: string;
  try {
    listeningLine = await waitForLine((l) => LISTENING.test(l), options.timeoutMs ?? 15_000);
  } catch (err) {
    proc.kill("SIGKILL");
    throw err;
  }
  const port = Number(LISTENING.exec(listeningLine)![2]);
  return {
    proc,
    port,
    url: `http://127.0.0.1:${port}`,
    listeningLine,
    lines: () => [...lines],
    stderr: () => stderr,
    waitForLine,
    async stop() {
      proc.kill("SIGTERM");
      const code = await proc.exited;
      await stderrDone;
      return code;
    },
  };
}

export type InitOutput = { organisationId: string; projectId: string; ownerEmail: string; adminKey: string; clientKey: string; serverKey: string };

/** GET with an admin key; the body is parsed as JSON. */
export async function adminGet(url: string, adminKey: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${adminKey}` } });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body };
}
