import { acceptsGzip } from "./http-values";

/**
 * Replies made once and sent many times (the snapshot, GrowthBook's payload: an entry never changes, and SDKs
 * poll it thousands of times a second).
 *
 * A reply without a body, or with at most CLONED_BODY_MAX bytes, is a prepared Response cloned per request: a
 * clone copies the prepared headers natively, the cheapest way to answer that Bun offers. A larger one is built
 * afresh from the prepared bytes and header object: a clone holds its own copy of the body until the garbage
 * collector finalises it, which under a flood of 6 KB answers kept about 10 MB more resident at a like rate
 * (issue 32: svc after 8 s of full snapshot answers, 107 MB against 96 MB; a bare Bun.serve, 46 MB against
 * 37 MB). A small body's copies weigh little, and its clone answers about 5 % faster (the gzip snapshot, measured).
 */
export const CLONED_BODY_MAX = 2048;

export type PreparedReply = { clone: Response } | { body: Uint8Array<ArrayBuffer>; headers: Record<string, string> };

/** A 304 with `headers`: always cloned (it has no body). */
export function prepareNotModified(headers: Record<string, string>): { clone: Response } {
  return { clone: new Response(null, { status: 304, headers }) };
}

/** A 200 with `body` and `headers`. */
export function prepareReply(body: Uint8Array<ArrayBuffer>, headers: Record<string, string>): PreparedReply {
  return body.byteLength <= CLONED_BODY_MAX ? { clone: new Response(new Blob([body]), { headers }) } : { body, headers };
}

/** The prepared reply, with the request's X-Request-Id when given. */
export function sendPrepared(reply: PreparedReply, requestId?: string): Response {
  if ("body" in reply) return new Response(reply.body, { headers: requestId ? { ...reply.headers, "x-request-id": requestId } : reply.headers });
  const response = reply.clone.clone();
  if (requestId) response.headers.set("x-request-id", requestId);
  return response;
}

/** `Accept-Encoding` as SDKs send it (`gzip`, `gzip, deflate, br`) without allocating; q-values go the careful way. */
const PLAIN_GZIP = /(?:^|,)\s*(?:gzip|\*)\s*(?:,|$)/i;
export function takesGzip(acceptEncoding: string | null): boolean {
  if (!acceptEncoding) return false;
  return acceptEncoding.includes(";") ? acceptsGzip(acceptEncoding) : PLAIN_GZIP.test(acceptEncoding);
}
