/**
 * The doc test's machinery (test/docs.test.ts, issue 27 items 3 and 5): every ```sh, ```bash and
 * ```shell block of a Markdown page, in order, run through bash against a fresh server of its own.
 *
 * - A block runs with only what the page's blocks define: each block starts with the variables
 *   the earlier blocks of its page set (they run under `set -a`, and what they exported is carried
 *   on), and `SVC`, the server URL the first block reads as `SVC=${SVC:-http://localhost:8080}`.
 * - `svc` on the PATH is the checkout's `./svc`; `curl` is wrapped to fail on an HTTP error
 *   (`--fail-with-body`), so a block whose request is refused fails its test instead of printing
 *   an error body nobody reads. Both live in a bin directory of the page's own temporary directory,
 *   which is also the blocks' working directory and HOME, and holds the server's `./data`.
 * - A block preceded by `<!-- doc-test: skip REASON -->` is not run: its test is reported skipped
 *   with the reason in its name.
 * - The server is the real CLI (`bun src/main.ts serve`) on a random port; vendors' APIs point at a
 *   local stand-in that answers 200, so no delivery leaves the machine.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const REPO = join(import.meta.dir, "..", "..");

export type DocBlock = {
  /** `docs/api.md:42 (Gates)`: the page, the fence's line and the nearest heading above it. */
  name: string;
  line: number;
  code: string;
  /** Set for a block marked `<!-- doc-test: skip REASON -->`. */
  skip?: string;
};

const FENCE = /^```(sh|bash|shell)\s*$/;
const SKIP = /^<!--\s*doc-test:\s*skip\s+(.+?)\s*-->$/;

/** The shell blocks of one page, in order. */
export function shellBlocks(page: string, text: string): DocBlock[] {
  const lines = text.split("\n");
  const blocks: DocBlock[] = [];
  let heading = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, "");
    if (!line.startsWith("```")) continue;
    const open = FENCE.test(line);
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j]!.startsWith("```")) body.push(lines[j++]!);
    if (open) {
      let k = i - 1;
      while (k >= 0 && lines[k]!.trim() === "") k--;
      const skip = k >= 0 ? SKIP.exec(lines[k]!.trim())?.[1] : undefined;
      blocks.push({ name: `${page}:${i + 1}${heading ? ` (${heading})` : ""}`, line: i + 1, code: body.join("\n"), skip });
    }
    i = j;
  }
  return blocks;
}

export type BlockResult = { exitCode: number; stdout: string; stderr: string; timedOut: boolean };

/** One page's fresh server and the directory its blocks run in. */
export class DocSandbox {
  readonly dir: string;
  private readonly bin: string;
  private readonly state: string;
  url = "";
  private server?: ReturnType<typeof Bun.spawn>;
  private vendor?: ReturnType<typeof Bun.serve>;
  private log = "";

  constructor(readonly label: string) {
    this.dir = mkdtempSync(join(tmpdir(), "svc-doc-"));
    this.bin = join(this.dir, ".bin");
    this.state = join(this.dir, ".doc-test-env");
    mkdirSync(this.bin);
    mkdirSync(join(this.dir, "home"));
    const realCurl = Bun.which("curl");
    if (!realCurl) throw new Error("the doc test needs curl on the PATH (apt-get install -y curl)");
    if (!Bun.which("jq")) throw new Error("the doc test needs jq on the PATH: the docs' blocks pick fields out of JSON with it (apt-get install -y jq)");
    const script = (name: string, body: string) => {
      writeFileSync(join(this.bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(this.bin, name), 0o755);
    };
    script("svc", `exec ${JSON.stringify(join(REPO, "svc"))} "$@"`);
    // An HTTP error fails the block (exit 22, the body still printed); no request waits forever.
    script("curl", `exec ${JSON.stringify(realCurl)} --fail-with-body --show-error --max-time 30 "$@"`);
  }

  /** The stand-ins' environment: a real server's, with every vendor on loopback and no mail sent. */
  private serverEnv(): Record<string, string> {
    const vendor = `http://127.0.0.1:${this.vendor!.port}`;
    const env: Record<string, string> = {};
    for (const name of ["SLACK_API", "LINEAR_API", "GOOGLE_SHEETS_API", "GITHUB_API", "CLAUDE_API", "CURSOR_API", "JULES_API", "GOOGLE_TOKEN"]) {
      env[`SERVICE_${name}_URL`] = vendor;
    }
    return env;
  }

  private baseEnv(): Record<string, string> {
    return {
      PATH: `${this.bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: join(this.dir, "home"),
      LANG: "C.UTF-8",
      TMPDIR: tmpdir(),
    };
  }

  async start(): Promise<void> {
    this.vendor = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ ok: true, id: "standin" }) });
    const bun = process.execPath;
    this.server = Bun.spawn([bun, join(REPO, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--data", "./data", "--no-request-log"], {
      cwd: this.dir,
      env: { ...this.baseEnv(), ...this.serverEnv() },
      stdout: "pipe",
      stderr: "pipe",
    });
    const decoder = new TextDecoder();
    const reader = (this.server.stdout as ReadableStream<Uint8Array>).getReader();
    const deadline = Date.now() + 30_000;
    while (!this.url) {
      if (Date.now() > deadline) throw new Error(`${this.label}: the server printed no listening line:\n${this.log}`);
      const { value, done } = await reader.read();
      if (done) throw new Error(`${this.label}: the server exited before listening:\n${this.log}${await new Response(this.server.stderr as ReadableStream).text()}`);
      this.log += decoder.decode(value);
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(this.log);
      if (match) this.url = match[1]!;
    }
    // Keep reading so a full pipe never blocks the server.
    void (async () => {
      for (;;) {
        const { done } = await reader.read().catch(() => ({ done: true }));
        if (done) return;
      }
    })();
    void new Response(this.server.stderr as ReadableStream).text();
  }

  /** Runs one block in this page's environment; what it exports is carried on to the next. */
  async run(code: string, timeoutMs = 60_000): Promise<BlockResult> {
    const script = [
      "set -euo pipefail",
      "set -a",
      `[ -f ${JSON.stringify(this.state)} ] && . ${JSON.stringify(this.state)}`,
      code,
      "",
      `export -p > ${JSON.stringify(this.state)}`,
    ].join("\n");
    const proc = Bun.spawn(["bash", "--noprofile", "--norc", "-c", script], {
      cwd: this.dir,
      env: { ...this.baseEnv(), SVC: this.url },
      stdout: "pipe",
      stderr: "pipe",
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      proc.kill("SIGKILL");
    }, timeoutMs);
    const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    clearTimeout(timer);
    return { exitCode, stdout, stderr, timedOut };
  }

  async stop(): Promise<void> {
    if (this.server) {
      this.server.kill("SIGTERM");
      const killer = setTimeout(() => this.server?.kill("SIGKILL"), 10_000);
      await this.server.exited;
      clearTimeout(killer);
    }
    this.vendor?.stop(true);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Why a block failed, for the test's message. */
export function describeFailure(block: DocBlock, result: BlockResult): string {
  const tail = (text: string) => text.split("\n").slice(-25).join("\n");
  return [
    `${block.name} ${result.timedOut ? "timed out" : `exited ${result.exitCode}`}`,
    "--- block ---",
    block.code,
    "--- stdout (tail) ---",
    tail(result.stdout),
    "--- stderr (tail) ---",
    tail(result.stderr),
  ].join("\n");
}

export function readPage(page: string): string {
  return readFileSync(join(REPO, page), "utf8");
}
