import { describe as group, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { t } from "elysia";
import { hasTransform } from "elysia/schema";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { ErrorBodySchema, Integer, describe, documentedResponses } from "../../src/lib/http";

/**
 * Issue 32 (memory): every route's `response` record (status → schema) is kept by Elysia for the life of the
 * server. Keyed by status numbers up to 503, a plain object is a dense indexed store in JSC (5–8 KB each, ~1.5 MB
 * for the app's routes); the records are shared between routes with the same statuses and schemas, and built
 * sparse, with the same keys, order and schemas as `{ ...errors, ...response }` gave.
 */
group("describe() response records", () => {
  const Thing = t.Object({ id: t.String() });

  test("the documented statuses and schemas are those of the error statuses overlaid with the route's own", () => {
    const admin = describe({ summary: "s", tag: "T", auth: "admin", errors: [404, 409], response: { 200: Thing } });
    const documented = documentedResponses(admin.response)!;
    expect(Object.keys(documented)).toEqual(["200", "400", "401", "403", "404", "409", "503"]);
    expect(documented[200]).toBe(Thing);
    for (const code of [400, 401, 403, 404, 409, 503] as const) expect(documented[code]).toBe(ErrorBodySchema);
    const open = describe({ summary: "s", tag: "T", auth: "none", response: { 503: Thing, 201: Thing } });
    expect(Object.keys(documentedResponses(open.response)!)).toEqual(["201", "503"]);
    expect(documentedResponses(open.response)![503]).toBe(Thing);
    expect(JSON.stringify(documentedResponses(open.response))).toBe(JSON.stringify({ 201: Thing, 503: Thing }));
  });

  // Issue 32 (memory): Elysia compiles a validator for every status of the record on the route's first request, and
  // error bodies leave the root onError as ready Responses, never validated: the record it gets has the success
  // statuses only (the type keeps the errors for typed clients; test/app.test.ts checks the served document).
  test("the record Elysia gets holds the route's own statuses only, never the error schema", () => {
    const admin = describe({ summary: "s", tag: "T", auth: "admin", errors: [404, 409], response: { 200: Thing } });
    expect(Object.keys(admin.response)).toEqual(["200"]);
    expect(admin.response[200]).toBe(Thing);
    const open = describe({ summary: "s", tag: "T", auth: "none", response: { 503: Thing, 201: Thing } });
    expect(Object.keys(open.response)).toEqual(["201", "503"]);
    expect(open.response[503]).toBe(Thing);
    const bare = describe({ summary: "s", tag: "T", auth: "admin", errors: [404] });
    expect(Object.keys(bare.response)).toEqual([]);
    expect(Object.keys(documentedResponses(bare.response)!)).toEqual(["400", "401", "403", "404", "503"]);
    // The same success schemas with other error statuses: another record, documented with its own errors.
    const other = describe({ summary: "s", tag: "T", auth: "admin", errors: [409], response: { 200: Thing } });
    expect(other.response).not.toBe(admin.response);
    expect(Object.keys(documentedResponses(other.response)!)).toEqual(["200", "400", "401", "403", "409", "503"]);
    expect(documentedResponses({ 200: Thing })).toBeUndefined();
  });

  test("routes with the same statuses and schemas share one record; another schema gets its own", () => {
    const a = describe({ summary: "a", tag: "T", auth: "admin", errors: [404], response: { 200: Thing } });
    const b = describe({ summary: "b", tag: "U", auth: "admin+project", errors: [404], response: { 200: Thing } });
    const c = describe({ summary: "c", tag: "T", auth: "admin", errors: [404], response: { 200: t.Array(Thing) } });
    expect(b.response).toBe(a.response);
    expect(c.response).not.toBe(a.response);
    expect(b.detail.summary).toBe("b");
  });

  test("a route's record holds well under a kilobyte or two of heap, not a dense store up to index 503", () => {
    const keep: unknown[] = [];
    const heap = () => {
      Bun.gc(true);
      Bun.gc(true);
      return heapStats().heapSize;
    };
    const schemas = Array.from({ length: 300 }, () => t.Object({ id: t.String() }));
    const before = heap();
    for (const schema of schemas) keep.push(describe({ summary: "s", tag: "T", auth: "admin", errors: [404, 409], response: { 200: schema } }).response);
    const perRecord = (heap() - before) / schemas.length;
    expect(keep.length).toBe(300);
    expect(perRecord).toBeLessThan(2000);
  });

  // Issue 32 (hot paths): Integer() is a TypeBox Transform (a query's "5" becomes 5), and Elysia runs TypeBox's
  // value Encode, a walk of the whole answer, on every answer whose schema holds a transform: a third of the
  // time of listing 50 killswitches. An answer's integers are numbers already: Elysia gets the schema with
  // plain integers, checked by its compiled validator as every other answer is; the document keeps the original.
  test("a success schema holding Integer() reaches Elysia without transforms, and checks the same answers", () => {
    const Versioned = t.Object({ id: t.String(), version: Integer({ minimum: 1 }), items: t.Array(t.Object({ n: Integer() })), count: t.Optional(Integer()) });
    expect(hasTransform(Versioned)).toBe(true);
    const route = describe({ summary: "s", tag: "T", auth: "admin", errors: [404], response: { 200: Versioned, 201: Thing } });
    const plain = route.response[200];
    expect(hasTransform(plain)).toBe(false);
    // A schema without transforms is passed as it is.
    expect(route.response[201]).toBe(Thing);
    // The document lists what the contract declares.
    expect(documentedResponses(route.response)![200]).toBe(Versioned);
    // It takes exactly what Elysia's Encode took (Integer()'s union: an integer, or a string of one).
    const check = TypeCompiler.Compile(plain);
    const encodes = (value: unknown) => {
      try {
        Value.Encode(Versioned, value);
        return true;
      } catch {
        return false;
      }
    };
    const answers: unknown[] = [
      { id: "a", version: 3, items: [{ n: 0 }], count: 2 },
      { id: "a", version: 3, items: [] },
      { id: "a", version: "3", items: [{ n: "12" }] },
      { id: "a", version: 0, items: [] },
      { id: "a", version: 1.5, items: [] },
      { id: "a", version: "1.5", items: [] },
      { id: "a", version: 3, items: [{ n: true }] },
      { id: "a", version: 3, items: [], count: null },
      { version: 3, items: [] },
      null,
    ];
    const verdicts = answers.map((answer) => [check.Check(answer), encodes(answer)]);
    for (const [checked, encoded] of verdicts) expect(checked).toBe(encoded);
    expect(verdicts.map(([checked]) => checked)).toEqual([true, true, true, false, false, false, false, false, false, false]);
    // The same schema again: the same plain copy (made once per schema).
    expect(describe({ summary: "s2", tag: "T", auth: "admin", errors: [409], response: { 200: Versioned } }).response[200]).toBe(plain);
  });
});
