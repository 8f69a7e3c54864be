import { describe as group, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { t } from "elysia";
import { ErrorBodySchema, describe, documentedResponses } from "../../src/lib/http";

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
});
