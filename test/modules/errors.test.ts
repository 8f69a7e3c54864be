import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import {
  cleanText,
  culpritOf,
  defaultGroupingKey,
  fileBasename,
  fingerprintOf,
  normaliseMessage,
  parseStack,
} from "../../src/modules/errors/fingerprint";
import { ERROR_ITEMS_PER_MINUTE, NEW_ERRORS_PER_MINUTE } from "../../src/modules/errors/types";
import { type TestServer, startTestServer } from "../helpers";

// ---------------------------------------------------------------- fingerprints (pure)

/** A V8 stack of `fns` (top first) in `file`, each at its own line `base + i`. */
const v8Stack = (type: string, message: string, fns: string[], base = 10, file = "/srv/app/lib/checkout.js") =>
  [`${type}: ${message}`, ...fns.map((fn, i) => `    at ${fn} (${file}:${base + i * 7}:${3 + i})`)].join("\n");

const fp = (type: string, message: string, stack?: string, custom?: string | string[]) =>
  fingerprintOf({ type, message, frames: stack ? parseStack(stack) : [], custom });

describe("fingerprint", () => {
  test("parses V8/Bun and Firefox stacks, top first, with in-app decided by the file", () => {
    const frames = parseStack(
      [
        "TypeError: Cannot read properties of undefined (reading 'total')",
        "    at chargeCard (/srv/app/lib/checkout.js:42:17)",
        "    at async Checkout.handle [as run] (file:///srv/app/routes/checkout.mjs:18:5)",
        "    at new Order (/srv/app/lib/order.js:7:9)",
        "    at /srv/app/server.js:99:1",
        "    at Layer.handle (/srv/app/node_modules/express/lib/router/layer.js:95:5)",
        "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
        "    at async Promise.all (index 0)",
        "    at <anonymous> (native:7:39)",
        "    at eval (eval at compile (/srv/app/lib/tpl.js:3:10), <anonymous>:1:1)",
        "render@https://cdn.example.com/assets/main.3f2a1b9c.js:1:2042",
        "@https://cdn.example.com/assets/main.3f2a1b9c.js:1:99",
        "    ... 4 more lines",
      ].join("\n"),
    );
    expect(frames.map((f) => [f.function ?? null, f.filename ?? null, f.lineno ?? null, f.inApp])).toEqual([
      ["chargeCard", "/srv/app/lib/checkout.js", 42, true],
      ["async Checkout.handle [as run]", "/srv/app/routes/checkout.mjs", 18, true],
      ["new Order", "/srv/app/lib/order.js", 7, true],
      [null, "/srv/app/server.js", 99, true],
      ["Layer.handle", "/srv/app/node_modules/express/lib/router/layer.js", 95, false],
      ["process.processTicksAndRejections", "node:internal/process/task_queues", 95, false],
      ["async Promise.all", "index 0", null, false],
      ["<anonymous>", "native", 7, false],
      ["eval", "/srv/app/lib/tpl.js", 3, true],
      ["render", "https://cdn.example.com/assets/main.3f2a1b9c.js", 1, true],
      [null, "https://cdn.example.com/assets/main.3f2a1b9c.js", 1, true],
    ]);
    expect(culpritOf(frames)).toBe("chargeCard (/srv/app/lib/checkout.js:42)");
    expect(parseStack("")).toEqual([]);
    expect(parseStack("just a message\nwith lines")).toEqual([]);
  });

  test("is 32 hex characters, and ignores line and column numbers (a deploy that moves code keeps the error)", () => {
    const a = fp("TypeError", "x is undefined", v8Stack("TypeError", "x is undefined", ["chargeCard", "placeOrder", "handle"], 10));
    const b = fp("TypeError", "x is undefined", v8Stack("TypeError", "x is undefined", ["chargeCard", "placeOrder", "handle"], 250));
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(b).toBe(a);
    // The directory the release lives in does not matter either: the file's basename does.
    expect(fp("TypeError", "x", v8Stack("TypeError", "x", ["chargeCard", "placeOrder", "handle"], 10, "/srv/releases/2026-11-23/lib/checkout.js"))).toBe(a);
    // Another function, another type, or another file is another error.
    expect(fp("TypeError", "x", v8Stack("TypeError", "x", ["refund", "placeOrder", "handle"]))).not.toBe(a);
    expect(fp("RangeError", "x", v8Stack("RangeError", "x", ["chargeCard", "placeOrder", "handle"]))).not.toBe(a);
    expect(fp("TypeError", "x", v8Stack("TypeError", "x", ["chargeCard", "placeOrder", "handle"], 10, "/srv/app/lib/payments.js"))).not.toBe(a);
    // With frames, the message does not group: `order 1` and `order 2` are one error.
    expect(fp("TypeError", "completely different text", v8Stack("TypeError", "y", ["chargeCard", "placeOrder", "handle"]))).toBe(a);
  });

  test("uses the top five in-app frames; library frames only when no frame is in-app", () => {
    const app = (fns: string[]) => fns.map((fn, i) => `    at ${fn} (/srv/app/a.js:${i + 1}:1)`);
    const lib = (fns: string[]) => fns.map((fn, i) => `    at ${fn} (/srv/app/node_modules/x/index.js:${i + 1}:1)`);
    const stack = (...parts: string[][]) => ["Error: boom", ...parts.flat()].join("\n");
    const base = fp("Error", "boom", stack(app(["f1", "f2"]), lib(["l1"]), app(["f3", "f4", "f5", "f6"])));
    // Other library frames (a dependency upgraded) and a sixth in-app frame do not change it.
    expect(fp("Error", "boom", stack(lib(["other"]), app(["f1", "f2"]), lib(["l9", "l8"]), app(["f3", "f4", "f5", "zzz"])))).toBe(base);
    // One of the top five does.
    expect(fp("Error", "boom", stack(app(["f1", "f2"]), lib(["l1"]), app(["f3", "CHANGED", "f5", "f6"])))).not.toBe(base);
    // Nothing in-app: the library frames group.
    const libOnly = fp("Error", "boom", stack(lib(["l1", "l2"])));
    expect(fp("Error", "boom", stack(lib(["l1", "l2"])).replaceAll(":1:1", ":80:3"))).toBe(libOnly);
    expect(fp("Error", "boom", stack(lib(["l1", "l3"])))).not.toBe(libOnly);
    expect(defaultGroupingKey({ type: "Error", message: "boom", frames: parseStack(stack(app(["f1"]))) })).toBe("frames\nError\na.js|f1");
  });

  test("keeps function names without async/new/[as alias], and file names without a build's content hash", () => {
    expect(defaultGroupingKey({ type: "E", message: "", frames: parseStack("at async Checkout.handle [as run] (/a/b.js:1:1)") })).toBe("frames\nE\nb.js|Checkout.handle");
    expect(fileBasename("https://cdn.example.com/assets/main.3f2a1b9c.js?v=2#x")).toBe("main.js");
    expect(fileBasename("/static/js/chunk-5d41402abc.js")).toBe("chunk.js");
    expect(fileBasename("/assets/index-DiwrgT2a.js")).toBe("index.js");
    expect(fileBasename("C:\\app\\src\\checkout-handler.js")).toBe("checkout-handler.js");
    // Minified bundles of two deploys group together.
    expect(fp("TypeError", "a", "TypeError: a\n    at n (https://x.example/main.11aa22bb.js:1:5000)")).toBe(fp("TypeError", "b", "TypeError: b\n    at n (https://x.example/main.33cc44dd.js:1:7100)"));
  });

  test("without frames: the message with numbers, ids, hex, emails and URLs as placeholders", () => {
    expect(normaliseMessage("User 42 not found (took 3.25 ms)")).toBe("User <n> not found (took <n> ms)");
    expect(normaliseMessage("Order 7f3c2a91-0b4e-4c1a-9d2e-5f6a7b8c9d0e for ana.lopez+test@example.co.uk failed")).toBe("Order <uuid> for <email> failed");
    expect(normaliseMessage("GET https://api.example.com/v2/users/42?x=1 returned 503")).toBe("GET <url> returned <n>");
    expect(normaliseMessage("pointer 0xDEADBEEF, object 5f2b9c0e4d1a7b3c, word deadbeef")).toBe("pointer <hex>, object <hex>, word deadbeef");
    expect(normaliseMessage("a\u0000b\n\n  c")).toBe("a b c");
    expect(fp("Error", "User 42 not found")).toBe(fp("Error", "User 43 not found"));
    expect(fp("Error", "User 42 not found")).not.toBe(fp("Error", "Order 42 not found"));
    expect(fp("Error", "User 42 not found")).not.toBe(fp("NotFoundError", "User 42 not found"));
    // Long hostile text is cheap: only the start groups.
    const started = performance.now();
    for (let i = 0; i < 50; i++) normaliseMessage(`${"a".repeat(100_000)}@${"b.".repeat(50_000)}`);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  test("a client fingerprint wins, hashed to the same shape; Sentry's {{ default }} means the default grouping", () => {
    const mine = fp("Error", "anything", v8Stack("Error", "anything", ["a"]), "payment-timeout");
    expect(mine).toMatch(/^[0-9a-f]{32}$/);
    expect(fp("RangeError", "else", undefined, "payment-timeout")).toBe(mine);
    expect(fp("Error", "x", undefined, ["payment-timeout"])).toBe(mine);
    const stack = v8Stack("Error", "x", ["a", "b"]);
    const withDefault = fp("Error", "x", stack, ["{{ default }}", "eu"]);
    expect(withDefault).toBe(fp("Error", "y", stack.replaceAll(":1", ":9"), ["{{ default }}", "eu"]));
    expect(withDefault).not.toBe(fp("Error", "x", stack, ["{{ default }}", "us"]));
    expect(withDefault).not.toBe(fp("Error", "x", stack));
  });

  test("sample texts are one line, without control characters, cut at the limit", () => {
    expect(cleanText("  a\tb\u0000c\n", 100)).toBe("a b c");
    expect(cleanText("x".repeat(2000), 1000)).toHaveLength(1000);
    expect(cleanText(`${"x".repeat(999)}😀`, 1000)).toBe(`${"x".repeat(999)}…`);
    // Never half a surrogate pair.
    expect(cleanText(`${"x".repeat(998)}😀😀`, 1000)).toBe(`${"x".repeat(998)}…`);
    expect(cleanText("a\u202eb\ufeffc\u2066d", 100)).toBe("a b c d");
  });
});

// ---------------------------------------------------------------- the API

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(() => ts.stop());

const sdk = (errors: unknown, key: string | null = ts.serverKey) => ts.api("/api/sdk/v1/errors", { body: { errors }, key });
const HOUR = 3600;

describe("POST /api/sdk/v1/errors", () => {
  test("groups occurrences, answers 202 with the count, and lists them most recently seen first", async () => {
    const now = Date.now();
    const stackA = v8Stack("TypeError", "Cannot read properties of undefined (reading 'total')", ["chargeCard", "placeOrder"], 40);
    const r = await sdk([
      { message: "Cannot read properties of undefined (reading 'total')", type: "TypeError", stack: stackA, ts: now - 60_000, unitId: "user-1", properties: { release: "1.0.0", retry: false, attempt: 1, gone: null } },
      // The same error after a deploy (other lines), for another unit, with an ISO time.
      { message: "Cannot read properties of undefined (reading 'total')", type: "TypeError", stack: stackA.replaceAll(":4", ":9"), ts: new Date(now - 30_000).toISOString(), unitId: "user-2" },
      { message: "Cannot read properties of undefined (reading 'total')", type: "TypeError", stack: stackA, ts: now - 45_000, unitId: "user-1" },
      { message: "Payment provider timed out after 30000 ms", type: "TimeoutError", fingerprint: "payment-timeout", ts: now - 120_000 },
    ]);
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ accepted: 4 });

    const list = await ts.api("/api/admin/errors");
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(2);
    const [a, b] = list.body;
    expect(a).toEqual({
      id: expect.stringMatching(/^err_/),
      fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/),
      type: "TypeError",
      message: "Cannot read properties of undefined (reading 'total')",
      culprit: "chargeCard (/srv/app/lib/checkout.js:90)",
      status: "unresolved",
      count: 3,
      affectedUnits: 2,
      firstSeenAt: new Date(now - 60_000).toISOString(),
      lastSeenAt: new Date(now - 30_000).toISOString(),
      statusChangedAt: null,
      statusChangedBy: null,
    });
    expect(b).toMatchObject({ type: "TimeoutError", count: 1, affectedUnits: 0, culprit: null, message: "Payment provider timed out after 30000 ms" });
    expect(b.fingerprint).toBe(fingerprintOf({ type: "x", message: "y", frames: [], custom: "payment-timeout" }));

    // Each occurrence is also an event `$error:<fingerprint>` in the event store.
    const from = Math.floor((now - 10 * 60_000) / 1000);
    const series = await ts.api(`/api/admin/errors/${a.id}/series`, { body: { from, to: from + 20 * 60, bucket: 60 } });
    expect(series.status).toBe(200);
    expect(series.body.rows).toHaveLength(20);
    expect(series.body.rows.reduce((n: number, row: any) => n + row.v, 0)).toBe(3);
    expect(series.body.sql).toMatch(/^SELECT .*events/);
  });

  test("occurrences with the same message and no frames group by the message without its numbers; q and status filter", async () => {
    await sdk([{ message: "User 1001 not found" }, { message: "User 2002 not found", unitId: "user-9" }]);
    const found = await ts.api("/api/admin/errors?q=user%20");
    expect(found.body.map((e: any) => [e.type, e.message, e.count])).toEqual([["Error", "User 2002 not found", 2]]);
    expect((await ts.api("/api/admin/errors?q=TIMEOUTerror")).body.map((e: any) => e.type)).toEqual(["TimeoutError"]);
    expect((await ts.api("/api/admin/errors?status=resolved")).body).toEqual([]);
    expect((await ts.api("/api/admin/errors?status=unresolved")).body.length).toBe(3);
    const bad = await ts.api("/api/admin/errors?status=closed");
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("VALIDATION");
    expect(bad.body.detail).toContain("status");
  });

  test("get by id, fingerprint or unique id prefix; 404 otherwise", async () => {
    const [first] = (await ts.api("/api/admin/errors")).body;
    // The error as listed, plus its kept occurrences (issue 27, item 2).
    const listedPart = ({ body: { occurrences, ...error } }: { body: any }) => {
      expect(occurrences.length).toBeGreaterThan(0);
      return error;
    };
    expect(listedPart(await ts.api(`/api/admin/errors/${first.id}`))).toEqual(first);
    expect(listedPart(await ts.api(`/api/admin/errors/${first.fingerprint}`))).toEqual(first);
    expect(listedPart(await ts.api(`/api/admin/errors/${first.id.slice(0, 14)}`))).toEqual(first);
    // Too short to be a prefix, ambiguous, or unknown.
    expect((await ts.api(`/api/admin/errors/${first.id.slice(0, 5)}`)).status).toBe(404);
    const ambiguous = await ts.api("/api/admin/errors/err_");
    expect(ambiguous.status).toBe(404);
    expect(ambiguous.body.code).toBe("NOT_FOUND");
    expect((await ts.api("/api/admin/errors/err_nope")).status).toBe(404);
    // LIKE wildcards in a reference are plain characters.
    expect((await ts.api("/api/admin/errors/err_%25%25%25")).status).toBe(404);
    expect((await ts.api("/api/admin/errors/______")).status).toBe(404);
    // Another project's error is not there.
    const other = await ts.newProject("Other");
    expect((await ts.api(`/api/admin/errors/${first.id}`, { key: other.adminKey })).status).toBe(404);
    expect((await ts.api("/api/admin/errors", { key: other.adminKey })).body).toEqual([]);
  });

  test("resolve (audited), regress on a new occurrence (audited by the system), ignore (stays ignored)", async () => {
    const error = (await ts.api("/api/admin/errors?q=timed%20out")).body[0];
    const resolved = await ts.api(`/api/admin/errors/${error.id}`, { method: "PATCH", body: { status: "resolved" } });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ id: error.id, status: "resolved", statusChangedBy: expect.stringContaining("admin-key") });
    expect(resolved.body.statusChangedAt).not.toBeNull();
    expect((await ts.api("/api/admin/errors?status=resolved")).body.map((e: any) => e.id)).toEqual([error.id]);
    let audit = await auditOf(ts.store, ts.projectId);
    expect(audit[0]).toMatchObject({ action: "error.status", subjectId: error.id, actorType: "key" });
    expect(audit[0]!.detail).toMatchObject({ from: "unresolved", to: "resolved" });

    // The same status again changes nothing and records nothing.
    const before = audit.length;
    expect((await ts.api(`/api/admin/errors/${error.id}`, { method: "PATCH", body: { status: "resolved" } })).body.statusChangedAt).toBe(resolved.body.statusChangedAt);
    expect((await auditOf(ts.store, ts.projectId)).length).toBe(before);

    expect((await sdk([{ message: "Payment provider timed out after 31000 ms", fingerprint: "payment-timeout" }])).status).toBe(202);
    const regressed = (await ts.api(`/api/admin/errors/${error.id}`)).body;
    expect(regressed).toMatchObject({ status: "regressed", count: 2, statusChangedBy: "system@svc.local", message: "Payment provider timed out after 31000 ms" });
    audit = await auditOf(ts.store, ts.projectId);
    expect(audit[0]).toMatchObject({ action: "error.regress", subjectId: error.id, actorEmail: "system@svc.local", actorType: "system" });
    // Listed first now (seen last), and under its status.
    expect((await ts.api("/api/admin/errors")).body[0].id).toBe(error.id);
    expect((await ts.api("/api/admin/errors?status=regressed")).body.map((e: any) => e.id)).toEqual([error.id]);
    // Regressed again stays regressed (no second regress row).
    await sdk([{ message: "Payment provider timed out", fingerprint: "payment-timeout" }]);
    expect((await auditOf(ts.store, ts.projectId)).filter((r) => r.action === "error.regress")).toHaveLength(1);

    const ignored = await ts.api(`/api/admin/errors/${error.id}`, { method: "PATCH", body: { status: "ignored" } });
    expect(ignored.body.status).toBe("ignored");
    await sdk([{ message: "Payment provider timed out", fingerprint: "payment-timeout", unitId: "u-77" }]);
    expect((await ts.api(`/api/admin/errors/${error.id}`)).body).toMatchObject({ status: "ignored", count: 4, affectedUnits: 1 });

    // regressed is svc's to set; unknown fields and errors are refused.
    for (const body of [{ status: "regressed" }, { status: "closed" }, { status: "resolved", note: "x" }, {}]) {
      const r = await ts.api(`/api/admin/errors/${error.id}`, { method: "PATCH", body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe("VALIDATION");
    }
    expect((await ts.api("/api/admin/errors/err_missing1", { method: "PATCH", body: { status: "resolved" } })).status).toBe(404);
    // A read-only credential cannot change a status.
    const token = await ts.api("/api/admin/tokens", { body: { name: "ci", access: "read-only" } });
    expect(token.status).toBe(201);
    const readOnly = await ts.api(`/api/admin/errors/${error.id}`, { method: "PATCH", body: { status: "resolved" }, key: token.body.token });
    expect(readOnly.status).toBe(403);
    // Reading (a series included) is enough for it.
    expect((await ts.api(`/api/admin/errors/${error.id}/series`, { body: { from: 0, to: 3600, bucket: 3600 }, key: token.body.token })).status).toBe(200);
  });

  test("series: hourly buckets, every bucket listed; the window rules; 404 for an unknown error", async () => {
    const now = Date.now();
    const hourStart = Math.floor(now / 1000 / HOUR) * HOUR;
    const stack = v8Stack("Error", "series", ["seriesFn"]);
    await sdk([
      { message: "series", stack, ts: (hourStart - 2 * HOUR + 10) * 1000 },
      { message: "series", stack, ts: (hourStart - 2 * HOUR + 20) * 1000 },
      { message: "series", stack, ts: (hourStart + 5) * 1000 },
    ]);
    const error = (await ts.api("/api/admin/errors?q=series")).body[0];
    const r = await ts.api(`/api/admin/errors/${error.id}/series`, { body: { from: hourStart - 3 * HOUR, to: hourStart + HOUR, bucket: HOUR } });
    expect(r.status).toBe(200);
    expect(r.body.rows).toEqual([
      { t: hourStart - 3 * HOUR, v: 0 },
      { t: hourStart - 2 * HOUR, v: 2 },
      { t: hourStart - HOUR, v: 0 },
      { t: hourStart, v: 1 },
    ]);
    expect(typeof r.body.sql).toBe("string");
    // By fingerprint too.
    expect((await ts.api(`/api/admin/errors/${error.fingerprint}/series`, { body: { from: hourStart - 3 * HOUR, to: hourStart + HOUR, bucket: HOUR } })).body.rows).toEqual(r.body.rows);

    const bad = async (body: unknown) => {
      const res = await ts.api(`/api/admin/errors/${error.id}/series`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("VALIDATION");
      return res.body.detail as string;
    };
    expect(await bad({ from: 100, to: 100, bucket: 1 })).toContain("to");
    expect(await bad({ from: 200, to: 100, bucket: 1 })).toContain("to");
    expect(await bad({ from: 0, to: 10_001, bucket: 1 })).toContain("bucket");
    expect(await bad({ from: 0, to: 100, bucket: 0 })).toContain("bucket");
    expect(await bad({ from: 0, to: 100, bucket: 1.5 })).toContain("bucket");
    expect(await bad({ from: "0", to: 100, bucket: 1 })).toContain("from");
    expect(await bad({ from: 0, to: 100 })).toContain("bucket");
    expect(await bad({ from: 0, to: 100, bucket: 10, extra: 1 })).toContain("extra");
    // Exactly 10,000 buckets is fine.
    expect((await ts.api(`/api/admin/errors/${error.id}/series`, { body: { from: 0, to: 10_000, bucket: 1 } })).body.rows).toHaveLength(10_000);
    expect((await ts.api("/api/admin/errors/err_unknown1/series", { body: { from: 0, to: 100, bucket: 10 } })).status).toBe(404);
  });

  test("1 to 1,000 items a call", async () => {
    const items = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ message: `limit ${tag}`, fingerprint: `limit-${tag}`, unitId: `u${i % 250}` }));
    const ok = await sdk(items(1000, "ok"));
    expect(ok.status).toBe(202);
    expect(ok.body).toEqual({ accepted: 1000 });
    expect((await ts.api("/api/admin/errors?q=limit%20ok")).body[0]).toMatchObject({ count: 1000, affectedUnits: 250 });
    for (const n of [1001, 0]) {
      const r = await sdk(items(n, "no"));
      expect(r.status).toBe(400);
      expect(r.body.code).toBe("VALIDATION");
      expect(r.body.detail).toContain("errors");
    }
    expect((await ts.api("/api/admin/errors?q=limit%20no")).body).toEqual([]);
    // 1,000 distinct errors in one call (in a project of their own: they are its whole minute's allowance of new errors).
    const own = await ts.newProject("Distinct errors");
    const distinct = Array.from({ length: 1000 }, (_, i) => ({ message: `distinct ${i}`, fingerprint: `distinct-${i}`, unitId: `u${i}` }));
    const many = await sdk(distinct, own.serverKey);
    expect(many.status).toBe(202);
    // All tracked; queue items only for the first ERROR_ITEMS_PER_MINUTE of them, as the answer says.
    expect(many.body).toEqual({
      accepted: 1000,
      dropped: 0,
      limited: [{ reason: "error_items_per_minute", limit: ERROR_ITEMS_PER_MINUTE, count: 1000 - ERROR_ITEMS_PER_MINUTE, retryAfter: expect.any(Number), detail: expect.any(String) }],
    });
    expect((await ts.api("/api/admin/errors?q=distinct", { key: own.adminKey })).body).toHaveLength(1000);
  });

  test("hostile and wrong inputs: 400 naming the field, nothing stored; bad keys 401/403", async () => {
    const count = async () => Number((await ts.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM tracked_errors WHERE project_id = ?", ts.projectId))!.n);
    const before = await count();
    const cases: [unknown, string][] = [
      [[{ message: "x", colour: "red" }], "colour"],
      [[{ type: "Error" }], "message"],
      [[{ message: 42 }], "message"],
      [[{ message: "x", ts: "yesterday" }], "errors[0].ts"],
      [[{ message: "x", ts: Date.now() + 3 * 86_400_000 }], "errors[0].ts"],
      [[{ message: "x", ts: 0 }], "errors[0].ts"],
      [[{ message: "ok" }, { message: "x", unitId: "a\u0001b" }], "errors[1].unitId"],
      [[{ message: "x", unitId: "" }], "unitId"],
      [[{ message: "x", unitId: "u".repeat(257) }], "unitId"],
      [[{ message: "x", properties: { "bad name": 1 } }], "errors[0].properties"],
      [[{ message: "x", properties: { nested: { a: 1 } } }], "nested"],
      [[{ message: "x", fingerprint: "" }], "fingerprint"],
      [[{ message: "x", stack: ["at a (b:1:1)"] }], "stack"],
      [{ message: "x" }, "errors"],
      [null, "errors"],
    ];
    for (const [errors, field] of cases) {
      const r = await sdk(errors);
      expect(r.status, JSON.stringify(errors).slice(0, 80)).toBe(400);
      expect(r.body.code).toBe("VALIDATION");
      expect(r.body.detail, JSON.stringify(errors).slice(0, 80)).toContain(field);
    }
    const raw = await ts.api("/api/sdk/v1/errors", { rawBody: '{"errors": [', key: ts.serverKey });
    expect(raw.status).toBe(400);
    expect(raw.body.code).toBe("BAD_REQUEST");
    expect(await count()).toBe(before);

    // Odd but valid text is stored on one line; NUL characters never reach the store.
    const odd = await sdk([
      { message: "bad \u0000 byte\n\tand 🦄 \u202e", type: " Weird\u0000Type ", stack: "x".repeat(200_000), fingerprint: "odd", properties: { s: "a\u0000b", lone: "x\ud83d" }, unitId: "u\ud800" },
      { message: "", fingerprint: "empty" },
      { message: "m".repeat(50_000), fingerprint: "long", stack: `Error: m\n${"    at f (/a.js:1:1)\n".repeat(5000)}` },
    ]);
    expect(odd.status).toBe(202);
    const stored = (await ts.api(`/api/admin/errors/${fingerprintOf({ type: null, message: "", frames: [], custom: "odd" })}`)).body;
    expect(stored).toMatchObject({ message: "bad byte and 🦄", type: "Weird Type" });
    expect((await ts.api(`/api/admin/errors/${fingerprintOf({ type: null, message: "", frames: [], custom: "empty" })}`)).body.message).toBe("(no message)");
    const long = (await ts.api(`/api/admin/errors/${fingerprintOf({ type: null, message: "", frames: [], custom: "long" })}`)).body;
    expect(long.message).toHaveLength(1000);
    expect(long.culprit).toBe("f (/a.js:1)");

    // Credentials: none, unknown, or the wrong kind of key.
    expect((await sdk([{ message: "x" }], null)).status).toBe(401);
    expect((await sdk([{ message: "x" }], "sdk_server_nope")).status).toBe(401);
    expect((await sdk([{ message: "x" }], ts.adminKey)).status).toBe(403);
    expect((await sdk([{ message: "x" }], ts.clientKey)).status).toBe(403);
    // And the admin routes refuse an SDK key.
    expect((await ts.api("/api/admin/errors", { key: ts.serverKey })).status).toBe(403);
  });

  test("concurrency: 20 parallel batches of the same error add up exactly, affected units exact", async () => {
    const stack = v8Stack("Error", "race", ["raceFn", "caller"]);
    const batches = Array.from({ length: 20 }, (_, b) =>
      // 10 occurrences each: 5 shared units, and one unit of the batch's own, twice.
      Array.from({ length: 10 }, (_, i) => ({ message: `race ${b}`, type: "RaceError", stack, unitId: i < 5 ? `shared-${i}` : `own-${b}` })),
    );
    const replies = await Promise.all(batches.map((errors) => sdk(errors)));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(202));
    const list = (await ts.api("/api/admin/errors?q=raceerror")).body;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ count: 200, affectedUnits: 25 });
    const units = await ts.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM tracked_error_units WHERE error_id = ?", list[0].id);
    expect(Number(units!.n)).toBe(25);

    // Parallel status changes and ingest never lose an occurrence.
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => ts.api(`/api/admin/errors/${list[0].id}`, { method: "PATCH", body: { status: i % 2 ? "resolved" : "unresolved" } })),
      ...Array.from({ length: 10 }, () => sdk([{ message: "race", type: "RaceError", stack, unitId: "late" }])),
    ]);
    expect((await ts.api(`/api/admin/errors/${list[0].id}`)).body).toMatchObject({ count: 210, affectedUnits: 26 });
    const series = await ts.api(`/api/admin/errors/${list[0].id}/series`, {
      body: { from: Math.floor(Date.now() / 1000) - 600, to: Math.floor(Date.now() / 1000) + 600, bucket: 1200 },
    });
    expect(series.body.rows).toEqual([{ t: expect.any(Number), v: 210 }]);
  });
});

describe("a flood from one project", () => {
  test("new errors and error-filed queue items are capped per project per minute, said in the answer and /metrics; another project's writes stay prompt", async () => {
    const server = await startTestServer();
    try {
      const flooder = await server.newProject("Flooder");
      const bystander = await server.newProject("Bystander");
      const ingest = async (key: string, errors: unknown[]) => {
        const r = await fetch(`${server.url}/api/sdk/v1/errors`, { method: "POST", headers: { "x-sdk-key": key, "content-type": "application/json" }, body: JSON.stringify({ errors }) });
        return { status: r.status, body: (await r.json()) as any };
      };
      const customFingerprint = (custom: string) => fingerprintOf({ type: null, message: "", frames: [], custom });
      let next = 0;
      const fresh = () => Array.from({ length: 1000 }, () => ({ message: "flood", type: "FloodError", fingerprint: `flood-${next++}` }));

      // The paths warmed (first calls compile and cache): the flood's effect is what is timed below.
      expect((await server.api("/api/admin/killswitches", { key: bystander.adminKey, body: { name: "bystander-warm" } })).status).toBe(201);
      expect((await ingest(bystander.serverKey, [{ message: "warm", type: "OwnError", fingerprint: "own-0" }])).status).toBe(202);

      /**
       * `workers` senders of the flooding project, each sending `rounds` calls of 1,000 occurrences back to back, while the
       * other project writes (an admin write and an error of its own) again and again until the flood is answered. Answers
       * the flood's answers and the other project's write times that started before the flood's last answer.
       */
      let writes = 0;
      const floodWhileOthersWrite = async (workers: number, rounds: number, batch: () => unknown[]) => {
        let flooding = true;
        const flood = Promise.all(
          Array.from({ length: workers }, async () => {
            const answers: Awaited<ReturnType<typeof ingest>>[] = [];
            for (let i = 0; i < rounds; i++) answers.push(await ingest(flooder.serverKey, batch()));
            return answers;
          }),
        )
          .then((perWorker) => perWorker.flat())
          .finally(() => {
            flooding = false;
          });
        const during: number[] = [];
        for (let mine = 0; mine < 3 || flooding; mine++) {
          const started = performance.now();
          const duringFlood = flooding;
          const [created, reported] = await Promise.all([
            server.api("/api/admin/killswitches", { key: bystander.adminKey, body: { name: `bystander-${writes}` } }),
            // Three errors of its own, then more occurrences of them (its own allowances are not what this measures).
            ingest(bystander.serverKey, [{ message: `bystander ${writes}`, type: "OwnError", fingerprint: `own-${writes % 3}` }]),
          ]);
          writes++;
          expect(created.status, JSON.stringify(created.body)).toBe(201);
          expect(reported).toEqual({ status: 202, body: { accepted: 1 } });
          if (duringFlood) during.push(performance.now() - started);
        }
        const answers = await flood;
        // Measured while the flood ran, and generous (the machine is shared): before the limits every write waited behind each
        // queued batch, 2 to 5 s apiece; now the typical one takes milliseconds, and none waits for more than one of the
        // flood's transactions (a loaded PostgreSQL has taken over a second for one).
        expect(during.length).toBeGreaterThan(0);
        const sorted = [...during].sort((a, b) => a - b);
        const said = JSON.stringify(during.map(Math.round));
        expect(sorted[Math.floor(sorted.length / 2)]!, said).toBeLessThan(1000);
        expect(sorted[sorted.length - 1]!, said).toBeLessThan(3000);
        expect(answers.map((a) => a.status)).toEqual(Array(workers * rounds).fill(202));
        return answers;
      };

      // 1. Six senders, four calls each, of 1,000 new fingerprints a call: capped, and said so.
      const answers = await floodWhileOthersWrite(6, 4, fresh);
      const accepted = answers.reduce((n, a) => n + a.body.accepted, 0);
      const dropped = answers.reduce((n, a) => n + (a.body.dropped ?? 0), 0);
      expect(accepted).toBe(NEW_ERRORS_PER_MINUTE);
      expect(dropped).toBe(24 * 1000 - NEW_ERRORS_PER_MINUTE);
      const limited = answers.flatMap((a) => a.body.limited ?? []);
      const newErrors = limited.filter((l: any) => l.reason === "new_errors_per_minute");
      const items = limited.filter((l: any) => l.reason === "error_items_per_minute");
      expect(newErrors.reduce((n: number, l: any) => n + l.count, 0)).toBe(dropped);
      expect(items.reduce((n: number, l: any) => n + l.count, 0)).toBe(NEW_ERRORS_PER_MINUTE - ERROR_ITEMS_PER_MINUTE);
      for (const l of limited) {
        expect(l).toEqual({ reason: l.reason, limit: l.reason === "new_errors_per_minute" ? NEW_ERRORS_PER_MINUTE : ERROR_ITEMS_PER_MINUTE, count: expect.any(Number), retryAfter: expect.any(Number), detail: expect.any(String) });
        expect(l.retryAfter).toBeGreaterThanOrEqual(1);
        expect(l.retryAfter).toBeLessThanOrEqual(60);
      }
      const tracked = async (projectId: string) => Number((await server.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM tracked_errors WHERE project_id = ?", projectId))!.n);
      const errorItems = async (projectId: string) =>
        Number((await server.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM ops_items WHERE project_id = ? AND type = 'error'", projectId))!.n);
      expect(await tracked(flooder.projectId)).toBe(NEW_ERRORS_PER_MINUTE);
      expect(await errorItems(flooder.projectId)).toBe(ERROR_ITEMS_PER_MINUTE);

      // 2. Errors already tracked still count, and only their counts move: three senders, three calls each, of the 1,000 tracked ones.
      const stored = new Set((await server.store.all<{ fingerprint: string }>("SELECT fingerprint FROM tracked_errors WHERE project_id = ?", flooder.projectId)).map((r) => r.fingerprint));
      const known = Array.from({ length: next }, (_, i) => `flood-${i}`).filter((f) => stored.has(customFingerprint(f)));
      expect(known).toHaveLength(NEW_ERRORS_PER_MINUTE);
      const again = await floodWhileOthersWrite(3, 3, () => known.map((fingerprint) => ({ message: "again", type: "FloodError", fingerprint })));
      expect(again.map((a) => a.body)).toEqual(Array(9).fill({ accepted: 1000 }));
      expect((await server.api(`/api/admin/errors/${customFingerprint(known[0]!)}`, { key: flooder.adminKey })).body.count).toBe(10);
      expect(await tracked(flooder.projectId)).toBe(NEW_ERRORS_PER_MINUTE);
      expect(await errorItems(flooder.projectId)).toBe(ERROR_ITEMS_PER_MINUTE);

      // The other project's own errors were all tracked and filed.
      expect(await tracked(bystander.projectId)).toBe(3);
      expect(await errorItems(bystander.projectId)).toBe(3);

      // A new error in a call of known ones is dropped alone this minute, also from a Sentry SDK.
      const mixed = await ingest(flooder.serverKey, [...Array(5).fill({ message: "again", type: "FloodError", fingerprint: known[1] }), { message: "brand new", fingerprint: "after-the-cap" }]);
      expect(mixed.status).toBe(202);
      expect(mixed.body).toMatchObject({ accepted: 5, dropped: 1, limited: [{ reason: "new_errors_per_minute", count: 1, limit: NEW_ERRORS_PER_MINUTE }] });
      expect((await server.api(`/api/admin/errors/${customFingerprint(known[1]!)}`, { key: flooder.adminKey })).body.count).toBe(15);
      const sentry = await fetch(`${server.url}/api/1/store/?sentry_key=${flooder.serverKey}`, {
        method: "POST",
        body: JSON.stringify({ event_id: "fc6d8c0c43fc4630ad850ee518f1b9d0", exception: { values: [{ type: "SentryFlood", value: "one more" }] }, fingerprint: ["sentry-after-the-cap"] }),
      });
      expect(sentry.status).toBe(200);
      expect(await sentry.json()).toMatchObject({ id: "fc6d8c0c43fc4630ad850ee518f1b9d0", dropped: 1, limited: [{ reason: "new_errors_per_minute", count: 1 }] });
      expect(await tracked(flooder.projectId)).toBe(NEW_ERRORS_PER_MINUTE);

      // /metrics counts what was held back, by reason (no project label).
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      const sample = (line: string) => Number(metrics.split("\n").find((l) => l.startsWith(`${line} `))?.slice(line.length + 1));
      expect(sample('svc_error_occurrences_dropped_total{reason="new_errors_per_minute"}')).toBe(dropped + 2);
      expect(sample('svc_error_queue_items_skipped_total{reason="error_items_per_minute"}')).toBe(NEW_ERRORS_PER_MINUTE - ERROR_ITEMS_PER_MINUTE);
    } finally {
      await server.stop();
    }
  });
});
