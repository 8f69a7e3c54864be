import { afterAll, beforeAll, expect, test } from "bun:test";
import { Browser, MailCapture } from "./browser";
import { everyRoute, startTestServer, type TestServer } from "./helpers";

/**
 * No request can make a 500, and every error keeps its documented shape.
 * Every registered route (walked from app.routes, so new modules are covered
 * without touching this file) is called with the credential that route
 * really takes, so that the hostile bodies, query strings and path ids reach
 * its handler instead of being stopped by the auth check:
 *   /api/admin/*          Authorization: Bearer <admin key> + X-Project-Id
 *   /api/sdk/*, /ofrep/*  X-SDK-Key: <server key> (nothing else)
 *   /ops/*                X-SDK-Key: <client key> (public intake)
 *   everything else       no credential (sign-in, device flow, browser pages);
 *                         browser POSTs also with a valid CSRF cookie + token
 *                         and a same-origin Origin, to get past the CSRF check,
 *                         and every browser route also with a signed-in session.
 * People routes (members, invites) refuse every SDK key by design, so admin
 * routes are also called with the owner's device-flow access token.
 */

const MAX_BODY = 64 * 1024;
const CONCURRENCY = 16;

let s: TestServer;
type Route = { method: string; path: string };
let routes: Route[] = [];
/** A valid `svc_csrf` token, obtained from GET /signin like a browser would. */
let csrf = "";
/** The owner's device-flow access token (what `svc login` stores). */
let ownerToken = "";
/** The owner's browser session (`svc_session`); renewed when a fuzzed /auth/logout ends it. */
let session = "";
const mails = new MailCapture();
let sessions = 0;
const MEMBER = "teammate@example.com";

// ---------------------------------------------------------------- the inputs

const nested = (depth: number, leaf = "1") => '{"a":'.repeat(depth) + leaf + "}".repeat(depth);
const nestedArrays = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

/** JSON-ish bodies, sent with Content-Type: application/json. */
const JSON_BODIES = [
  "",
  "null",
  "[]",
  '"text"',
  "42",
  "{",
  '{"a":',
  "{}",
  "\u0000",
  '{"name":null,"value":null,"env":null,"schema":null,"type":null}',
  '{"name":{"$gt":""},"env":["prod"],"value":{"nested":[1,2,3]},"switchKey":{}}',
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}',
  `{"name":"${"x".repeat(10_000)}","env":"prod"}`,
  '{"name":"\\u0000\\ud800","env":"prod","value":1e400}',
  JSON.stringify({ env: "prod", value: true, switchKey: "a", schema: { type: "object", properties: { a: { $ref: "#" } } } }),
  // Far over the nesting limit (refused before any parser), and just under it.
  nestedArrays(5000),
  nested(63),
  nestedArrays(64),
  JSON.stringify({ name: "deep", env: "prod", value: JSON.parse(nested(60)), context: JSON.parse(nested(60)) }),
  // Huge and odd numbers.
  '{"value":1e308,"version":9007199254740993,"limit":-1e20,"windowHours":1.5,"switches":{"a":1e999}}',
  '{"version":-0,"value":-1e-400,"env":1e400,"name":12345678901234567890}',
  // Arrays where objects are expected, objects where strings are.
  '[{"name":"x","env":"prod"}]',
  '{"switches":[true,false],"schema":[],"value":[],"context":[],"env":{"prod":true}}',
  '{"name":["a"],"type":["server"],"access":{"x":1},"role":[],"email":{},"token":[],"device_code":[1]}',
  // Unicode: emoji, bidi override, BOM, lone surrogates, NUL and controls.
  '{"name":"🦄\u202e\ufeff","env":"prod","switchKey":"\u0000\u001f","value":"\ud83d"}',
  '\ufeff{"name":"bom"}',
  // Strings near the limits: 128/129 chars (ids), 100/101 (q), 254/255 (emails), close to the body limit.
  JSON.stringify({ name: "n".repeat(128), switchKey: "k".repeat(128), email: `${"e".repeat(242)}@example.com`, q: "q".repeat(100) }),
  JSON.stringify({ name: "n".repeat(129), switchKey: "k".repeat(129), email: `${"e".repeat(243)}@example.com`, q: "q".repeat(101) }),
  JSON.stringify({ name: "big", value: { s: "v".repeat(MAX_BODY - 200) } }),
  JSON.stringify({ name: "over", value: { s: "v".repeat(MAX_BODY) } }),
  // OFREP: every kind of `context`.
  '{"context":null}',
  '{"context":[]}',
  '{"context":"prod"}',
  '{"context":{"env":"qa"}}',
  '{"context":{"env":["prod"]}}',
  '{"context":{"env":{"$ne":1}}}',
  '{"context":{"env":"dev","targetingKey":"user-1","plan":"pro"}}',
  '{"context":{"targetingKey":null,"env":null}}',
  '{"context":{"__proto__":{"env":"dev"}}}',
  `{"context":{"env":"prod","k":"${"x".repeat(20_000)}"}}`,
];

/** Bodies of other content types, each with its own header. */
const OTHER_BODIES: { type: string; text: string }[] = [
  { type: "application/x-www-form-urlencoded", text: "email=a%40b.c&csrf=&token=%00&name=x&env=prod&value=true" },
  { type: "application/x-www-form-urlencoded", text: "%FF=%FE&&&=&a[b][c]=1" },
  { type: "text/plain", text: '{"name":"plain"}' },
  { type: "multipart/form-data; boundary=x", text: "--x\r\nbroken" },
  { type: "application/octet-stream", text: "\u0000\u0001\u0002" },
];

const QUERIES = [
  "",
  "?q=%FF&limit=-1&env=qa",
  `?q=${"a".repeat(200)}`,
  `?q=${"a".repeat(100)}&limit=100`,
  "?env=prod",
  "?env=dev&env=prod",
  "?limit=1e309&from=99999999999999999999&to=-0&version=NaN",
  "?q=%F0%9F%A6%84%E2%80%AE%00&limit=1",
  "?env[]=prod&q[a]=1&__proto__[x]=1&constructor=1",
  "?redirect=//evil.example&token=%00&user_code=%FF&project_id=..%2F",
];

/** Hostile values for every path parameter. */
const IDS = [
  "probe-id",
  "%00",
  "..%2F..%2Fetc",
  "x".repeat(128),
  "x".repeat(129),
  "%E2%80%AE",
  "name%20with%20space",
  "%F0%9F%A6%84",
  "99999999999999999999999",
  "%FF",
];

/** Real values per parameter name, so that handlers past the lookup are reached too. */
function realValues(param: string, path = ""): string[] {
  switch (param) {
    case "id":
      return ["probe-id", s.projectId];
    case "env":
      return ["prod", "dev"];
    case "email":
      return [encodeURIComponent(MEMBER)];
    case "projectNumber":
      return ["1", "12345678901234567890"];
    // POST /api/admin/import/:tool (issue 31): the tools whose exports it converts.
    case "tool":
      return ["unleash", "flagsmith"];
    case "*":
      return ["probe-id", "probe-id/sub", "probe-id/a/b", "probe-id%2Fsub"];
    default:
      // GrowthBook's paths carry the SDK key in the path (/api/features/:key, /sub/:key, /api/eval/:key).
      if (param === "key" && !path.startsWith("/api/admin/")) return [s.serverKey];
      return ["probe-id"];
  }
}

/**
 * Bodies that pass the schemas, so that the handlers themselves run: one with
 * every field any route takes (every schema refuses the fields it does not
 * declare, so it reaches the handlers that parse their own bodies), and small
 * ones that fit each schema exactly.
 */
function plausibleBodies(): string[] {
  const all = {
    name: "fuzz-plausible",
    value: true,
    env: "dev",
    switchKey: "sub",
    switches: { sub: true },
    schema: { type: "object" },
    type: "server",
    access: "read-only",
    version: 1,
    email: "nobody@example.com",
    token: "x".repeat(43),
    device_code: "x",
    user_code: "ABCD-EFGH",
    code_challenge: "x".repeat(43),
    code_challenge_method: "S256",
    code_verifier: "x".repeat(43),
    refresh_token: "svc_rt_x",
    action: "deny",
    project_id: s.projectId,
    organisation: "Org",
    project: "Proj",
    context: { env: "prod", targetingKey: "u1" },
  };
  return [
    all,
    { ...all, value: {} },
    { env: "dev" },
    { env: "dev", value: true },
    { env: "dev", switchKey: "sub", value: false },
    { env: "dev", switchKey: "sub" },
    { env: "prod", version: 1 },
    { value: { a: 2 } },
    { role: "viewer" },
    { email: "fuzz@example.com", role: "viewer" },
    { type: "server", name: "fuzz" },
    { name: "fuzz", access: "read-only" },
    { name: "fuzz-config", schema: { type: "object" }, value: {} },
    { name: "fuzz-switch", value: true, switches: { sub: true } },
    { value: { a: 2 }, schema: { type: "object" } },
    // An SDK's evaluation counts (issue 30): a known name, an unknown one.
    { env: "dev", counts: { "fuzz-plausible": 3, nope: 1 } },
    // An Unleash export that maps (POST /api/admin/import/unleash, issue 31).
    { features: [{ name: "fuzz-import" }], featureEnvironments: [{ featureName: "fuzz-import", environment: "production", enabled: true }] },
    // Gates: description, rules (valid and not), explain.
    { description: "fuzz" },
    { env: "dev", rules: [{ conditions: [{ attr: "country", op: "in", value: ["de"] }], passPercentage: 50 }] },
    { env: "dev", rules: [{ conditions: [{ attr: "x", op: "nope", value: 1 }], passPercentage: 50 }] },
    { env: "dev", rules: [{ conditions: [{ attr: "x", op: "regex", value: "(a" }], passPercentage: 50 }] },
    { env: "dev", rules: [{ conditions: [{ attr: "x", op: "passes_gate", value: "probe-id" }], passPercentage: 101 }] },
    { env: "dev", context: { user_id: "u1", email: "a@b.c" } },
    { name: "fuzz-gate", rules: [] },
    // Attributes.
    { name: "fuzz-attr", type: "string" },
    { deprecated: true },
    // Code references (issue 30).
    { repo: "fuzz-repo", commit: "abc1234", refs: [{ flag: "fuzz", file: "../a/b.ts", line: 1, kind: "sdk" }] },
    // Event catalog and ingest.
    { name: "fuzz-event", folder: "fuzz", properties: [{ name: "amount", type: "number", required: true }] },
    { properties: [{ name: "amount", type: "number" }] },
    { events: [{ name: "fuzz.event", unitId: "u1", value: 1, properties: { amount: 2 } }], contexts: [{ plan: "pro" }] },
    // Errors: ingest, status, and Sentry events (a store/ body; an envelope's header line alone is an empty envelope).
    { errors: [{ message: "fuzz 42 failed", type: "FuzzError", stack: "FuzzError: x\n    at fuzz (/srv/app/fuzz.js:1:1)", unitId: "u1", fingerprint: "fuzz", properties: { a: 1 } }] },
    { errors: [{ message: "fuzz" }, { message: "fuzz", ts: "2026-01-01T00:00:00Z", properties: { "bad name": 1 } }] },
    { status: "resolved" },
    { status: "regressed" },
    { event_id: "fc6d8c0c43fc4630ad850ee518f1b9d0", timestamp: 1, exception: { values: [{ type: "E", value: "v", stacktrace: { frames: [{ function: "f", in_app: true }] } }] }, user: { id: "u1" } },
    // Metrics (definitions, series) and alert rules.
    { name: "fuzz-metric", kind: "count", event: "probe-id" },
    { name: "fuzz-ratio", kind: "ratio", numerator: { kind: "count", event: "probe-id" }, denominator: { kind: "unique", event: "probe-id", filters: [{ property: "amount", op: "gt", value: 1 }] } },
    { kind: "unique" },
    { kind: "sum", property: "not-catalogued" },
    { from: 0, to: 3600, bucket: 60 },
    { from: 1_700_000_000, to: 1_700_086_400, bucket: 1 },
    { name: "fuzz-alert", metricId: "probe-id", threshold: 5, comparator: "gt", windowHours: 24, notify: { webhookUrl: "https://example.com/hook" } },
    { threshold: 3, enabled: false, notify: null },
    { metricId: "probe-id" },
    // Universes (creation takes X-Project-Id, which every admin call of the walk sends).
    { name: "fuzz-universe", unit_type: "account_id", holdout_range: [0, 500] },
    { holdout_range: [9500, 10_000] },
    { holdout_range: null, unit_type: "user_id" },
    { name: "fuzz-universe-2", holdout_range: [500, 100] },
    // Experiments (in the seeded universe, over its holdout or not), their start and stop, exposures through the ingest.
    { name: "fuzz-exp", universe: "probe-id", variants: [{ key: "a", weight: 1, value: { x: 1 } }, { key: "b", weight: 1, override: { kind: "gate", name: "probe-id", value: true } }], allocation: [500, 1500], primaryMetric: "probe-id", guardrailMetrics: [{ metric: "probe-id", worseWhen: "increase" }] },
    { name: "fuzz-exp-2", universe: "probe-id", variants: [{ key: "a", weight: 1 }, { key: "b", weight: 1, override: { kind: "config", name: "probe-id", value: "not-an-object" } }], allocation: [0, 600] },
    { allocation: [2000, 3000], gate: "probe-id", variants: [{ key: "a", weight: 1e6 }, { key: "a", weight: 1 }] },
    { decision: "ship", variant: "b", reason: "fuzz" },
    { decision: "rollback" },
    { events: [{ name: "$exposure:exp_probe", unitId: "u1", properties: { variant: "a" } }, { name: "$exposure:exp_x", properties: { variant: 1 } }] },
    // Rollouts: a gate's new rules with a plan and a watched metric, a config's draft or value (over a year ahead), a plan that shrinks, the patch, a reason.
    { gate: "probe-id", env: "dev", rules: [{ conditions: [], passPercentage: 100 }], stages: [{ percent: 10, minutes: 60 }, { percent: 100, minutes: 0 }], metrics: [{ metric: "probe-id", direction: "higher", tolerance: 0.05 }], errorTolerance: 0.1, onRegression: "pause", notify: false, falseAlarmRate: 0.1, description: "fuzz" },
    { config: "probe-id", env: "dev" },
    { config: "probe-id", env: "staging", value: [1], startAt: "2099-01-01T00:00:00Z" },
    { gate: "probe-id", env: "staging", rules: [], stages: [{ percent: 50, minutes: 1 }, { percent: 20, minutes: 1 }], metrics: [{ metric: "errors", direction: "lower" }] },
    { onRegression: "rollback", notify: true, description: null },
    { reason: "fuzz" },
    // Schedules (issue 30): one change, tomorrow (at most a year ahead); its own tests walk the rest.
    { change: { kind: "gate.rules", name: "probe-id", env: "dev", rules: [{ conditions: [], passPercentage: 5 }] }, runAt: new Date(Date.now() + 86_400_000).toISOString() },
    // Flags as code (issue 31): an empty document (no change), one entry, and one whose entry is refused.
    { version: 1 },
    { version: 1, gates: [{ name: "fuzz-doc-gate", description: "fuzz", envs: { dev: { rules: [] } } }] },
    { version: 1, configs: [{ name: "fuzz-doc-config", schema: { type: "string" }, envs: { dev: { value: 1 } } }] },
    { steps: [{ change: { kind: "killswitch.set", name: "probe-id", env: "dev", value: true }, runAt: new Date(Date.now() + 86_400_000).toISOString() }, { change: { kind: "segment.update", name: "probe-id", patch: { description: "fuzz" } }, runAt: new Date(Date.now() + 2 * 86_400_000).toISOString() }] },
    { change: { kind: "__proto__", name: "probe-id" }, runAt: new Date(Date.now() + 86_400_000).toISOString() },
    // Change requests (issue 30): one opened, the policy (every env, two approvals, bypass), a rejection's note.
    { title: "fuzz", reason: "fuzz", changes: [{ kind: "killswitch.set", name: "probe-id", env: "dev", value: true }] },
    { envs: { prod: { required: true, approvals: 2 }, dev: { required: false } }, killswitchBypass: true },
    { note: "fuzz" },
    // i18n: profiles (and a locale that is no tag), insert-only pushes (with keys that are not keys), the single-key update and delete.
    { name: "fuzz-profile", locale: "de-CH" },
    { locale: "en_US" },
    { profile_id: "probe-id", keys: [{ key: "fuzz.key", value: "Hallo {name}" }, { key: "__proto__", value: "x" }] },
    { profile_id: "probe-id", keys: [{ key: "bad key", value: "x" }, { key: "fuzz.key", value: "\u0000\ud800" }, { key: "fuzz.key", value: "again" }] },
    { profile_id: "probe-id", value: "changed {name}" },
    { profile_id: "probe-id" },
    // Connectors: each kind of create (an unreachable webhook, a GitHub App whose key is no key, an OAuth app, a routine), PATCH, test-fire, OAuth start.
    { provider: "webhook", name: "fuzz-hook", events: ["bug.created", "killswitch.toggled"], config: { url: "http://127.0.0.1:9/fuzz" } },
    { provider: "github_trigger", config: { owner: "fuzz", repo: "fuzz" }, appId: 1, privateKey: "-----BEGIN RSA PRIVATE KEY-----\nnot a key\n-----END RSA PRIVATE KEY-----" },
    { provider: "slack", name: "fuzz-slack", events: [] },
    { provider: "claude_trigger", config: { routineId: "trig_fuzz" }, fireToken: "sk-ant-oat01-fuzz" },
    { config: { url: null, extra: 1 }, events: ["nope"], enabled: true },
    { config: { url: "http://127.0.0.1:9/other" }, enabled: false, name: "fuzz-renamed-hook" },
    { type: "alert.firing", wait: false },
    { returnTo: "/connectors" },
    // Sign-in and device bodies, one per route, exactly their fields (the CSRF token travels as a header).
    { email: "nobody@example.com" },
    { token: "x".repeat(43) },
    {},
    { email: "fuzz-invite@example.com", project_id: s.projectId },
    { token: "x".repeat(43), email: "first@example.com", organisation: "Org", project: "Proj" },
    { user_code: "ABCD-EFGH", action: "deny" },
    { code_challenge: "x".repeat(43), code_challenge_method: "S256" },
    { device_code: "x", code_verifier: "x".repeat(43) },
    { refresh_token: "svc_rt_x" },
    { context: { env: "prod", targetingKey: "u1" } },
    // Queue items (admin) and the public intake (client key): filing, editing, states.
    { type: "bug", title: "fuzz-item", stepsToReproduce: "1. fuzz\n2. again", actualResult: "a", expectedResult: "b", priority: "high" },
    { type: "feature_request", title: "fuzz-request" },
    { type: "error", title: "fuzz-platform-only" },
    { title: "fuzz-intake", useCase: "fuzz" },
    { title: "fuzz-bug", stepsToReproduce: "s", actualResult: "a", expectedResult: "e" },
    { status: "in_progress", priority: "low" },
    { status: "done" },
    { title: "fuzz-renamed", useCase: null },
  ].map((body) => JSON.stringify(body));
}

/** Headers a client may send oddly: validators, stream resume ids, encodings, cookies, origins. */
const HEADER_VARIANTS: Record<string, string>[] = [
  { "if-none-match": "*" },
  { "if-none-match": 'W/"x", "y", ,,, W/' },
  { "if-none-match": '"' + "e".repeat(6000) + '"' },
  { "last-event-id": "99999999999999999999-x" },
  { "last-event-id": "-1" },
  { "accept-encoding": "gzip;q=0, br, *;q=1e9" },
  { cookie: "svc_session=%FF; svc_csrf=%; svc_oidc==;;;" },
  { origin: "null", referer: "javascript:alert(1)" },
  { "x-request-id": "x".repeat(500) },
];

// ---------------------------------------------------------------- the rules

type Reply = { status: number; headers: Headers; text: string; body: any };

type Credential = "admin" | "server" | "client" | "none";
/** How a route is called: plain; browser routes also with CSRF and with a session; admin routes also with the owner's token. */
type Variant = "plain" | "csrf" | "session" | "owner";

/** The credential each route takes: the right one, so the route's own code runs. */
function credentialOf(path: string): Credential {
  if (path.startsWith("/api/admin/")) return "admin";
  if (path.startsWith("/api/sdk/") || path.startsWith("/ofrep/") || isSentryPath(path)) return "server";
  if (path.startsWith("/ops/")) return "client";
  return "none";
}

/** Sentry's ingest routes (`/api/{digits}/envelope/`, `/api/{digits}/store/`): the server key, as Sentry SDKs send it. */
function isSentryPath(path: string): boolean {
  return /^\/api\/[^/]+\/(envelope|store)\/?(\?|$)/.test(path);
}

function variantsOf(method: string, path: string): Variant[] {
  const credential = credentialOf(path);
  // People routes (members, invites) refuse every SDK key by design: an owner's access token reaches them.
  if (credential === "admin") return ["plain", "owner"];
  if (credential === "none" && isBrowserPath(path)) return method === "GET" ? ["plain", "session"] : ["plain", "csrf", "session"];
  return ["plain"];
}

/** Browser pages and sign-in endpoints: anything that is not a machine API. */
function isBrowserPath(path: string): boolean {
  return !/^\/(api|ofrep|ops)\//.test(path) && path !== "/healthz" && !path.startsWith("/openapi");
}

const CODE_STATUS: Record<string, number[]> = {
  BAD_REQUEST: [400, 413, 429],
  UNAUTHORIZED: [401],
  FORBIDDEN: [403],
  NOT_FOUND: [404],
  ALREADY_EXISTS: [409],
  IMMUTABLE_FIELD: [409],
  // 422: a metric whose stored definition no longer compiles (SPEC "Time series").
  VALIDATION: [400, 422],
  // The analytics upstream failed (SPEC "Time series": 502).
  UPSTREAM: [502],
};
const OFREP_CODES: Record<string, number> = {
  PARSE_ERROR: 400,
  INVALID_CONTEXT: 400,
  TARGETING_KEY_MISSING: 400,
  TYPE_MISMATCH: 400,
  GENERAL: 400,
  FLAG_NOT_FOUND: 404,
};
const GRANT_ERRORS = ["authorization_pending", "slow_down", "access_denied", "expired_token", "invalid_grant"];

const onlyKeys = (body: object, allowed: string[]) => Object.keys(body).filter((k) => !allowed.includes(k));

/**
 * What is wrong with a response, or null. Every error is our
 * `{error, code, detail?}` with the status of its code, except exactly these:
 *   (a) OFREP evaluation failures under /ofrep/: `{key?, errorCode, errorDetails?}`;
 *   (b) device-flow grant errors of /auth/device/token and /auth/device/refresh:
 *       `{error: <grant error>, code: "BAD_REQUEST", error_description, interval?}`;
 *   (c) browser pages (not the machine APIs) answering text/html.
 * A 503 is `{error: "Unavailable"}` with Retry-After; a 429 has Retry-After.
 */
function problemWith(path: string, r: Reply): string | null {
  // A snapshot 200/304 answered from memory carries the caller's X-Request-Id only (docs/api.md "Errors": none is made up for a poll no log line names).
  // GrowthBook's payload poll (/api/features/:key) has the same fast path, and so has a bulk OFREP 304 (browser apps' polls, issue 28).
  const pollFromMemory =
    ((path.startsWith("/api/sdk/v1/snapshot") || path.startsWith("/api/features/")) && (r.status === 200 || r.status === 304)) ||
    (path.startsWith("/ofrep/v1/evaluate/flags") && r.status === 304);
  if (!r.headers.get("x-request-id") && !pollFromMemory) return "no x-request-id header";
  if (r.status === 503) {
    const ok = JSON.stringify(r.body) === '{"error":"Unavailable"}' && r.headers.get("retry-after");
    return ok ? null : "a 503 must be {error: \"Unavailable\"} with Retry-After";
  }
  if (r.status >= 500) return `status ${r.status}`;
  if (r.status < 400) return null;
  if (r.status === 429 && !r.headers.get("retry-after")) return "a 429 without Retry-After";
  const type = r.headers.get("content-type") ?? "";
  if (type.startsWith("text/html")) return isBrowserPath(path) ? null : "an HTML error on a machine API path"; // (c)
  if (!type.startsWith("application/json")) return `an error with content-type ${JSON.stringify(type)}`;
  const body = r.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "an error body that is not a JSON object";

  if (path.startsWith("/ofrep/") && "errorCode" in body) {
    // (a)
    const extra = onlyKeys(body, ["key", "errorCode", "errorDetails"]);
    if (extra.length) return `OFREP failure with extra keys ${extra}`;
    if (!(body.errorCode in OFREP_CODES)) return `unknown OFREP errorCode ${body.errorCode}`;
    if (OFREP_CODES[body.errorCode] !== r.status) return `OFREP ${body.errorCode} with status ${r.status}`;
    if (body.key !== undefined && typeof body.key !== "string") return "OFREP key is not a string";
    if (body.errorDetails !== undefined && typeof body.errorDetails !== "string") return "OFREP errorDetails is not a string";
    return null;
  }
  if ((path === "/auth/device/token" || path === "/auth/device/refresh") && "error_description" in body) {
    // (b)
    const extra = onlyKeys(body, ["error", "code", "error_description", "interval"]);
    if (extra.length) return `grant error with extra keys ${extra}`;
    if (r.status !== 400 || body.code !== "BAD_REQUEST" || !GRANT_ERRORS.includes(body.error)) return "grant error not 400 BAD_REQUEST with a grant error name";
    if (typeof body.error_description !== "string") return "error_description is not a string";
    if (body.interval !== undefined && typeof body.interval !== "number") return "interval is not a number";
    return null;
  }
  const extra = onlyKeys(body, ["error", "code", "detail"]);
  if (extra.length) return `error body with extra keys ${extra}`;
  if (typeof body.error !== "string" || body.error === "") return "error is not a non-empty string";
  if (typeof body.code !== "string") return "code is not a string";
  if (body.detail !== undefined && typeof body.detail !== "string") return "detail is not a string";
  if (!CODE_STATUS[body.code]?.includes(r.status)) return `code ${body.code} with status ${r.status}`;
  return null;
}

// ---------------------------------------------------------------- the walk

beforeAll(async () => {
  // The intake's rate limits raised: the walk sends thousands of requests with one client key from one address.
  // Private connector targets allowed: the seeded webhooks point at 127.0.0.1:9 (nothing listens; they are never reached).
  s = await startTestServer({
    maxBodyBytes: MAX_BODY,
    signIn: { mailer: mails },
    intake: { perKey: { limit: 1_000_000, windowMs: 60_000 }, perAddress: { limit: 1_000_000, windowMs: 60_000 } },
    connectors: { allowPrivateTargets: true },
  });
  await seed();
  const browser = new Browser(s.url);
  await browser.get("/signin");
  csrf = browser.csrf;
  ownerToken = await s.accessTokenFor("owner@example.com");
  // Modules not asked for yet are added by the hostile requests themselves, through their stand-ins.
  routes = everyRoute(s);
});
afterAll(() => s.stop());

/** Something to find by name on the resource routes; put back before each route, since DELETEs remove it. */
async function seed() {
  await s.api("/api/admin/killswitches", { body: { name: "probe-id", switches: { sub: true } } });
  await s.api("/api/admin/configs", { body: { name: "probe-id", schema: { type: "object" }, value: {} } });
  await s.api("/api/admin/configs/probe-id/drafts", { method: "PUT", headers: { "x-project-id": s.projectId }, body: { env: "dev", value: { a: 1 } } });
  await s.api("/api/admin/attributes", { body: { name: "probe-id", type: "string" } });
  await s.api("/api/admin/events", { body: { name: "probe-id" } });
  await s.api("/api/admin/metrics", { body: { name: "probe-id", kind: "count", event: "probe-id" } });
  await s.api("/api/admin/alert-rules", { body: { name: "probe-id", metricId: "probe-id", threshold: 5, comparator: "gt" } });
  await s.api("/api/admin/gates", { body: { name: "probe-id", rules: [{ conditions: [{ attr: "email", op: "regex", value: "^a+$" }], passPercentage: 50 }] } });
  await s.api("/api/admin/universes", { headers: { "x-project-id": s.projectId }, body: { name: "probe-id", holdout_range: [0, 500] } });
  await s.api("/api/admin/segments", { body: { name: "probe-id", ids: ["u-1"], conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }] } });
  const experiment = { name: "probe-id", universe: "probe-id", variants: [{ key: "a", weight: 1 }, { key: "b", weight: 1 }], allocation: [9000, 10_000], primaryMetric: "probe-id" };
  if ((await s.api("/api/admin/experiments", { body: experiment })).status === 201) await s.api("/api/admin/experiments/probe-id/start", { method: "POST" });
  await s.api("/api/admin/i18n/profiles", { body: { name: "probe-id", locale: "fr" } });
  // Rollouts of probe-id exist once the walk of POST /api/admin/rollouts made some (the gate and config routes before it
  // run without one): then exactly one unfinished, so that the name finds it, and a new one after a rollback or a completion.
  const rollouts = (await s.api("/api/admin/rollouts?q=probe-id")).body as { id: string; status: string }[];
  if (Array.isArray(rollouts) && rollouts.length > 0) {
    const unfinished = rollouts.filter((r) => ["scheduled", "running", "paused"].includes(r.status));
    for (const r of unfinished.slice(1)) await s.api(`/api/admin/rollouts/${r.id}/rollback`, { method: "POST", body: {} });
    if (unfinished.length === 0) await s.api("/api/admin/rollouts", { body: { gate: "probe-id", env: "dev", rules: [] } });
  }
  await s.api("/api/admin/i18n/keys", { body: { profile_id: "probe-id", keys: [{ key: "probe-id", value: "Bonjour {name}" }] } });
  if (((await s.api("/api/admin/ops?q=probe-id")).body as unknown[]).length === 0) await s.api("/ops/bug", { key: null, headers: { "x-sdk-key": s.clientKey }, body: { title: "probe-id" } });
  // A connector named probe-id (paths take a unique name too), whose target refuses at once.
  if (((await s.api("/api/admin/connectors?q=probe-id")).body as unknown[]).length === 0) {
    await s.api("/api/admin/connectors", { body: { provider: "webhook", name: "probe-id", events: ["killswitch.toggled"], config: { url: "http://127.0.0.1:9/probe" } } });
  }
  if (!(await s.api("/api/admin/members")).text.includes(MEMBER)) await s.addMember(MEMBER, "editor");
  const { identity } = s.server.ctx.services;
  if (!(await identity.sessionUser(session))) {
    await identity.requestMagicLink("owner@example.com", { redirect: undefined, baseUrl: s.url, ip: `fuzz-${++sessions}` });
    const token = new URL(mails.lastTo("owner@example.com")!.url).searchParams.get("token")!;
    session = (await identity.consumeMagicLink(token)).sessionToken;
  }
}

/**
 * The paths a route is called on. `real` when every parameter has a real value (the handler finds what it names);
 * otherwise at least one parameter is hostile.
 */
function paths(route: Route): { path: string; real: boolean }[] {
  const params = route.path.match(/:[A-Za-z_]+|\*$/g) ?? [];
  if (params.length === 0) return [{ path: route.path, real: true }];
  const names = params.map((p) => (p === "*" ? "*" : p.slice(1)));
  const out = new Map<string, boolean>();
  const add = (pick: (param: string) => string) => {
    let real = true;
    const value = (p: string) => {
      const v = pick(p);
      if (!realValues(p, route.path).includes(v)) real = false;
      return v;
    };
    const path = route.path.replace(/:([A-Za-z_]+)/g, (_, p: string) => value(p)).replace(/\*$/, () => value("*"));
    out.set(path, (out.get(path) ?? false) || real);
  };
  // Every parameter hostile at once, then each one in turn (hostile or real) with real values elsewhere.
  for (const id of IDS) add(() => id);
  for (const param of names) {
    for (const value of [...IDS, ...realValues(param, route.path)]) add((p) => (p === param ? value : realValues(p, route.path)[0]!));
  }
  return [...out].map(([path, real]) => ({ path, real }));
}

async function send(method: string, path: string, headers: Record<string, string>, body?: { type: string; text: string }): Promise<Reply> {
  const controller = new AbortController();
  const init: RequestInit = { method, headers: { ...headers }, redirect: "manual", signal: controller.signal };
  if (body) {
    (init.headers as Record<string, string>)["content-type"] = body.type;
    init.body = body.text;
  }
  const res = await fetch(s.url + path, init);
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
    controller.abort(); // the SSE stream never ends: its status and headers are what we check
    return { status: res.status, headers: res.headers, text: "", body: undefined };
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, text, body: parsed };
}

function headersFor(credential: Credential, variant: Variant): Record<string, string> {
  switch (credential) {
    case "admin":
      return { authorization: `Bearer ${variant === "owner" ? ownerToken : s.adminKey}`, "x-project-id": s.projectId };
    case "server":
      return { "x-sdk-key": s.serverKey };
    case "client":
      return { "x-sdk-key": s.clientKey };
    case "none":
      if (variant === "csrf") return { cookie: `svc_csrf=${csrf}`, "x-csrf-token": csrf, origin: s.url };
      if (variant === "session") return { cookie: `svc_session=${session}; svc_csrf=${csrf}`, "x-csrf-token": csrf, origin: s.url };
      return {};
  }
}

async function pool<T>(items: T[], run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < items.length) await run(items[next++]!);
  }));
}

const refusedByCsrf = (r: Reply) => r.status === 403 && /CSRF|Cross-site/.test(String(r.body?.error ?? r.text));
const refusedBySchema = (r: Reply) => r.status === 413 || (r.status === 400 && /failed validation|Malformed|nested too deeply/.test(String(r.body?.error ?? "")));

// About 27 s on SQLite and 47 s on PostgreSQL on two idle cores (2026-11-30: 75,000 requests; 80 s and 151,000
// before the paths with a hostile parameter took one body per distinct answer), growing with every route: the limit
// leaves room for a loaded machine.
test("every route, called with its own credential, answers hostile input below 500 and in its documented shape", async () => {
  const failures: string[] = [];
  /** Statuses per route, to prove the handlers were reached. */
  const seen = new Map<string, number[]>();
  /** Browser routes: answers (with a valid CSRF token, with or without a session) from the handler, not the CSRF or schema checks. */
  const pastCsrf = new Map<string, number>();
  let requests = 0;

  for (const route of routes) {
    if (route.path.startsWith("/openapi") || route.method === "ALL") continue;
    await seed();
    const credential = credentialOf(route.path);
    const hasBody = !["GET", "HEAD"].includes(route.method);
    const variants = variantsOf(route.method, route.path);
    const asJson = (text: string) => ({ type: "application/json", text });
    const plausible = plausibleBodies().map(asJson);
    const bodies: ({ type: string; text: string } | undefined)[] = hasBody ? [...JSON_BODIES.map(asJson), ...plausible, ...OTHER_BODIES] : [undefined];
    type Call = { path: string; variant: Variant; body?: { type: string; text: string }; headers?: Record<string, string> };
    const emptyBody = hasBody ? asJson("{}") : undefined;
    // Every hostile body and query on the paths whose parameters the handler resolves (first). On the paths with a
    // hostile parameter (then), an empty body and, of the plausible bodies the route's schemas let through on its real
    // paths, one per distinct answer there (status, code, error), so the handler itself meets the odd id on each of
    // its ways: its lookup, its 404. A body the schemas refuse is refused there as on a real path (the same schema),
    // and bodies the handler answered alike on a real path take the same way to the lookup; pairing every hostile
    // parameter with every body (310,000 requests, then 151,000 with the plausible ones only) tested nothing more.
    const routePaths = paths(route);
    const first: Call[] = [];
    for (const { path: base } of routePaths.filter((p) => p.real)) {
      for (const variant of variants) {
        for (const body of bodies) first.push({ path: base, variant, body });
        for (const query of QUERIES.slice(1)) first.push({ path: base + query, variant, body: emptyBody });
      }
    }
    for (const { path } of routePaths.slice(-3)) {
      for (const headers of HEADER_VARIANTS) first.push({ path, variant: variants.at(-1)!, body: emptyBody, headers });
    }
    const key = `${route.method} ${route.path}`;
    /**
     * A plausible body per distinct answer the handler gave on a real path (past the schemas): by status, error (or
     * OFREP errorCode) and, for a success, the reply's top-level keys. The first in the list, whichever answered first.
     */
    const admitted = new Map<string, number>();
    const plausibleIndex = new Map(plausible.map((b, i) => [b.text, i]));
    const call = async ({ path, variant, body, headers }: Call) => {
      requests++;
      const r = await send(route.method, path, { ...headersFor(credential, variant), ...headers }, body);
      const problem = problemWith(route.path, r);
      if (problem) {
        const sent = `${route.method} ${path.slice(0, 120)} [${variant}${headers ? ` ${JSON.stringify(headers).slice(0, 80)}` : ""}] body=${JSON.stringify(body?.text.slice(0, 60))}`;
        failures.push(`${sent}: ${problem} -> ${r.status} ${r.text.slice(0, 200)}`);
      }
      seen.set(key, [...(seen.get(key) ?? []), r.status]);
      const index = body && plausibleIndex.get(body.text);
      if (index !== undefined && !refusedBySchema(r)) {
        const shape = r.status < 300 && r.body && typeof r.body === "object" ? Object.keys(r.body).sort().join(",") : "";
        const answer = `${r.status} ${r.body?.code ?? ""} ${r.body?.error ?? r.body?.errorCode ?? ""} ${shape}`;
        admitted.set(answer, Math.min(index, admitted.get(answer) ?? index));
      }
      if ((variant === "csrf" || variant === "session") && !refusedByCsrf(r) && !refusedBySchema(r)) pastCsrf.set(key, (pastCsrf.get(key) ?? 0) + 1);
    };
    await pool(first, call);
    const hostileIdBodies = hasBody ? [emptyBody, ...[...new Set(admitted.values())].sort((a, b) => a - b).map((i) => plausible[i]!)] : [undefined];
    const then: Call[] = [];
    for (const { path } of routePaths.filter((p) => !p.real)) {
      for (const variant of variants) for (const body of hostileIdBodies) then.push({ path, variant, body });
    }
    await pool(then, call);
  }

  expect(failures.slice(0, 30)).toEqual([]);
  expect(requests).toBeGreaterThan(10_000);

  // The credentials were the right ones: no route answered only 401/403, and every admin route
  // answered something only its handler gives (a success, a lookup's 404, a name's 409).
  const admitted = (key: string) => (seen.get(key) ?? []).some((status) => status !== 401 && status !== 403);
  const walked = [...seen.keys()];
  expect(walked.length).toBeGreaterThan(40);
  for (const key of walked) expect(admitted(key), `${key}: only 401/403`).toBe(true);
  for (const key of walked.filter((k) => k.includes(" /api/admin/"))) {
    expect(seen.get(key)!.some((x) => (x >= 200 && x < 300) || x === 404 || x === 409), `${key}: never reached its handler`).toBe(true);
  }
  // The SDK and OFREP handlers really ran: each answered 200 (or 304) and 400/404 to what it parsed.
  const sdk = walked.filter((k) => / \/(api\/sdk|ofrep)\//.test(k) || isSentryPath(k.slice(k.indexOf(" ") + 1)));
  expect(sdk.length).toBeGreaterThanOrEqual(4);
  for (const key of sdk) {
    const statuses = seen.get(key)!;
    // Ingest answers 202 (accepted once durable).
    expect(statuses.some((x) => x === 200 || x === 202 || x === 304), `${key}: no 200/202/304`).toBe(true);
    expect(statuses.filter((x) => [200, 202, 304, 400, 404].includes(x)).length, key).toBeGreaterThan(statuses.length / 2);
  }
  for (const key of walked.filter((k) => k.includes(" /ofrep/"))) {
    expect(seen.get(key)!.includes(400), `${key}: no OFREP 400`).toBe(true);
  }
  // Every browser POST was reached past its CSRF check.
  const browserPosts = walked.filter((k) => k.startsWith("POST ") && isBrowserPath(k.slice(5)));
  expect(browserPosts.length).toBeGreaterThanOrEqual(5);
  for (const key of browserPosts) expect(pastCsrf.get(key) ?? 0, `${key}: never past the CSRF check`).toBeGreaterThan(0);
  // The walk grows with every route (issues 29-31 added about twenty); on PostgreSQL on a loaded 2-core machine it took 230 s.
}, 420_000);

test("methods a path does not register, and odd paths, answer below 500 in the error shape", async () => {
  const failures: string[] = [];
  const registered = new Set(routes.map((r) => `${r.method} ${r.path}`));
  const odd = [
    "/",
    "/%FF",
    "//healthz",
    "/api/admin/",
    "/api/admin//keys",
    "/api/admin/keys/%",
    `/api/admin/killswitches/${"a".repeat(5000)}`,
    "/api/sdk/v1/snapshot/",
    "/ofrep/v1/evaluate/flags/",
    "/ofrep/v1/evaluate/flags//",
    "/ofrep/v1/evaluate/flags/%2F%2E%2E",
    "/ofrep/v1/evaluate/flags/probe-id/%FF",
    "/ops/",
    "/ops/bug",
    "/ops/feature-request",
    "/auth/../api/admin/keys",
  ];
  const targets = [...new Set(routes.filter((r) => !r.path.startsWith("/openapi")).map((r) => r.path)), ...odd];
  let requests = 0;
  await pool(
    targets.flatMap((path) => ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"].map((method) => ({ path, method }))),
    async ({ path, method }) => {
      if (registered.has(`${method} ${path}`)) return;
      const concrete = path.replace(/:[A-Za-z_]+/g, "probe-id").replace(/\*$/, "probe-id");
      const credential = credentialOf(concrete);
      const hasBody = !["GET", "HEAD", "OPTIONS"].includes(method);
      requests++;
      const r = await send(method, concrete, { ...headersFor(credential, "plain"), origin: s.url }, hasBody ? { type: "application/json", text: "{}" } : undefined);
      // A HEAD answer has no body to check; a CORS preflight is 204.
      const problem = method === "HEAD" ? (r.status >= 500 ? `status ${r.status}` : null) : problemWith(concrete, r);
      if (problem) failures.push(`${method} ${concrete.slice(0, 100)}: ${problem} -> ${r.status} ${r.text.slice(0, 200)}`);
    },
  );
  expect(failures).toEqual([]);
  expect(requests).toBeGreaterThan(200);
});
