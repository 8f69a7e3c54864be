import { ApiError, badRequest } from "../../lib/errors";
import { MAX_BODY_DEPTH, nestedDeeperThan } from "../../lib/pipeline";
import { PROPERTY_NAME } from "../events/service";
import type { Frame } from "./fingerprint";

// What Sentry SDKs send (envelopes and the older store endpoint), read into the same occurrences as
// POST /api/sdk/v1/errors. Pure apart from the clock passed in. Every malformed input is a 400 BAD_REQUEST.

/** One Sentry event, as the errors service ingests it. */
export type SentryOccurrence = {
  eventId: string | null;
  type: string | null;
  message: string;
  /** Top first (Sentry lists them oldest first). */
  frames: Frame[];
  custom: string[] | null;
  /** Epoch ms as sent (seconds float or ISO in the event), or null when absent or unreadable. */
  ts: number | null;
  unitId: string | null;
  props: Record<string, string | number | boolean> | null;
};

/** Item types that carry an event to track. Everything else (session, sessions, client_report, transaction, attachment, ...) is skipped. */
const EVENT_ITEM_TYPES = new Set(["event", "error"]);
/** Items in one envelope; Sentry sends a handful. */
const MAX_ITEMS = 1000;
const MAX_PROPS = 50;
const PROP_TEXT_MAX = 1000;
const UNIT_MAX = 256;
const FRAMES_MAX = 200;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/**
 * The body as sent, decompressed when `Content-Encoding` says so, never
 * larger than `maxBytes` once decompressed (413 `Body too large` beyond).
 */
export function decodeBody(bytes: Uint8Array, contentEncoding: string | null | undefined, maxBytes: number): Uint8Array {
  const encoding = (contentEncoding ?? "").trim().toLowerCase();
  if (encoding === "" || encoding === "identity") return bytes;
  const options = { maxOutputLength: maxBytes };
  try {
    // node:zlib is loaded by the first compressed body: a static import would load it at every server start.
    const { brotliDecompressSync, gunzipSync, inflateSync } = require("node:zlib") as typeof import("node:zlib");
    if (encoding === "gzip" || encoding === "x-gzip") return gunzipSync(bytes, options);
    if (encoding === "deflate") return inflateSync(bytes, options);
    if (encoding === "br") return brotliDecompressSync(bytes, options);
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || err instanceof RangeError) {
      throw new ApiError("BAD_REQUEST", "Body too large", `at most ${maxBytes} bytes once decompressed`, 413);
    }
    throw badRequest(`Malformed ${encoding} body`, `Content-Encoding: the body is not valid ${encoding} data`);
  }
  throw badRequest("Unsupported Content-Encoding", `Content-Encoding: ${encoding.slice(0, 40)}; send gzip, deflate, br or none`);
}

const decoder = new TextDecoder("utf-8", { fatal: false });

/** Parses JSON that must be an object; `where` names it in the error. */
function jsonObject(bytes: Uint8Array, where: string): Json {
  // Deep nesting is refused before JSON.parse sees it (the pipeline's limit, applied to decompressed bytes too).
  if (nestedDeeperThan(bytes, MAX_BODY_DEPTH)) throw badRequest("Body nested too deeply", `${where}: at most ${MAX_BODY_DEPTH} levels of arrays/objects`);
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw badRequest("Malformed Sentry envelope", `${where}: expected valid JSON`);
  }
  if (!isObject(value)) throw badRequest("Malformed Sentry envelope", `${where}: expected a JSON object`);
  return value;
}

export type EnvelopeItem = { type: string; payload: Uint8Array };
export type Envelope = { header: Json; items: EnvelopeItem[] };

const NEWLINE = 0x0a;

/**
 * A Sentry envelope: a header line, then items, each an item-header line and
 * a payload; the payload is `length` bytes when the item header says so,
 * else the rest of the line.
 */
export function parseEnvelope(bytes: Uint8Array): Envelope {
  const lineEnd = (from: number) => {
    const at = bytes.indexOf(NEWLINE, from);
    return at < 0 ? bytes.length : at;
  };
  if (bytes.length === 0) throw badRequest("Malformed Sentry envelope", "envelope: empty body");
  let end = lineEnd(0);
  const header = jsonObject(bytes.subarray(0, end), "envelope header (line 1)");
  let pos = end + 1;
  const items: EnvelopeItem[] = [];
  while (pos < bytes.length) {
    // Blank lines between items (and a trailing newline) are allowed.
    if (bytes[pos] === NEWLINE || (bytes[pos] === 0x0d && bytes[pos + 1] === NEWLINE)) {
      pos += bytes[pos] === NEWLINE ? 1 : 2;
      continue;
    }
    const n = items.length + 1;
    if (n > MAX_ITEMS) throw badRequest("Malformed Sentry envelope", `envelope: more than ${MAX_ITEMS} items`);
    end = lineEnd(pos);
    const itemHeader = jsonObject(bytes.subarray(pos, end), `item ${n} header`);
    const type = itemHeader.type;
    if (typeof type !== "string" || type === "") throw badRequest("Malformed Sentry envelope", `item ${n} header: type must be a non-empty string`);
    pos = end + 1;
    const length = itemHeader.length;
    let payload: Uint8Array;
    if (length !== undefined && length !== null) {
      if (typeof length !== "number" || !Number.isInteger(length) || length < 0) {
        throw badRequest("Malformed Sentry envelope", `item ${n} header: length must be a non-negative integer (bytes)`);
      }
      if (pos + length > bytes.length) {
        throw badRequest("Malformed Sentry envelope", `item ${n}: length ${length} is past the end of the envelope (${Math.max(0, bytes.length - pos)} bytes left)`);
      }
      payload = bytes.subarray(pos, pos + length);
      pos += length;
      if (pos < bytes.length && bytes[pos] !== NEWLINE && !(bytes[pos] === 0x0d && bytes[pos + 1] === NEWLINE)) {
        throw badRequest("Malformed Sentry envelope", `item ${n}: ${length} bytes of payload are not followed by a newline`);
      }
    } else {
      end = lineEnd(pos);
      payload = bytes.subarray(pos, end > pos && bytes[end - 1] === 0x0d ? end - 1 : end);
      pos = end + 1;
    }
    items.push({ type, payload });
  }
  return { header, items };
}

/** The payloads of an envelope's items that carry events, as objects. */
export function envelopeEvents(envelope: Envelope): Json[] {
  const events: Json[] = [];
  envelope.items.forEach((item, i) => {
    if (EVENT_ITEM_TYPES.has(item.type)) events.push(jsonObject(item.payload, `item ${i + 1} (${item.type})`));
  });
  return events;
}

/** The event JSON of POST /api/{n}/store/. */
export function parseStoreBody(bytes: Uint8Array): Json {
  if (bytes.length === 0) throw badRequest("Malformed Sentry event", "body: empty; send one event as JSON");
  return jsonObject(bytes, "body");
}

/** `sentry_key` of an `X-Sentry-Auth: Sentry sentry_key=…, sentry_version=7` header, or of a DSN. */
export function sentryKeyOf(auth: string | undefined | null): string | null {
  if (!auth) return null;
  const m = /(?:^|[\s,])sentry_key\s*=\s*([^\s,]+)/.exec(auth.slice(0, 2000));
  return m ? m[1]! : null;
}

/** The public key of a DSN (`https://KEY@host/1`), as a tunnel sends it in the envelope header. */
export function dsnKey(dsn: unknown): string | null {
  if (typeof dsn !== "string" || dsn.length > 2000) return null;
  try {
    const user = new URL(dsn).username;
    return user ? decodeURIComponent(user) : null;
  } catch {
    return null;
  }
}

/** Epoch ms of a Sentry `timestamp`: seconds (a float) or an ISO date-time (with or without a zone; UTC when none). */
export function sentryTimestamp(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? Math.round(value * 1000) : null;
  if (typeof value !== "string" || value.length > 64) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) return null;
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(value) ? value : `${value}Z`;
  const ms = Date.parse(zoned);
  return Number.isFinite(ms) ? ms : null;
}

function toFrame(raw: unknown): Frame | null {
  if (!isObject(raw)) return null;
  const frame: Frame = {};
  const fn = text(raw.function);
  const module = text(raw.module);
  const filename = text(raw.filename) ?? text(raw.abs_path);
  if (fn) frame.function = fn.slice(0, 500);
  if (module) frame.module = module.slice(0, 500);
  if (filename) frame.filename = filename.slice(0, 1000);
  if (typeof raw.lineno === "number" && Number.isFinite(raw.lineno)) frame.lineno = raw.lineno;
  if (typeof raw.colno === "number" && Number.isFinite(raw.colno)) frame.colno = raw.colno;
  if (typeof raw.in_app === "boolean") frame.inApp = raw.in_app;
  // Kept with the occurrence (bounded again there): where the file was, and the lines around the line.
  const absPath = text(raw.abs_path);
  if (absPath && absPath !== filename) frame.absPath = absPath.slice(0, 1000);
  const context = text(raw.context_line);
  if (context !== undefined) frame.contextLine = context.slice(0, 1000);
  const pre = contextLines(raw.pre_context, "last");
  if (pre) frame.preContext = pre;
  const post = contextLines(raw.post_context, "first");
  if (post) frame.postContext = post;
  return frame;
}

/** Context lines kept around a frame's line: the nearest ones, strings only. */
const CONTEXT_LINES = 5;

/** The `CONTEXT_LINES` lines nearest the frame's line (`last` of pre_context, `first` of post_context), or undefined. */
function contextLines(raw: unknown, nearest: "first" | "last"): string[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const near = nearest === "last" ? raw.slice(-CONTEXT_LINES) : raw.slice(0, CONTEXT_LINES);
  const lines = near.map((l) => (typeof l === "string" ? l.slice(0, 1000) : ""));
  return lines.length > 0 ? lines : undefined;
}

/** Sentry's frames (oldest first), top first. */
function framesOf(stacktrace: unknown): Frame[] {
  if (!isObject(stacktrace) || !Array.isArray(stacktrace.frames)) return [];
  const raw = stacktrace.frames.length > FRAMES_MAX ? stacktrace.frames.slice(-FRAMES_MAX) : stacktrace.frames;
  const frames: Frame[] = [];
  for (let i = raw.length - 1; i >= 0; i--) {
    const f = toFrame(raw[i]);
    if (f) frames.push(f);
  }
  return frames;
}

/** The message of an event without an exception: `logentry` or `message` (a string, or `{formatted, message}`). */
function messageOf(event: Json): string | undefined {
  for (const source of [event.logentry, event.message]) {
    if (typeof source === "string" && source !== "") return source;
    if (isObject(source)) {
      const m = text(source.formatted) || text(source.message);
      if (m) return m;
    }
  }
  return undefined;
}

function addProp(props: Record<string, string | number | boolean>, name: string, value: unknown): void {
  if (Object.keys(props).length >= MAX_PROPS || !PROPERTY_NAME.test(name)) return;
  if (typeof value === "string") props[name] = value.replaceAll("\u0000", "").slice(0, PROP_TEXT_MAX).toWellFormed();
  else if (typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))) props[name] = value;
}

/**
 * One Sentry event as an occurrence: the last (outermost) exception's type,
 * value and frames, else the event's message and stack; `user.id` as the
 * unit; `environment`, `release`, `level`, `platform` and the tags as
 * properties; the event's own `fingerprint` when it has one.
 */
export function occurrenceFromEvent(event: Json): SentryOccurrence {
  const exception = event.exception;
  const values = Array.isArray(exception) ? exception : isObject(exception) && Array.isArray(exception.values) ? exception.values : [];
  const last = [...values].reverse().find(isObject);
  let type: string | null = null;
  let message: string;
  let frames: Frame[];
  if (last) {
    type = text(last.type) ?? null;
    message = text(last.value) || messageOf(event) || type || "(no message)";
    frames = framesOf(last.stacktrace);
    if (frames.length === 0) frames = framesOf(event.stacktrace);
  } else {
    message = messageOf(event) ?? "(no message)";
    type = "Message";
    const threads = isObject(event.threads) && Array.isArray(event.threads.values) ? event.threads.values.filter(isObject) : [];
    frames = framesOf(event.stacktrace);
    if (frames.length === 0 && threads.length > 0) frames = framesOf((threads.find((t) => t.crashed === true || t.current === true) ?? threads[0])!.stacktrace);
  }
  const user = isObject(event.user) ? event.user : undefined;
  const rawUnit = user?.id;
  const unit = typeof rawUnit === "number" && Number.isFinite(rawUnit) ? String(rawUnit) : text(rawUnit);
  // A unit id the SDK paths would refuse (control characters, too long) is dropped rather than failing the event.
  const unitId = unit && unit.length <= UNIT_MAX && !/[\u0000-\u001f\u007f]/.test(unit) ? unit : null;
  const props: Record<string, string | number | boolean> = {};
  for (const name of ["environment", "release", "level", "platform", "server_name", "transaction"]) addProp(props, name, event[name]);
  const tags = event.tags;
  if (isObject(tags)) for (const [k, v] of Object.entries(tags)) addProp(props, k, v);
  else if (Array.isArray(tags)) for (const pair of tags) if (Array.isArray(pair) && typeof pair[0] === "string") addProp(props, pair[0], pair[1]);
  const custom = Array.isArray(event.fingerprint)
    ? event.fingerprint.filter((p): p is string | number => typeof p === "string" || typeof p === "number").map((p) => String(p).slice(0, 500)).slice(0, 50)
    : null;
  const eventId = text(event.event_id);
  return {
    eventId: eventId && /^[0-9a-f-]{32,36}$/i.test(eventId) ? eventId.replaceAll("-", "").toLowerCase() : null,
    type,
    message,
    frames,
    custom: custom && custom.length > 0 ? custom : null,
    ts: sentryTimestamp(event.timestamp),
    unitId,
    props: Object.keys(props).length > 0 ? props : null,
  };
}
