import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient } from "../../src/sdk/index";
import { type TestServer, startTestServer } from "../helpers";
import { seededRandom } from "../seeded-random";
import { lineOf, sentryClient } from "../support/sentry-client";

// Tracked errors keep the frames of recent occurrences (issue 27, item 2): from a real @sentry/node client
// and from the SDK's captureError, bounded per error (the last 20 and a sample of 5 older ones), each
// occurrence's strings and frames bounded, and no 500 whatever the frames look like.

const RECENT = 20;
const SAMPLE = 5;

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(() => ts.stop());

const dsnOf = (s: TestServer) => `http://${s.serverKey}@127.0.0.1:${new URL(s.url).port}/1`;
/** Reports to the project of `ts`, through `via` (another server on the same store) when given. */
const report = async (errors: unknown[], via: TestServer = ts) => {
  const r = await fetch(`${via.url}/api/sdk/v1/errors`, { method: "POST", headers: { "content-type": "application/json", "x-sdk-key": ts.serverKey }, body: JSON.stringify({ errors }) });
  return { status: r.status, body: await r.json() };
};
const byType = async (type: string) => ((await ts.api("/api/admin/errors")).body as any[]).find((e) => e.type === type);
const envelope = (event: object) => `${JSON.stringify({ event_id: (event as any).event_id })}\n{"type":"event"}\n${JSON.stringify(event)}\n`;
const postEnvelope = (event: object) => fetch(`${ts.url}/api/1/envelope/?sentry_key=${ts.serverKey}&sentry_version=7`, { method: "POST", body: envelope(event) });
const stored = async (errorId: string) =>
  ts.store.all<{ seq: number | string; kept: string }>("SELECT seq, kept FROM error_occurrences WHERE error_id = ? ORDER BY seq", errorId);

/** Throws where this file can point at it (the line with the marker). */
function chargeTheCard(order: { id: number; total?: number }): number {
  if (order.total === undefined) throw new TypeError(`Order ${order.id} has no total`); // THROWS-HERE-sentry
  return order.total;
}

/** The same for the SDK's captureError. */
function loadTheCart(cartId: string): never {
  throw new RangeError(`Cart ${cartId} is empty`); // THROWS-HERE-sdk
}

describe("frames of occurrences", () => {
  test("@sentry/node throwing in this file: GET /api/admin/errors/{id} shows the in-app frame, its context lines, tags, release, environment and unit", async () => {
    const sentry = sentryClient(dsnOf(ts), { release: "shop@2.0.0", environment: "staging" });
    let eventId = "";
    try {
      chargeTheCard({ id: 7 });
    } catch (err) {
      eventId = sentry.capture(err, { user: { id: "acct-7" }, tags: { route: "/checkout" } });
    }
    expect(await sentry.flush()).toBe(true);
    const listed = await byType("TypeError");
    const got = await ts.api(`/api/admin/errors/${listed.id}`);
    expect(got.status).toBe(200);
    const { occurrences, ...error } = got.body;
    expect(error).toEqual(listed);
    expect(occurrences).toHaveLength(1);
    const [occurrence] = occurrences;
    expect(occurrence).toMatchObject({
      eventId,
      type: "TypeError",
      message: "Order 7 has no total",
      unitId: "acct-7",
      release: "shop@2.0.0",
      environment: "staging",
      kept: "recent",
    });
    expect(occurrence.tags).toMatchObject({ route: "/checkout", level: "error", platform: "node" });
    expect(occurrence.tags.release).toBeUndefined();
    // Innermost first: the frame that threw, in this file, at the marked line.
    const top = occurrence.frames[0];
    expect(top).toMatchObject({ function: "chargeTheCard", filename: import.meta.path, lineno: lineOf(import.meta.path, "THROWS-HERE-" + "sentry"), inApp: true });
    expect(top.colno).toBeGreaterThan(0);
    expect(top.contextLine).toContain("throw new TypeError(`Order ${order.id} has no total`)");
    expect(top.preContext.at(-1)).toContain("function chargeTheCard(");
    expect(top.postContext[0]).toContain("return order.total;");
    // Stored in its own table, one row for one occurrence.
    expect(await stored(listed.id)).toEqual([{ seq: expect.anything(), kept: "recent" }]);
  });

  test("the SDK's captureError: its stack string (V8/Bun) becomes frames; a Firefox/Safari stack too; properties give release, environment and tags", async () => {
    const svc = createClient({ baseUrl: ts.url, sdkKey: ts.serverKey, env: "prod", stream: false, flushIntervalMs: 60_000 });
    await svc.ready();
    try {
      loadTheCart("c-1");
    } catch (err) {
      svc.captureError(err, { unitId: "u-9" });
    }
    await svc.close();
    const range = await byType("RangeError");
    const [occurrence] = (await ts.api(`/api/admin/errors/${range.id}`)).body.occurrences;
    expect(occurrence).toMatchObject({ type: "RangeError", message: "Cart c-1 is empty", unitId: "u-9", release: null, environment: null, tags: {} });
    expect(occurrence.frames[0]).toMatchObject({ function: "loadTheCart", filename: import.meta.path, lineno: lineOf(import.meta.path, "THROWS-HERE-" + "sdk"), inApp: true });

    const stack = [
      "render@https://cdn.example.com/assets/main.3f2a1b9c.js:1:2042",
      "dispatch@https://cdn.example.com/assets/vendor.js:12:99",
      "@https://cdn.example.com/assets/main.3f2a1b9c.js:1:99",
      // JavaScriptCore (Safari) names top-level code with a space.
      "global code@https://cdn.example.com/assets/main.3f2a1b9c.js:3:1",
    ].join("\n");
    const sent = await report([{ type: "InvalidStateError", message: "The object is in an invalid state.", stack, unitId: "u-10", properties: { release: "web@5", environment: "prod", browser: "Safari 17" } }]);
    expect(sent.status).toBe(202);
    const safari = await byType("InvalidStateError");
    const got = (await ts.api(`/api/admin/errors/${safari.id}`)).body.occurrences[0];
    expect(got).toMatchObject({ unitId: "u-10", release: "web@5", environment: "prod", tags: { browser: "Safari 17" } });
    expect(got.frames).toEqual([
      { function: "render", filename: "https://cdn.example.com/assets/main.3f2a1b9c.js", lineno: 1, colno: 2042, inApp: true },
      { function: "dispatch", filename: "https://cdn.example.com/assets/vendor.js", lineno: 12, colno: 99, inApp: true },
      { filename: "https://cdn.example.com/assets/main.3f2a1b9c.js", lineno: 1, colno: 99, inApp: true },
      { function: "global code", filename: "https://cdn.example.com/assets/main.3f2a1b9c.js", lineno: 3, colno: 1, inApp: true },
    ]);
  });

  test(`the bound: of many occurrences of one error sent at once through two servers, the last ${RECENT} and a sample of ${SAMPLE} older ones are kept, never more`, async () => {
    // A second server on the same store: two transactions really race for the same error.
    const other = await startTestServer({ dataDir: ts.dataDir, store: ts.storeUrl });
    try {
      const item = (i: number) => ({ type: "BoundError", message: `flood ${i}`, fingerprint: "bound", unitId: `u${i % 7}`, stack: `BoundError: flood ${i}\n    at flood (/srv/app/flood.js:${i + 1}:1)` });
      let most = 0;
      let watching = true;
      const watch = (async () => {
        while (watching) {
          const row = await ts.store.one<{ n: number | string }>(
            "SELECT COUNT(*) AS n FROM error_occurrences o JOIN tracked_errors e ON e.id = o.error_id WHERE e.project_id = ? AND e.type = 'BoundError' GROUP BY o.error_id",
            ts.projectId,
          );
          most = Math.max(most, Number(row?.n ?? 0));
          await Bun.sleep(2);
        }
      })();
      const calls: Promise<{ status: number }>[] = [];
      for (let i = 0; i < 60; i++) calls.push(report([item(i)], i % 2 ? other : ts));
      for (let c = 0; c < 4; c++) calls.push(report(Array.from({ length: 150 }, (_, j) => item(1000 + c * 150 + j)), c % 2 ? other : ts));
      expect((await Promise.all(calls)).map((r) => r.status)).toEqual(calls.map(() => 202));
      watching = false;
      await watch;
      const total = 60 + 4 * 150;
      const error = await byType("BoundError");
      expect(error.count).toBe(total);
      const rows = await stored(error.id);
      expect(rows).toHaveLength(RECENT + SAMPLE);
      expect(most).toBeLessThanOrEqual(RECENT + SAMPLE);
      const seqs = rows.map((r) => Number(r.seq));
      // The recent ones are the last 20 received; the sample is 5 distinct older ones.
      expect(rows.filter((r) => r.kept === "recent").map((r) => Number(r.seq))).toEqual(Array.from({ length: RECENT }, (_, i) => total - RECENT + 1 + i));
      const sample = rows.filter((r) => r.kept === "sample").map((r) => Number(r.seq));
      expect(sample).toHaveLength(SAMPLE);
      for (const s of sample) expect(s).toBeLessThanOrEqual(total - RECENT);
      expect(new Set(seqs).size).toBe(seqs.length);
      // The API shows them newest first: the recent ones, then the sample.
      const shown = (await ts.api(`/api/admin/errors/${error.id}`)).body.occurrences as any[];
      expect(shown).toHaveLength(RECENT + SAMPLE);
      expect(shown.map((o) => o.kept)).toEqual([...Array(RECENT).fill("recent"), ...Array(SAMPLE).fill("sample")]);
      expect(shown.slice(0, RECENT).every((o) => /^flood \d+$/.test(o.message) && o.frames[0].function === "flood")).toBe(true);
      // More arrive later: still bounded, the newest first.
      expect((await report([item(5000)])).status).toBe(202);
      expect(await stored(error.id)).toHaveLength(RECENT + SAMPLE);
      expect((await ts.api(`/api/admin/errors/${error.id}`)).body.occurrences[0].message).toBe("flood 5000");
    } finally {
      await other.stop();
    }
  });

  test("oversize frames are cut to bounds: at most 100 frames, strings and context lines truncated", async () => {
    // Just under the 1 MiB body limit: 150 frames of long names, the top 10 with 25 long context lines each.
    const long = "x".repeat(1000);
    const frames = Array.from({ length: 150 }, (_, i) => ({
      function: `fn${i}${long}`,
      filename: `/srv/app/${long}/f${i}.js`,
      abs_path: `/srv/app/${long}/f${i}.js`,
      module: `mod${i}${long.slice(0, 500)}`,
      lineno: i + 1,
      colno: 3,
      in_app: i % 2 === 0,
      ...(i >= 140 ? { pre_context: Array.from({ length: 12 }, () => long), context_line: long, post_context: Array.from({ length: 12 }, () => long) } : {}),
    }));
    const event = {
      event_id: crypto.randomUUID().replaceAll("-", ""),
      exception: { values: [{ type: "HugeError", value: long.repeat(5), stacktrace: { frames } }] },
      tags: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`t${i}`, long.slice(0, 400)])),
      release: long,
      environment: long,
      user: { id: "u-huge" },
    };
    const r = await postEnvelope(event);
    expect(r.status).toBe(200);
    const huge = await byType("HugeError");
    const got = await ts.api(`/api/admin/errors/${huge.id}`);
    expect(got.status).toBe(200);
    const [o] = got.body.occurrences;
    expect(o.frames.length).toBeLessThanOrEqual(100);
    // The innermost frame (Sentry's last) comes first.
    expect(o.frames[0].function.startsWith("fn149")).toBe(true);
    expect(o.frames[0].contextLine.length).toBeGreaterThan(0);
    expect(o.framesOmitted).toBe(150 - o.frames.length);
    for (const f of o.frames) {
      expect(f.function.length).toBeLessThanOrEqual(256);
      expect(f.filename.length).toBeLessThanOrEqual(1024);
      expect((f.preContext ?? []).length).toBeLessThanOrEqual(10);
      for (const line of [...(f.preContext ?? []), f.contextLine ?? "", ...(f.postContext ?? [])]) expect(line.length).toBeLessThanOrEqual(256);
    }
    expect(o.message.length).toBeLessThanOrEqual(1000);
    expect(o.release.length).toBeLessThanOrEqual(256);
    expect(Object.keys(o.tags).length).toBeLessThanOrEqual(50);
    // One occurrence stays small however much was sent.
    const row = await ts.store.one<{ n: number | string }>("SELECT LENGTH(data) AS n FROM error_occurrences WHERE error_id = ?", huge.id);
    expect(Number(row!.n)).toBeLessThanOrEqual(64 * 1024);

    // A stack string of hundreds of long lines (under the 1 MiB body limit): bounded too.
    const stack = ["Error: deep", ...Array.from({ length: 600 }, (_, i) => `    at f${i}${"y".repeat(1500)} (/srv/app/deep.js:${i + 1}:1)`)].join("\n");
    expect((await report([{ type: "DeepError", message: "deep", stack }])).status).toBe(202);
    const deep = (await ts.api(`/api/admin/errors/${(await byType("DeepError")).id}`)).body.occurrences[0];
    expect(deep.frames.length).toBeLessThanOrEqual(100);
    expect(deep.frames[0].function.length).toBeLessThanOrEqual(256);
  });

  test("garbage frames (a few shapes, fuzzed) never answer 500: each is taken or refused with 400, and the error reads back", async () => {
    const random = seededRandom(27);
    const shapes: (() => unknown)[] = [
      () => null,
      () => 42,
      () => "frame",
      () => [],
      () => ({}),
      () => ({ function: 12, filename: { a: 1 }, lineno: "12", colno: -5, in_app: "yes" }),
      () => ({ function: "f", lineno: 1e308, colno: Number.MAX_SAFE_INTEGER * 4, pre_context: "not a list", post_context: [1, null, { x: 1 }, "ok"] }),
      () => ({ function: "\u0000\u202enul\ud800", filename: "\u0000", context_line: "a\u0000b\u202ec\ud800", vars: { deep: { deeper: [1, 2, 3] } } }),
      () => ({ abs_path: "/srv/app/only-abs.js", lineno: -1, in_app: null, module: ["m"] }),
    ];
    for (let i = 0; i < 30; i++) {
      const frames = Array.from({ length: 1 + Math.floor(random() * 6) }, () => shapes[Math.floor(random() * shapes.length)]!());
      const stacktrace = random() < 0.15 ? shapes[Math.floor(random() * shapes.length)]!() : { frames: random() < 0.1 ? "frames" : frames };
      const user = random() < 0.3 ? { id: random() < 0.5 ? 5 : { nested: true } } : random() < 0.5 ? "user" : undefined;
      const tags = random() < 0.3 ? [["a", 1], ["b"], "c", null] : random() < 0.5 ? { k: { nested: 1 }, ok: "v" } : "tags";
      const event = { event_id: crypto.randomUUID().replaceAll("-", ""), exception: { values: [{ type: "FuzzError", value: `fuzz ${i}`, stacktrace }] }, user, tags, release: random() < 0.5 ? 5 : "r", environment: random() < 0.5 ? null : ["prod"] };
      const r = await postEnvelope(event);
      expect([200, 400]).toContain(r.status);
    }
    const stacks = ["", "\n\n\n", "at", "    at (", "    at f (:::::)", "@", "f@:1:2", "    at f (file.js:99999999999999999999:1)", "\u0000@\u0000:1:1", "x".repeat(100_000)];
    expect((await report(stacks.map((stack, i) => ({ type: "FuzzStack", message: `stack ${i}`, stack, fingerprint: "fuzz-stack" })))).status).toBe(202);
    for (const type of ["FuzzError", "FuzzStack"]) {
      const e = await byType(type);
      const got = await ts.api(`/api/admin/errors/${e.id}`);
      expect(got.status).toBe(200);
      expect(got.body.occurrences.length).toBeGreaterThan(0);
      expect(got.body.occurrences.length).toBeLessThanOrEqual(RECENT + SAMPLE);
    }
  });
});
