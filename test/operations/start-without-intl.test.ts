/**
 * The server's start loads no Intl (issue 32, item 4): ICU's first use costs a start milliseconds, and route
 * descriptions are built at start, so they group digits with groupDigits (src/lib/http.ts), not toLocaleString.
 * Two descriptions had gone back to toLocaleString (configs' value limits, errors' ingest limits).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { groupDigits } from "../../src/lib/http";
import { SCHEMA_COST_BUDGET } from "../../src/modules/configs/schema-cost";
import { NEW_ERRORS_PER_MINUTE } from "../../src/modules/errors/types";
import { BUN, ROOT } from "../cli/process";
import { tempDir } from "../helpers";

/** Run in a child: every Intl entry point traps until the first /healthz answer; what called one is printed. */
const TRAPPED_START = `
const calls = [];
let started = false;
const note = (label) => { if (!started) calls.push(label + " " + (new Error().stack ?? "").split("\\n").slice(2, 4).join(" | ")); };
for (const [proto, name, label] of [[Number.prototype, "toLocaleString", "Number#toLocaleString"], [String.prototype, "localeCompare", "String#localeCompare"], [Date.prototype, "toLocaleString", "Date#toLocaleString"], [Date.prototype, "toLocaleDateString", "Date#toLocaleDateString"], [Date.prototype, "toLocaleTimeString", "Date#toLocaleTimeString"], [Array.prototype, "toLocaleString", "Array#toLocaleString"]]) {
  const original = proto[name];
  proto[name] = function (...args) { note(label); return original.apply(this, args); };
}
for (const name of ["NumberFormat", "DateTimeFormat", "Collator", "PluralRules", "RelativeTimeFormat", "ListFormat", "Segmenter", "DisplayNames", "Locale"]) {
  const C = Intl[name];
  if (C) Intl[name] = new Proxy(C, { construct(target, args) { note("Intl." + name); return Reflect.construct(target, args); }, apply(target, self, args) { note("Intl." + name); return Reflect.apply(target, self, args); } });
}
const { startServer } = await import(${JSON.stringify(join(ROOT, "src/server.ts"))});
const server = await startServer({ port: 0, host: "127.0.0.1", dataDir: process.argv[1], quiet: true, logRequests: false });
const healthz = await fetch(server.url + "/healthz");
started = true;
console.log(JSON.stringify({ status: healthz.status, calls }));
await server.stop();
process.exit(0);
`;

test("svc serve answers its first /healthz without using Intl (no ICU loaded at start)", () => {
  const run = Bun.spawnSync([BUN, "-e", TRAPPED_START, tempDir("svc-intl-")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(run.exitCode, run.stderr.toString()).toBe(0);
  const out = JSON.parse(run.stdout.toString().trim().split("\n").at(-1)!) as { status: number; calls: string[] };
  expect(out.status).toBe(200);
  expect(out.calls).toEqual([]);
});

test("the descriptions read as before: groupDigits writes what toLocaleString wrote", () => {
  for (const n of [SCHEMA_COST_BUDGET, NEW_ERRORS_PER_MINUTE, 0, 999, 1000, 100_000, 1_234_567]) expect(groupDigits(n)).toBe(n.toLocaleString("en-US"));
});
