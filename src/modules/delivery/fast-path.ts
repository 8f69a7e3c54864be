import { ENVS, type Env } from "../../lib/envs";
import { etagMatches, requestIdFor } from "../../lib/http-values";
import { CORS_EXPOSED, rebuilt } from "../../lib/pipeline";
import type { Principal } from "../../lib/auth";
import type { AppContext } from "../../lib/module";
import { KEYS_CHANNEL } from "../keys/service";
import { type EvaluationContext, answersPerContext, isFailure, parseEvaluationRequest } from "./ofrep";
import { bulkNotModified, bulkTag, notModifiedReply, snapshotResponse } from "./replies";
import type { SnapshotEntry } from "./snapshot";

const SNAPSHOT_PATH = "/api/sdk/v1/snapshot";
/** How long an accepted key is trusted from this path's own memory (revocations announced clear it at once). */
const KNOWN_MS = 1000;
/** Accepted keys remembered at most (only keys that passed are kept: random secrets never enter). */
const KNOWN_MAX = 10_000;

type Fallback = (request: Request) => Response | Promise<Response>;

export function envParam(url: string): Env | undefined | null {
  const q = url.indexOf("?");
  if (q === -1) return undefined;
  // SDKs send exactly `?env=<env>`: answer that without parsing the query.
  if (url.startsWith("env=", q + 1)) {
    for (const env of ENVS) if (url.length === q + 5 + env.length && url.endsWith(env)) return env;
  }
  const values = new URLSearchParams(url.slice(q + 1)).getAll("env");
  if (values.length === 0) return undefined;
  return values.length === 1 && (ENVS as readonly string[]).includes(values[0]!) ? (values[0] as Env) : null;
}

/**
 * SDKs poll the snapshot far more often than anything else is called, and
 * Elysia's per-request pipeline costs about half the throughput of a bare Bun
 * server there (and most of the garbage that grows the heap under load). So
 * Bun's native router answers the server-to-server snapshot GET itself, the
 * prepared bytes or a 304, with the same auth (server key, origin rule,
 * last-used mark) and the same headers. Every other request on the path
 * (browser Origin, a bad env, anything odd, any auth failure) goes to the
 * Elysia route, which stays the documented implementation and renders errors
 * (and counts and logs them, as every request of the pipeline).
 *
 * Per poll it does what the answer needs and no more (each item below was
 * measured at several per cent of the throughput of a bare Bun.serve): the
 * replies are prepared per snapshot and cloned (routes.ts); the /metrics count
 * is an addition into this route's own series (no label object); no log line
 * is built unless `--log-sdk-requests` asks for successful polls (this path
 * answers only 200 and 304; failures go to the Elysia route, which logs
 * them); and no request id is made up for a reply no log line names: the
 * caller's own X-Request-Id is echoed, as everywhere.
 */
export function snapshotFastRoutes(ctx: AppContext, fallback: Fallback) {
  const { authenticator, services, log } = ctx;
  const series = services.operations.telemetry.series("GET", SNAPSHOT_PATH);
  // This path answers 200 or 304: their histograms are held here (no lookup per poll).
  const notModified = series.byStatusOf(304);
  const ok = series.byStatusOf(200);
  const authHeaders: Record<string, string | undefined> = { "x-sdk-key": undefined, authorization: undefined, "x-project-id": undefined };
  /**
   * X-SDK-Key values that sdkFromMemory accepted here within the last KNOWN_MS (with no X-Project-Id and no
   * Origin, the only way this path asks): a poll then costs no SHA-256, key lookup or last-use stamp (the
   * stamp is renewed with each re-check, at most KNOWN_MS late). Any key announcement (minted, revoked,
   * a project removed, a resync) forgets them all at once, as the key directory forgets its own cache.
   */
  const known = new Map<string, { projectId: string; until: number; keys: Record<Env, string> }>();
  const remember = (sdkKey: string, projectId: string, now: number) => {
    if (known.size >= KNOWN_MAX) known.clear();
    // The snapshot map's keys for each env, made once per re-check rather than once per poll.
    const keys = Object.fromEntries(ENVS.map((e) => [e, `${projectId}/${e}`])) as Record<Env, string>;
    known.set(sdkKey, { projectId, until: now + KNOWN_MS, keys });
  };
  ctx.store.listen(KEYS_CHANNEL, () => known.clear());
  /** The last entry this path answered 304 for and its prepared 304 (one poller's revision: no WeakMap lookup per poll). */
  let lastEntry: SnapshotEntry | undefined;
  let last304: Response | undefined;
  /**
   * The poll this path exists for, answered before anything else is read (issue 32: a matching poll touches
   * the key check and the revision, nothing more): a key accepted within KNOWN_MS, `?env=` in the URL, and
   * If-None-Match naming that env's current tag exactly, with none of the headers that change the answer
   * (Origin, a body, X-Project-Id) or add to it (X-Request-Id, echoed; a log line with --log-sdk-requests).
   * The 304 is the prepared one, cloned; it is counted in /metrics as every poll is. Anything else, or
   * undefined here, goes the general way below, which answers the same.
   */
  const matchingPoll = (request: Request, h: Headers, start: number): Response | undefined => {
    const sdkKey = h.get("x-sdk-key");
    if (sdkKey === null) return undefined;
    const seen = known.get(sdkKey);
    if (seen === undefined || !(seen.until > start)) return undefined;
    const ifNoneMatch = h.get("if-none-match");
    if (ifNoneMatch === null || h.has("origin") || h.has("content-length") || h.has("x-project-id") || h.has("x-request-id") || log.sdkRequests) return undefined;
    const env = envParam(request.url);
    if (!env) return undefined;
    const entry = services.snapshots.cachedByKey(seen.keys[env]);
    if (entry === undefined || ifNoneMatch !== entry.etag) return undefined;
    if (entry !== lastEntry) {
      last304 = notModifiedReply(entry);
      lastEntry = entry;
    }
    notModified.observe((performance.now() - start) / 1000);
    return last304!.clone();
  };
  const handle = (request: Request): Response | Promise<Response> => {
    const start = performance.now();
    const h = request.headers;
    const fast = matchingPoll(request, h, start);
    if (fast !== undefined) return fast;
    if (h.has("origin") || h.has("content-length")) return fallback(request);
    const env = envParam(request.url);
    if (env === null) return fallback(request);
    let projectId: string;
    const sdkKey = h.get("x-sdk-key");
    const projectHeader = h.get("x-project-id");
    const seen = sdkKey !== null && projectHeader === null ? known.get(sdkKey) : undefined;
    if (seen !== undefined && seen.until > start) {
      const entry = env === undefined ? undefined : services.snapshots.cachedByKey(seen.keys[env]);
      if (entry !== undefined) return answer(h, entry, start);
      projectId = seen.projectId;
    } else {
      try {
        // From memory only: a key, default env or snapshot not in memory yet goes the awaited way. One header
        // object serves every call (sdkFromMemory reads it and keeps nothing; the call is synchronous).
        authHeaders["x-sdk-key"] = sdkKey ?? undefined;
        // Authorization counts only without an X-SDK-Key (as in sdkFromMemory): not read otherwise.
        authHeaders.authorization = sdkKey?.trim() ? undefined : (h.get("authorization") ?? undefined);
        authHeaders["x-project-id"] = projectHeader ?? undefined;
        const principal = authenticator.sdkFromMemory(authHeaders, "server");
        if (!principal) return fallback(request);
        projectId = principal.projectId;
        if (sdkKey !== null && projectHeader === null) remember(sdkKey, projectId, start);
      } catch {
        return fallback(request);
      }
    }
    const chosenEnv = env ?? services.snapshots.cachedDefaultEnv(projectId);
    const entry = chosenEnv && services.snapshots.cached(projectId, chosenEnv);
    if (!entry) return fallback(request);
    return answer(h, entry, start);
  };
  const answer = (h: Headers, entry: SnapshotEntry, start: number): Response => {
    // The caller's own X-Request-Id is echoed; one is made up only when this reply gets a log line it could name.
    const sent = h.get("x-request-id");
    const requestId = sent !== null || log.sdkRequests ? requestIdFor(sent) : undefined;
    const response = snapshotResponse(entry, h, requestId);
    const ms = performance.now() - start;
    const status = response.status;
    (status === 304 ? notModified : status === 200 ? ok : series.byStatusOf(status)).observe(ms / 1000);
    if (log.sdkRequests) log.request({ method: "GET", path: SNAPSHOT_PATH, status, durationMs: Math.round(ms * 1000) / 1000, requestId });
    return response;
  };
  return { [SNAPSHOT_PATH]: { GET: handle } };
}

const OFREP_BULK_PATH = "/ofrep/v1/evaluate/flags";
/**
 * Bodies this path reads itself, at most: an OFREP poll's `{"context":{…}}` is a few hundred bytes. A
 * larger one, or one of unknown length (chunked), goes to the Elysia route unread, whose body reader
 * limits size, time and concurrency; so this path holds at most this much per connection.
 */
const FAST_BODY_MAX = 4096;

/**
 * Browser apps (svc-sdk/browser, OpenFeature's OFREP web provider) poll the bulk OFREP call with
 * If-None-Match every few seconds, like servers poll the snapshot, and almost every poll is a 304. The
 * Elysia route pays its per-request pipeline for each, so Bun's native router answers that 304 here, with
 * the route's own rules: the key from memory (server, or browser with flags:evaluate and the origin rule,
 * its env bound), the same tag (bulkTag: for a browser key, whose env is fixed, matched on the body's
 * bytes without parsing them; for a server key the body is parsed for its env and its context noted). Anything else (no tag or another, an origin the key refuses, a body that fails, a key, default env
 * or snapshot not in memory, any auth failure) goes to the Elysia route with the body already read, which
 * stays the documented implementation, renders errors and the 200, and counts and logs them.
 */
export function ofrepBulkFastRoutes(ctx: AppContext, fallback: Fallback) {
  const { authenticator, services, log } = ctx;
  const notModified = services.operations.telemetry.series("POST", OFREP_BULK_PATH).byStatusOf(304);
  const authHeaders: Record<string, string | undefined> = { "x-sdk-key": undefined, authorization: undefined, "x-project-id": undefined, origin: undefined };
  /** The request again, its body already read here (a Request's body is read once); its peer address stays known. */
  const again = (request: Request, body: Uint8Array) => fallback(rebuilt(request, body));
  const decoder = new TextDecoder();
  /**
   * As on the snapshot path: X-SDK-Key values sdkFromMemory accepted here within KNOWN_MS (with no
   * X-Project-Id and no Origin, the only way this path asks) skip its SHA-256 and lookup; any key
   * announcement forgets them all at once.
   */
  const known = new Map<string, { principal: Principal; until: number }>();
  ctx.store.listen(KEYS_CHANNEL, () => known.clear());
  /** The 304 of an answer shared by every context (no gates or experiments), made once per snapshot and cloned. */
  const shared304 = new WeakMap<SnapshotEntry, Response>();
  const principalOf = (h: Headers, now: number, origin: string | null): Principal | undefined => {
    const sdkKey = h.get("x-sdk-key");
    const projectHeader = h.get("x-project-id");
    // Only polls without an Origin are remembered: a browser's goes through the key's origin rule every time.
    const plain = sdkKey !== null && projectHeader === null && origin === null;
    const seen = plain ? known.get(sdkKey) : undefined;
    if (seen !== undefined && seen.until > now) return seen.principal;
    authHeaders["x-sdk-key"] = sdkKey ?? undefined;
    authHeaders.authorization = sdkKey?.trim() ? undefined : (h.get("authorization") ?? undefined);
    authHeaders["x-project-id"] = projectHeader ?? undefined;
    authHeaders.origin = origin ?? undefined;
    // Synchronous: the shared header object cannot be changed under the call.
    const principal = authenticator.sdkFromMemory(authHeaders, "evaluate");
    if (principal && plain) {
      if (known.size >= KNOWN_MAX) known.clear();
      known.set(sdkKey, { principal, until: now + KNOWN_MS });
    }
    return principal;
  };
  const handle = async (request: Request): Promise<Response> => {
    const start = performance.now();
    const h = request.headers;
    const ifNoneMatch = h.get("if-none-match");
    const length = h.get("content-length");
    if (ifNoneMatch === null || length === null || !(Number(length) <= FAST_BODY_MAX)) return fallback(request);
    const origin = h.get("origin");
    const body = await request.bytes();
    try {
      const principal = principalOf(h, start, origin);
      if (!principal) return again(request, body);
      let entry: SnapshotEntry | undefined;
      let context: EvaluationContext | undefined;
      if (principal.env) {
        // A browser key's env is its own: the tag is the body's hash, so a repeated poll is matched without
        // parsing it. The route answered this very body 200 under this tag, after checking it and noting its
        // context; a body crafted to match gets a 304 that tells nothing.
        entry = services.snapshots.cached(principal.projectId, principal.env);
      } else {
        const fallbackEnv = services.snapshots.cachedDefaultEnv(principal.projectId);
        if (!fallbackEnv) return again(request, body);
        const parsed = parseEvaluationRequest(decoder.decode(body), () => fallbackEnv);
        if (isFailure(parsed)) return again(request, body);
        entry = services.snapshots.cached(principal.projectId, parsed.env);
        context = parsed.context;
      }
      if (!entry) return again(request, body);
      const perContext = answersPerContext(entry.snapshot);
      const etag = bulkTag(entry, perContext, body);
      if (!etagMatches(ifNoneMatch, etag)) return again(request, body);
      if (context) services.attributes.noteContext(principal.projectId, context);
      let response: Response;
      if (perContext) response = bulkNotModified(etag);
      else {
        let prepared = shared304.get(entry);
        if (!prepared) shared304.set(entry, (prepared = bulkNotModified(etag)));
        response = prepared.clone();
      }
      if (origin !== null) {
        // The key admitted this origin (sdkFromMemory), so its project does: the browser is answered as the
        // pipeline answers it (src/app.ts), never with credentials.
        response.headers.set("access-control-allow-origin", origin);
        response.headers.set("access-control-expose-headers", CORS_EXPOSED);
      }
      const sent = h.get("x-request-id");
      const requestId = sent !== null || log.sdkRequests ? requestIdFor(sent) : undefined;
      if (requestId) response.headers.set("x-request-id", requestId);
      const ms = performance.now() - start;
      notModified.observe(ms / 1000);
      if (log.sdkRequests) log.request({ method: "POST", path: OFREP_BULK_PATH, status: 304, durationMs: Math.round(ms * 1000) / 1000, requestId });
      return response;
    } catch {
      return again(request, body);
    }
  };
  return { [OFREP_BULK_PATH]: { POST: handle } };
}
