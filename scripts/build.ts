/**
 * `npm run build`: compiles svc into one executable, dist/svc (or `--outfile FILE`), in two passes.
 *
 * 1. `bun build --compile` with COMPILE_FLAGS into a scratch directory.
 * 2. That binary is run twice with `BUN_BYTECODE_ORDER_OUT`, which makes Bun write down the functions the run
 *    executed, in order: once from exec to its first `/healthz` 200 and six idle seconds after it (every idle
 *    timer has run by then), once through a short day's work (a killswitch and a config written and listed, an
 *    SDK snapshot fetched and polled with its ETag).
 * 3. The final build lays the embedded bytecode out in that order (`--bytecode-order`, the start first): what a
 *    server runs sits together in the file, so it touches fewer of the binary's pages. Measured on the compiled
 *    binary (issue 32): 6 MB less resident at the first answer, 5 MB less idle, the same start time; recording
 *    the idle seconds too, 1.7 MB less again 30 s after start.
 *
 * The order is recorded afresh on every build from the code being built, so it is never stale and nothing of it
 * is kept in the repository. Should recording fail (no loopback in some sandbox), the first pass's binary is
 * used as it is: it runs the same, only its pages are laid out in the default order.
 *
 * Usage: `npm run build` (or `bun scripts/build.ts [--outfile FILE]`); the prebuild step packs dist/svc-sdk.tgz.
 */
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");

/**
 * The compile flags, shared with the benchmark's compiled bare server (bench/foundation.ts). Identifier names are
 * kept (no --minify-identifiers): Elysia reads handler source text. The raised JIT tier-up threshold keeps the
 * start's run-once code in the interpreter (`svc serve` restores the normal policy after its first answer).
 * `--splitting` puts what `import()` loads (each command, each module's routes and services) in chunks of its own:
 * a process links and loads only the code it reaches, not the whole 4 MB bundle before its first line runs
 * (issue 32: the first line of `main` ran 4–6 ms after exec instead of 11–16 ms, on the compiled binary).
 */
export const COMPILE_FLAGS = [
  "--compile",
  "--splitting",
  "--minify-whitespace",
  "--minify-syntax",
  "--sourcemap",
  "--bytecode",
  "--format=esm",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  "--compile-jit-policy=64",
  "--external=file-type",
];

/** The binary's entry points: the CLI (also the config schema checker's child process) and the SDK tarball it serves. */
const ENTRIES = ["src/main.ts", "dist/svc-sdk.tgz"];

/**
 * How long the first recording stays up after its first answer: its idle timers (the store's look for other
 * processes' changes, the outbox drainer, the schedule and usage rounds every 5 s) have all run by then, so the
 * code an idle server runs is laid out with its start.
 */
const IDLE_RECORD_MS = 6000;

/** Longest one recording run may take before the build gives up on ordering. */
const RECORD_TIMEOUT_MS = 30_000;

function compile(outfile: string, extra: string[] = []): void {
  const built = Bun.spawnSync([process.execPath, "build", ...COMPILE_FLAGS, ...extra, "--root", "src", ...ENTRIES, "--outfile", outfile], {
    cwd: ROOT,
    stdout: "inherit",
    stderr: "inherit",
  });
  if (built.exitCode !== 0) process.exit(built.exitCode ?? 1);
}

/**
 * The final compile, made in the scratch directory and moved to `outfile`. The binary carries its source map
 * inside (with these flags, a copy run from another directory with no map beside it still names the source
 * file and line in a stack trace: checked on a two-module program); `--splitting` also
 * writes a `.js.map` per chunk and one for the entry beside it, which nothing reads. Built beside `outfile`,
 * those piled up in dist/ with every build (a new hash each time: over 1,100 files here). Copied to a temporary
 * name in `outfile`'s directory and renamed over it, so a server still running the old binary keeps it (writing
 * into a running executable fails with ETXTBSY).
 */
function compileInto(scratch: string, outfile: string, extra: string[] = []): void {
  const built = join(scratch, "final", "svc");
  mkdirSync(dirname(built), { recursive: true });
  compile(built, extra);
  mkdirSync(dirname(outfile), { recursive: true });
  const next = `${outfile}.new`;
  copyFileSync(built, next);
  renameSync(next, outfile);
}

/** Runs `binary serve` with its executed functions written to `orderFile`, does `work`, and stops it. */
async function record(binary: string, dataDir: string, orderFile: string, work: (url: string) => Promise<void>): Promise<void> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = Bun.spawn([binary, "serve", "--port", String(port), "--host", "127.0.0.1", "--data", dataDir, "--no-request-log"], {
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, BUN_BYTECODE_ORDER_OUT: orderFile },
  });
  const deadline = Date.now() + RECORD_TIMEOUT_MS;
  try {
    for (;;) {
      if (server.exitCode !== null) throw new Error(`svc serve exited: ${(await new Response(server.stderr).text()).slice(0, 500)}`);
      if (Date.now() > deadline) throw new Error("svc serve did not answer /healthz in time");
      if (await fetch(`${url}/healthz`).then((r) => r.status === 200, () => false)) break;
      await Bun.sleep(2);
    }
    await work(url);
  } finally {
    server.kill("SIGTERM");
    await server.exited;
  }
}

/** A port nobody listens on now (the kernel's pick, released at once): also bench/foundation.ts's cold starts. */
export async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(null) });
  const port = probe.port!;
  await probe.stop(true);
  return port;
}

/** The day's work of the second recording: what a server does in its first minutes. */
async function dayOfWork(url: string, keys: { adminKey: string; serverKey: string }): Promise<void> {
  const admin = { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" };
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = admin) => {
    const response = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    await response.arrayBuffer();
    if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status}`);
    return response;
  };
  await call("POST", "/api/admin/killswitches", { name: "checkout", value: true });
  await call("GET", "/api/admin/killswitches");
  await call("POST", "/api/admin/configs", { name: "limits", schema: { type: "object" }, value: { perMinute: 60 } });
  await call("GET", "/api/admin/configs");
  await call("GET", "/api/admin/projects/current");
  const sdk = { "x-sdk-key": keys.serverKey };
  const first = await call("GET", "/api/sdk/v1/snapshot?env=prod", undefined, sdk);
  await call("GET", "/api/sdk/v1/snapshot?env=prod", undefined, { ...sdk, "if-none-match": first.headers.get("etag") ?? "" });
  // The server's own deferred start (the WAL checkpoints' watch, JIT policy) runs a second after its first answer.
  await Bun.sleep(1200);
}

async function main(argv: string[]): Promise<void> {
  const at = argv.indexOf("--outfile");
  const outfile = resolve(ROOT, at >= 0 && argv[at + 1] ? argv[at + 1]! : "dist/svc");
  const scratch = mkdtempSync(join(tmpdir(), "svc-build-"));
  try {
    const firstPass = join(scratch, "svc");
    compile(firstPass);
    const startOrder = join(scratch, "start.order");
    const workOrder = join(scratch, "work.order");
    try {
      const dataDir = join(scratch, "data");
      const init = Bun.spawnSync([firstPass, "init", "--data", dataDir, "--json"], { stdout: "pipe", stderr: "pipe" });
      if (init.exitCode !== 0) throw new Error(`svc init failed: ${init.stderr.toString().slice(0, 500)}`);
      const keys = JSON.parse(init.stdout.toString()) as { adminKey: string; serverKey: string };
      await record(firstPass, dataDir, startOrder, () => Bun.sleep(IDLE_RECORD_MS));
      await record(firstPass, dataDir, workOrder, (url) => dayOfWork(url, keys));
    } catch (err) {
      console.warn(`build: the bytecode order could not be recorded (${err instanceof Error ? err.message : String(err)}); building in the default order`);
      compileInto(scratch, outfile);
      return;
    }
    compileInto(scratch, outfile, [`--bytecode-order=${startOrder},${workOrder}`]);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.main) await main(process.argv.slice(2));
