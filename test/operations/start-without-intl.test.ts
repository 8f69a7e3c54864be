/**
 * The server's start loads no Intl (issue 32, item 4): ICU's first use costs a start milliseconds, and route
 * descriptions are built at start, so they group digits with groupDigits (src/lib/http.ts), not toLocaleString.
 * Two descriptions had gone back to toLocaleString (configs' value limits, errors' ingest limits).
 */
import { expect, test } from "bun:test";
import { groupDigits } from "../../src/lib/http";
import { SCHEMA_COST_BUDGET } from "../../src/modules/configs/schema-cost";
import { NEW_ERRORS_PER_MINUTE } from "../../src/modules/errors/types";
import { firstHealthzInChild } from "./first-healthz";

/** Run in a child: every Intl entry point traps until the first /healthz answer; what called one is printed. */
const TRAP = `
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
`;

test("svc serve answers its first /healthz without using Intl (no ICU loaded at start)", () => {
  const out = firstHealthzInChild<string[]>(TRAP, "(started = true, calls)", "svc-intl-");
  expect(out.exitCode, out.stderr).toBe(0);
  expect(out.status).toBe(200);
  expect(out.report).toEqual([]);
});

test("the descriptions read as before: groupDigits writes what toLocaleString wrote", () => {
  for (const n of [SCHEMA_COST_BUDGET, NEW_ERRORS_PER_MINUTE, 0, 999, 1000, 100_000, 1_234_567]) expect(groupDigits(n)).toBe(n.toLocaleString("en-US"));
});
