/**
 * The pieces of the request pipeline that buildApp wires into Elysia's
 * global hooks: request metadata, body limits, CORS paths, and how errors
 * (ours and Elysia's) become `{error, code, detail?}` responses.
 */

/**
 * Paths a browser SDK may call cross-origin; CORS headers are only given there. The public intake (/ops/)
 * answers CORS itself, for the domains of projects that take public tickets only (src/modules/ops/routes.ts).
 * Browser keys also post errors to the Sentry paths (`@sentry/browser` with a browser-key DSN) and evaluate
 * through GrowthBook's remote evaluation (/api/eval/).
 */
// /api/features/, /api/eval/ and /sub/ are GrowthBook's SDK protocol (src/modules/growthbook).
const CORS_PREFIXES = ["/api/sdk/", "/ofrep/", "/api/features/", "/api/eval/", "/sub/"];

/** `status` is set where the answer bypasses Elysia's `set.status` (error responses, early answers). */
export type RequestMeta = { start: number; id: string; path: string; status?: number };

/** Paths the edge role (`--edge-only`) serves. */
export function isEdgePath(path: string): boolean {
  // /metrics too: an edge server is scraped like any other (its exposition only; the dashboard page is not served there).
  return path === "/healthz" || path === "/metrics" || path.startsWith("/ops/");
}

/** Paths of machine clients (admin API, SDK, OFREP, intake, health, docs); everything else is a browser page or sign-in endpoint. */
export function isApiPath(path: string): boolean {
  return path.startsWith("/api/") || path.startsWith("/ofrep/") || path.startsWith("/sub/") || path.startsWith("/ops/") || path === "/healthz" || path === "/openapi" || path.startsWith("/openapi/");
}

/** The headers a browser page may read from an SDK answer (Access-Control-Expose-Headers). */
export const CORS_EXPOSED = "ETag, X-Request-Id, Retry-After, X-SSE-Support";

export function isCorsPath(path: string): boolean {
  return CORS_PREFIXES.some((p) => path.startsWith(p)) || SENTRY_INGEST.test(path);
}

/** GrowthBook's SDKs send their key as a path segment: log lines and error bodies show the path without it. */
const KEY_IN_PATH = /^(\/(?:api\/features|api\/eval|sub)\/)[^/]+/;
export function loggedPath(path: string): string {
  return KEY_IN_PATH.test(path) ? path.replace(KEY_IN_PATH, "$1…") : path;
}

export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const end = url.indexOf("?", start);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

type SchemaLike = {
  const?: unknown;
  anyOf?: SchemaLike[];
  type?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minProperties?: number;
};

/** What a (TypeBox) schema expects, in words a caller can act on. */
function expectation(schema: SchemaLike | undefined): string | null {
  if (!schema) return null;
  if (schema.const !== undefined) return `must be ${JSON.stringify(schema.const)}`;
  if (schema.anyOf) {
    if (schema.anyOf.every((b) => b.const !== undefined)) return `must be one of: ${schema.anyOf.map((b) => String(b.const)).join(", ")}`;
    // Elysia adds a numeric-string branch to number fields; describe the real one.
    const real = schema.anyOf.filter((b) => !(b.type === "string" && (b.format === "integer" || b.format === "numeric")));
    if (real.length > 1 && real.every((b) => b.type && b.const === undefined)) return `must be ${real.map((b) => b.type).join(" or ")}`;
    return real.length === 1 ? expectation({ ...real[0], minimum: schema.minimum ?? real[0]!.minimum, maximum: schema.maximum ?? real[0]!.maximum }) : null;
  }
  const range = (lo?: number, hi?: number, unit = "") =>
    lo !== undefined && hi !== undefined ? ` between ${lo} and ${hi}${unit}` : lo !== undefined ? ` of at least ${lo}${unit}` : hi !== undefined ? ` of at most ${hi}${unit}` : "";
  switch (schema.type) {
    case "integer":
      return `must be an integer${range(schema.minimum, schema.maximum)}`;
    case "number":
      return `must be a number${range(schema.minimum, schema.maximum)}`;
    case "string":
      return `must be a string${range(schema.minLength, schema.maxLength, " characters")}`;
    case "boolean":
      return "must be true or false";
    case "array":
      return "must be an array";
    case "object":
      return schema.minProperties ? "must be an object with at least one field" : "must be an object";
    default:
      return null;
  }
}

/** Turns Elysia's validation error into `detail`: one `field: what is wrong` per failing field. */
export function validationDetail(error: unknown): string {
  const all = (error as { all?: { path?: string; message?: string; summary?: string; schema?: SchemaLike }[] }).all;
  if (Array.isArray(all) && all.length > 0) {
    const byPath = new Map<string, string>();
    for (const e of all) {
      const path = (e.path ?? "").replace(/^\//, "").replaceAll("/", ".") || "(body)";
      if (byPath.has(path)) continue;
      if (e.message === "Unexpected property") {
        const known = Object.keys((e.schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
        byPath.set(path, `is not a field of this body${known.length > 0 ? ` (known: ${known.join(", ")})` : ""}`);
        continue;
      }
      const missing = e.message === "Expected required property";
      byPath.set(path, missing ? "is required" : (expectation(e.schema) ?? e.summary ?? e.message ?? "is invalid"));
    }
    return [...byPath].slice(0, 20).map(([path, what]) => `${path}: ${what}`).join("; ");
  }
  // Never Elysia's message: it carries the whole rejected value as JSON.
  return "(body): does not match the documented schema";
}

/**
 * How long a request body may take to arrive, whole (408 `Request body timed out` after): a client that
 * sends a 1 MiB body a few bytes a second would otherwise hold its buffer (and its place) for as long as it likes.
 * 30 s lets a full body through at about 35 KB/s.
 */
export const BODY_READ_TIMEOUT_MS = 30_000;
/**
 * Bodies read at once by the whole server (503 `Unavailable` beyond, with Retry-After): with the 1 MiB body limit
 * at most 128 MiB are held by bodies still arriving. Only bodies still waiting for the network count: one that
 * came with its headers is read at once and gives its place back before the next request is looked at.
 */
export const MAX_BODY_READS = 128;
/**
 * Bodies read at once from one client address (429 `Too many requests` beyond, with Retry-After): one client
 * cannot take every place. A quarter of them, as behind a NAT or a proxy (without SERVICE_TRUSTED_PROXIES) many
 * clients share an address. Small bodies never come near it; a client that saturates the server with large ones
 * does (64 connections posting 300 KB bodies on loopback had all 64 arriving at once), and is told to retry.
 */
export const MAX_BODY_READS_PER_CLIENT = 32;

export type BodyReadLimits = { timeoutMs: number; max: number; perClient: number };

/** Why a body was not read to its end, as counted in /metrics (`svc_http_body_refusals_total{reason}`). */
export type BodyRefusalReason = "timeout" | "per_client" | "server";

/** What BodyReads counts, read by /metrics: bodies being read now, and the refusals by reason. */
export type BodyCounts = { reading: number; refused: Record<BodyRefusalReason, number> };

/** A request whose body was refused while (or instead of being) read: onRequest answers it with this. */
export const refusedBodies = new WeakMap<Request, { status: number; body: object; headers: Record<string, string> }>();

/** The answer to a body past its deadline closes the connection (RFC 9110 on 408): nothing more of it is taken. */
export const CLOSE = { connection: "close" } as const;

type OpenRead = {
  deadline: number;
  /** Ends the read at its deadline (it then ends, marked timed out). */
  cancel: () => void;
  timedOut: boolean;
  /** The client's address, looked up when first needed (see BodyReads.read). */
  client: string | undefined;
  clientOf: () => string;
};

/**
 * The limits on bodies still arriving (BODY_READ_TIMEOUT_MS, MAX_BODY_READS,
 * MAX_BODY_READS_PER_CLIENT). The deadline is kept by one sweep (running
 * only while some body is being read) instead of a timer per request: most
 * bodies are read within the tick they arrive in.
 */
export class BodyReads {
  private readonly open = new Set<OpenRead>();
  private sweep: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly limits: BodyReadLimits,
    readonly counts: BodyCounts = { reading: 0, refused: { timeout: 0, per_client: 0, server: 0 } },
  ) {}

  /**
   * Reads `request`'s body with `read` under the limits, or answers the request marked refused (refusedBodies).
   * Addresses are looked up only once `perClient` bodies are open (fewer cannot be too many from one client):
   * the lookup (Bun's requestIP) costs a few microseconds, a tenth of an OFREP call's whole time.
   */
  async read(request: Request, clientOf: () => string, read: (open: OpenRead) => Promise<Request>): Promise<Request> {
    const { max, perClient } = this.limits;
    if (this.counts.reading >= max) return this.refuse(request, "server", 503, { error: "Unavailable" });
    let client: string | undefined;
    if (this.open.size >= perClient) {
      client = clientOf();
      let mine = 0;
      for (const other of this.open) if ((other.client ??= other.clientOf()) === client) mine++;
      if (mine >= perClient) {
        return this.refuse(request, "per_client", 429, { error: "Too many requests", code: "BAD_REQUEST", detail: `at most ${perClient} request bodies are read at once from one client address` });
      }
    }
    this.counts.reading++;
    const entry: OpenRead = { deadline: performance.now() + this.limits.timeoutMs, cancel: () => undefined, timedOut: false, client, clientOf };
    this.open.add(entry);
    this.sweep ??= this.startSweep();
    try {
      const next = await read(entry);
      if (!entry.timedOut) return next;
      return this.refuse(request, "timeout", 408, { error: "Request body timed out", code: "BAD_REQUEST", detail: `the whole body must arrive within ${this.limits.timeoutMs / 1000} s` });
    } catch {
      // The client hung up halfway: nobody reads this answer, but it is one of ours (no unexpected-error log line).
      const gone = rebuilt(request, null);
      refusedBodies.set(gone, { status: 400, body: { error: "Malformed request body", code: "BAD_REQUEST", detail: "body: the connection closed before the whole body arrived" }, headers: CLOSE });
      return gone;
    } finally {
      this.counts.reading--;
      this.open.delete(entry);
    }
  }

  private refuse(request: Request, reason: BodyRefusalReason, status: number, body: object): Request {
    this.counts.refused[reason]++;
    const refused = rebuilt(request, null);
    // Refused before reading, the connection stays: Bun discards the rest of that body as it comes (300 MB sent after a
    // 429 grew nothing), and closing it made a busy client reconnect for every retry (a third of its throughput).
    refusedBodies.set(refused, { status, body, headers: status === 408 ? CLOSE : { "Retry-After": "1" } });
    return refused;
  }

  /** Cancels the reads past their deadline (their read then ends, marked timed out); stops once nothing is read. */
  private startSweep(): ReturnType<typeof setInterval> {
    const sweep = setInterval(
      () => {
        if (this.open.size === 0) {
          clearInterval(sweep);
          this.sweep = undefined;
          return;
        }
        const now = performance.now();
        for (const entry of this.open) {
          if (entry.timedOut || entry.deadline > now) continue;
          entry.timedOut = true;
          entry.cancel();
        }
      },
      Math.max(10, Math.min(1000, this.limits.timeoutMs / 5)),
    );
    sweep.unref?.();
    return sweep;
  }
}

/** Requests whose body passed the size limit while it was read (413). */
export const oversized = new WeakSet<Request>();
/** Requests whose body nests arrays/objects deeper than MAX_BODY_DEPTH (400). */
export const tooDeep = new WeakSet<Request>();
/**
 * The request Bun handed us, for one rebuilt around its buffered body: the
 * peer address (`server.requestIP`) and per-request timeouts only know the
 * original.
 */
export const originalRequest = new WeakMap<Request, Request>();

/** Sentry's ingest paths (`/api/{digits}/envelope/`, `/api/{digits}/store/`). */
const SENTRY_INGEST = /^\/api\/\d+\/(?:envelope|store)\/?$/;

/** Deepest nesting of arrays/objects accepted in a request body. */
export const MAX_BODY_DEPTH = 64;

/**
 * Whether JSON text (as UTF-8 bytes) opens more than `limit` arrays/objects
 * at once. A linear scan that skips strings; it does not validate anything
 * else. Bytes 0x22/0x5B/0x5C/0x7B never occur inside a multi-byte UTF-8
 * sequence, so scanning bytes is exact.
 */
export function nestedDeeperThan(bytes: Uint8Array, limit: number): boolean {
  if (bytes.length <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** The request again over `body` (already read), still known as the original for its peer address (Network). */
export function rebuilt(request: Request, body: Uint8Array | null): Request {
  const next = new Request(request.url, { method: request.method, headers: request.headers, body: body as BodyInit | null });
  // Bun's router hands over path parameters on the request itself, and Elysia reads them from there.
  Object.defineProperty(next, "params", { value: (request as Request & { params?: unknown }).params });
  originalRequest.set(next, originalRequest.get(request) ?? request);
  return next;
}

/**
 * Reads a request body before anything parses it, so that two limits hold
 * for every route: at most `maxBytes` (counted as it arrives, also when sent
 * chunked without Content-Length; a declared length over the limit is
 * refused by onRequest without reading), and at most MAX_BODY_DEPTH levels of
 * nesting (100,000 `[` once held the event loop for seconds and then
 * overflowed the stack while the validation error was rendered). The answer
 * is a request over the buffered bytes, marked `oversized` or `tooDeep` when
 * a limit failed (onRequest then answers 413 or 400). With `reads`, the body
 * also has a deadline and a place among the bodies read at once (BodyReads).
 */
export async function bufferBody(request: Request, maxBytes: number, reads?: BodyReads, clientOf: () => string = () => "unknown"): Promise<Request> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) return request;
  // A declared length (and no chunked framing beside it) bounds the body: Bun reads it whole, natively. Pulled through
  // a stream reader here instead, an OFREP evaluation took 61 µs of the server's core against 41 µs (issue 32:
  // 16.3k -> 24.2k req/s). Chunked bodies are counted as they come.
  const whole = declared !== null && !request.headers.has("transfer-encoding");
  const read = (open?: OpenRead) => (whole ? readDeclared(request, maxBytes, open) : readBody(request, maxBytes, open));
  return reads ? reads.read(request, clientOf, read) : read();
}

/** The size in bytes of each body read (chunked ones too), for limits smaller than the server's (browser keys). */
const bodySizes = new WeakMap<Request, number>();

/** The bytes of a request's body as read, else its declared Content-Length, else 0. */
export function bodySizeOf(request: Request): number {
  return bodySizes.get(request) ?? (Number(request.headers.get("content-length")) || 0);
}

/** A body of declared length, read whole; at its deadline the wait ends (the rest is never taken: the 408 closes the connection). */
async function readDeclared(request: Request, maxBytes: number, open?: OpenRead): Promise<Request> {
  const reading = request.bytes();
  let bytes: Uint8Array | null;
  if (open) {
    const { promise: stopped, resolve: stop } = Promise.withResolvers<null>();
    open.cancel = () => stop(null);
    // Past the deadline the read is left behind: it ends, or fails, when the connection closes.
    reading.catch(() => undefined);
    bytes = await Promise.race([reading, stopped]);
  } else bytes = await reading;
  if (bytes === null) return rebuilt(request, null);
  return buffered(request, bytes, maxBytes);
}

async function readBody(request: Request, maxBytes: number, open?: OpenRead): Promise<Request> {
  const reader = request.body!.getReader();
  if (open) open.cancel = () => void reader.cancel().catch(() => undefined);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return tooLarge(request);
    }
    chunks.push(value);
  }
  return buffered(request, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), maxBytes);
}

function tooLarge(request: Request): Request {
  const refused = rebuilt(request, null);
  oversized.add(refused);
  return refused;
}

/** The request again over its whole body, its size noted and its nesting checked. */
function buffered(request: Request, bytes: Uint8Array, maxBytes: number): Request {
  const size = bytes.byteLength;
  if (size > maxBytes) return tooLarge(request);
  const next = rebuilt(request, bytes);
  bodySizes.set(next, size);
  // Sentry envelopes are no JSON document (gzip, binary attachments): their routes check each JSON item, decompressed.
  if (!SENTRY_INGEST.test(pathOf(request.url)) && nestedDeeperThan(bytes, MAX_BODY_DEPTH)) tooDeep.add(next);
  return next;
}

export function errorResponse(status: number, body: unknown, m: RequestMeta | undefined, extra?: Record<string, string>) {
  const headers: Record<string, string> = { "content-type": "application/json", ...extra };
  if (m) {
    headers["x-request-id"] = m.id;
    m.status = status;
  }
  return new Response(JSON.stringify(body), { status, headers });
}
