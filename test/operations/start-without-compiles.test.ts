/**
 * The server's start compiles no TypeBox checker that no request needs yet (issue 32, start-up): Elysia's
 * `t.Integer()` compiles its checker where the schema is declared, so every contract declaring one paid a
 * TypeBox compile at every start; lib/http's `Integer()` is the same schema, compiled on first use.
 * What the first /healthz itself compiles (its own response schemas, when Elysia composes its handler) is left out.
 */
import { expect, test } from "bun:test";
import { firstHealthzInChild } from "./first-healthz";

/** Every TypeBox compile until the first /healthz answer is noted, with what called it. */
const TRAP = `
const calls = [];
let started = false;
const { TypeCompiler } = await import("@sinclair/typebox/compiler");
const original = TypeCompiler.Compile;
TypeCompiler.Compile = function (...args) {
  const stack = new Error().stack ?? "";
  if (!started && !stack.includes("composeHandler")) calls.push(stack.split("\\n").slice(2, 6).join(" | "));
  return original.apply(this, args);
};
`;

test("svc serve answers its first /healthz without compiling a TypeBox checker at start", () => {
  const out = firstHealthzInChild<string[]>(TRAP, "(started = true, calls)", "svc-compiles-");
  expect(out.exitCode, out.stderr).toBe(0);
  expect(out.status).toBe(200);
  expect(out.report).toEqual([]);
});
