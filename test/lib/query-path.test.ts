import { expect, test } from "bun:test";
import { withQuery } from "../../src/lib/query-path";

test("keeps the parameters in the order given, URL-encoded", () => {
  expect(withQuery("/api/admin/rollouts", { status: "running", q: "new checkout & pay" })).toBe("/api/admin/rollouts?status=running&q=new+checkout+%26+pay");
  expect(withQuery("/p", { b: "1", a: "2" })).toBe("/p?b=1&a=2");
  expect(withQuery("/p", { q: "Größe ✓" })).toBe("/p?q=Gr%C3%B6%C3%9Fe+%E2%9C%93");
  expect(withQuery("/p", { "a b": "x=y?z#" })).toBe("/p?a+b=x%3Dy%3Fz%23");
});

test("drops undefined, null and empty strings", () => {
  expect(withQuery("/p", { a: undefined, b: "kept", c: null, d: "" })).toBe("/p?b=kept");
  expect(withQuery("/p", { a: " " })).toBe("/p?a=+");
});

test("numbers and booleans become their String(), false and 0 included", () => {
  expect(withQuery("/p", { limit: 20, before: 0, all: true, dry: false })).toBe("/p?limit=20&before=0&all=true&dry=false");
});

test("no ? when nothing remains", () => {
  expect(withQuery("/api/admin/audit", {})).toBe("/api/admin/audit");
  expect(withQuery("/api/admin/audit", { a: undefined, b: null, c: "" })).toBe("/api/admin/audit");
});

test("a path without a query gets one appended; the path itself is not encoded", () => {
  expect(withQuery("/api/admin/connectors/a%2Fb/deliveries", { limit: 5 })).toBe("/api/admin/connectors/a%2Fb/deliveries?limit=5");
  expect(withQuery("/api/admin/errors", { status: "regressed" })).toBe("/api/admin/errors?status=regressed");
});
