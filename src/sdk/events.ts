/**
 * What the SDK sends back: analytics events (`track`), errors
 * (`captureError`), and the attribute names of contexts it evaluated
 * locally (so the server's attribute list knows them, as it does for OFREP
 * contexts), and how often each flag was evaluated locally (counts per env and
 * name, so the server knows which flags are still used). Everything is queued and sent in batches of up to 1,000 every
 * few seconds; a failed send keeps the batch for the next attempt, up to a
 * bound, so a server outage costs memory only up to that bound.
 */

export type TrackOptions = {
  /** The unit it happened to (user, account): unique-unit metrics count these. */
  unitId?: string;
  /** A number sum metrics add up (amount, duration). */
  value?: number;
  /** Scalar properties (metric filters and sums). */
  properties?: Record<string, string | number | boolean | null>;
  /** When it happened; default now. */
  ts?: Date | number;
};

type QueuedEvent = { name: string; unitId?: string; value?: number; properties?: TrackOptions["properties"]; ts: number };
type QueuedError = { message: string; type?: string; stack?: string; ts: number; unitId?: string };

/** Larger batches are split: the server takes at most 1,000 items a call. */
const BATCH = 1000;
/** Items kept while the server cannot be reached; older ones are dropped first. */
const MAX_QUEUED = 10_000;
/** The most one name's count may say in one batch (the server refuses more). */
const MAX_COUNT = 10_000_000;
/** Context attribute names remembered between flushes (a bound against contexts with random keys). */
const MAX_CONTEXT_NAMES = 200;

export type Outbox = {
  track(name: string, options?: TrackOptions): void;
  captureError(error: unknown, options?: { unitId?: string }): void;
  /** Counts one local evaluation of a flag (a name the snapshot has: the set stays bounded). */
  countEvaluation(env: string, name: string): void;
  /** Notes the attribute names (and value kinds, never the values) of an evaluated context. */
  noteContext(context: Record<string, unknown>): void;
  /** Sends everything queued now; resolves when the server took it (or the attempt failed and it stays queued). */
  flush(): Promise<void>;
  close(): Promise<void>;
};

/** A value of the same kind with no content: the server infers an attribute's type from it; nothing personal leaves. */
function placeholderOf(value: unknown): string | number | boolean | undefined {
  if (typeof value === "number") return 0;
  if (typeof value === "boolean") return false;
  if (typeof value === "string") return "";
  return undefined;
}

export function createOutbox(options: {
  send: (path: string, body: unknown) => Promise<void>;
  flushIntervalMs: number;
  onError: (error: unknown) => void;
  /** The clock events and errors are stamped with (default Date.now). */
  now?: () => number;
}): Outbox {
  const now = options.now ?? Date.now;
  let events: QueuedEvent[] = [];
  let errors: QueuedError[] = [];
  let contextNames = new Map<string, string | number | boolean>();
  // Evaluations per env, per flag name, since the last send.
  let evaluations = new Map<string, Map<string, number>>();
  let inFlight: Promise<void> | null = null;
  let closed = false;

  const bound = <T>(list: T[]): T[] => (list.length > MAX_QUEUED ? list.slice(list.length - MAX_QUEUED) : list);

  const sendAll = async () => {
    const takenEvents = events;
    const takenErrors = errors;
    const contexts = contextNames.size > 0 ? [Object.fromEntries(contextNames)] : undefined;
    const takenEvaluations = evaluations;
    events = [];
    errors = [];
    contextNames = new Map();
    evaluations = new Map();
    try {
      // Contexts ride with the first batch (alone when there are no events).
      let first = true;
      while (takenEvents.length > 0 || (first && contexts)) {
        const slice = takenEvents.slice(0, BATCH);
        await options.send("/api/sdk/v1/events", first && contexts ? { events: slice, contexts } : { events: slice });
        takenEvents.splice(0, slice.length);
        first = false;
      }
      while (takenErrors.length > 0) {
        const slice = takenErrors.slice(0, BATCH);
        await options.send("/api/sdk/v1/errors", { errors: slice });
        takenErrors.splice(0, slice.length);
      }
      for (const [env, counts] of takenEvaluations) {
        const names = [...counts.keys()];
        for (let i = 0; i < names.length; i += BATCH) {
          const slice: Record<string, number> = {};
          for (const name of names.slice(i, i + BATCH)) slice[name] = Math.min(counts.get(name)!, MAX_COUNT);
          await options.send("/api/sdk/v1/evaluations", { env, counts: slice });
          for (const name of Object.keys(slice)) counts.delete(name);
        }
        takenEvaluations.delete(env);
      }
    } catch (error) {
      // Counts not sent are added to what was counted meanwhile.
      for (const [env, counts] of takenEvaluations) for (const [name, n] of counts) addEvaluations(env, name, n);
      // What was not taken goes back in front of what arrived meanwhile.
      events = bound([...takenEvents, ...events]);
      errors = bound([...takenErrors, ...errors]);
      options.onError(error);
    }
  };

  function addEvaluations(env: string, name: string, n: number): void {
    let counts = evaluations.get(env);
    if (!counts) evaluations.set(env, (counts = new Map()));
    counts.set(name, (counts.get(name) ?? 0) + n);
  }

  const flush = (): Promise<void> => {
    if (inFlight) return inFlight.then(flush);
    if (events.length === 0 && errors.length === 0 && contextNames.size === 0 && evaluations.size === 0) return Promise.resolve();
    inFlight = sendAll().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };

  const timer = setInterval(() => void flush(), options.flushIntervalMs);
  (timer as { unref?: () => void }).unref?.();

  return {
    track(name, o = {}) {
      if (closed) return;
      const ts = o.ts instanceof Date ? o.ts.getTime() : (o.ts ?? now());
      events.push({ name, ts, ...(o.unitId !== undefined ? { unitId: o.unitId } : {}), ...(o.value !== undefined ? { value: o.value } : {}), ...(o.properties ? { properties: o.properties } : {}) });
      events = bound(events);
      if (events.length >= BATCH) void flush();
    },
    captureError(error, o = {}) {
      if (closed) return;
      const e = error instanceof Error ? error : new Error(String(error));
      errors.push({ message: e.message || String(error), type: e.name, ...(e.stack ? { stack: e.stack } : {}), ts: now(), ...(o.unitId ? { unitId: o.unitId } : {}) });
      errors = bound(errors);
    },
    countEvaluation(env, name) {
      if (!closed) addEvaluations(env, name, 1);
    },
    noteContext(context) {
      for (const key in context) {
        if (key === "targetingKey" || key === "env" || contextNames.has(key)) continue;
        if (contextNames.size >= MAX_CONTEXT_NAMES) return;
        const placeholder = placeholderOf(context[key]);
        if (placeholder !== undefined) contextNames.set(key, placeholder);
      }
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      await flush();
    },
  };
}
