import type { Db } from "../../lib/db";
import type { Logger } from "../../lib/log";
import { nowIso } from "../../lib/ids";
import type { Env } from "../projects/service";

export type RevisionListener = (projectId: string, env: Env, revision: number) => void;

/**
 * Per-env revision counters. Every module that publishes something SDKs see
 * calls `bump` inside its publishing transaction; listeners (the snapshot
 * cache, the stream) hear about it once the transaction has committed, and
 * also when another process (the CLI) committed a publish on the same file.
 */
export class RevisionsService {
  private readonly listeners = new Set<RevisionListener>();
  /** Last revision seen per `projectId/env`, to tell which envs another process changed. */
  private readonly known = new Map<string, number>();
  private readonly pending = new Set<string>();
  private readonly pollTimer: ReturnType<typeof setInterval>;
  private readonly selectRevision;
  private readonly upsertRevision;
  private readonly dataVersion;
  private lastDataVersion = -1;
  private readonly log: Logger | undefined;

  constructor(
    private readonly db: Db,
    options: { pollMs?: number; log?: Logger } = {},
  ) {
    this.log = options.log;
    this.selectRevision = db.prepare<{ revision: number }, [string, string]>(
      "SELECT revision FROM env_revisions WHERE project_id = ? AND env = ?",
    );
    this.upsertRevision = db.prepare<{ revision: number }, [string, string, string]>(
      `INSERT INTO env_revisions (project_id, env, revision, updated_at) VALUES (?1, ?2, 1, ?3)
       ON CONFLICT (project_id, env) DO UPDATE SET revision = revision + 1, updated_at = ?3
       RETURNING revision`,
    );
    this.dataVersion = db.prepare<{ data_version: number }, []>("PRAGMA data_version");
    for (const row of db.query<{ project_id: string; env: string; revision: number }, []>("SELECT project_id, env, revision FROM env_revisions").all()) {
      this.known.set(`${row.project_id}/${row.env}`, row.revision);
    }
    this.lastDataVersion = this.dataVersion.get()!.data_version;
    // data_version changes only when another connection commits: a cheap check, 4 times a second.
    this.pollTimer = setInterval(() => this.pollExternalChanges(), options.pollMs ?? 250);
    this.pollTimer.unref?.();
  }

  /** Current revision (0 before the first publish). */
  current(projectId: string, env: Env): number {
    return this.selectRevision.get(projectId, env)?.revision ?? 0;
  }

  /**
   * Bumps the env's revision. Call inside the publishing transaction; the
   * listeners run after the synchronous transaction has finished, and only
   * if the new revision really committed.
   */
  bump(projectId: string, env: Env): number {
    const revision = this.upsertRevision.get(projectId, env, nowIso())!.revision;
    const key = `${projectId}/${env}`;
    if (this.pending.size === 0) queueMicrotask(() => this.flushPending());
    this.pending.add(key);
    return revision;
  }

  subscribe(listener: RevisionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    clearInterval(this.pollTimer);
  }

  private flushPending(): void {
    const keys = [...this.pending];
    this.pending.clear();
    for (const key of keys) {
      const [projectId, env] = key.split("/") as [string, Env];
      this.announce(projectId, env, this.current(projectId, env));
    }
  }

  private announce(projectId: string, env: Env, revision: number): void {
    const key = `${projectId}/${env}`;
    // A rolled-back bump leaves the stored revision where it was: nothing to say.
    if ((this.known.get(key) ?? 0) >= revision) return;
    this.known.set(key, revision);
    for (const listener of this.listeners) {
      try {
        listener(projectId, env, revision);
      } catch (err) {
        this.log?.error("revision listener failed", { projectId, env, error: String(err) });
      }
    }
  }

  /** Picks up publishes committed by other processes on the same data file. */
  pollExternalChanges(): void {
    try {
      const version = this.dataVersion.get()!.data_version;
      if (version === this.lastDataVersion) return;
      this.lastDataVersion = version;
      const rows = this.db
        .query<{ project_id: string; env: Env; revision: number }, []>("SELECT project_id, env, revision FROM env_revisions")
        .all();
      for (const row of rows) this.announce(row.project_id, row.env, row.revision);
    } catch (err) {
      // Busy (another process mid-checkpoint) or transient: the next poll tries again.
      this.log?.warn("revision poll failed", { error: String(err) });
    }
  }
}
