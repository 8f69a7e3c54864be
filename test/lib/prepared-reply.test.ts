import { describe, expect, test } from "bun:test";
import { CLONED_BODY_MAX, prepareNotModified, prepareReply, sendPrepared, takesGzip } from "../../src/lib/prepared-reply";

/**
 * Issue 32: a clone of a Response with a body holds a copy of it until the garbage collector finalises the clone,
 * which under a flood of full snapshot answers kept about 10 MB more resident. Large bodies are wrapped afresh
 * per request; small ones and 304s are still cloned. Both forms answer the same bytes and headers.
 */
const headers = { etag: '"r42"', "cache-control": "no-cache", vary: "Accept-Encoding, Origin", "content-type": "application/json" };
const bytes = (n: number) => new TextEncoder().encode(JSON.stringify({ pad: "x".repeat(Math.max(0, n - 10)) }));

describe("prepared replies", () => {
  test("a body up to CLONED_BODY_MAX bytes is cloned, a larger one is wrapped afresh", () => {
    expect(CLONED_BODY_MAX).toBe(2048);
    expect("clone" in prepareReply(bytes(500), headers)).toBe(true);
    expect("body" in prepareReply(bytes(6000), headers)).toBe(true);
  });

  for (const size of [500, 6000]) {
    test(`a ${size}-byte reply sends the same bytes and headers every time, with the request id only when given`, async () => {
      const body = bytes(size);
      const reply = prepareReply(body, headers);
      for (let i = 0; i < 3; i++) {
        const plain = sendPrepared(reply);
        expect(plain.status).toBe(200);
        expect(new Uint8Array(await plain.arrayBuffer())).toEqual(body);
        expect(plain.headers.toJSON()).toMatchObject(headers);
        expect(plain.headers.has("x-request-id")).toBe(false);
        const named = sendPrepared(reply, "req-1");
        expect(named.headers.get("x-request-id")).toBe("req-1");
        expect((await named.arrayBuffer()).byteLength).toBe(body.byteLength);
      }
      // The prepared headers are never changed by a request id.
      expect(sendPrepared(reply).headers.has("x-request-id")).toBe(false);
    });
  }

  test("a prepared 304 is cloned with its headers and no body", async () => {
    const reply = prepareNotModified({ etag: '"r42"' });
    const sent = sendPrepared(reply, "req-2");
    expect(sent.status).toBe(304);
    expect(sent.headers.get("etag")).toBe('"r42"');
    expect(sent.headers.get("x-request-id")).toBe("req-2");
    expect(sendPrepared(reply).headers.has("x-request-id")).toBe(false);
  });

  test("takesGzip reads Accept-Encoding as SDKs send it, q-values included", () => {
    expect(takesGzip("gzip")).toBe(true);
    expect(takesGzip("gzip, deflate, br")).toBe(true);
    expect(takesGzip("br")).toBe(false);
    expect(takesGzip("gzip;q=0")).toBe(false);
    expect(takesGzip(null)).toBe(false);
  });
});
