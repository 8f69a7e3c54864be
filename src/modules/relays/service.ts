import { recordAudit } from "../../lib/audit";
import { notFound } from "../../lib/errors";
import { filterByQuery } from "../../lib/http-values";
import type { ServiceContext } from "../../lib/module";
import { type RelayHello, parseRelayHeader } from "./header";
import { MAX_RELAYS_PER_PROJECT, type SightingRow, deleteSighting, sightingOf, sightingsOf, sweepSightings, trimSightings, upsertSighting } from "./store";

/** A relay with a stream seen open this recently (or open now on this server) is connected. */
export const DEFAULT_WINDOW_MS = 90_000;
/** At most one request-path sighting per relay this often, per server. */
export const REQUEST_THROTTLE_MS = 30_000;
/** Sightings not renewed for this long are deleted. */
export const KEEP_MS = 30 * 86_400_000;
const SWEEP_EVERY_MS = 3_600_000;
/** Relays remembered by the in-memory throttle at most (older entries are dropped first). */
const THROTTLE_ENTRIES = 10_000;
/**
 * Sightings waiting to be written beyond which request-path ones are dropped (a stream's open and close are
 * bounded by the streams a key may hold): a flood of made-up relay ids queues no unbounded work in memory.
 */
export const MAX_QUEUED_WRITES = 200;

export type RelayView = {
  id: string;
  name: string;
  version: string;
  address: string;
  firstSeenAt: string;
  lastSeenAt: string;
  lastStreamAt: string | null;
  streams: string[];
  connected: boolean;
  stale: boolean;
};

type Open = { projectId: string; hello: RelayHello; address: string; envs: Map<string, number> };

/**
 * Edge relays (`svc serve --relay`) that call this server, per project: each says who it is in X-Svc-Relay
 * (./header.ts) on its streams, key lookups and forwards, and the server keeps a sighting. Writes are bounded
 * and never fail a request: one per relay per REQUEST_THROTTLE_MS from the request path, one on each stream's
 * open and close, and one per relay with open streams every refresh (so that other servers see it connected),
 * each fire-and-forget, one at a time, failures logged. Request-path ones are dropped while MAX_QUEUED_WRITES of
 * them wait (stream ones are bounded by the open streams, and renewals wait while the queue is that long), and a
 * project keeps its MAX_RELAYS_PER_PROJECT most recently seen. Sightings are not user writes: no audit row for
 * them (forgetting one is, and is audited).
 */
export class RelaysService {
  readonly windowMs: number;
  private readonly refreshMs: number;
  private readonly lastWrite = new Map<string, number>();
  private readonly open = new Map<string, Open>();
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;
  /** Of `queued`, those from the request path: the ones anyone can cause, so the ones MAX_QUEUED_WRITES caps. */
  private queuedFromRequests = 0;
  /** The most request-path sightings that ever waited at once (tests and diagnostics). */
  peakQueuedFromRequests = 0;
  private lastSweep = 0;
  private readonly timer: Timer;

  constructor(private readonly ctx: ServiceContext) {
    this.windowMs = ctx.options.relayWindowMs ?? DEFAULT_WINDOW_MS;
    this.refreshMs = Math.max(50, Math.min(REQUEST_THROTTLE_MS, Math.floor(this.windowMs / 3)));
    this.timer = setInterval(() => this.refresh(), this.refreshMs);
    this.timer.unref?.();
  }

  /** A request that may carry X-Svc-Relay (the SDK key of `projectId` was accepted): a sighting, throttled. */
  sawRequest(projectId: string, header: string | null, address: string): void {
    const hello = parseRelayHeader(header);
    if (!hello) return;
    const key = `${projectId}\n${hello.id}`;
    const now = Date.now();
    const last = this.lastWrite.get(key);
    if (last !== undefined && now - last < REQUEST_THROTTLE_MS) return;
    if (this.queuedFromRequests >= MAX_QUEUED_WRITES) return;
    this.noteWrite(key, now);
    this.write(projectId, hello, address, now, undefined, last === undefined, true);
  }

  /** A stream opened for a relay: a sighting now, and one when it closes (the returned function, called once). */
  streamOpened(projectId: string, header: string | null, address: string, env: string): (() => void) | undefined {
    const hello = parseRelayHeader(header);
    if (!hello) return undefined;
    const key = `${projectId}\n${hello.id}`;
    let open = this.open.get(key);
    if (!open) this.open.set(key, (open = { projectId, hello, address, envs: new Map() }));
    Object.assign(open, { hello, address });
    open.envs.set(env, (open.envs.get(env) ?? 0) + 1);
    const now = Date.now();
    const fresh = !this.lastWrite.has(key);
    this.noteWrite(key, now);
    this.write(projectId, hello, address, now, [...open.envs.keys()], fresh);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      const left = (open.envs.get(env) ?? 1) - 1;
      if (left > 0) open.envs.set(env, left);
      else open.envs.delete(env);
      if (open.envs.size === 0 && this.open.get(key) === open) this.open.delete(key);
      this.write(projectId, open.hello, open.address, Date.now(), [...open.envs.keys()]);
    };
  }

  private noteWrite(key: string, now: number): void {
    this.lastWrite.delete(key);
    if (this.lastWrite.size >= THROTTLE_ENTRIES) this.lastWrite.delete(this.lastWrite.keys().next().value!);
    this.lastWrite.set(key, now);
  }

  /** Relays with streams open here: their last_stream_at renewed, so that every server sees them connected. */
  private refresh(): void {
    // A renewal is only worth writing when the queue drains; a skipped one is caught up a turn later.
    if (this.queued >= MAX_QUEUED_WRITES) return;
    const now = Date.now();
    for (const open of this.open.values()) this.write(open.projectId, open.hello, open.address, now, [...open.envs.keys()]);
  }

  /** `fresh`: a relay this process has not written lately, so perhaps a new row: the project's cap is enforced with it. */
  private write(projectId: string, hello: RelayHello, address: string, at: number, envs?: string[], fresh = false, fromRequest = false): void {
    const { store, log } = this.ctx;
    const sighting = { projectId, relayId: hello.id, name: hello.name, version: hello.version, address: address.slice(0, 100), at: new Date(at).toISOString(), ...(envs ? { stream: { envs: envs.sort() } } : {}) };
    this.queued++;
    if (fromRequest) this.peakQueuedFromRequests = Math.max(this.peakQueuedFromRequests, ++this.queuedFromRequests);
    this.chain = this.chain
      .then(async () => {
        await store.write(async (tx) => {
          await upsertSighting(tx, store.engine, sighting);
          if (fresh) await trimSightings(tx, projectId, MAX_RELAYS_PER_PROJECT);
        });
        if (at - this.lastSweep >= SWEEP_EVERY_MS) {
          this.lastSweep = at;
          await store.write((tx) => sweepSightings(tx, new Date(at - KEEP_MS).toISOString()));
        }
      })
      .catch((err) => log.warn("relays: a relay sighting was not recorded", { relayId: hello.id, error: String(err) }))
      .finally(() => {
        this.queued--;
        if (fromRequest) this.queuedFromRequests--;
      });
  }

  /** Waits for the sightings queued so far (tests, and close). */
  async flushed(): Promise<void> {
    await this.chain;
  }

  /** Connected: a stream open now on this server, or one seen open (by any server) within the window; else stale. */
  private view(projectId: string, row: SightingRow, now: number): RelayView {
    const openHere = (this.open.get(`${projectId}\n${row.relay_id}`)?.envs.size ?? 0) > 0;
    const connected = openHere || (!!row.last_stream_at && now - Date.parse(row.last_stream_at) <= this.windowMs);
    return {
      id: row.relay_id,
      name: row.name,
      version: row.version,
      address: row.address,
      firstSeenAt: row.first_seen_at,
      lastSeenAt: row.last_seen_at,
      lastStreamAt: row.last_stream_at || null,
      streams: row.streams_open === "" ? [] : row.streams_open.split(","),
      connected,
      stale: !connected,
    };
  }

  async list(projectId: string, q: string | undefined): Promise<RelayView[]> {
    const now = Date.now();
    const rows = await sightingsOf(this.ctx.store, projectId, new Date(now - KEEP_MS).toISOString());
    return filterByQuery(rows.map((r) => this.view(projectId, r, now)), q, (r) => [r.id, r.name, r.address]);
  }

  async forget(projectId: string, relayId: string, actor: { email: string; type: string }): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      await tx.lock(`relays:${projectId}`);
      const row = await sightingOf(tx, projectId, relayId);
      if (!row || !(await deleteSighting(tx, projectId, relayId))) throw notFound(`No relay ${relayId} has been seen`, "id: `svc relays list` lists the relays seen");
      await recordAudit(tx, { projectId, action: "relay.forget", subjectId: relayId, subjectName: row.name, actor, detail: { version: row.version, address: row.address, lastSeenAt: row.last_seen_at } });
    });
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.chain;
  }
}
