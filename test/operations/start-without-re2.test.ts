/**
 * The server's start loads no re2js (issue 32, memory): its 263 KB of source cost ~0.4 MB of heap, and the server
 * needs it only for the first pattern it compiles (src/lib/re2.ts loads it then). The GrowthBook mapping had
 * imported the SDK's RE2 helper, which imports re2js at load, so every start paid for it.
 */
import { expect, test } from "bun:test";
import { firstHealthzInChild } from "./first-healthz";

test("svc serve answers its first /healthz without loading re2js", () => {
  const out = firstHealthzInChild<string[]>("", `Object.keys(require.cache).filter((path) => path.includes("/re2js/"))`, "svc-re2-");
  expect(out.exitCode, out.stderr).toBe(0);
  expect(out.status).toBe(200);
  expect(out.report).toEqual([]);
});
