import { SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import type { EventRow, SeriesResult } from "../../lib/eventstore/types";
import { badRequest, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { emitEvent } from "../../lib/outbox";
import { checkSeriesWindow, parseTimestamp } from "../analytics/service";
import { PROPERTY_NAME } from "../events/service";
import { type Frame, MESSAGE_MAX, cleanText, culpritOf, fingerprintOf, normaliseType, parseStack } from "./fingerprint";
import { occurrenceFromEvent } from "./sentry";
import { type ErrorRow, addUnits, errorsByFingerprint, errorsOfProject, findErrors, insertErrors, setStatus, toTrackedError, updateOccurrences } from "./store";
import { ERROR_STATUSES, type ErrorStatus, MAX_ERRORS_PER_CALL, type SettableStatus, type TrackedError, errorEventName } from "./types";
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

/** Occurrences of one fingerprint in a batch. */
type Group = {
  fingerprint: string;
  count: number;
  firstTs: number;
  lastTs: number;
  /** The batch's latest occurrence: the sample shown. */
  sample: { type: string; message: string; culprit: string | null };
  units: Set<string>;
};

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
 * the error's series. One batch is one transaction under the project's
 * `errors:` lock, then one append; the call resolves when both are durable.
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

  async get(projectId: string, ref: string): Promise<TrackedError> {
    return toTrackedError(await this.find(this.ctx.store, projectId, ref));
  }

  /** People set unresolved, resolved or ignored; setting the current status again changes nothing and records nothing. */
  async setStatus(projectId: string, ref: string, status: SettableStatus, actor: Actor): Promise<TrackedError> {
    return this.ctx.store.write(async (tx) => {
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
  async ingest(projectId: string, items: SdkErrorItem[]): Promise<number> {
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
    await this.record(projectId, occurrences);
    return occurrences.length;
  }

  /**
   * Sentry events (envelope `event` items or a `store/` body). A timestamp
   * the SDK paths would refuse (unreadable, too old, too far ahead) becomes
   * the time of arrival: a Sentry SDK cannot correct it.
   */
  async ingestSentry(projectId: string, events: Record<string, unknown>[]): Promise<(string | null)[]> {
    if (events.length > MAX_ERRORS_PER_CALL) throw badRequest(`At most ${MAX_ERRORS_PER_CALL} events per envelope`, `envelope: ${events.length} events`);
    if (events.length === 0) return [];
    const now = this.ctx.services.analytics.now();
    const mapped = events.map(occurrenceFromEvent);
    await this.record(
      projectId,
      mapped.map((o) => {
        const ts = o.ts === null ? now : parseTimestamp(o.ts, now);
        return { type: o.type, message: o.message, frames: o.frames, custom: o.custom, ts: typeof ts === "number" ? ts : now, unitId: o.unitId, props: o.props };
      }),
    );
    return mapped.map((o) => o.eventId);
  }

  /** Groups, upserts the tracked errors (one transaction), then appends every occurrence to the event store. */
  async record(projectId: string, occurrences: Occurrence[]): Promise<void> {
    if (occurrences.length === 0) return;
    const groups = new Map<string, Group>();
    const rows: EventRow[] = [];
    for (const o of occurrences) {
      const fingerprint = fingerprintOf({ type: o.type, message: o.message, frames: o.frames, custom: o.custom });
      const sample = { type: normaliseType(o.type), message: sampleMessage(o.message), culprit: culpritOf(o.frames) };
      let g = groups.get(fingerprint);
      if (!g) groups.set(fingerprint, (g = { fingerprint, count: 0, firstTs: o.ts, lastTs: o.ts, sample, units: new Set() }));
      g.count++;
      if (o.ts < g.firstTs) g.firstTs = o.ts;
      if (o.ts >= g.lastTs) {
        g.lastTs = o.ts;
        g.sample = sample;
      }
      if (o.unitId !== null) g.units.add(o.unitId);
      rows.push({ projectId, name: errorEventName(fingerprint), ts: o.ts, unitId: o.unitId, value: null, props: o.props });
    }
    await this.ctx.store.write(async (tx) => {
      // Every read-then-write of the project's errors takes this lock first: concurrent batches add up exactly.
      await tx.lock(`errors:${projectId}`);
      const existing = await errorsByFingerprint(tx, projectId, [...groups.keys()]);
      const created: ErrorRow[] = [];
      const ids = new Map<string, string>();
      for (const g of groups.values()) {
        const known = existing.get(g.fingerprint);
        if (known) {
          ids.set(g.fingerprint, known.id);
          continue;
        }
        const id = newId("err");
        ids.set(g.fingerprint, id);
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
      // Queue items (the ops module): one per error new or regressed, filed in this transaction.
      const filing = (e: ErrorRow, kind: ErrorFiling["kind"]): ErrorFiling => ({ errorId: e.id, kind, type: e.type, message: e.message, culprit: e.culprit, fingerprint: e.fingerprint });
      await this.ctx.services.ops.fileForErrors(tx, projectId, created.map((e) => filing(e, "new")));
      const pairs: [string, string][] = [];
      for (const g of groups.values()) for (const unit of g.units) pairs.push([ids.get(g.fingerprint)!, unit]);
      const gained = await addUnits(tx, pairs);
      for (const g of groups.values()) {
        const known = existing.get(g.fingerprint);
        if (!known) continue;
        const regressed = known.status === "resolved";
        const at = nowIso();
        const newer = iso(g.lastTs) >= known.last_seen_at;
        await updateOccurrences(tx, {
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
        if (regressed) {
          const payload = { errorId: known.id, fingerprint: g.fingerprint, type: known.type, message: known.message, culprit: known.culprit, occurrences: g.count, resolvedAt: known.status_changed_at, resolvedBy: known.status_changed_by };
          await emitEvent(tx, { projectId, type: "error.regressed", payload });
          await this.ctx.services.ops.fileForErrors(tx, projectId, [filing(known, "regressed")]);
          await recordAudit(tx, {
            projectId,
            action: "error.regress",
            subjectId: known.id,
            subjectName: subjectName(known.type, known.message),
            actor: SYSTEM_ACTOR,
            detail: { fingerprint: g.fingerprint, occurrences: g.count, resolvedAt: known.status_changed_at, resolvedBy: known.status_changed_by },
          });
        }
      }
    });
    await this.append(rows);
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
