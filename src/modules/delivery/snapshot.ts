import type { Env } from "../../lib/envs";
import { validation } from "../../lib/errors";
import type { ServiceContext, SnapshotSection as SectionSource } from "../../lib/module";
import { REVISIONS_CHANNEL, allRevisions, currentRevision, decodeRevisionChange } from "../../lib/revisions";
import { RESYNC } from "../../lib/store";
import { SnapshotListeners } from "./snapshot-listeners";

export type PublishedKillswitch = { value: boolean; switches: Record<string, boolean>; version: number };
export type { PublishedConfig } from "../../sdk/configs";
import type { PublishedConfig } from "../../sdk/configs";

/** What `GET /api/sdk/v1/snapshot` answers: everything published on one env of one project. */
export type Snapshot = {
  projectId: string;
  env: Env;
  /** The database's epoch: revisions count within one epoch (a restored or copied database starts another). */
  epoch: string;
  revision: number;
  killswitches: Record<string, PublishedKillswitch>;
  configs: Record<string, PublishedConfig>;
  gates: Record<string, unknown>;
  universes: Record<string, unknown>;
  experiments: Record<string, unknown>;
  translations: Record<string, unknown>;
  rollouts: Record<string, unknown>;
  /** The segments the env's published gate rules name, each once (src/modules/segments); absent when they name none. */
  segments?: Record<string, unknown>;
};

export const SNAPSHOT_SECTIONS = ["killswitches", "configs", "gates", "universes", "experiments", "translations", "rollouts", "segments"] as const;
export type SnapshotSectionName = (typeof SNAPSHOT_SECTIONS)[number];

/** One prepared reply: built once per revision, served as-is until the next. */
export type SnapshotEntry = {
  snapshot: Snapshot;
  /** Strong validator, quoted: `"<epoch>-<projectId>-<env>-<revision>"`. */
  etag: string;
  /** The stream's event id: `<epoch>-<revision>`. */
  eventId: string;
  json: string;
  body: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
};

export type SnapshotListener = (entry: SnapshotEntry) => void;

/**
 * What the SDK routes read snapshots from (routes.ts, stream.ts, fast-path.ts): the store-backed
 * SnapshotService on `svc serve`, or an edge relay's copy followed from its upstream (src/modules/relays/edge).
 */
export type SnapshotSource = Pick<SnapshotService, "cached" | "cachedByKey" | "get" | "cachedDefaultEnv" | "defaultEnv" | "subscribe" | "listenerCount">;

const entryEncoder = new TextEncoder();

/**
 * One prepared entry from a snapshot and its JSON text (`JSON.stringify(snapshot)`). The relay builds its
 * entries from the upstream stream's JSON with this same function, so its bodies, ETags and event ids are
 * the upstream's, byte for byte. The gzip bytes are made when first asked for: a publish reaches the
 * stream without waiting for them, and a revision no client takes gzip for never makes them (issue 32).
 */
export function prepareEntry(snapshot: Snapshot, json: string): SnapshotEntry {
  const body = entryEncoder.encode(json);
  let gzip: Uint8Array<ArrayBuffer> | undefined;
  return {
    snapshot,
    etag: `"${snapshot.epoch}-${snapshot.projectId}-${snapshot.env}-${snapshot.revision}"`,
    eventId: `${snapshot.epoch}-${snapshot.revision}`,
    json,
    body,
    get gzip() {
      return (gzip ??= Bun.gzipSync(body));
    },
  };
}

/** The published snapshot of one env is at most this many bytes of JSON (DECISIONS): every SDK downloads all of it. */
export const SNAPSHOT_BYTES_MAX = 5 * 1024 * 1024;

/** How long a project's default env is trusted from memory. */
const DEFAULT_ENV_CACHE_MS = 5_000;
/** A build reads the revision before and after the sections; a publish in between makes it read again. */
const BUILD_ATTEMPTS = 5;

/**
 * Prepared snapshots per (project, env). Built on the first request, then
 * rebuilt eagerly whenever a publish is announced on the store's
 * `revisions` channel (by this server or any other on the same store), so
 * requests, 304s included, never touch the store once an entry exists.
 */
export class SnapshotService {
  private readonly entries = new Map<string, SnapshotEntry>();
  private readonly building = new Map<string, Promise<SnapshotEntry>>();
  /** The newest revision announced per key: an entry older than it is never kept. */
  private readonly announced = new Map<string, number>();
  private readonly listeners = new SnapshotListeners<SnapshotEntry>();
  /**
   * What this server's own publish read of its env inside the transaction (the size check), kept once it
   * has committed, until its announcement is heard a moment later: that read is the committed revision's
   * snapshot, so it becomes the entry instead of a second read of every section (issue 32).
   */
  private readonly checked = new Map<string, { snapshot: Snapshot; json: string }>();
  private readonly defaultEnvs = new Map<string, { env: Env; until: number }>();
  private readonly unlisten: () => void;
  private readonly uncheck: () => void;
  private sections: SectionSource[] = [];

  constructor(private readonly ctx: ServiceContext) {
    this.unlisten = ctx.store.listen(REVISIONS_CHANNEL, (payload) => {
      if (payload === RESYNC) {
        void this.resync();
        return;
      }
      const change = decodeRevisionChange(payload);
      if (change) void this.onRevision(change.projectId, change.env, change.revision, change.publishedAt);
    });
    // Every publish bumps its env's revision inside its transaction: that is where its size is checked.
    this.uncheck = ctx.store.checkBeforeCommit(REVISIONS_CHANNEL, (payloads) => this.checkSizes(payloads));
  }

  /** The modules' sections (from their manifests), set once by the app. */
  setSections(sections: SectionSource[]): void {
    this.sections = sections;
  }

  /** The current prepared snapshot from memory, or undefined when it was never built. */
  cached(projectId: string, env: Env): SnapshotEntry | undefined {
    return this.entries.get(`${projectId}/${env}`);
  }

  /** `cached` by its key, `<projectId>/<env>` (the poll fast path keeps the key strings instead of building one per poll). */
  cachedByKey(key: string): SnapshotEntry | undefined {
    return this.entries.get(key);
  }

  /** The current prepared snapshot (built now if this env was never asked for). */
  async get(projectId: string, env: Env): Promise<SnapshotEntry> {
    const key = `${projectId}/${env}`;
    return this.entries.get(key) ?? this.rebuild(key, projectId, env);
  }

  /** The project's `defaultEnv` from memory, when known. */
  cachedDefaultEnv(projectId: string): Env | undefined {
    const cached = this.defaultEnvs.get(projectId);
    return cached && cached.until > Date.now() ? cached.env : undefined;
  }

  /** The env used when a request names none: the project's `defaultEnv`, cached briefly. */
  async defaultEnv(projectId: string): Promise<Env> {
    const cached = this.cachedDefaultEnv(projectId);
    if (cached) return cached;
    const env = (await this.ctx.services.projects.find(projectId))?.defaultEnv ?? "prod";
    if (this.defaultEnvs.size > 10_000) this.defaultEnvs.clear();
    this.defaultEnvs.set(projectId, { env, until: Date.now() + DEFAULT_ENV_CACHE_MS });
    return env;
  }

  /** Hears every new entry of one (project, env), after it has been swapped in. Returns the unsubscribe. */
  subscribe(projectId: string, env: Env, listener: SnapshotListener): () => void {
    return this.listeners.subscribe(`${projectId}/${env}`, listener);
  }

  /** Live subscriptions (the stream's open connections), for tests and metrics. */
  listenerCount(): number {
    return this.listeners.count();
  }

  close(): void {
    this.unlisten();
    this.uncheck();
    this.entries.clear();
    this.checked.clear();
    this.announced.clear();
    this.listeners.clear();
  }

  /** Announcements may have been missed (a dropped connection): compare every prepared entry with the store. */
  private async resync(): Promise<void> {
    try {
      for (const change of await allRevisions(this.ctx.store)) await this.onRevision(change.projectId, change.env, change.revision);
    } catch (err) {
      this.ctx.log.error("snapshot resync failed", { error: String(err) });
    }
  }

  /** `publishedAt` (epoch ms, from the announcement) times the publish-to-stream delay for /metrics. */
  private async onRevision(projectId: string, env: Env, revision: number, publishedAt?: number): Promise<void> {
    const key = `${projectId}/${env}`;
    // Recorded before anything else: a build in flight may have read the older revision already (on PostgreSQL
    // its last read can be answered before this commit and reach us after it), and keep() must refuse it. Said
    // only when an entry existed, a publish landing while no entry was kept left that build's older one in place
    // until the next publish: a writer read its own write stale.
    if ((this.announced.get(key) ?? 0) < revision) this.announced.set(key, revision);
    // Kept by this server's own commit just before its announcements are heard (synchronously, in order):
    // taken by the first of them; later ones of the same transaction find the entry current.
    const checked = this.checked.get(key);
    this.checked.delete(key);
    const cached = this.entries.get(key);
    // Nobody asked for this env yet and nobody listens: build it when someone does.
    if (!cached && !this.listeners.has(key)) return;
    if (cached && cached.snapshot.revision >= revision) return;
    // Stale from now on: the next request waits for the rebuild rather than getting the old entry
    // (on PostgreSQL the rebuild takes round trips; a writer must read its own write at once).
    this.entries.delete(key);
    let entry: SnapshotEntry;
    try {
      // A revision the store no longer has (the project deleted: 0) is not this one: read the store.
      entry =
        checked && checked.snapshot.revision >= revision
          ? this.keep(key, prepareEntry(checked.snapshot, checked.json))
          : await this.rebuild(key, projectId, env);
    } catch (err) {
      // Drop the stale entry so the next request rebuilds (and reports) rather than serving old content.
      this.entries.delete(key);
      this.ctx.log.error("snapshot rebuild failed", { projectId, env, error: String(err) });
      return;
    }
    if (entry.snapshot.revision < revision) return;
    const heard = this.listeners.deliver(key, entry, (err) => this.ctx.log.error("snapshot listener failed", { projectId, env, error: String(err) }));
    // Once per publish that reached open streams (another server's clock may run ahead: never below 0).
    if (publishedAt !== undefined && heard > 0) this.ctx.services.operations.telemetry.delivery.observe(Math.max(0, Date.now() - publishedAt) / 1000);
  }

  /** One build per key at a time; a publish announced meanwhile starts another after it. */
  private rebuild(key: string, projectId: string, env: Env): Promise<SnapshotEntry> {
    const running = this.building.get(key);
    const next = (running ?? Promise.resolve(undefined as unknown as SnapshotEntry))
      .catch(() => undefined)
      .then(() => this.build(projectId, env))
      .then((entry) => this.keep(key, entry));
    this.building.set(key, next);
    void next.finally(() => {
      if (this.building.get(key) === next) this.building.delete(key);
    }).catch(() => {});
    return next;
  }

  private keep(key: string, entry: SnapshotEntry): SnapshotEntry {
    // A build that started before the newest announcement: its chained successor keeps the newer one.
    if (entry.snapshot.revision < (this.announced.get(key) ?? 0)) return entry;
    const current = this.entries.get(key);
    // Never swap a newer entry for an older one.
    if (current && current.snapshot.revision > entry.snapshot.revision) return current;
    this.entries.set(key, entry);
    return entry;
  }

  /**
   * Refuses a transaction whose publishes would leave an env's snapshot over
   * SNAPSHOT_BYTES_MAX (run inside it, before it commits: the sections read
   * its own writes). On PostgreSQL, concurrent publishes on one env take turns
   * on its env_revisions row (bumped before this check), so each check sees
   * the others' commits. An env already over the limit (published before the
   * limit existed) takes publishes that do not grow it, so it can be brought
   * under.
   */
  private async checkSizes(payloads: string[]): Promise<() => void> {
    const envs = new Set<string>();
    const reads = new Map<string, { snapshot: Snapshot; json: string }>();
    for (const payload of payloads) {
      const change = decodeRevisionChange(payload);
      if (!change || envs.has(`${change.projectId}/${change.env}`)) continue;
      envs.add(`${change.projectId}/${change.env}`);
      const snapshot = await this.read(change.projectId, change.env, 1);
      const json = JSON.stringify(snapshot);
      reads.set(`${change.projectId}/${change.env}`, { snapshot, json });
      const bytes = Buffer.byteLength(json, "utf8");
      if (bytes <= SNAPSHOT_BYTES_MAX) continue;
      const cached = this.entries.get(`${change.projectId}/${change.env}`);
      const before = cached ? cached.body.byteLength : Buffer.byteLength(JSON.stringify(await this.ctx.store.committed(() => this.read(change.projectId, change.env, 1))), "utf8");
      if (bytes <= before) continue;
      throw validation(
        `The ${change.env} snapshot would be ${bytes} bytes, ${bytes - SNAPSHOT_BYTES_MAX} over the limit of ${SNAPSHOT_BYTES_MAX} (5 MiB)`,
        `snapshot: publishing this would make the ${change.env} snapshot every SDK downloads ${bytes} bytes of JSON, ${bytes - SNAPSHOT_BYTES_MAX} bytes over the limit of ${SNAPSHOT_BYTES_MAX} (5 MiB); publish less or remove something from ${change.env} first`,
      );
    }
    // Read under the transaction's write lock (SQLite) or its hold on each env's revision row (PostgreSQL):
    // once it commits, each read is exactly what its revision names. Kept only then (never after a rollback).
    return () => {
      for (const [key, read] of reads) this.checked.set(key, read);
    };
  }

  /**
   * Reads the revision, every section, then the revision again: every publish
   * bumps the revision in its own transaction, so an unchanged revision means
   * the sections are exactly what it names.
   */
  private async read(projectId: string, env: Env, attempts = BUILD_ATTEMPTS): Promise<Snapshot> {
    const { store } = this.ctx;
    let snapshot: Snapshot | undefined;
    for (let attempt = 0; attempt < attempts && !snapshot; attempt++) {
      const revision = await currentRevision(store, projectId, env);
      const parts: Record<string, unknown> = {};
      for (const section of this.sections) parts[section.field] = await section.published(projectId, env);
      if (attempt < attempts - 1 && (await currentRevision(store, projectId, env)) !== revision) continue;
      const part = <S extends SnapshotSectionName>(name: S) => (parts[name] ?? {}) as Snapshot[S];
      snapshot = {
        projectId,
        env,
        epoch: store.epoch,
        revision,
        killswitches: part("killswitches"),
        configs: part("configs"),
        gates: part("gates"),
        universes: part("universes"),
        experiments: part("experiments"),
        translations: part("translations"),
        rollouts: part("rollouts"),
      };
      // Only when rules name one: a project without segments keeps the snapshot it had (and its bytes).
      const segments = part("segments");
      for (const _ in segments) {
        snapshot.segments = segments;
        break;
      }
    }
    return snapshot!;
  }

  private async build(projectId: string, env: Env): Promise<SnapshotEntry> {
    const snapshot = await this.read(projectId, env);
    return prepareEntry(snapshot, JSON.stringify(snapshot));
  }
}
