import { recordAudit } from "../../lib/audit";
import { alreadyExists, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { RESYNC } from "../../lib/store";
import { checkLimit, checkOptionalText } from "../../lib/validate";
import type { RecentCursor } from "../../lib/eventstore/types";
import {
  type CatalogRow,
  catalogEventByName,
  catalogOfProject,
  countCatalogEvents,
  countPendingSince,
  deleteCatalogEvent,
  findCatalogEvent,
  insertCatalogEvent,
  markCatalogSeen,
  updateCatalogEvent,
} from "./store";

export const PROPERTY_TYPES = ["string", "number", "boolean"] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];
export type EventProperty = { name: string; type: PropertyType; required: boolean; description: string };

export type CatalogEvent = {
  id: string;
  name: string;
  folder: string;
  description: string;
  properties: EventProperty[];
  pending: 0 | 1;
  createdAt: string;
  updatedAt: string;
  lastSeenAt: string | null;
};

export type CatalogEventInput = { name: string; folder?: string; description?: string; properties?: EventPropertyInput[] };
export type EventPropertyInput = { name: string; type: PropertyType; required?: boolean; description?: string };
export type CatalogEventPatch = { folder?: string; description?: string; properties?: EventPropertyInput[] };
type Actor = { email: string; type: string };

/** How many events of each name arrived (see EventsService.counts). */
export type EventCounts = { since: { last24h: string; last7d: string }; counts: { name: string; last24h: number; last7d: number }[] };
/** One stored event as the raw-events view shows it; every text in it is what an SDK client sent. */
export type StoredEvent = { at: string; ts: number; unitId: string | null; value: number | null; properties: Record<string, string | number | boolean> | null };
export type RecentEvents = { name: string; events: StoredEvent[]; next: string | null };
export const RECENT_DEFAULT_LIMIT = 25;
export const RECENT_MAX_LIMIT = 100;
const HOUR_S = 3600;

/** A page position as the API hands it out: opaque base64url of `ts:tie` (the engine's tie-break: a rowid, or a ctid). */
function cursorText(c: RecentCursor): string {
  return Buffer.from(`${c.ts}:${c.tie}`).toString("base64url");
}

function cursorOf(text: string, engine: string): RecentCursor {
  const refused = () => validation("before is not a position this server gave", "before: pass the `next` of the previous page as it came");
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(text)) throw refused();
  const m = /^(\d{1,16}):(\d{1,16}|\(\d{1,10},\d{1,5}\))$/.exec(Buffer.from(text, "base64url").toString());
  if (!m) throw refused();
  // A rowid for SQLite, a ctid for PostgreSQL: the other's is refused, never handed to SQL.
  if ((engine === "sqlite") !== /^\d+$/.test(m[2]!)) throw refused();
  return { ts: Number(m[1]), tie: m[2]! };
}

/** Event names clients send; names starting with `$` are svc's own (error occurrences). */
export const EVENT_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
/** Property (and attribute) names: no quote, no space, so a JSON path built from one is always plain. */
export const PROPERTY_NAME = /^[A-Za-z0-9_.:$-]{1,128}$/;
/** A client sending random names cannot grow the catalog without bound. */
const MAX_EVENTS_PER_PROJECT = 1000;
const MAX_PROPERTIES_PER_EVENT = 200;
const CHANNEL = "event-catalog";
const DAY_MS = 86_400_000;
/** Once browser keys used up a project's allowance of new names, their unknown names are left out without a query for this long. */
const BROWSER_FULL_RECHECK_MS = 60_000;

function toEvent(r: CatalogRow): CatalogEvent {
  return {
    id: r.id,
    name: r.name,
    folder: r.folder,
    description: r.description,
    properties: JSON.parse(r.properties) as EventProperty[],
    pending: Number(r.pending) === 1 ? 1 : 0,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    lastSeenAt: r.last_seen_at,
  };
}

function checkProperties(list: EventPropertyInput[] | undefined): EventProperty[] | undefined {
  if (list === undefined) return undefined;
  if (list.length > MAX_PROPERTIES_PER_EVENT) throw validation(`An event has at most ${MAX_PROPERTIES_PER_EVENT} properties`, `properties: ${list.length} items`);
  const seen = new Set<string>();
  return list.map((p, i) => {
    if (!PROPERTY_NAME.test(p.name)) throw validation("Invalid property name", `properties[${i}].name: 1 to 128 letters, digits, _ . : $ or -`);
    if (seen.has(p.name)) throw validation("Property names must be unique", `properties[${i}].name: ${p.name} is listed twice`);
    seen.add(p.name);
    checkOptionalText(`properties[${i}].description`, p.description, 1000);
    return { name: p.name, type: p.type, required: p.required ?? false, description: p.description ?? "" };
  });
}

export function typeOfValue(value: unknown): PropertyType {
  return typeof value === "number" ? "number" : typeof value === "boolean" ? "boolean" : "string";
}

/**
 * The event catalog. People register events (name, folder, description,
 * properties); ingest registers unknown names as `pending` rows and adds
 * property names it has not seen, before it acknowledges, so that nothing
 * acknowledged is missing from the catalog. What is known is cached per
 * project, so a batch of known events costs no query; any catalog write
 * (on any server) drops that project's cache.
 */
export class EventsService {
  /** projectId → event name → property names known. */
  private known = new Map<string, Map<string, Set<string>>>();
  /** projectId → until when browser keys' allowance of new names is known to be used up (see noteSeen). */
  private readonly browserNamesFullUntil = new Map<string, number>();
  /** Per project, moves with each catalog announcement of it (`resyncs` with a resync): a load that read before one is not kept (see knownOf). */
  private readonly generations = new Map<string, number>();
  private resyncs = 0;
  /** projectId → event name → last seen (ms), written by the next flush. */
  private seenAt = new Map<string, Map<string, number>>();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly ctx: ServiceContext) {
    ctx.store.listen(CHANNEL, (projectId) => {
      if (projectId === RESYNC) {
        this.resyncs++;
        this.known.clear();
      } else {
        this.generations.set(projectId, (this.generations.get(projectId) ?? 0) + 1);
        this.known.delete(projectId);
      }
    });
    this.timer = setInterval(() => void this.flushSeen(), ctx.options.attributesFlushMs ?? 10_000);
    this.timer.unref?.();
  }

  async list(projectId: string, q?: string): Promise<CatalogEvent[]> {
    return filterByQuery((await catalogOfProject(this.ctx.store, projectId)).map(toEvent), q, (e) => [e.name, e.folder, e.description]);
  }

  async get(projectId: string, ref: string): Promise<CatalogEvent> {
    const row = await findCatalogEvent(this.ctx.store, projectId, ref);
    if (!row) throw notFound(`Event ${ref} not found`, "id: an event id, a unique id prefix, or the event's name");
    return toEvent(row);
  }

  async findByName(projectId: string, name: string): Promise<CatalogEvent | undefined> {
    const row = await catalogEventByName(this.ctx.store, projectId, name);
    return row ? toEvent(row) : undefined;
  }

  /** Registers an event; a pending row of that name is approved instead (`approved: true`), with the fields sent. */
  async create(projectId: string, input: CatalogEventInput, actor: Actor): Promise<{ event: CatalogEvent; approved: boolean }> {
    if (!EVENT_NAME.test(input.name)) throw validation("Invalid event name", "name: 1 to 128 letters, digits, _ . : or - (not starting with $)");
    checkOptionalText("folder", input.folder, 100);
    checkOptionalText("description", input.description, 1000);
    const properties = checkProperties(input.properties);
    try {
      return await this.ctx.store.write(async (tx) => {
        await tx.lock(`event-catalog:${projectId}`);
        const existing = await catalogEventByName(tx, projectId, input.name);
        if (existing && Number(existing.pending) === 0) throw alreadyExists(`An event named ${input.name} is already registered`, "name: update it instead (PATCH)");
        const now = nowIso();
        if (existing) {
          const next: CatalogRow = {
            ...existing,
            folder: input.folder ?? existing.folder,
            description: input.description ?? existing.description,
            properties: properties ? JSON.stringify(properties) : existing.properties,
            pending: 0,
            updated_at: now,
          };
          await updateCatalogEvent(tx, next);
          await recordAudit(tx, { projectId, action: "event.approve", subjectId: next.id, subjectName: next.name, actor });
          tx.announce(CHANNEL, projectId);
          return { event: toEvent(next), approved: true };
        }
        if ((await countCatalogEvents(tx, projectId)) >= MAX_EVENTS_PER_PROJECT) {
          throw validation(`A project holds at most ${MAX_EVENTS_PER_PROJECT} events`, "name: delete unused events first");
        }
        const row: CatalogRow = {
          id: newId("evt"),
          name: input.name,
          folder: input.folder ?? "",
          description: input.description ?? "",
          properties: JSON.stringify(properties ?? []),
          pending: 0,
          created_at: now,
          updated_at: now,
          last_seen_at: null,
        };
        await insertCatalogEvent(tx, projectId, row);
        await recordAudit(tx, { projectId, action: "event.create", subjectId: row.id, subjectName: row.name, actor });
        tx.announce(CHANNEL, projectId);
        return { event: toEvent(row), approved: false };
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw alreadyExists(`An event named ${input.name} is already registered`, "name: update it instead (PATCH)");
      throw err;
    }
  }

  async update(projectId: string, ref: string, patch: CatalogEventPatch, actor: Actor): Promise<CatalogEvent> {
    checkOptionalText("folder", patch.folder, 100);
    checkOptionalText("description", patch.description, 1000);
    const properties = checkProperties(patch.properties);
    return this.ctx.store.write(async (tx) => {
      await tx.lock(`event-catalog:${projectId}`);
      const current = await findCatalogEvent(tx, projectId, ref);
      if (!current) throw notFound(`Event ${ref} not found`);
      const next: CatalogRow = {
        ...current,
        folder: patch.folder ?? current.folder,
        description: patch.description ?? current.description,
        properties: properties ? JSON.stringify(properties) : current.properties,
        updated_at: nowIso(),
      };
      await updateCatalogEvent(tx, next);
      await recordAudit(tx, { projectId, action: "event.update", subjectId: next.id, subjectName: next.name, actor, detail: { fields: Object.keys(patch) } });
      tx.announce(CHANNEL, projectId);
      return toEvent(next);
    });
  }

  /** Removes the catalog row (stored events stay; metrics naming it stop compiling until re-saved). */
  async remove(projectId: string, ref: string, actor: Actor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      await tx.lock(`event-catalog:${projectId}`);
      const current = await findCatalogEvent(tx, projectId, ref);
      if (!current) throw notFound(`Event ${ref} not found`);
      await deleteCatalogEvent(tx, current.id);
      await recordAudit(tx, { projectId, action: "event.delete", subjectId: current.id, subjectName: current.name, actor });
      tx.announce(CHANNEL, projectId);
    });
  }

  /**
   * Events per name in the trailing 24 hours and 7 days, in whole UTC hours
   * (the current one included), from the hourly roll-ups on the event
   * store's workers: never a scan of raw events, never on the request loop.
   * svc's own names (`$exposure:…`, `$error`) are left out.
   */
  async counts(projectId: string): Promise<EventCounts> {
    const { analytics } = this.ctx.services;
    const hour = Math.floor(analytics.now() / 3_600_000) * HOUR_S;
    const daySince = hour - 23 * HOUR_S;
    const weekSince = hour - (7 * 24 - 1) * HOUR_S;
    const found = await analytics.countsByName({ projectId, daySince, weekSince });
    return {
      since: { last24h: new Date(daySince * 1000).toISOString(), last7d: new Date(weekSince * 1000).toISOString() },
      counts: found
        .filter((r) => !r.name.startsWith("$"))
        .map((r) => ({ name: r.name, last24h: r.day, last7d: r.week }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    };
  }

  /**
   * A page of the newest raw events of one catalog event, newest first, with
   * their properties as sent: `limit` 1 to 100 (default 25); `before` the
   * previous page's `next`. Read on the event store's workers. Events past the
   * project's retention are gone.
   */
  async recent(projectId: string, ref: string, options: { limit?: number; before?: string } = {}): Promise<RecentEvents> {
    const limit = options.limit ?? RECENT_DEFAULT_LIMIT;
    checkLimit(limit, RECENT_MAX_LIMIT);
    const { analytics } = this.ctx.services;
    const before = options.before === undefined ? undefined : cursorOf(options.before, analytics.eventStore.kind);
    const event = await this.get(projectId, ref);
    const page = await analytics.recent({ projectId, name: event.name, limit, before });
    return {
      name: event.name,
      events: page.events.map((e) => ({ at: new Date(e.ts).toISOString(), ts: e.ts, unitId: e.unitId, value: e.value, properties: e.props })),
      next: page.next ? cursorText(page.next) : null,
    };
  }

  private async knownOf(projectId: string): Promise<Map<string, Set<string>>> {
    let names = this.known.get(projectId);
    if (!names) {
      const generation = this.generations.get(projectId);
      const resyncs = this.resyncs;
      names = new Map();
      for (const r of await catalogOfProject(this.ctx.store, projectId)) names.set(r.name, new Set((JSON.parse(r.properties) as EventProperty[]).map((p) => p.name)));
      // A catalog change announced while this read was in flight may not be in it: used for this batch, not kept
      // (kept, a deleted event would have stayed "known" and never come back as pending until the next change).
      if (generation === this.generations.get(projectId) && resyncs === this.resyncs) this.known.set(projectId, names);
    }
    return names;
  }

  /**
   * What one ingest batch saw (event name → property name → type): unknown
   * names become pending rows and unseen properties join their event, in one
   * transaction, only when something is new. Last-seen times are kept in
   * memory and written every few seconds.
   */
  async noteSeen(projectId: string, seen: Map<string, Map<string, PropertyType>>, from?: { newNamesPerDay: number }): Promise<void> {
    const now = Date.now();
    let stamps = this.seenAt.get(projectId);
    const known = await this.knownOf(projectId);
    // Sent with a browser key whose allowance of new names is used up (known here): its unknown names are left out.
    if (from && (this.browserNamesFullUntil.get(projectId) ?? 0) > now) seen = new Map([...seen].filter(([name]) => known.has(name)));
    if (!stamps) this.seenAt.set(projectId, (stamps = new Map()));
    for (const name of seen.keys()) stamps.set(name, now);
    let fresh = false;
    for (const [name, props] of seen) {
      const have = known.get(name);
      if (!have || [...props.keys()].some((p) => !have.has(p))) fresh = true;
    }
    if (!fresh) return;
    await this.ctx.store.write(async (tx) => {
      await tx.lock(`event-catalog:${projectId}`);
      let count = await countCatalogEvents(tx, projectId);
      // A browser key (an app anyone can run) may add names while the project has fewer than its allowance of
      // pending names created in the last day; read under the lock, so concurrent batches and servers add up exactly.
      let mayAdd = from ? from.newNamesPerDay - (await countPendingSince(tx, projectId, new Date(now - DAY_MS).toISOString())) : Number.POSITIVE_INFINITY;
      const at = nowIso();
      for (const [name, props] of seen) {
        const row = await catalogEventByName(tx, projectId, name);
        if (!row) {
          if (count >= MAX_EVENTS_PER_PROJECT) continue;
          if (mayAdd <= 0) {
            this.browserNamesFullUntil.set(projectId, now + BROWSER_FULL_RECHECK_MS);
            continue;
          }
          mayAdd--;
          count++;
          const properties = [...props].slice(0, MAX_PROPERTIES_PER_EVENT).map(([p, type]) => ({ name: p, type, required: false, description: "" }));
          await insertCatalogEvent(tx, projectId, {
            id: newId("evt"),
            name,
            folder: "",
            description: "",
            properties: JSON.stringify(properties),
            pending: 1,
            created_at: at,
            updated_at: at,
            last_seen_at: at,
          });
          continue;
        }
        const current = JSON.parse(row.properties) as EventProperty[];
        const names = new Set(current.map((p) => p.name));
        const added = [...props].filter(([p]) => !names.has(p)).map(([p, type]) => ({ name: p, type, required: false, description: "" }));
        if (added.length === 0) continue;
        const properties = [...current, ...added].slice(0, Math.max(current.length, MAX_PROPERTIES_PER_EVENT));
        await updateCatalogEvent(tx, { ...row, properties: JSON.stringify(properties), updated_at: at });
      }
      tx.announce(CHANNEL, projectId);
    });
    // Our own announcement drops the cache after commit; reload now so the next batch is answered from memory.
    this.known.delete(projectId);
  }

  private async flushSeen(): Promise<void> {
    if (this.seenAt.size === 0) return;
    const batch = this.seenAt;
    this.seenAt = new Map();
    for (const [projectId, names] of batch) {
      try {
        await this.ctx.store.write(async (tx) => {
          for (const [name, at] of names) await markCatalogSeen(tx, projectId, name, new Date(at).toISOString());
        });
      } catch (err) {
        this.ctx.log.warn("recording when events were last seen failed", { projectId, error: String(err) });
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushSeen();
  }
}
