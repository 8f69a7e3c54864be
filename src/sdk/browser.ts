/**
 * svc's SDK in browser mode (`svc-sdk/browser`, served as one ES module at GET /sdk/svc-browser.js).
 *
 * Web and mobile apps cannot hold a server key (it reads every rule, salt and
 * env), so this client takes a browser key (`sdk_browser_…`) and asks the
 * server to evaluate: one bulk OFREP call (`POST /ofrep/v1/evaluate/flags`)
 * for the whole context, re-checked every `pollMs` (default 30 s) with
 * If-None-Match, so an unchanged answer is a bodiless 304. It never reads the
 * snapshot (a browser key is refused it) and carries no gate evaluator and no
 * regex engine: it stays a few KB (under 10 KB gzipped, a test checks).
 *
 *   import { createBrowserClient } from "https://flags.example.com/sdk/svc-browser.js";
 *   const svc = createBrowserClient({ baseUrl: "https://flags.example.com", key: "sdk_browser_…", context: { targetingKey: user.id, country: "CH" } });
 *   await svc.ready();
 *   if (svc.isKilled("checkout")) ...
 *   if (svc.isEnabled("new-checkout")) ...
 *   const limits = svc.getConfig("limits", { perMinute: 60 });
 *   const { variant } = svc.getVariant("checkout-button"); // the server logged the exposure when it evaluated
 *   svc.track("checkout.completed", { plan: "pro" }, { value: 59.9 });
 *
 * Answers are for the current context; `setContext` asks again at once. When
 * the server cannot be reached the client keeps its last answers; before the
 * first one every call answers its default.
 */
import { createOutbox } from "./events";

/** Attributes the server evaluates gates and experiments on: `targetingKey` (or `user_id`) is the unit. */
export type BrowserContext = Record<string, string | number | boolean | null | undefined | (string | number)[]>;

/** One evaluated flag, as OFREP's bulk answer lists it. */
export type EvaluatedFlag = { key: string; value: unknown; reason?: string; variant?: string; metadata?: Record<string, unknown> };

export type BrowserClientOptions = {
  /** Where svc runs, e.g. `https://flags.example.com`. */
  baseUrl: string;
  /** A browser key (`sdk_browser_…`): evaluated answers for its one env, events and errors; safe to ship in an app. */
  key: string;
  /** The context to evaluate for (change it with setContext). */
  context?: BrowserContext;
  /** How often the answers are re-checked (a bodiless 304 when nothing changed). Default 30,000 ms; 0 never polls. */
  pollMs?: number;
  /** Poll while the page is hidden too. Default false: a hidden tab asks again when it shows. */
  pollWhenHidden?: boolean;
  /** How often tracked events are sent. Default 10,000 ms (and on close). */
  flushMs?: number;
  /** A fetch to use instead of the global one. */
  fetch?: (url: string, init?: RequestInit) => Promise<Response>;
  /** Hears a name the answers do not have (once per name). Default: console.warn. */
  onWarning?: (message: string) => void;
  /** Hears every failed request (the client keeps its last answers). Default: console.warn. */
  onError?: (error: Error) => void;
};

/** `assigned`: the unit is in the experiment; `not_assigned`: it is not (value is the control's); `not_found`: no running experiment of that name. */
export type BrowserVariant = { variant: string | null; value: unknown; reason: "assigned" | "not_assigned" | "not_found" };

export type BrowserClient = {
  /** Resolves once the first answers are in; rejects if that first request fails. */
  ready(): Promise<void>;
  /** Whether the killswitch is on; with `switchKey`, that sub-switch when it has an entry, else the killswitch. Unknown: false. */
  isKilled(name: string, switchKey?: string): boolean;
  /** Whether the gate lets the current context through. Unknown: false. */
  isEnabled(name: string): boolean;
  /** The config's value, or `fallback` when unknown or not of the fallback's kind (string, number, boolean, array, object). */
  getConfig<T>(name: string, fallback: T): T;
  /** The current context's variant in a running experiment. */
  getVariant(experiment: string): BrowserVariant;
  /** Every evaluated flag, by key. */
  flags(): Readonly<Record<string, EvaluatedFlag>>;
  /** Replaces the context and evaluates again now; resolves when the new answers are in. */
  setContext(context: BrowserContext): Promise<void>;
  /** Queues an analytics event for the context's unit (`targetingKey`, else `user_id`), sent in batches. */
  track(name: string, properties?: Record<string, string | number | boolean | null>, options?: { value?: number; unitId?: string }): void;
  /** Queues an error for the server's tracked errors. */
  captureError(error: unknown): void;
  /** Sends what is queued now. */
  flush(): Promise<void>;
  /** Called after each change of the answers; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  /** Stops polling and sends what is queued. */
  close(): Promise<void>;
};

export const DEFAULT_BROWSER_POLL_MS = 30_000;

const own = (map: object, key: string) => Object.prototype.hasOwnProperty.call(map, key);
const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

export function createBrowserClient(options: BrowserClientOptions): BrowserClient {
  const doFetch = options.fetch ?? ((url: string, init?: RequestInit) => fetch(url, init));
  const base = options.baseUrl.replace(/\/+$/, "");
  const warn = options.onWarning ?? ((m: string) => console.warn(m));
  const report = options.onError ?? ((e: Error) => console.warn(`[svc] ${e.message}`));
  const pollMs = options.pollMs ?? DEFAULT_BROWSER_POLL_MS;
  const doc = typeof document === "undefined" ? undefined : document;

  let context: BrowserContext = options.context ?? {};
  let flags: Record<string, EvaluatedFlag> | null = null;
  let etag: string | null = null;
  /** Bumped by setContext: an answer for an older context never lands. */
  let generation = 0;
  let closed = false;
  let waiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const listeners = new Set<() => void>();
  const warned = new Set<string>();

  const settle = (error?: Error) => {
    const pending = waiters;
    waiters = [];
    for (const w of pending) error ? w.reject(error) : w.resolve();
  };

  const failure = async (response: Response, what: string) => {
    let detail = "";
    try {
      const body = (await response.json()) as { error?: string; errorDetails?: string };
      detail = body.error ?? body.errorDetails ?? "";
    } catch {
      // Not an error body: the status says enough.
    }
    return new Error(`${what}: ${detail ? `${detail} ` : ""}(HTTP ${response.status})`);
  };

  const evaluate = async (): Promise<void> => {
    const asked = generation;
    try {
      const headers: Record<string, string> = { "content-type": "application/json", "x-sdk-key": options.key };
      if (etag) headers["if-none-match"] = etag;
      const response = await doFetch(`${base}/ofrep/v1/evaluate/flags`, { method: "POST", headers, body: JSON.stringify({ context }) });
      if (asked !== generation || closed) return;
      if (response.status === 304) return settle();
      if (!response.ok) throw await failure(response, "evaluating flags failed");
      const body = (await response.json()) as { flags?: EvaluatedFlag[] };
      if (asked !== generation || closed) return;
      const next: Record<string, EvaluatedFlag> = {};
      for (const flag of body.flags ?? []) if (!own(next, flag.key)) next[flag.key] = flag;
      const changed = JSON.stringify(next) !== JSON.stringify(flags);
      flags = next;
      etag = response.headers.get("etag");
      settle();
      if (changed) {
        for (const listener of listeners) {
          try {
            listener();
          } catch (error) {
            report(error instanceof Error ? error : new Error(String(error)));
          }
        }
      }
    } catch (error) {
      if (closed || asked !== generation) return;
      const e = error instanceof Error ? error : new Error(String(error));
      report(e);
      // Rejects ready() before the first answers; a setContext waiting keeps the old answers (it catches).
      settle(e);
    }
  };

  const flag = (key: string, what: string): EvaluatedFlag | undefined => {
    if (!flags) return undefined;
    if (own(flags, key)) return flags[key];
    if (!warned.has(key) && warned.size < 100) {
      warned.add(key);
      warn(`[svc] unknown ${what} ${JSON.stringify(key)}: not among the evaluated flags, so the default is answered (said once per name)`);
    }
    return undefined;
  };

  const unitId = () => {
    const id = context.targetingKey ?? context.user_id;
    return typeof id === "string" || typeof id === "number" ? String(id) : undefined;
  };

  const outbox = createOutbox({
    flushIntervalMs: options.flushMs ?? 10_000,
    onError: (error) => report(error instanceof Error ? error : new Error(String(error))),
    async send(path, body) {
      const response = await doFetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-sdk-key": options.key }, body: JSON.stringify(body), keepalive: true });
      if (!response.ok) throw await failure(response, "sending events failed");
    },
  });

  const hidden = () => !options.pollWhenHidden && doc?.visibilityState === "hidden";
  const timer = pollMs > 0 ? setInterval(() => hidden() || void evaluate(), pollMs) : undefined;
  (timer as { unref?: () => void } | undefined)?.unref?.();
  // A tab shown again asks at once rather than waiting out the interval it skipped.
  const onVisible = () => doc?.visibilityState === "visible" && void evaluate();
  if (pollMs > 0 && !options.pollWhenHidden) doc?.addEventListener("visibilitychange", onVisible);
  void evaluate();

  return {
    ready() {
      if (flags) return Promise.resolve();
      if (closed) return Promise.reject(new Error("client is closed"));
      return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
    },
    isKilled(name, switchKey) {
      const sub = switchKey === undefined || !flags || !own(flags, `${name}/${switchKey}`) ? undefined : flags[`${name}/${switchKey}`];
      return (sub ?? flag(name, "killswitch"))?.value === true;
    },
    isEnabled: (name) => flag(name, "gate")?.value === true,
    getConfig<T>(name: string, fallback: T): T {
      const found = flag(name, "config");
      if (!found || (fallback !== null && fallback !== undefined && kind(found.value) !== kind(fallback))) return fallback;
      return found.value as T;
    },
    getVariant(experiment) {
      const found = flag(experiment, "experiment");
      if (!found) return { variant: null, value: undefined, reason: "not_found" };
      // OFREP answers SPLIT with the unit's variant; DEFAULT is a unit the experiment does not take (the control's value).
      return found.reason === "SPLIT" ? { variant: found.variant ?? null, value: found.value, reason: "assigned" } : { variant: null, value: found.value, reason: "not_assigned" };
    },
    flags: () => flags ?? {},
    setContext(next) {
      context = next;
      generation++;
      etag = null;
      const answered = new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }));
      void evaluate();
      // Before the first answers a failure rejects ready(); here it is reported and the old answers stay.
      return answered.catch(() => {});
    },
    track(name, properties, o = {}) {
      const unit = o.unitId ?? unitId();
      outbox.track(name, { ...(unit !== undefined ? { unitId: unit } : {}), ...(o.value !== undefined ? { value: o.value } : {}), ...(properties ? { properties } : {}) });
    },
    captureError: (error) => outbox.captureError(error, unitId() ? { unitId: unitId() } : {}),
    flush: () => outbox.flush(),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      doc?.removeEventListener("visibilitychange", onVisible);
      settle(new Error("client is closed"));
      await outbox.close();
    },
  };
}
