/**
 * The server's start loads no re2js (issue 32, memory): its 263 KB of source cost ~0.4 MB of heap, and the server
 * needs it only for the first pattern it compiles (src/lib/re2.ts loads it then). The GrowthBook mapping had
 * imported the SDK's RE2 helper, which imports re2js at load, so every start paid for it.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT } from "../cli/process";
import { tempDir } from "../helpers";

const START = `
const { startServer } = await import(${JSON.stringify(join(ROOT, "src/server.ts"))});
const server = await startServer({ port: 0, host: "127.0.0.1", dataDir: process.argv[1], quiet: true, logRequests: false });
const healthz = await fetch(server.url + "/healthz");
const loaded = Object.keys(require.cache).filter((path) => path.includes("/re2js/"));
console.log(JSON.stringify({ status: healthz.status, loaded }));
await server.stop();
process.exit(0);
`;

test("svc serve answers its first /healthz without loading re2js", () => {
  const run = Bun.spawnSync([BUN, "-e", START, tempDir("svc-re2-")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(run.exitCode, run.stderr.toString()).toBe(0);
  const out = JSON.parse(run.stdout.toString().trim().split("\n").at(-1)!) as { status: number; loaded: string[] };
  expect(out.status).toBe(200);
  expect(out.loaded).toEqual([]);
});
