import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BUSY_ANSWERS, whenBusy } from "../src/server";
import { startTestServer, type TestServer } from "./helpers";

/** Resolves to "busy" if `promise` settles within `ms`, else "quiet". */
const within = (promise: Promise<void>, ms: number) => Promise.race([promise.then(() => "busy" as const), Bun.sleep(ms).then(() => "quiet" as const)]);

describe("whenBusy: the JIT's normal policy waits for traffic (issue 32, idle memory)", () => {
  test("settles once BUSY_ANSWERS requests are answered between two looks, not for fewer", async () => {
    let answered = 0;
    const stop = new AbortController();
    const busy = whenBusy(() => answered, stop.signal, 20);
    answered += BUSY_ANSWERS - 1;
    expect(await within(busy, 60)).toBe("quiet");
    // Spread over several looks, the same number again is no burst either.
    for (let i = 0; i < 4; i++) {
      answered += (BUSY_ANSWERS - 1) / 4;
      await Bun.sleep(25);
    }
    expect(await within(busy, 30)).toBe("quiet");
    answered += BUSY_ANSWERS;
    expect(await within(busy, 100)).toBe("busy");
    stop.abort();
  });

  test("a server shutting down stops looking and never settles", async () => {
    let answered = 0;
    const stop = new AbortController();
    const busy = whenBusy(() => answered, stop.signal, 20);
    stop.abort();
    answered += 10 * BUSY_ANSWERS;
    expect(await within(busy, 80)).toBe("quiet");
  });
});

describe("a running server counts its answers for it", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.stop());

  test("answers of the pipeline and of the snapshot's fast path are both counted", async () => {
    const telemetry = s.server.ctx.services.operations.telemetry;
    const before = telemetry.answered();
    expect((await s.api("/api/admin/killswitches")).status).toBe(200);
    const snapshot = await fetch(`${s.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": s.serverKey } });
    expect(snapshot.status).toBe(200);
    const poll = await fetch(`${s.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": s.serverKey, "if-none-match": snapshot.headers.get("etag")! } });
    expect(poll.status).toBe(304);
    expect(telemetry.answered() - before).toBe(3);
  });
});
