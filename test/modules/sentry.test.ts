import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { deflateSync, gzipSync } from "node:zlib";
import { MAX_BODY_DEPTH, nestedDeeperThan } from "../../src/lib/pipeline";
import { fingerprintOf } from "../../src/modules/errors/fingerprint";
import { type TestServer, startTestServer } from "../helpers";

// Sentry SDKs speak to svc unchanged: the DSN's public key is the server key, any digits are the project.

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(() => ts.stop());

const FIXTURES = join(import.meta.dir, "..", "fixtures");

/**
 * Runs a fixture app that reports with the real @sentry/node in its own
 * process (Sentry's client is global state: one process per report is the
 * reliable way to get a fresh one).
 */
async function runSentryApp(deploy: string, dsn: string, unitId: string): Promise<void> {
  const child = Bun.spawn([process.execPath, join(FIXTURES, deploy, "main.ts"), dsn, unitId], { stdout: "pipe", stderr: "pipe", cwd: join(import.meta.dir, "..", "..") });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  expect(code, err).toBe(0);
  expect(JSON.parse(out), err).toMatchObject({ flushed: true });
}

const envelopeUrl = (query = `?sentry_key=${ts.serverKey}&sentry_version=7`, project = "1") => `${ts.url}/api/${project}/envelope/${query}`;

/** An envelope: the header, then each item as [item header, payload]. */
function envelope(header: object, items: [object, object | string][]): string {
  return [JSON.stringify(header), ...items.flatMap(([h, p]) => [JSON.stringify(h), typeof p === "string" ? p : JSON.stringify(p)])].join("\n") + "\n";
}

const eventId = () => crypto.randomUUID().replaceAll("-", "");

function sentryEvent(overrides: Record<string, unknown> = {}) {
  return {
    event_id: eventId(),
    timestamp: Date.now() / 1000,
    platform: "node",
    level: "error",
    environment: "production",
    release: "api@2.3.0",
    exception: {
      values: [
        // The cause first, the outermost exception last (Sentry's order).
        { type: "ECONNRESET", value: "socket hang up", stacktrace: { frames: [{ filename: "node:net", function: "onread", in_app: false }] } },
        {
          type: "PaymentError",
          value: "Charge failed for invoice 8812",
          stacktrace: {
            // Oldest first: the frame that threw is the last one.
            frames: [
              { filename: "/srv/api/node_modules/express/lib/router/layer.js", module: "express.lib.router:layer", function: "handle", lineno: 95, in_app: false },
              { filename: "/srv/api/routes/billing.js", module: "routes:billing", function: "postInvoice", lineno: 31, in_app: true },
              { filename: "/srv/api/lib/payments.js", module: "lib:payments", function: "charge", lineno: 77, in_app: true },
            ],
          },
        },
      ],
    },
    user: { id: "acct-1", email: "ana@example.com" },
    tags: { region: "eu-west-1", "bad tag!": "dropped" },
    ...overrides,
  };
}

const post = (url: string, body: BodyInit, headers: Record<string, string> = {}) => fetch(url, { method: "POST", body, headers });
const errorsNamed = async (q: string) => (await ts.api(`/api/admin/errors?q=${encodeURIComponent(q)}`)).body as any[];

describe("Sentry SDKs", () => {
  test("@sentry/node 11 from two deploys (the code moved down) is one tracked error with count 2", async () => {
    const dsn = `http://${ts.serverKey}@127.0.0.1:${new URL(ts.url).port}/1`;
    await runSentryApp("sentry-deploy-1", dsn, "user-1");
    let errors = await errorsNamed("Card declined");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ type: "TypeError", message: "Card declined for order 1234", count: 1, affectedUnits: 1, culprit: "chargeCard (checkout.ts:4)", status: "unresolved" });

    await runSentryApp("sentry-deploy-2", dsn, "user-2");
    errors = await errorsNamed("Card declined");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ type: "TypeError", message: "Card declined for order 5678", count: 2, affectedUnits: 2, culprit: "chargeCard (checkout.ts:10)" });

    // Both occurrences are in its series.
    const now = Math.floor(Date.now() / 1000);
    const series = await ts.api(`/api/admin/errors/${errors[0].id}/series`, { body: { from: now - 300, to: now + 300, bucket: 600 } });
    expect(series.body.rows).toEqual([{ t: now - 300, v: 2 }]);
  }, 60_000);

  test("an envelope: the last exception, frames top last, user.id as the unit; sessions and client reports skipped; 200 {id}", async () => {
    const event = sentryEvent();
    const body = envelope({ event_id: event.event_id, sent_at: new Date().toISOString(), sdk: { name: "sentry.javascript.node", version: "11.12.0" } }, [
      [{ type: "session" }, { sid: "x", status: "ok", started: new Date().toISOString() }],
      [{ type: "event" }, event],
      [{ type: "client_report" }, { discarded_events: [] }],
      [{ type: "transaction" }, { type: "transaction", transaction: "GET /" }],
      [{ type: "attachment", length: 5, filename: "a.txt" }, "hello"],
    ]);
    const r = await post(envelopeUrl(), body);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ id: event.event_id });
    const [error] = await errorsNamed("Charge failed");
    expect(error).toMatchObject({ type: "PaymentError", message: "Charge failed for invoice 8812", count: 1, affectedUnits: 1, culprit: "charge (lib:payments:77)" });
    // Grouped by the in-app frames' modules and functions, top first.
    expect(error.fingerprint).toBe(
      fingerprintOf({
        type: "PaymentError",
        message: "",
        frames: [
          { module: "lib:payments", function: "charge", inApp: true },
          { module: "routes:billing", function: "postInvoice", inApp: true },
        ],
      }),
    );
    expect((await ts.api("/api/admin/errors")).body.some((e: any) => e.type === "ECONNRESET" || e.message.includes("GET /"))).toBe(false);
    // The occurrence's event carries the unit and the properties.
    const stored = await ts.server.ctx.services.analytics.series({
      projectId: ts.projectId,
      from: Math.floor(Date.now() / 1000) - 600,
      to: Math.floor(Date.now() / 1000) + 600,
      bucket: 1200,
      measure: { kind: "unique", event: `$error:${error.fingerprint}`, filters: [{ property: "region", op: "eq", value: "eu-west-1" }] },
    });
    expect(stored.rows.map((row) => row.v)).toEqual([1]);
  });

  test("gzip (chunked, no Content-Type), item lengths in bytes with newlines and multi-byte text inside, and the store endpoint", async () => {
    // A pretty-printed payload holds newlines: only its `length` (bytes, not characters) delimits it.
    const pretty = JSON.stringify(sentryEvent({ exception: { values: [{ type: "ÄrgerError", value: "Zähler überlief 😀", stacktrace: { frames: [{ filename: "/srv/api/lib/zähler.js", function: "tick", lineno: 3, in_app: true }] } }] } }), null, 2);
    const text = [
      JSON.stringify({ event_id: eventId() }),
      JSON.stringify({ type: "event", length: Buffer.byteLength(pretty) }),
      pretty,
      JSON.stringify({ type: "sessions" }),
      JSON.stringify({ aggregates: [] }),
    ].join("\n");
    const gz = gzipSync(text);
    const stream = new ReadableStream({
      start(controller) {
        // Sent in pieces, without a Content-Length.
        for (let i = 0; i < gz.length; i += 64) controller.enqueue(gz.subarray(i, i + 64));
        controller.close();
      },
    });
    const r = await fetch(envelopeUrl(), { method: "POST", body: stream, headers: { "content-encoding": "gzip" } });
    expect(r.status, await r.clone().text()).toBe(200);
    expect((await errorsNamed("Zähler"))[0]).toMatchObject({ type: "ÄrgerError", message: "Zähler überlief 😀", culprit: "tick (/srv/api/lib/zähler.js:3)" });

    // A large gzip envelope (above Sentry's 32 KB threshold) of 40 events.
    const many = Array.from({ length: 40 }, (_, i) => [{ type: "event" }, sentryEvent({ extra: { blob: crypto.getRandomValues(new Uint8Array(2000)).join(",") }, user: { id: `bulk-${i}` } })] as [object, object]);
    const big = gzipSync(envelope({}, many));
    expect(big.length).toBeGreaterThan(32_000);
    const bulk = await post(envelopeUrl(), big, { "content-encoding": "gzip" });
    expect(bulk.status, await bulk.clone().text()).toBe(200);
    expect((await errorsNamed("Charge failed"))[0]).toMatchObject({ count: 41, affectedUnits: 41 });

    // Binary attachments (skipped) and gzip bytes are no JSON: a JSON nesting scan of the whole body would refuse them.
    const binary = Buffer.concat([Buffer.from("[".repeat(100)), Buffer.from(crypto.getRandomValues(new Uint8Array(500)))]);
    const withAttachment = Buffer.concat([
      Buffer.from(`{}\n${JSON.stringify({ type: "attachment", length: binary.length, filename: "dump.bin" })}\n`),
      binary,
      Buffer.from(`\n{"type":"event"}\n${JSON.stringify(sentryEvent({ user: { id: "attached" }, timestamp: Math.floor(Date.now() / 1000) }))}\n`),
    ]);
    // Stored (level 0) gzip keeps the bytes as they are; every length here is fixed, so the check below always sees the same bytes.
    const stored0 = gzipSync(withAttachment, { level: 0 });
    expect(nestedDeeperThan(withAttachment, MAX_BODY_DEPTH) && nestedDeeperThan(stored0, MAX_BODY_DEPTH)).toBe(true);
    expect((await post(envelopeUrl(), withAttachment)).status).toBe(200);
    expect((await post(envelopeUrl(), stored0, { "content-encoding": "gzip" })).status).toBe(200);
    expect((await errorsNamed("Charge failed"))[0]).toMatchObject({ count: 43, affectedUnits: 42 });

    // deflate as well.
    expect((await post(envelopeUrl(), deflateSync(envelope({}, [[{ type: "event" }, sentryEvent({ user: { id: 7 } })]])), { "content-encoding": "deflate" })).status).toBe(200);
    expect((await errorsNamed("Charge failed"))[0]).toMatchObject({ count: 44, affectedUnits: 43 });

    // store/: one event, the key in X-Sentry-Auth, an ISO timestamp without a zone, a numeric user id.
    const stored = sentryEvent({ timestamp: new Date(Date.now() - 5000).toISOString().replace("Z", ""), user: { id: 42 }, exception: undefined, message: "Cache warmup took 1234 ms" });
    const s = await post(`${ts.url}/api/77/store/`, gzipSync(JSON.stringify(stored)), {
      "x-sentry-auth": `Sentry sentry_version=7, sentry_client=raven-node/2.6.4, sentry_key=${ts.serverKey}, sentry_secret=unused`,
      "content-encoding": "gzip",
      "content-type": "application/json",
    });
    expect(s.status).toBe(200);
    expect(await s.json()).toEqual({ id: stored.event_id });
    const [message] = await errorsNamed("Cache warmup");
    expect(message).toMatchObject({ type: "Message", count: 1, affectedUnits: 1, culprit: null });
    expect(Date.parse(message.lastSeenAt)).toBe(Math.round(Date.parse(`${stored.timestamp}Z`)));
    // The same message with other numbers is the same error.
    await post(`${ts.url}/api/77/store/?sentry_key=${ts.serverKey}`, JSON.stringify({ ...stored, event_id: eventId(), message: { formatted: "Cache warmup took 99 ms" } }));
    expect((await errorsNamed("Cache warmup"))[0].count).toBe(2);
  });

  test("keys: query, X-Sentry-Auth, X-SDK-Key, a tunnel's DSN; 401 without a valid one, 403 for another kind of key", async () => {
    const body = () => envelope({}, [[{ type: "event" }, sentryEvent({ message: "auth probe", exception: undefined })]]);
    expect((await post(envelopeUrl(""), body(), { "x-sdk-key": ts.serverKey })).status).toBe(200);
    expect((await post(envelopeUrl(""), body(), { authorization: `Bearer ${ts.serverKey}` })).status).toBe(200);
    expect((await post(envelopeUrl(""), body(), { "x-sentry-auth": `Sentry sentry_key=${ts.serverKey}` })).status).toBe(200);
    const tunnelled = envelope({ dsn: `https://${ts.serverKey}@errors.example.com/9` }, [[{ type: "event" }, sentryEvent({ message: "auth probe", exception: undefined })]]);
    expect((await post(envelopeUrl(""), tunnelled)).status).toBe(200);
    expect((await errorsNamed("auth probe"))[0].count).toBe(4);

    const refused = async (url: string, headers: Record<string, string>, status: number, data: BodyInit = body()) => {
      const r = await post(url, data, headers);
      expect(r.status, `${url} ${JSON.stringify(headers)}`).toBe(status);
      const json = (await r.json()) as any;
      expect(json.code).toBe(status === 401 ? "UNAUTHORIZED" : "FORBIDDEN");
    };
    await refused(envelopeUrl(""), {}, 401);
    await refused(envelopeUrl("?sentry_key=sdk_server_unknown"), {}, 401);
    await refused(envelopeUrl(`?sentry_key=${ts.clientKey}`), {}, 403);
    await refused(envelopeUrl(`?sentry_key=${ts.adminKey}`), {}, 403);
    await refused(envelopeUrl(""), { "x-sentry-auth": "Sentry sentry_version=7" }, 401);
    await refused(envelopeUrl(""), {}, 403, envelope({ dsn: `https://${ts.clientKey}@x/1` }, []));
    await refused(`${ts.url}/api/1/store/`, {}, 401, JSON.stringify(sentryEvent()));
    // A key that fails is refused before the body is looked at; so is a body that names none.
    await refused(envelopeUrl("?sentry_key=sdk_server_unknown"), {}, 401, "not an envelope");
    await refused(envelopeUrl(""), {}, 401, "not an envelope");
    await refused(envelopeUrl(""), { "content-encoding": "gzip" }, 401, gzipSync(Buffer.alloc(50 << 20)));
    expect((await errorsNamed("auth probe"))[0].count).toBe(4);
    // Another project's key files it there.
    const other = await ts.newProject("Other");
    expect((await post(envelopeUrl(`?sentry_key=${other.serverKey}`), body())).status).toBe(200);
    expect((await ts.api("/api/admin/errors", { key: other.adminKey })).body.map((e: any) => e.count)).toEqual([1]);
  });

  test("bad envelopes are 400 BAD_REQUEST saying what is wrong, never 500; only digits are a project", async () => {
    const before = (await ts.api("/api/admin/errors")).body.length;
    const cases: [BodyInit, Record<string, string>, string][] = [
      ["", {}, "empty"],
      ["not json\n", {}, "envelope header"],
      ["[1,2]\n", {}, "envelope header"],
      ['{}\n{"length": 3}\nabc', {}, "type"],
      ['{}\n{"type": "event", "length": 999}\n{}', {}, "past the end"],
      ['{}\n{"type": "event", "length": -1}\n{}', {}, "length"],
      ['{}\n{"type": "event", "length": 2}\n{}x\n', {}, "newline"],
      ['{}\n{"type": "event"}\n{"exception": ', {}, "item 1 (event)"],
      ['{}\n{"type": "event"}\n"text"', {}, "item 1 (event)"],
      ['{}\n{"type": "event"}', {}, "item 1 (event)"],
      [`{}\n{"type": "event"}\n${"[".repeat(5000)}${"]".repeat(5000)}`, {}, "nested"],
      [gzipSync(`{}\n{"type": "event"}\n${"[".repeat(5000)}${"]".repeat(5000)}`), { "content-encoding": "gzip" }, "nested"],
      [new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3, 4]), { "content-encoding": "gzip" }, "gzip"],
      ["{}", { "content-encoding": "gzip" }, "gzip"],
      ["{}", { "content-encoding": "compress" }, "Content-Encoding"],
    ];
    for (const [body, headers, words] of cases) {
      const r = await post(envelopeUrl(), body, headers);
      const json = (await r.json()) as any;
      expect(r.status, `${String(body).slice(0, 40)}: ${JSON.stringify(json)}`).toBe(400);
      expect(json.code).toBe("BAD_REQUEST");
      expect(`${json.error} ${json.detail}`, String(body).slice(0, 40)).toContain(words);
    }
    for (const body of ["", "[]", "nope", '{"a":'] as string[]) {
      const r = await post(`${ts.url}/api/1/store/?sentry_key=${ts.serverKey}`, body);
      expect(r.status, body).toBe(400);
      expect(((await r.json()) as any).code).toBe("BAD_REQUEST");
    }
    // A gzip bomb stops at the body limit (1 MiB here) once decompressed.
    const bomb = await post(envelopeUrl(), gzipSync(Buffer.alloc(50 << 20, 0x20)), { "content-encoding": "gzip" });
    expect(bomb.status).toBe(413);
    expect(((await bomb.json()) as any).error).toBe("Body too large");
    // Odd but valid events are taken: no exception values, junk frames, no user, a timestamp from 1970 (taken as now).
    for (const event of [
      { exception: { values: [] } },
      { exception: { values: [null, 5, { type: 7, stacktrace: { frames: [null, "x", { lineno: "1" }, { function: {}, in_app: "yes" }] } }] } },
      { exception: [{ type: "LegacyList", value: "old format" }], user: { id: { nested: true } }, timestamp: 0, fingerprint: ["{{ default }}", 3, null] },
      { message: { message: "only a template %s", params: ["x"] }, user: null, tags: [["k", "v"], "junk"], timestamp: "yesterday" },
    ]) {
      const r = await post(envelopeUrl(), envelope({}, [[{ type: "event" }, event]]));
      expect(r.status, JSON.stringify(event)).toBe(200);
    }
    const added = (await ts.api("/api/admin/errors")).body.length - before;
    expect(added).toBeGreaterThanOrEqual(3);
    const legacy = (await errorsNamed("old format"))[0];
    expect(legacy.type).toBe("LegacyList");
    expect(Date.now() - Date.parse(legacy.lastSeenAt)).toBeLessThan(60_000);

    // Only digits name a Sentry project.
    for (const path of ["/api/abc/envelope/", "/api/1a/store/", "/api/-1/envelope/"]) {
      const r = await post(`${ts.url}${path}?sentry_key=${ts.serverKey}`, envelope({}, []));
      expect(r.status, path).toBe(404);
      expect(((await r.json()) as any).code).toBe("NOT_FOUND");
    }
    // Without the trailing slash too (some clients strip it), and with a large project number.
    expect((await post(`${ts.url}/api/12345678901234/envelope?sentry_key=${ts.serverKey}`, envelope({}, []))).status).toBe(200);
  });
});
