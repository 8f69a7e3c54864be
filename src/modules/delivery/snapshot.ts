import { type Db, storeEpoch } from "../../lib/db";
import type { Logger } from "../../lib/log";
import type { Env, ProjectsService } from "../projects/service";
import type { RevisionsService } from "./revisions";

export type PublishedKillswitch = { value: boolean; switches: Record<string, boolean>; version: number };
export type PublishedConfig = { value: unknown; version: number };

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
};

export const SNAPSHOT_SECTIONS = ["killswitches", "configs", "gates", "universes", "experiments", "translations"] as const;
export type SnapshotSection = (typeof SNAPSHOT_SECTIONS)[number];

/**
 * Where each section's published content comes from. A module that publishes
 * something SDKs read adds its reader here (in createServices); a section
 * without a source is `{}`.
 */
export type SnapshotSources = {
  [S in SnapshotSection]?: (projectId: string, env: Env) => Snapshot[S];
};

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

/** How long a project's default env is trusted from memory (the same window as SDK key resolution). */
const DEFAULT_ENV_CACHE_MS = 5_000;

/**
 * Prepared snapshots per (project, env). Built lazily on the first request,
 * then rebuilt eagerly whenever the revisions service announces a publish
 * (ours or another process's), so requests, 304s included, never touch the
 * database once an entry exists.
 */
export class SnapshotService {
  private readonly entries = new Map<string, SnapshotEntry>();
  private readonly listeners = new Map<string, Set<SnapshotListener>>();
  private readonly defaultEnvs = new Map<string, { env: Env; until: number }>();
  private readonly unsubscribe: () => void;
  private readonly encoder = new TextEncoder();
  /** Read once: a database gets a new epoch only while no server runs on it (backup copy, restore, moved file). */
  private readonly epoch: string;

  constructor(
    private readonly db: Db,
    private readonly revisions: RevisionsService,
    private readonly projects: ProjectsService,
    private readonly sources: SnapshotSources,
    private readonly log?: Logger,
  ) {
    this.epoch = storeEpoch(db);
    this.unsubscribe = revisions.subscribe((projectId, env, revision) => this.onRevision(projectId, env, revision));
  }

  /** The current prepared snapshot (built now if this env was never asked for). */
  get(projectId: string, env: Env): SnapshotEntry {
    const key = `${projectId}/${env}`;
    return this.entries.get(key) ?? this.store(key, this.build(projectId, env));
  }

  /** The env used when a request names none: the project's `defaultEnv`, cached briefly. */
  defaultEnv(projectId: string): Env {
    const now = Date.now();
    const cached = this.defaultEnvs.get(projectId);
    if (cached && cached.until > now) return cached.env;
    const env = this.projects.find(projectId)?.defaultEnv ?? "prod";
    if (this.defaultEnvs.size > 10_000) this.defaultEnvs.clear();
    this.defaultEnvs.set(projectId, { env, until: now + DEFAULT_ENV_CACHE_MS });
    return env;
  }

  /** Hears every new entry of one (project, env), after it has been swapped in. Returns the unsubscribe. */
  subscribe(projectId: string, env: Env, listener: SnapshotListener): () => void {
    const key = `${projectId}/${env}`;
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  /** Live subscriptions (the stream's open connections), for tests and metrics. */
  listenerCount(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
    this.listeners.clear();
  }

  private onRevision(projectId: string, env: Env, revision: number): void {
    const key = `${projectId}/${env}`;
    const cached = this.entries.get(key);
    // Nobody asked for this env yet and nobody listens: build it when someone does.
    if (!cached && !this.listeners.has(key)) return;
    if (cached && cached.snapshot.revision >= revision) return;
    let entry: SnapshotEntry;
    try {
      entry = this.store(key, this.build(projectId, env));
    } catch (err) {
      // Drop the stale entry so the next request rebuilds (and reports) rather than serving old content.
      this.entries.delete(key);
      this.log?.error("snapshot rebuild failed", { projectId, env, error: String(err) });
      return;
    }
    for (const listener of this.listeners.get(key) ?? []) {
      try {
        listener(entry);
      } catch (err) {
        this.log?.error("snapshot listener failed", { projectId, env, error: String(err) });
      }
    }
  }

  private store(key: string, entry: SnapshotEntry): SnapshotEntry {
    const current = this.entries.get(key);
    // Two builds can race across a publish; never swap a newer entry for an older one.
    if (current && current.snapshot.revision > entry.snapshot.revision) return current;
    this.entries.set(key, entry);
    return entry;
  }

  /** Reads the revision and every section in one read transaction, so the revision names exactly this content. */
  private build(projectId: string, env: Env): SnapshotEntry {
    const snapshot = this.db
      .transaction((): Snapshot => {
        const section = <S extends SnapshotSection>(name: S): Snapshot[S] => this.sources[name]?.(projectId, env) ?? {};
        return {
          projectId,
          env,
          epoch: this.epoch,
          revision: this.revisions.current(projectId, env),
          killswitches: section("killswitches"),
          configs: section("configs"),
          gates: section("gates"),
          universes: section("universes"),
          experiments: section("experiments"),
          translations: section("translations"),
        };
      })
      .deferred();
    const json = JSON.stringify(snapshot);
    const body = this.encoder.encode(json);
    return {
      snapshot,
      etag: `"${this.epoch}-${projectId}-${env}-${snapshot.revision}"`,
      eventId: `${this.epoch}-${snapshot.revision}`,
      json,
      body,
      gzip: Bun.gzipSync(body),
    };
  }
}

/**
 * RFC 9110 weak comparison of an If-None-Match list against our tag
 * (`*` matches anything that exists).
 */
export function etagMatches(ifNoneMatch: string | null | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch === etag) return true;
  for (const raw of ifNoneMatch.split(",")) {
    const tag = raw.trim();
    if (tag === "*" || (tag.startsWith("W/") ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}

/** Whether the client takes gzip (`Accept-Encoding: gzip`, not `gzip;q=0`). */
export function acceptsGzip(acceptEncoding: string | null | undefined): boolean {
  if (!acceptEncoding) return false;
  for (const part of acceptEncoding.split(",")) {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    if (coding !== "gzip" && coding !== "*") continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}
