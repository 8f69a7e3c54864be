import { etagMatches } from "../../lib/http-values";
import { type PreparedReply, prepareNotModified, prepareReply, sendPrepared, takesGzip } from "../../lib/prepared-reply";
import type { SnapshotEntry } from "./snapshot";

/*
 * The snapshot's and the bulk OFREP answer's replies, shared by the Elysia routes (routes.ts) and the native fast
 * paths (fast-path.ts), so both answer alike. Apart from the routes: the fast paths are in Bun's table from the
 * start, and this file does not load the routes' schemas with them.
 */

// Origin is listed because browser replies carry Access-Control-Allow-Origin for the caller's origin.
const VARY = "Accept-Encoding, Origin";

/** One entry's replies, made once (an entry never changes) and sent per request (lib/prepared-reply.ts). */
type PreparedReplies = { notModified: { clone: Response }; plain: PreparedReply; gzip: PreparedReply };
const prepared = new WeakMap<SnapshotEntry, PreparedReplies>();

function prepare(entry: SnapshotEntry): PreparedReplies {
  const base = { etag: entry.etag, "cache-control": "no-cache", vary: VARY };
  const replies = {
    notModified: prepareNotModified(base),
    plain: prepareReply(entry.body, { ...base, "content-type": "application/json" }),
    gzip: prepareReply(entry.gzip, { ...base, "content-type": "application/json", "content-encoding": "gzip" }),
  };
  prepared.set(entry, replies);
  return replies;
}

/**
 * The snapshot reply: 304 when If-None-Match names the current revision,
 * else the prepared bytes, gzip ones when the client takes gzip. Shared by
 * the Elysia route and the native fast path so both answer identically.
 * SDKs poll it thousands of times a second: per reply it clones a prepared
 * Response or wraps the prepared bytes and headers (PreparedReplies), and
 * adds the request id, nothing else.
 */
export function snapshotResponse(entry: SnapshotEntry, headers: Headers, requestId?: string): Response {
  const p = prepared.get(entry) ?? prepare(entry);
  // Accept-Encoding is read only when a body goes out.
  return sendPrepared(etagMatches(headers.get("if-none-match"), entry.etag) ? p.notModified : takesGzip(headers.get("accept-encoding")) ? p.gzip : p.plain, requestId);
}

/** The entry's prepared 304 (clone it to answer): for the poll fast path, which has already matched the tag. */
export function notModifiedReply(entry: SnapshotEntry): Response {
  return (prepared.get(entry) ?? prepare(entry)).notModified.clone;
}

/**
 * The bulk OFREP answer's tag: the snapshot's, and when gates or experiments answer per context (their
 * answers are part of the tag, and of no shared body) a hash of the context too. Shared by the route and
 * the native fast path (fast-path.ts) so both name an answer alike.
 */
const utf8 = new TextEncoder();

/**
 * The bulk answer's tag: the snapshot's, and when answers depend on the context, with a hash of the request
 * body's bytes as sent. The body, not the parsed context, so a poll that repeats its body is matched without
 * parsing it (fast-path.ts); the same context written otherwise only costs one 200.
 */
export function bulkTag(entry: SnapshotEntry, perContext: boolean, body: string | Uint8Array): string {
  if (!perContext) return entry.etag;
  return `${entry.etag.slice(0, -1)}-${Bun.hash(typeof body === "string" ? utf8.encode(body) : body).toString(36)}"`;
}

export function bulkNotModified(etag: string): Response {
  return new Response(null, { status: 304, headers: { etag, "cache-control": "no-cache", vary: VARY } });
}
