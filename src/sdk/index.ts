// Over 450 lines on purpose: every public name of the SDK is declared here (build:sdk's entry; test/sdk/package.test.ts reads them from this file); the transport and helpers live in transport.ts and util.ts.
/**
 * svc runtime SDK: killswitches and configs for Node (18+), Bun, Deno and browsers.
 * No runtime dependencies (RE2, from re2js, is bundled in); it needs only `fetch` (and streams, for live updates).
 * `npm run build:sdk` builds it into the npm package `svc-sdk` (dist/sdk); every server serves it at GET /sdk/svc-sdk.tgz (and as one module at /sdk/svc.js).
 *
 *   const svc = createClient({ baseUrl: "https://flags.example.com", sdkKey: process.env.SVC_SERVER_KEY!, env: "prod" });
 *   await svc.ready();
 *   if (svc.isKilled("checkout", "eu")) ...
 *   const limits = svc.getConfig("limits", { perMinute: 60 });
 *   if (svc.isEnabled("new-checkout", { user_id: user.id, country: user.country })) ...
 *   const { variant } = svc.getVariant("checkout-button", { user_id: user.id }); // logs one exposure per unit
 *   svc.track("checkout.completed", { unitId: user.id, value: 59.9, properties: { plan: "pro" } });
 *   svc.captureError(err, { unitId: user.id });
 *   const label = svc.t("checkout.greeting", { locale: "de-CH", vars: { name: user.firstName } }); // "Grüezi Ada!"
 *
 * It loads the snapshot once, then follows the server's event stream
 * (reconnecting with Last-Event-ID and backoff) and also polls with
 * If-None-Match as a safety net. When the server cannot be reached it keeps
 * answering from the last snapshot it had; before the first one, every
 * answer is the caller's default.
 *
 * It never goes backwards: a snapshot replaces the one in use only when its
 * revision is greater, or when it comes from another database epoch (a
 * restored or copied database starts a new epoch, whose revisions may be
 * lower). So a slow poll answer that lands after a newer stream event is
 * ignored.
 */
export type Env = "dev" | "staging" | "prod";

import { type PublishedConfig, decideConfig, decidedRuleName } from "./configs";
import { type CompiledRegex, type EvaluationContext, type Gate, type PublishedSegment, createGateEvaluator, withUserId } from "./gates";
import { type TrackOptions, createOutbox } from "./events";
import { type NamedExperiment, type OverrideIndex, type PublishedExperiment, MAX_EXPOSURE_UNIT_ID, assignUnit, exposureEventName, indexOverrides, overrideFor } from "./experiments";
import type { PublishedUniverse } from "./universes";
import { NO_ROLLOUTS, type PublishedRollout, type RolloutIndex, indexRollouts, rolledGate, rolloutFor } from "./rollouts";
import { DEFAULT_FALLBACK_LOCALE, type TranslateOptions, type Translations, translate } from "./translations";
import { createSnapshotFeed } from "./transport";
import { createSeenSet, hasOwn, kindOf, ownEntry, re2Regex } from "./util";
import { unknownNameWarner } from "./unknown-names";

export type { TrackOptions } from "./events";
export { EXPOSURE_EVENT_NAME, EXPOSURE_PREFIX, assignVariant, exposureEventName } from "./experiments";
export type { Assignment, ExperimentVariant, PublishedExperiment, VariantOverride } from "./experiments";
export { SEGMENTS, segmentOf } from "./universes";
export { UNKNOWN_NAMES_WARNED } from "./unknown-names";
export { ROLLOUT_EXPOSURE_NAME, inRollout, rolloutExposureName } from "./rollouts";
export type { PublishedRollout, RolloutArm } from "./rollouts";
export type { PublishedUniverse, SegmentRange, UnitType } from "./universes";
export { DEFAULT_FALLBACK_LOCALE, interpolate, localeChain, translate } from "./translations";
export type { TranslateOptions, Translations } from "./translations";

export { GATE_OPS, bucketOf, createGateEvaluator } from "./gates";
export type { EvaluationContext, Gate, GateCondition, GateDecision, GateExplanation, GateOp, GateRule } from "./gates";

export type Killswitch = { value: boolean; switches: Record<string, boolean>; version: number };
/** A gate as published: its bucketing salt, its rules on this env, its version. */
export type PublishedGate = Gate & { version: number };
/** A config as published on one env: its default value, and its rules when it has any (src/sdk/configs.ts). */
export type Config = PublishedConfig;

/** What the server publishes for one env (`GET /api/sdk/v1/snapshot`). */
export type Snapshot = {
  projectId: string;
  env: Env;
  /**
   * The server database's epoch: a restored or copied database starts a new
   * one, and revisions are only comparable within one epoch. A server that
   * sends none counts as epoch "".
   */
  epoch: string;
  revision: number;
  killswitches: Record<string, Killswitch>;
  configs: Record<string, Config>;
  gates: Record<string, PublishedGate>;
  universes: Record<string, PublishedUniverse>;
  /** Running experiments on this env, by name. */
  experiments: Record<string, PublishedExperiment>;
  /** Per locale (canonical BCP 47 tags), per key, the text; `{}` when the project's translations are off. */
  translations: Translations;
  /** Running guarded rollouts on this env, by id (absent from older servers). */
  rollouts?: Record<string, PublishedRollout>;
  /** The segments this env's rules name (in_segment / not_in_segment), each once, by name (absent from older servers). */
  segments?: Record<string, PublishedSegment>;
};

export type ClientOptions = {
  /** Where svc runs, e.g. `https://flags.example.com`. */
  baseUrl: string;
  /** A server SDK key (`sdk_server_...`). */
  sdkKey: string;
  /** Defaults to the project's default env. */
  env?: Env;
  /** How often the snapshot is re-checked (a cheap 304 when nothing changed). Default 30 s. */
  pollIntervalMs?: number;
  /** Follow the live event stream. Default: true wherever fetch exposes a readable body stream. */
  stream?: boolean;
  /**
   * How gate rules with the `regex` operator compile their pattern. The
   * server checks every pattern with RE2 when it is saved and evaluates with
   * RE2; so does the default here (re2js, bundled), linear in the text
   * whatever the pattern. An engine passed here that backtracks (the
   * runtime's RegExp) gives the same answers, but a pattern that nests
   * quantifiers can then take exponential time on a crafted value.
   */
  compileRegex?: (pattern: string) => CompiledRegex;
  /** A fetch to use instead of the global one. */
  fetch?: (url: string, init?: RequestInit) => Promise<Response>;
  /**
   * The clock events, exposures and errors are stamped with (default
   * Date.now): simulations and tests that move time inject theirs.
   */
  now?: () => number;
  /** How often queued events, errors, seen context attribute names and evaluation counts are sent. Default 10 s. */
  flushIntervalMs?: number;
  /**
   * Count evaluations (isKilled, isEnabled, getConfig, getVariant) per flag in memory and send the counts
   * with each flush (`POST /api/sdk/v1/evaluations`), so the server shows when each flag was last used and
   * which are stale. Only names the snapshot has are counted. Default true.
   */
  reportEvaluations?: boolean;
  /**
   * Tell the server which attribute names (never their values) the contexts
   * given to isEnabled carry, so its attribute list knows them. Default true.
   */
  reportContextAttributes?: boolean;
  /** Hears every failed request (the client keeps serving its last snapshot). Default: console.warn. */
  onError?: (error: SvcError) => void;
  /**
   * Hears a name the loaded snapshot does not have (`isKilled`, `isEnabled`,
   * `getConfig`, `getVariant`): once per kind and name per client, for the
   * first 100 names (UNKNOWN_NAMES_WARNED), so a typo shows up in the log instead
   * of silently answering the default. Default: console.warn.
   */
  onWarning?: (message: string) => void;
  /**
   * How many (experiment, unit) pairs the client remembers having logged an
   * exposure for, so each is sent once. Default 10,000; past that the least
   * recently seen pairs are forgotten and may be logged again (the analysis
   * counts a unit once, at its first exposure).
   */
  exposureDedupeSize?: number;
  /** The locale `t(key)` looks in unless a call names another (`de-CH`; its parents `de` come next). Default: none, only the fallback. */
  locale?: string;
  /** Where `t(key)` looks when the locale lacks a key. Default `en`. */
  fallbackLocale?: string;
};

/**
 * Why `getVariant` answered as it did:
 * - `assigned`: the unit is in the experiment (`variant` is set);
 * - `holdout`: the unit is in its universe's holdout;
 * - `unallocated`: the unit's segment is outside the experiment's allocation;
 * - `targeting`: the experiment's targeting gate does not let the unit through;
 * - `no_unit`: the context has no unit id of the universe's unit type;
 * - `not_found`: no running experiment of that name in the snapshot (or no snapshot yet).
 */
export type VariantReason = "assigned" | "holdout" | "unallocated" | "targeting" | "no_unit" | "not_found";

/**
 * A unit's variant. Not in the experiment: `variant` null and `value` the
 * control's value (what the unit gets anyway); an unknown experiment:
 * `variant` null and `value` undefined.
 */
export type VariantResult = { variant: string | null; value: unknown; reason: VariantReason };

export type VariantOptions = {
  /** Log an exposure for an assigned unit (once per experiment and unit). Default true; false to only look. */
  exposure?: boolean;
};

export type Client = {
  /** Resolves once a snapshot is loaded; rejects if the attempt under way fails before any snapshot arrived. */
  ready(): Promise<void>;
  /**
   * Whether the killswitch is on. With `switchKey`: that sub-switch when the
   * killswitch has the entry, else the killswitch's flat value (so killing
   * the whole switch covers keys without an entry). An unknown name is false.
   */
  isKilled(name: string, switchKey?: string): boolean;
  /**
   * The config's published value, or `defaultValue` when the name is unknown
   * or the published value is not of the default's kind (string, number,
   * boolean, array, object), so the result always has type T.
   */
  getConfig<T>(name: string, defaultValue: T): T;
  /**
   * With a context: what the config's rules serve this context (the first
   * rule that holds: its value, or its split's value for the unit; none
   * holding: the published default value), except for a unit a running experiment assigns
   * to a variant that overrides this config (`override: {kind: "config"}`):
   * the override's value (same kind rule). A unit in any variant of such an
   * experiment gets its exposure logged. While a guarded rollout of the
   * config runs, a unit (`user_id`) in its current stage gets the new value,
   * the others the published one, and each logs its exposure.
   */
  getConfig<T>(name: string, defaultValue: T, context: EvaluationContext): T;
  /**
   * Whether the gate lets this context through, evaluated locally with the
   * server's own evaluator (the same answers as explain and OFREP). The unit
   * is `user_id` unless a rule names another attribute. An unknown gate, or
   * no snapshot yet, is false. A unit a running experiment assigns to a
   * variant that overrides this gate (`override: {kind: "gate"}`) gets the
   * override's value; a unit in any variant of such an experiment gets its
   * exposure logged. While a guarded rollout of the gate runs, a unit in its
   * current stage is evaluated on the rollout's new rules (exposure logged).
   */
  isEnabled(name: string, context?: EvaluationContext): boolean;
  /**
   * The unit's variant in a running experiment, assigned locally (the same
   * answer as OFREP and every other SDK). The unit id is the context's
   * attribute named by the experiment's universe (`user_id`, with
   * `targetingKey` standing in, or `account_id`); the experiment's targeting
   * gate is evaluated on the same context. An assigned unit gets an exposure
   * event `$exposure:<experiment id>` queued once (unless `exposure: false`).
   */
  getVariant(experiment: string, context: EvaluationContext, options?: VariantOptions): VariantResult;
  /**
   * The translation of `key` from the snapshot: in the locale (the call's,
   * else the client's `locale`), then its parents (`de-CH` → `de`), then the
   * fallback locale (the call's, else the client's `fallbackLocale`, else
   * `en`) and its parents. A key found nowhere (or no snapshot yet) answers
   * the key itself. `vars` fill `{name}` placeholders.
   */
  t(key: string, options?: TranslateOptions): string;
  /** Queues an analytics event (sent in batches; unknown names appear in the catalog as pending). */
  track(name: string, options?: TrackOptions): void;
  /** Queues an error for the server's tracked errors (grouped by type and stack, not line numbers). */
  captureError(error: unknown, options?: { unitId?: string }): void;
  /** Sends what is queued now. */
  flush(): Promise<void>;
  /** The snapshot in use, or null before the first one. */
  snapshot(): Readonly<Snapshot> | null;
  /** Called with each new snapshot; returns the unsubscribe. */
  onChange(listener: (snapshot: Readonly<Snapshot>) => void): () => void;
  /** Stops polling and streaming, and sends what is queued (resolves when that is done). */
  close(): Promise<void>;
};

export class SvcError extends Error {
  constructor(
    message: string,
    /** HTTP status, when the server answered. */
    readonly status?: number,
    /** The server's error code (UNAUTHORIZED, FORBIDDEN, ...), when it sent one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = "SvcError";
  }
}

export async function httpError(response: Response, what: string): Promise<SvcError> {
  let code: string | undefined;
  let message = `${what}: HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { error?: unknown; code?: unknown };
    if (typeof body.code === "string") code = body.code;
    if (typeof body.error === "string") message = `${what}: ${body.error} (HTTP ${response.status})`;
  } catch {
    // Not our error body: the status says enough.
  }
  return new SvcError(message, response.status, code);
}

export function asSvcError(error: unknown, what: string): SvcError {
  if (error instanceof SvcError) return error;
  return new SvcError(`${what}: ${error instanceof Error ? error.message : String(error)}`);
}

/** One dispatched Server-Sent Event (`event` defaults to "message"). */
export type SseEvent = { event: string; data: string; id: string };

/**
 * Reads a text/event-stream body and calls `onEvent` per dispatched event
 * (the WHATWG parsing rules: `field: value` lines, `:` comments, a blank line
 * ends an event). Resolves when the body ends.
 */
export async function readEventStream(body: ReadableStream<Uint8Array>, onEvent: (event: SseEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  let id = "";
  const line = (text: string) => {
    if (text === "") {
      if (data.length > 0) onEvent({ event: event || "message", data: data.join("\n"), id });
      event = "";
      data = [];
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id" && !value.includes("\0")) id = value;
  };
  const newline = /\r\n|\r|\n/g;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let start = 0;
    newline.lastIndex = 0;
    for (let match = newline.exec(buffer); match; match = newline.exec(buffer)) {
      // A lone \r at the end of a chunk may be the first half of \r\n: wait for more.
      if (match[0] === "\r" && match.index === buffer.length - 1) break;
      line(buffer.slice(start, match.index));
      start = match.index + match[0].length;
    }
    buffer = buffer.slice(start);
  }
}

const NO_OVERRIDES: OverrideIndex = { gates: new Map(), configs: new Map() };

export function createClient(options: ClientOptions): Client {
  const fetchImpl = options.fetch ?? ((url: string, init?: RequestInit) => fetch(url, init));
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const query = options.env ? `?env=${encodeURIComponent(options.env)}` : "";
  const streaming = options.stream ?? (typeof ReadableStream !== "undefined" && typeof TextDecoder !== "undefined");
  const report = options.onError ?? ((error: SvcError) => console.warn(`[svc] ${error.message}`));
  const unknownName = unknownNameWarner(options.onWarning ?? ((message) => console.warn(message)));

  const headers = (extra: Record<string, string> = {}) => ({ "x-sdk-key": options.sdkKey, ...extra });
  const feed = createSnapshotFeed<Snapshot, SvcError>({
    fetchImpl,
    baseUrl,
    query,
    headers,
    pollIntervalMs: options.pollIntervalMs,
    streaming,
    report,
    readEventStream,
    httpError,
    asError: asSvcError,
    closedError: () => new SvcError("client is closed"),
  });

  // One evaluator per snapshot: its gates' patterns compile once, on first use.
  const evaluators = new WeakMap<Snapshot, ReturnType<typeof createGateEvaluator>>();
  const compileRegex = options.compileRegex ?? re2Regex;
  const evaluatorFor = (snapshot: Snapshot) => {
    let evaluator = evaluators.get(snapshot);
    if (!evaluator) {
      evaluator = createGateEvaluator({
        compileRegex,
        gate: (gateName) => ownEntry(snapshot.gates, gateName) ?? undefined,
        segment: (segmentName) => (snapshot.segments ? (ownEntry(snapshot.segments, segmentName) ?? undefined) : undefined),
      });
      evaluators.set(snapshot, evaluator);
    }
    return evaluator;
  };

  const outbox = createOutbox({
    flushIntervalMs: options.flushIntervalMs ?? 10_000,
    now: options.now,
    onError: (error) => report(asSvcError(error, "sending events failed")),
    async send(path, body) {
      const response = await fetchImpl(`${baseUrl}${path}`, { method: "POST", headers: headers({ "content-type": "application/json" }), body: JSON.stringify(body) });
      if (!response.ok) throw await httpError(response, "sending events failed");
    },
  });
  const reportContexts = options.reportContextAttributes ?? true;
  const reportEvaluations = options.reportEvaluations ?? true;
  /** One evaluation of a flag the snapshot has: a Map addition, sent with the next flush. */
  const counted = (snapshot: Snapshot, name: string) => {
    if (reportEvaluations) outbox.countEvaluation(snapshot.env, name);
  };

  // Exposures already queued, per (experiment id, unit id).
  const exposed = createSeenSet(options.exposureDedupeSize ?? 10_000);
  const expose = (experimentId: string, unitId: string, variant: string) => {
    if (unitId.length <= MAX_EXPOSURE_UNIT_ID && exposed.add(`${experimentId}\u0000${unitId}`)) outbox.track(exposureEventName(experimentId), { unitId, properties: { variant } });
  };

  // Which experiments override which gates and configs: built once per snapshot, so untouched names cost one Map lookup.
  let indexed: Snapshot | null = null;
  let overrides = NO_OVERRIDES;
  const overridesOf = (snapshot: Snapshot): OverrideIndex => {
    if (indexed !== snapshot) {
      overrides = snapshot.experiments ? indexOverrides(snapshot.experiments) : NO_OVERRIDES;
      indexed = snapshot;
    }
    return overrides;
  };

  // Which rollouts change which gates and configs, and each gate rollout's new rules as a gate: built once per snapshot.
  let rolloutsIndexed: Snapshot | null = null;
  let rollouts = NO_ROLLOUTS;
  const rolloutsOf = (snapshot: Snapshot): RolloutIndex => {
    if (rolloutsIndexed !== snapshot) {
      rollouts = indexRollouts(snapshot.rollouts);
      rolloutsIndexed = snapshot;
    }
    return rollouts;
  };
  /** The unit's group in the rollout of a gate or config, if one runs (its exposure logged). */
  const rolloutOf = (snapshot: Snapshot, kind: "gates" | "configs", name: string, context: EvaluationContext) => rolloutFor(rolloutsOf(snapshot), kind, name, context, expose);

  const assign = (snapshot: Snapshot, experiment: PublishedExperiment, context: EvaluationContext) =>
    assignUnit(experiment, snapshot.universes, context, (gateName) => {
      const gate = ownEntry(snapshot.gates ?? {}, gateName);
      return !!gate && evaluatorFor(snapshot).evaluate(gate, withUserId(context)).value;
    });

  /** What the experiments overriding `kind name` give this unit (see overrideFor), its exposure logged. */
  const overrideOf = (snapshot: Snapshot, list: NamedExperiment[], kind: "gate" | "config", name: string, context: EvaluationContext, decidedRule?: () => string | null) =>
    overrideFor(list, kind, name, (experiment) => assign(snapshot, experiment, context), expose, decidedRule);

  feed.start();

  return {
    ready: () => feed.ready(),
    isKilled(name, switchKey) {
      const current = feed.current();
      const killswitch = current && ownEntry(current.killswitches, name);
      if (!killswitch) {
        if (current) unknownName("killswitch", name, current.env);
        return false;
      }
      counted(current, name);
      if (switchKey !== undefined && hasOwn(killswitch.switches, switchKey)) {
        return killswitch.switches[switchKey] === true;
      }
      return killswitch.value;
    },
    isEnabled(name, context = {}) {
      const snapshot = feed.current();
      const gate = snapshot && ownEntry(snapshot.gates ?? {}, name);
      if (!gate) {
        if (snapshot) unknownName("gate", name, snapshot.env);
        return false;
      }
      counted(snapshot, name);
      if (reportContexts) outbox.noteContext(context);
      const overriding = overridesOf(snapshot).gates.get(name);
      if (overriding) {
        const override = overrideOf(snapshot, overriding, "gate", name, context);
        if (override) return override.value === true;
      }
      const rolled = rolloutOf(snapshot, "gates", name, context);
      if (rolled?.rolled && rolled.rollout.kind === "gate") return evaluatorFor(snapshot).evaluate(rolledGate(gate, rolled.rollout), context).value;
      return evaluatorFor(snapshot).evaluate(gate, context).value;
    },
    getConfig<T>(name: string, defaultValue: T, context?: EvaluationContext): T {
      const snapshot = feed.current();
      const config = snapshot && ownEntry(snapshot.configs, name);
      if (!config) {
        if (snapshot) unknownName("config", name, snapshot.env);
        return defaultValue;
      }
      counted(snapshot, name);
      let value = config.value;
      if (context) {
        const overriding = overridesOf(snapshot).configs.get(name);
        let override: { value: unknown } | undefined;
        if (overriding) {
          if (reportContexts) outbox.noteContext(context);
          override = overrideOf(snapshot, overriding, "config", name, context, () => decidedRuleName(config, withUserId(context), evaluatorFor(snapshot)));
        }
        // An experiment's variant wins over a rollout of the same config, as it does for gates; both over the config's own rules.
        if (override) value = override.value;
        else {
          const rolled = rolloutOf(snapshot, "configs", name, context);
          if (rolled?.rolled && rolled.rollout.kind === "config") {
            const { rollout } = rolled;
            value = rollout.rules ? decideConfig({ value: rollout.value, version: config.version, rules: rollout.rules, salt: config.salt ?? name }, withUserId(context), evaluatorFor(snapshot)).value : rollout.value;
          } else if (config.rules && config.rules.length > 0) value = decideConfig(config, withUserId(context), evaluatorFor(snapshot)).value;
        }
      }
      if (defaultValue !== null && defaultValue !== undefined && kindOf(value) !== kindOf(defaultValue)) return defaultValue;
      return value as T;
    },
    getVariant(name, context, variantOptions) {
      const snapshot = feed.current();
      const experiment = snapshot && ownEntry(snapshot.experiments ?? {}, name);
      if (!experiment) {
        if (snapshot) unknownName("experiment", name, snapshot.env);
        return { variant: null, value: undefined, reason: "not_found" };
      }
      counted(snapshot, name);
      const ctx = context ?? {};
      if (reportContexts) outbox.noteContext(ctx);
      const a = assign(snapshot, experiment, ctx);
      if (a.variant === null) return { variant: null, value: experiment.variants[0]?.value, reason: a.reason === "no_universe" ? "not_found" : a.reason };
      if (variantOptions?.exposure !== false) expose(experiment.id, a.unitId, a.variant.key);
      return { variant: a.variant.key, value: a.variant.value, reason: "assigned" };
    },
    t(key, translateOptions) {
      return translate(feed.current()?.translations, key, {
        locale: translateOptions?.locale ?? options.locale,
        fallbackLocale: translateOptions?.fallbackLocale ?? options.fallbackLocale ?? DEFAULT_FALLBACK_LOCALE,
        vars: translateOptions?.vars,
      });
    },
    track: (name, trackOptions) => outbox.track(name, trackOptions),
    captureError: (error, errorOptions) => outbox.captureError(error, errorOptions),
    flush: () => outbox.flush(),
    snapshot: () => feed.current(),
    onChange: (listener) => feed.onChange(listener),
    async close() {
      if (!feed.close()) return;
      await outbox.close();
    },
  };
}
