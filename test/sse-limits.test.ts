/**
 * Limits of the SDK event stream: the per-key cap on open streams, and
 * back-pressure against a client that stops reading (it must not make the
 * server queue every snapshot it publishes meanwhile).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import net from "node:net";
import { expectErrorShape, startTestServer, type TestServer } from "./helpers";

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ maxStreamsPerKey: 2 });
});
afterAll(() => s.stop());

const epoch = async () => (await s.store.one<{ value: string }>("SELECT value FROM store_meta WHERE key = 'epoch'"))!.value;

async function mintServerKey(name: string): Promise<string> {
  const r = await s.api("/api/admin/keys", { body: { type: "server", name } });
  expect(r.status, r.text).toBe(201);
  return r.body.key;
}

/** Opens a stream with fetch; the caller closes it with `close()`. */
async function openStream(key: string) {
  const controller = new AbortController();
  const res = await fetch(`${s.url}/api/sdk/v1/stream?env=prod`, { headers: { "x-sdk-key": key }, signal: controller.signal });
  return {
    res,
    async firstEventId(): Promise<string> {
      const reader = res.body!.getReader();
      let text = "";
      while (!text.includes("\n\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      return /^id: (\S+)$/m.exec(text)?.[1] ?? "";
    },
    close() {
      controller.abort();
    },
  };
}

describe("open streams per SDK key", () => {
  test("a third stream of one key gets 429 with Retry-After; other keys are unaffected; a closed stream frees its place", async () => {
    const key = await mintServerKey("capped");
    const other = await mintServerKey("other");
    const a = await openStream(key);
    const b = await openStream(key);
    expect(a.res.status).toBe(200);
    expect(b.res.status).toBe(200);
    expect(a.res.headers.get("content-type")).toStartWith("text/event-stream");
    // Both are live streams: each got the current snapshot as its first event.
    expect(await a.firstEventId()).toMatch(new RegExp(`^${await epoch()}-\\d+$`));
    expect(await b.firstEventId()).toMatch(new RegExp(`^${await epoch()}-\\d+$`));

    const third = await fetch(`${s.url}/api/sdk/v1/stream?env=prod`, { headers: { "x-sdk-key": key } });
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
    expect(third.headers.get("content-type")).toStartWith("application/json");
    const body = expectErrorShape(await third.json());
    expect(body).toMatchObject({ error: "Too many requests", code: "BAD_REQUEST" });

    // Another key of the same project has its own allowance.
    const o1 = await openStream(other);
    const o2 = await openStream(other);
    expect(o1.res.status).toBe(200);
    expect(o2.res.status).toBe(200);
    // Still full for the first key.
    const stillFull = await fetch(`${s.url}/api/sdk/v1/stream?env=prod`, { headers: { "x-sdk-key": key } });
    expect(stillFull.status).toBe(429);
    await stillFull.text();

    // Closing one stream gives its place back (the server notices the disconnect asynchronously).
    a.close();
    const deadline = performance.now() + 3000;
    let reopened: Awaited<ReturnType<typeof openStream>> | null = null;
    while (performance.now() < deadline) {
      const attempt = await openStream(key);
      if (attempt.res.status === 200) {
        reopened = attempt;
        break;
      }
      expect(attempt.res.status).toBe(429);
      await attempt.res.text();
      await Bun.sleep(25);
    }
    expect(reopened, "no stream could be opened after one of the two was closed").not.toBeNull();
    expect(await reopened!.firstEventId()).toMatch(new RegExp(`^${await epoch()}-\\d+$`));
    // ...and only one place: the key is full again.
    const fullAgain = await fetch(`${s.url}/api/sdk/v1/stream?env=prod`, { headers: { "x-sdk-key": key } });
    expect(fullAgain.status).toBe(429);
    await fullAgain.text();

    for (const st of [b, o1, o2, reopened!]) st.close();
    // Every subscription is released once the clients are gone.
    const released = performance.now() + 3000;
    while (s.server.ctx.services.snapshots.listenerCount() > 0 && performance.now() < released) await Bun.sleep(20);
    expect(s.server.ctx.services.snapshots.listenerCount()).toBe(0);
  });
});

/** Removes HTTP/1.1 chunked framing from a response body. */
function dechunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf("\r\n", at);
    if (eol === -1) break;
    const size = parseInt(raw.subarray(at, eol).toString("latin1"), 16);
    if (!Number.isFinite(size) || size === 0) break;
    if (eol + 2 + size > raw.length) {
      parts.push(raw.subarray(eol + 2));
      break;
    }
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** (heap + memory owned by JS objects outside the heap, e.g. ArrayBuffers) after a full collection. */
function liveBytes(): number {
  Bun.gc(true);
  const stats = heapStats();
  return stats.heapSize + stats.extraMemorySize;
}

describe("back-pressure", () => {
  test("a client that stops reading gets only the newest snapshot when it reads again, and the server holds no queue", async () => {
    const PUBLISHES = 100;
    const key = await mintServerKey("slow reader");
    const name = `big-${Date.now()}`;
    const blob = "x".repeat(200_000);
    const created = await s.api("/api/admin/configs", { body: { name, schema: { type: "object" }, value: { blob, n: 0 } } });
    expect(created.status, created.text).toBe(201);

    // A raw HTTP client that sends its request and then reads nothing.
    const port = Number(new URL(s.url).port);
    const socket = net.connect(port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    socket.write(`GET /api/sdk/v1/stream?env=prod HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-SDK-Key: ${key}\r\n\r\n`);
    const waitListening = performance.now() + 2000;
    while (s.server.ctx.services.snapshots.listenerCount() === 0 && performance.now() < waitListening) await Bun.sleep(10);
    expect(s.server.ctx.services.snapshots.listenerCount()).toBe(1);

    const memoryBefore = liveBytes();
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    for (let n = 1; n <= PUBLISHES; n++) {
      const r = await s.api(`/api/admin/configs/${name}`, { method: "PATCH", body: { prod: { blob, n } } });
      expect(r.status, r.text).toBe(200);
    }
    const publishMs = performance.now() - started;
    await Bun.sleep(200);
    const grown = liveBytes() - memoryBefore;
    const rssGrown = process.memoryUsage().rss - rssBefore;
    const current = await s.server.ctx.services.snapshots.get(s.projectId, "prod");
    expect(current.snapshot.configs[name]).toMatchObject({ value: { n: PUBLISHES } });
    const eventBytes = current.json.length;

    // Now read everything that is (or becomes) available.
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    const expectedId = current.eventId;
    const readDeadline = performance.now() + 5000;
    while (!Buffer.concat(chunks).includes(`id: ${expectedId}\n`) && performance.now() < readDeadline) await Bun.sleep(20);
    await Bun.sleep(100);
    socket.destroy();

    const raw = Buffer.concat(chunks);
    const headerEnd = raw.indexOf("\r\n\r\n");
    const head = raw.subarray(0, headerEnd).toString("latin1");
    expect(head).toStartWith("HTTP/1.1 200");
    const bodyBytes = raw.subarray(headerEnd + 4);
    const body = (/transfer-encoding: chunked/i.test(head) ? dechunk(bodyBytes) : bodyBytes).toString("utf8");
    const events = body
      .split("\n\n")
      .filter((block) => block.startsWith("id: "))
      .map((block) => {
        const field = (f: string) => block.split("\n").find((l) => l.startsWith(`${f}: `))?.slice(f.length + 2) ?? "";
        return { id: field("id"), event: field("event"), data: field("data") };
      });
    const revisions = events.map((e) => Number(e.id.split("-").at(-1)));
    console.log(
      `back-pressure: ${PUBLISHES} publishes of ~${Math.round(eventBytes / 1000)} KB in ${publishMs.toFixed(0)} ms; the stalled client then got ${events.length} events ` +
        `(revisions ${revisions.slice(0, 3).join(",")}…${revisions.slice(-3).join(",")}); live JS memory grew ${(grown / 1e6).toFixed(1)} MB, RSS ${(rssGrown / 1e6).toFixed(1)} MB`,
    );

    // Far fewer events than publishes: what the socket buffers held, plus the one newest snapshot kept aside.
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events.length).toBeLessThan(PUBLISHES / 2);
    for (let i = 1; i < revisions.length; i++) expect(revisions[i]!).toBeGreaterThan(revisions[i - 1]!);
    // The last one is the newest revision, with the newest content.
    const last = events.at(-1)!;
    expect(last.id).toBe(`${await epoch()}-${current.snapshot.revision}`);
    expect(last.event).toBe("snapshot");
    const data = JSON.parse(last.data);
    expect(data.revision).toBe(current.snapshot.revision);
    expect(data.configs[name].value.n).toBe(PUBLISHES);
    expect(data.configs[name].version).toBe(1 + PUBLISHES);
    // Queueing every event would have kept PUBLISHES × eventBytes (about 20 MB) alive; allow a few held snapshots.
    expect(grown).toBeLessThan(Math.min(12e6, (PUBLISHES * eventBytes) / 2));
    // RSS is noisy (allocator arenas): only a loose ceiling.
    expect(rssGrown).toBeLessThan(64e6);

    const gone = performance.now() + 3000;
    while (s.server.ctx.services.snapshots.listenerCount() > 0 && performance.now() < gone) await Bun.sleep(20);
    expect(s.server.ctx.services.snapshots.listenerCount()).toBe(0);
  }, 30_000);
});
