/**
 * The server's start compiles no TypeBox checker that no request needs yet (issue 32, start-up): Elysia's
 * `t.Integer()` compiles its checker where the schema is declared, so every contract declaring one paid a
 * TypeBox compile at every start; lib/http's `Integer()` is the same schema, compiled on first use.
 * What the first /healthz itself compiles (its own response schemas, when Elysia composes its handler) is left out.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT } from "../cli/process";
import { tempDir } from "../helpers";

const TRAPPED_START = `
const calls = [];
let started = false;
const { TypeCompiler } = await import("@sinclair/typebox/compiler");
const original = TypeCompiler.Compile;
TypeCompiler.Compile = function (...args) {
  const stack = new Error().stack ?? "";
  if (!started && !stack.includes("composeHandler")) calls.push(stack.split("\\n").slice(2, 6).join(" | "));
  return original.apply(this, args);
};
const { startServer } = await import(${JSON.stringify(join(ROOT, "src/server.ts"))});
const server = await startServer({ port: 0, host: "127.0.0.1", dataDir: process.argv[1], quiet: true, logRequests: false });
const healthz = await fetch(server.url + "/healthz");
started = true;
console.log(JSON.stringify({ status: healthz.status, calls }));
await server.stop();
process.exit(0);
`;

test("svc serve answers its first /healthz without compiling a TypeBox checker at start", () => {
  const run = Bun.spawnSync([BUN, "-e", TRAPPED_START, tempDir("svc-compiles-")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(run.exitCode, run.stderr.toString()).toBe(0);
  const out = JSON.parse(run.stdout.toString().trim().split("\n").at(-1)!) as { status: number; calls: string[] };
  expect(out.status).toBe(200);
  expect(out.calls).toEqual([]);
});
