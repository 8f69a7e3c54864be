import { type ApiError, badRequest, validation } from "./errors";
import { randomBase62 } from "./ids";

// Request ids, ETags, encodings, JSON bodies and list filters: no Elysia or TypeBox here, so the routes a server answers from
// Bun's native table (src/server.ts) do not load them at start (issue 32). src/lib/http.ts re-exports them.

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Per-process prefix: request ids only need to be unique, and a counter costs nothing on hot paths. */
const REQUEST_ID_PREFIX = randomBase62(8);
let requestSequence = 0;

/** The caller's X-Request-Id when it is safe to echo and log, else a new one (16 letters and digits). */
export function requestIdFor(incoming: string | null): string {
  if (incoming && SAFE_REQUEST_ID.test(incoming)) return incoming;
  requestSequence = (requestSequence + 1) % 2_821_109_907_456; // 36^8
  return REQUEST_ID_PREFIX + requestSequence.toString(36).padStart(8, "0");
}

/**
 * The `q` rule of every list: case-insensitive substring over the resource's
 * text columns, OR-matched; no q (or empty) keeps everything. Done in JS so
 * that case folding is Unicode-aware (SQLite's lower() is ASCII only).
 */
export function filterByQuery<T>(rows: T[], q: string | undefined, texts: (row: T) => (string | null | undefined)[]): T[] {
  if (!q) return rows;
  const needle = q.toLocaleLowerCase();
  return rows.filter((row) => texts(row).some((text) => text?.toLocaleLowerCase().includes(needle)));
}

/**
 * RFC 9110 weak comparison of an If-None-Match list against our tag
 * (`*` matches anything that exists).
 */
export function etagMatches(ifNoneMatch: string | null | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch === etag) return true;
  for (const raw of ifNoneMatch.split(",")) {
    const tag = raw.trim();
    if (tag === "*" || (tag.startsWith("W/") ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}

/** Whether the client takes gzip (`Accept-Encoding: gzip`, not `gzip;q=0`). */
export function acceptsGzip(acceptEncoding: string | null | undefined): boolean {
  if (!acceptEncoding) return false;
  for (const part of acceptEncoding.split(",")) {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    if (coding !== "gzip" && coding !== "*") continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

/** A body's text as a JSON object, or why it is not one: BAD_REQUEST for bad JSON, VALIDATION for anything but an object. */
export function jsonObjectOf(text: string): Record<string, unknown> | ApiError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return badRequest("Malformed request body", "body: expected valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    const got = Array.isArray(parsed) ? "an array" : parsed === null ? "null" : typeof parsed;
    return validation("Request body must be a JSON object", `(body): expected an object, got ${got}`);
  }
  return parsed as Record<string, unknown>;
}
