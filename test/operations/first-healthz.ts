import { join } from "node:path";
import { BUN, ROOT } from "../cli/process";
import { tempDir } from "../helpers";

/**
 * `svc serve` started from source in a child process on a fresh data dir: `setup` runs first (the start-up tests
 * set traps there), then the server starts and answers its first /healthz, then `report` (a JavaScript
 * expression) is evaluated. Answers the /healthz status and the report, as the child printed them.
 */
export function firstHealthzInChild<T>(setup: string, report: string, dataDirPrefix: string): { status: number; report: T; stderr: string; exitCode: number } {
  const child = `
${setup}
const { startServer } = await import(${JSON.stringify(join(ROOT, "src/server.ts"))});
const server = await startServer({ port: 0, host: "127.0.0.1", dataDir: process.argv[1], quiet: true, logRequests: false });
const healthz = await fetch(server.url + "/healthz");
const report = ${report};
console.log(JSON.stringify({ status: healthz.status, report }));
await server.stop();
process.exit(0);
`;
  const run = Bun.spawnSync([BUN, "-e", child, tempDir(dataDirPrefix)], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const stderr = run.stderr.toString();
  if (run.exitCode !== 0) return { status: 0, report: undefined as T, stderr, exitCode: run.exitCode };
  const out = JSON.parse(run.stdout.toString().trim().split("\n").at(-1)!) as { status: number; report: T };
  return { ...out, stderr, exitCode: 0 };
}
