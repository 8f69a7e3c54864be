/**
 * The config schema worker is a JavaScript VM of its own, started on the first config check (issue 32, memory):
 * what its entry imports is loaded again there. It had imported Elysia (through src/lib/errors.ts, for the error
 * body's schema), and the first config created took the server's RSS up by ~22 MB (dist/svc, measured).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT } from "../cli/process";

const LOAD = `
await import(${JSON.stringify(join(ROOT, "src/modules/configs/schema-worker.ts"))});
const loaded = Object.keys(require.cache).filter((path) => /\\/node_modules\\/(elysia|@elysiajs|@sinclair)\\//.test(path));
console.log(JSON.stringify({ loaded }));
process.exit(0);
`;

test("the schema worker's entry loads no Elysia and no TypeBox: ajv and its checks only", () => {
  const run = Bun.spawnSync([BUN, "-e", LOAD], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(run.exitCode, run.stderr.toString()).toBe(0);
  const out = JSON.parse(run.stdout.toString().trim().split("\n").at(-1)!) as { loaded: string[] };
  expect(out.loaded).toEqual([]);
});
