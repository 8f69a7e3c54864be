/**
 * The config schema checker is a process of its own, started on the first config check (issue 32, memory): what
 * its entry imports is loaded there. As a worker thread it had imported Elysia (through src/lib/errors.ts, for the
 * error body's schema), and the first config created took the server's RSS up by ~22 MB (dist/svc, measured).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT } from "../cli/process";

// The entry refuses to run without the server's IPC channel: a stand-in for process.send lets it load here.
const LOAD = `
process.send = () => true;
await import(${JSON.stringify(join(ROOT, "src/modules/configs/schema-check-process.ts"))});
const loaded = Object.keys(require.cache).filter((path) => /\\/node_modules\\/(elysia|@elysiajs|@sinclair)\\//.test(path));
console.log(JSON.stringify({ loaded }));
process.exit(0);
`;

test("the schema checker's entry loads no Elysia and no TypeBox: ajv and its checks only", () => {
  const run = Bun.spawnSync([BUN, "-e", LOAD], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(run.exitCode, run.stderr.toString()).toBe(0);
  const out = JSON.parse(run.stdout.toString().trim().split("\n").at(-1)!) as { loaded: string[] };
  expect(out.loaded).toEqual([]);
});

test("run by hand, without a server's channel, the checker's entry says what it is and fails", () => {
  const run = Bun.spawnSync([BUN, join(ROOT, "src/modules/configs/schema-check-process.ts")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(run.exitCode).not.toBe(0);
  expect(run.stderr.toString()).toContain("runs only as the server's child process");
});
