// One piece: error tracking's writes (status, SDK and Sentry ingestion) share the grouping, per-minute limits and cleaning in this file.
import { SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import type { EventRow, SeriesResult } from "../../lib/eventstore/types";
import { ApiError, badRequest, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { emitEvent } from "../../lib/outbox";
import { RateLimiter, type RateRule } from "../../lib/rate-limit";
import { type Tx, isBusyError, isPostgresUnavailable } from "../../lib/store";
import { checkSeriesWindow, parseTimestamp } from "../analytics/service";
import { PROPERTY_NAME } from "../events/service";
import { type Frame, MESSAGE_MAX, cleanText, culpritOf, fingerprintOf, normaliseType, parseStack } from "./fingerprint";
import { type ErrorBatch, keepOccurrences } from "./occurrences";
import { occurrenceFromEvent } from "./sentry";
import { type ErrorRow, type OccurrenceUpdate, addUnits, errorsByFingerprint, errorsOfProject, findErrors, insertErrors, occurrencesOf, setStatus, toOccurrence, toTrackedError, updateOccurrences } from "./store";
import {
  ERROR_ITEMS_PER_MINUTE,
  ERROR_STATUSES,
  type ErrorStatus,
  MAX_ERRORS_PER_CALL,
  NEW_ERRORS_PER_MINUTE,
  type SettableStatus,
  type TrackedError,
  type TrackedErrorDetail,
  errorEventName,
} from "./types";
import type { ErrorFiling } from "../ops/service";

type Props = Record<string, string | number | boolean>;

/** One occurrence, however it arrived (our SDK path or a Sentry SDK). */
export type Occurrence = {
  type: string | null;
  message: string;
  frames: Frame[];
  custom: string | string[] | null;
  /** Epoch ms. */
  ts: number;
  unitId: string | null;
  props: Props | null;
  /** A Sentry event's id. */
  eventId?: string | null;
};

/** One item of POST /api/sdk/v1/errors. */
export type SdkErrorItem = {
  message: string;
  type?: string;
  stack?: string;
  ts?: number | string;
  fingerprint?: string;
  unitId?: string;
  properties?: Record<string, string | number | boolean | null>;
};

type Actor = { email: string; type: string };

/** Why part of a call was held back (`limited` in the answer; the reasons are /metrics labels too). */
export type LimitReason = "new_errors_per_minute" | "error_items_per_minute" | "browser_new_errors_per_hour";

export type Limited = { reason: LimitReason; limit: number; count: number; retryAfter: number; detail: string };

/** What one call's occurrences became: stored, dropped, and what the limits held back (empty: nothing). */
export type IngestOutcome = { accepted: number; dropped: number; limited: Limited[] };

/** Occurrences of one fingerprint in a batch. */
type Group = {
  fingerprint: string;
  count: number;
  firstTs: number;
  lastTs: number;
  /** The batch's latest occurrence: the sample shown. */
  sample: { type: string; message: string; culprit: string | null };
  units: Set<string>;
  /** In the order received: the last ones and a sample are kept with their frames. */
  occurrences: Occurrence[];
};

/** One call, grouped, waiting for its project's turn. */
type Prepared = { groups: Map<string, Group>; rows: EventRow[]; fingerprints: string[]; fromBrowser: boolean };

/** A group of several calls written in one transaction, and the call that brought it first (to whom a held-back item is told). */
type MergedGroup = Group & { owner: number; /** Only browser-key calls brought it (held to the browser allowance when new). */ browserOnly: boolean };

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A project's calls waiting for their turn; at most one of its transactions is queued or running at a time. */
type Lane = { jobs: { prepared: Prepared; size: number; done: (r: Settled<IngestOutcome>) => void }[] };

const NEW_ERRORS_RULE: RateRule = { limit: NEW_ERRORS_PER_MINUTE, windowMs: 60_000 };
const ERROR_ITEMS_RULE: RateRule = { limit: ERROR_ITEMS_PER_MINUTE, windowMs: 60_000 };

/** The store cannot take writes now: retrying each call of a failed batch alone would only wait longer. */
const isUnavailable = (err: unknown) => (err instanceof ApiError && err.code === "UNAVAILABLE") || isBusyError(err) || isPostgresUnavailable(err);

const PREFIX_MIN = 6;
// biome-ignore lint: control characters are what it matches.
const CONTROL = /[\u0000-\u001f\u007f]/;

const iso = (ms: number) => new Date(ms).toISOString();
const sampleMessage = (message: string) => cleanText(message, MESSAGE_MAX) || "(no message)";
const subjectName = (type: string, message: string) => cleanText(`${type}: ${message}`, 200);

/**
 * Tracked errors: occurrences grouped by fingerprint into one row per error
 * and project (count, distinct units, first and last seen, status), each
 * occurrence also appended to the event store as `$error:<fingerprint>` for
 * the error's series. A project's calls are written one transaction at a
 * time under its `errors:` lock (calls that queued meanwhile share one),
 * then appended; a call resolves when both are durable. Per project and
 * minute, at most NEW_ERRORS_PER_MINUTE new errors are tracked (later new
 * fingerprints' occurrences are dropped) and ERROR_ITEMS_PER_MINUTE queue
 * items opened; the answer says what was held back.
 */
export class ErrorsService {
  constructor(private readonly ctx: ServiceContext) {}

  async list(projectId: string, options: { status?: string; q?: string } = {}): Promise<TrackedError[]> {
    const status = options.status;
    if (status !== undefined && !(ERROR_STATUSES as readonly string[]).includes(status)) {
      throw validation("Unknown status", `status: one of ${ERROR_STATUSES.join(", ")}`);
    }
    const rows = await errorsOfProject(this.ctx.store, projectId, status as ErrorStatus | undefined);
    return filterByQuery(rows.map(toTrackedError), options.q, (e) => [e.type, e.message]);
  }

  /** The error with its kept occurrences (the last ones received, then the sample), newest first. */
  async get(projectId: string, ref: string): Promise<TrackedErrorDetail> {
    return this.withOccurrences(toTrackedError(await this.find(this.ctx.store, projectId, ref)));
  }

  private async withOccurrences(error: TrackedError): Promise<TrackedErrorDetail> {
    return { ...error, occurrences: (await occurrencesOf(this.ctx.store, error.id)).map(toOccurrence) };
  }

  /** People set unresolved, resolved or ignored; setting the current status again changes nothing and records nothing. */
  async setStatus(projectId: string, ref: string, status: SettableStatus, actor: Actor): Promise<TrackedErrorDetail> {
    // Answered as GET shows it: with its occurrences (read once committed).
    const error = await this.ctx.store.write(async (tx) => {
      await tx.lock(`errors:${projectId}`);
      const row = await this.find(tx, projectId, ref);
      if (row.status === status) return toTrackedError(row);
      const at = nowIso();
      await setStatus(tx, row.id, status, at, actor.email);
      await recordAudit(tx, {
        projectId,
        action: "error.status",
        subjectId: row.id,
        subjectName: subjectName(row.type, row.message),
        actor,
        detail: { from: row.status, to: status, fingerprint: row.fingerprint },
      });
      return toTrackedError({ ...row, status, status_changed_at: at, status_changed_by: actor.email });
    });
    return this.withOccurrences(error);
  }

  /** Occurrences per bucket, read by the error's fingerprint from the event store. */
  async series(projectId: string, ref: string, window: { from: number; to: number; bucket: number }): Promise<SeriesResult> {
    checkSeriesWindow(window);
    const error = await this.get(projectId, ref);
    return this.ctx.services.analytics.series({
      projectId,
      ...window,
      measure: { kind: "count", event: errorEventName(error.fingerprint), filters: [] },
    });
  }

  /** POST /api/sdk/v1/errors: checked whole (one bad item refuses the batch, naming it), then recorded. */
  async ingest(projectId: string, items: SdkErrorItem[], fromBrowser = false): Promise<IngestOutcome> {
    if (items.length === 0 || items.length > MAX_ERRORS_PER_CALL) {
      throw validation(`Send 1 to ${MAX_ERRORS_PER_CALL} errors per call`, `errors: ${items.length} items; 1 to ${MAX_ERRORS_PER_CALL}`);
    }
    const now = this.ctx.services.analytics.now();
    const occurrences = items.map((item, i): Occurrence => {
      const ts = parseTimestamp(item.ts, now);
      if (typeof ts === "string") throw validation("Invalid error time", `errors[${i}].ts: ${ts}`);
      if (item.unitId !== undefined && CONTROL.test(item.unitId)) throw validation("Invalid unit id", `errors[${i}].unitId: control characters are not allowed`);
      return {
        type: item.type ?? null,
        message: item.message,
        frames: item.stack ? parseStack(item.stack) : [],
        custom: item.fingerprint ?? null,
        ts,
        unitId: item.unitId ?? null,
        props: checkedProps(item.properties, `errors[${i}].properties`),
      };
    });
    return this.record(projectId, occurrences, fromBrowser);
  }

  /**
   * Sentry events (envelope `event` items or a `store/` body). A timestamp
   * the SDK paths would refuse (unreadable, too old, too far ahead) becomes
   * the time of arrival: a Sentry SDK cannot correct it.
   */
  async ingestSentry(projectId: string, events: Record<string, unknown>[], fromBrowser = false): Promise<{ ids: (string | null)[]; outcome: IngestOutcome }> {
    if (events.length > MAX_ERRORS_PER_CALL) throw badRequest(`At most ${MAX_ERRORS_PER_CALL} events per envelope`, `envelope: ${events.length} events`);
    if (events.length === 0) return { ids: [], outcome: { accepted: 0, dropped: 0, limited: [] } };
    const now = this.ctx.services.analytics.now();
    const mapped = events.map(occurrenceFromEvent);
    const outcome = await this.record(
      projectId,
      mapped.map((o) => {
        const ts = o.ts === null ? now : parseTimestamp(o.ts, now);
        return { type: o.type, message: o.message, frames: o.frames, custom: o.custom, ts: typeof ts === "number" ? ts : now, unitId: o.unitId, props: o.props, eventId: o.eventId };
      }),
      fromBrowser,
    );
    return { ids: mapped.map((o) => o.eventId), outcome };
  }

  /** Occurrences and queue items the per-project limits held back since start, by reason (/metrics). */
  readonly heldBack = { droppedNewErrors: 0, skippedItems: 0, droppedBrowserNewErrors: 0 };

  /** The per-project allowances of new errors and error items (per server process: a write per report would cost more than the limit saves). */
  private readonly allowances = new RateLimiter();

  private readonly lanes = new Map<string, Lane>();

  /**
   * Groups the occurrences, then waits for the project's turn: each project's
   * calls are written one transaction at a time, a transaction taking the
   * calls that queued meanwhile up to one full call's occurrences. A project
   * sending many calls at once so holds at most one place in the store's
   * write queue, and another project's write waits for at most one such
   * transaction, however large the flood. Resolves once the call's tracked
   * errors are committed and its occurrences are in the event store.
   */
  async record(projectId: string, occurrences: Occurrence[], fromBrowser = false): Promise<IngestOutcome> {
    if (occurrences.length === 0) return { accepted: 0, dropped: 0, limited: [] };
    const groups = new Map<string, Group>();
    const rows: EventRow[] = [];
    const fingerprints: string[] = [];
    for (const o of occurrences) {
      const fingerprint = fingerprintOf({ type: o.type, message: o.message, frames: o.frames, custom: o.custom });
      const sample = { type: normaliseType(o.type), message: sampleMessage(o.message), culprit: culpritOf(o.frames) };
      let g = groups.get(fingerprint);
      if (!g) groups.set(fingerprint, (g = { fingerprint, count: 0, firstTs: o.ts, lastTs: o.ts, sample, units: new Set(), occurrences: [] }));
      g.count++;
      g.occurrences.push(o);
      if (o.ts < g.firstTs) g.firstTs = o.ts;
      if (o.ts >= g.lastTs) {
        g.lastTs = o.ts;
        g.sample = sample;
      }
      if (o.unitId !== null) g.units.add(o.unitId);
      rows.push({ projectId, name: errorEventName(fingerprint), ts: o.ts, unitId: o.unitId, value: null, props: o.props });
      fingerprints.push(fingerprint);
    }
    const settled = await new Promise<Settled<IngestOutcome>>((done) => {
      let lane = this.lanes.get(projectId);
      const idle = !lane;
      if (!lane) this.lanes.set(projectId, (lane = { jobs: [] }));
      lane.jobs.push({ prepared: { groups, rows, fingerprints, fromBrowser }, size: occurrences.length, done });
      if (idle) void this.drain(projectId, lane);
    });
    if (!settled.ok) throw settled.error;
    return settled.value;
  }

  /** Writes a project's queued calls, one transaction at a time, until none is left. */
  private async drain(projectId: string, lane: Lane): Promise<void> {
    while (lane.jobs.length > 0) {
      let size = lane.jobs[0]!.size;
      let n = 1;
      while (n < lane.jobs.length && size + lane.jobs[n]!.size <= MAX_ERRORS_PER_CALL) size += lane.jobs[n++]!.size;
      const batch = lane.jobs.splice(0, n);
      let results: Settled<IngestOutcome>[];
      try {
        results = await this.write(projectId, batch.map((j) => j.prepared));
      } catch (err) {
        if (batch.length === 1 || isUnavailable(err)) results = batch.map(() => ({ ok: false, error: err }));
        else {
          // One call's content failed the shared transaction: each alone, so that it fails by itself.
          results = [];
          for (const j of batch) results.push(await this.write(projectId, [j.prepared]).then((r) => r[0]!, (error: unknown) => ({ ok: false as const, error })));
        }
      }
      batch.forEach((j, i) => j.done(results[i]!));
    }
    this.lanes.delete(projectId);
  }

  /**
   * One transaction for calls of one project: their groups merged, the
   * tracked errors upserted within the per-minute allowances, then each
   * call's kept occurrences appended to the event store. Throws when the
   * transaction fails; a failed append fails only its call.
   */
  private async write(projectId: string, calls: Prepared[]): Promise<Settled<IngestOutcome>[]> {
    const merged = new Map<string, MergedGroup>();
    calls.forEach((call, owner) => {
      for (const g of call.groups.values()) {
        const m = merged.get(g.fingerprint);
        if (!m) {
          // Copies: a call retried alone after a shared transaction failed still has only its own.
          merged.set(g.fingerprint, { ...g, units: new Set(g.units), occurrences: [...g.occurrences], owner, browserOnly: call.fromBrowser });
          continue;
        }
        if (!call.fromBrowser) m.browserOnly = false;
        m.count += g.count;
        m.occurrences.push(...g.occurrences);
        if (g.firstTs < m.firstTs) m.firstTs = g.firstTs;
        if (g.lastTs >= m.lastTs) {
          m.lastTs = g.lastTs;
          m.sample = g.sample;
        }
        for (const u of g.units) m.units.add(u);
      }
    });
    // Only this lane counts these keys, one transaction at a time: what is left now is what the transaction may use.
    const newErrors = this.allowances.remaining(`new:${projectId}`, NEW_ERRORS_RULE);
    const items = this.allowances.remaining(`items:${projectId}`, ERROR_ITEMS_RULE);
    const browserRule: RateRule = { limit: this.ctx.services.keys.browserLimits.newErrorsPerHour, windowMs: 3_600_000 };
    const browserNew = this.allowances.remaining(`browser-new:${projectId}`, browserRule);
    const done = await this.ctx.store.write((tx) => this.upsert(tx, projectId, merged, newErrors.remaining, items.remaining, browserNew.remaining));
    this.allowances.add(`new:${projectId}`, NEW_ERRORS_RULE, done.created);
    this.allowances.add(`items:${projectId}`, ERROR_ITEMS_RULE, done.opened);
    this.allowances.add(`browser-new:${projectId}`, browserRule, done.createdByBrowser);
    return Promise.all(
      calls.map(async (call, owner): Promise<Settled<IngestOutcome>> => {
        const kept: EventRow[] = [];
        let droppedBrowser = 0;
        call.rows.forEach((row, i) => {
          const fingerprint = call.fingerprints[i]!;
          if (done.refusedBrowser.has(fingerprint)) droppedBrowser++;
          else if (!done.refused.has(fingerprint)) kept.push(row);
        });
        const dropped = call.rows.length - kept.length - droppedBrowser;
        const skipped = done.skippedBy.get(owner) ?? 0;
        this.heldBack.droppedNewErrors += dropped;
        this.heldBack.droppedBrowserNewErrors += droppedBrowser;
        this.heldBack.skippedItems += skipped;
        const limited: Limited[] = [];
        if (droppedBrowser > 0) {
          limited.push({
            reason: "browser_new_errors_per_hour",
            limit: browserRule.limit,
            count: droppedBrowser,
            retryAfter: browserNew.retryAfter,
            detail: `${droppedBrowser} occurrence(s) of errors new to the project were dropped: browser keys may start it tracking ${browserRule.limit} new errors an hour. Errors already tracked keep counting.`,
          });
        }
        if (dropped > 0) {
          limited.push({
            reason: "new_errors_per_minute",
            limit: NEW_ERRORS_PER_MINUTE,
            count: dropped,
            retryAfter: newErrors.retryAfter,
            detail: `${dropped} occurrence(s) of errors new to the project were dropped: it may start tracking ${NEW_ERRORS_PER_MINUTE} new errors a minute. Errors already tracked keep counting.`,
          });
        }
        if (skipped > 0) {
          limited.push({
            reason: "error_items_per_minute",
            limit: ERROR_ITEMS_PER_MINUTE,
            count: skipped,
            retryAfter: items.retryAfter,
            detail: `${skipped} new or regressed error(s) are tracked without a queue item: svc opens at most ${ERROR_ITEMS_PER_MINUTE} error items a minute per project.`,
          });
        }
        try {
          await this.append(kept);
        } catch (error) {
          return { ok: false, error };
        }
        return { ok: true, value: { accepted: kept.length, dropped: dropped + droppedBrowser, limited } };
      }),
    );
  }

  /**
   * The tracked errors of merged groups, under the project's `errors:` lock:
   * known ones counted (that is all an occurrence of a known error costs),
   * new ones inserted while `mayCreate` lasts (the rest refused: their
   * occurrences are dropped), queue items filed or reopened while `mayOpen`
   * lasts.
   */
  private async upsert(
    tx: Tx,
    projectId: string,
    groups: Map<string, MergedGroup>,
    mayCreate: number,
    mayOpen: number,
    mayCreateFromBrowser: number,
  ): Promise<{ created: number; createdByBrowser: number; opened: number; refused: Set<string>; refusedBrowser: Set<string>; skippedBy: Map<number, number> }> {
    // Every read-then-write of the project's errors takes this lock first: concurrent batches add up exactly.
    await tx.lock(`errors:${projectId}`);
    const existing = await errorsByFingerprint(tx, projectId, [...groups.keys()]);
    const created: ErrorRow[] = [];
    const refused = new Set<string>();
    const refusedBrowser = new Set<string>();
    let createdByBrowser = 0;
    const ids = new Map<string, string>();
    const ownerOf = new Map<string, number>();
    for (const g of groups.values()) {
      const known = existing.get(g.fingerprint);
      if (known) {
        ids.set(g.fingerprint, known.id);
        ownerOf.set(known.id, g.owner);
        continue;
      }
      if (created.length >= mayCreate) {
        refused.add(g.fingerprint);
        continue;
      }
      // Brought by browser keys only (apps anyone can run): held to their own, smaller allowance.
      if (g.browserOnly) {
        if (createdByBrowser >= mayCreateFromBrowser) {
          refusedBrowser.add(g.fingerprint);
          continue;
        }
        createdByBrowser++;
      }
      const id = newId("err");
      ids.set(g.fingerprint, id);
      ownerOf.set(id, g.owner);
      created.push({
        id,
        project_id: projectId,
        fingerprint: g.fingerprint,
        type: g.sample.type,
        message: g.sample.message,
        culprit: g.sample.culprit,
        first_seen_at: iso(g.firstTs),
        last_seen_at: iso(g.lastTs),
        count: g.count,
        // A new error has no units yet: every distinct unit of the batch is new to it.
        affected_units: g.units.size,
        status: "unresolved",
        status_changed_at: null,
        status_changed_by: null,
      });
    }
    await insertErrors(tx, created);
    // What connectors hear (the outbox, in this transaction); payloads documented in connectors/events.ts.
    for (const e of created) {
      const payload = { errorId: e.id, fingerprint: e.fingerprint, type: e.type, message: e.message, culprit: e.culprit, firstSeenAt: e.first_seen_at, lastSeenAt: e.last_seen_at, count: e.count, affectedUnits: e.affected_units };
      await emitEvent(tx, { projectId, type: "error.new", payload });
    }
    // Queue items (the ops module): one per error new or regressed, filed in this transaction, while the allowance lasts.
    let opened = 0;
    const skippedBy = new Map<number, number>();
    const file = async (filings: ErrorFiling[]) => {
      const r = await this.ctx.services.ops.fileForErrors(tx, projectId, filings, mayOpen - opened);
      opened += r.opened;
      for (const f of r.skipped) {
        const owner = ownerOf.get(f.errorId)!;
        skippedBy.set(owner, (skippedBy.get(owner) ?? 0) + 1);
      }
    };
    const filing = (e: ErrorRow, kind: ErrorFiling["kind"]): ErrorFiling => ({ errorId: e.id, kind, type: e.type, message: e.message, culprit: e.culprit, fingerprint: e.fingerprint });
    await file(created.map((e) => filing(e, "new")));
    const pairs: [string, string][] = [];
    for (const g of groups.values()) {
      const id = ids.get(g.fingerprint);
      if (id !== undefined) for (const unit of g.units) pairs.push([id, unit]);
    }
    const gained = await addUnits(tx, pairs);
    const updates: OccurrenceUpdate[] = [];
    const regressions: [MergedGroup, ErrorRow][] = [];
    for (const g of groups.values()) {
      const known = existing.get(g.fingerprint);
      if (!known) continue;
      const regressed = known.status === "resolved";
      const at = nowIso();
      const newer = iso(g.lastTs) >= known.last_seen_at;
      updates.push({
        id: known.id,
        type: newer ? g.sample.type : known.type,
        message: newer ? g.sample.message : known.message,
        culprit: newer ? g.sample.culprit : known.culprit,
        firstSeenAt: iso(g.firstTs) < known.first_seen_at ? iso(g.firstTs) : known.first_seen_at,
        lastSeenAt: newer ? iso(g.lastTs) : known.last_seen_at,
        count: g.count,
        units: gained.get(known.id) ?? 0,
        // A resolved error that happens again has regressed; ignored stays ignored.
        status: regressed ? "regressed" : known.status,
        statusChangedAt: regressed ? at : known.status_changed_at,
        statusChangedBy: regressed ? SYSTEM_ACTOR.email : known.status_changed_by,
      });
      if (regressed) regressions.push([g, known]);
    }
    await updateOccurrences(tx, updates);
    // The occurrences kept with their frames: numbered after the counts read under the lock, pruned here.
    const kept: ErrorBatch[] = [];
    for (const g of groups.values()) {
      const id = ids.get(g.fingerprint);
      const known = existing.get(g.fingerprint);
      if (id !== undefined) kept.push({ errorId: id, before: known ? Number(known.count) : 0, occurrences: g.occurrences });
    }
    await keepOccurrences(tx, kept);
    for (const [g, known] of regressions) {
      const payload = { errorId: known.id, fingerprint: g.fingerprint, type: known.type, message: known.message, culprit: known.culprit, occurrences: g.count, resolvedAt: known.status_changed_at, resolvedBy: known.status_changed_by };
      await emitEvent(tx, { projectId, type: "error.regressed", payload });
      await file([filing(known, "regressed")]);
      await recordAudit(tx, {
        projectId,
        action: "error.regress",
        subjectId: known.id,
        subjectName: subjectName(known.type, known.message),
        actor: SYSTEM_ACTOR,
        detail: { fingerprint: g.fingerprint, occurrences: g.count, resolvedAt: known.status_changed_at, resolvedBy: known.status_changed_by },
      });
    }
    return { created: created.length, createdByBrowser, opened, refused, refusedBrowser, skippedBy };
  }

  /** The one place occurrences reach the event store (durable when it resolves). */
  private append(rows: EventRow[]): Promise<void> {
    return this.ctx.services.analytics.append(rows);
  }

  /** By id, fingerprint, or a prefix of the id (at least 6 characters) that only one error has. */
  private async find(q: Parameters<typeof findErrors>[0], projectId: string, ref: string): Promise<ErrorRow> {
    const rows = await findErrors(q, projectId, ref);
    if (rows.length === 1 && (rows[0]!.id === ref || rows[0]!.fingerprint === ref || ref.length >= PREFIX_MIN)) return rows[0]!;
    if (rows.length > 1 && ref.length >= PREFIX_MIN) throw notFound(`More than one error id starts with ${ref}`, "id: give more of the id, or the fingerprint");
    throw notFound(`Error ${ref} not found`);
  }
}

/** Scalar properties, names checked (VALIDATION naming the property), nulls dropped, NUL characters and lone surrogates removed (jsonb takes neither). */
function checkedProps(properties: SdkErrorItem["properties"], field: string): Props | null {
  if (!properties) return null;
  let props: Props | null = null;
  for (const key in properties) {
    const v = properties[key];
    if (!PROPERTY_NAME.test(key)) throw validation("Invalid property name", `${field}: ${JSON.stringify(key.slice(0, 130))} is not 1 to 128 letters, digits, _ . : $ or -`);
    if (v === null || v === undefined) continue;
    if (typeof v === "number" && !Number.isFinite(v)) throw validation("Invalid property value", `${field}.${key}: a finite number`);
    (props ??= {})[key] = typeof v === "string" ? v.replaceAll("\u0000", "").toWellFormed() : v;
  }
  return props;
}
