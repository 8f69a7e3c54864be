import { Database, type Statement } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { SdkKeyInfo } from "../../../lib/auth";
import { randomBase62 } from "../../../lib/ids";

/** One forwarded request waiting for the upstream: sent as it came, with its delivery id. */
export type QueuedDelivery = { seq: number; id: string; path: string; headers: Record<string, string>; body: Uint8Array; queuedAt: number; attempts: number };

/** What the relay knows of the key it runs with: kept so that a start without the upstream still knows its project. */
export type RelayIdentity = { keyHash: string; projectId: string; defaultEnv: string };

/**
 * The relay's whole state, `<data>/relay.db` (bun:sqlite, WAL): the last snapshot of each env, the SDK
 * keys it has seen accepted (by SHA-256 of the secret: never a secret), and the queue of requests to
 * forward. `synchronous=FULL`: a forwarded request is answered only once its row is on disk, so neither
 * a crash of the relay nor of its machine loses what it acknowledged.
 */
export class RelayDisk {
  private readonly db: Database;
  private readonly q: {
    putMeta: Statement;
    getMeta: Statement;
    putSnapshot: Statement;
    snapshots: Statement;
    putKey: Statement;
    getKey: Statement;
    dropKey: Statement;
    enqueue: Statement;
    next: Statement;
    remove: Statement;
    attempt: Statement;
    depth: Statement;
    oldest: Statement;
  };

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.db = new Database(join(dir, "relay.db"), { create: true, strict: true });
    this.db.exec("PRAGMA busy_timeout = 5000");
    this.db.exec("PRAGMA journal_mode = WAL");
    this.db.exec("PRAGMA synchronous = FULL");
    this.db.exec(`
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS snapshots (env TEXT PRIMARY KEY, json TEXT NOT NULL, saved_at INTEGER NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS known_keys (hash TEXT PRIMARY KEY, info TEXT NOT NULL, checked_at INTEGER NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL,
  headers TEXT NOT NULL,
  body BLOB NOT NULL,
  queued_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0
) STRICT;`);
    this.q = {
      putMeta: this.db.prepare("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
      getMeta: this.db.prepare("SELECT value FROM meta WHERE key = ?1"),
      putSnapshot: this.db.prepare("INSERT INTO snapshots (env, json, saved_at) VALUES (?1, ?2, ?3) ON CONFLICT (env) DO UPDATE SET json = excluded.json, saved_at = excluded.saved_at"),
      snapshots: this.db.prepare("SELECT env, json, saved_at FROM snapshots"),
      putKey: this.db.prepare("INSERT INTO known_keys (hash, info, checked_at) VALUES (?1, ?2, ?3) ON CONFLICT (hash) DO UPDATE SET info = excluded.info, checked_at = excluded.checked_at"),
      getKey: this.db.prepare("SELECT info FROM known_keys WHERE hash = ?1"),
      dropKey: this.db.prepare("DELETE FROM known_keys WHERE hash = ?1"),
      enqueue: this.db.prepare("INSERT INTO outbox (id, path, headers, body, queued_at) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (id) DO NOTHING"),
      next: this.db.prepare("SELECT seq, id, path, headers, body, queued_at, attempts FROM outbox ORDER BY seq LIMIT 1"),
      remove: this.db.prepare("DELETE FROM outbox WHERE seq = ?1"),
      attempt: this.db.prepare("UPDATE outbox SET attempts = attempts + 1 WHERE seq = ?1"),
      depth: this.db.prepare("SELECT count(*) AS n FROM outbox"),
      oldest: this.db.prepare("SELECT min(queued_at) AS at FROM outbox"),
    };
  }

  /** This relay's own id, made on its first start and kept: how its upstream tells it apart (X-Svc-Relay). */
  relayId(): string {
    const row = this.q.getMeta.get("relay_id") as { value: string } | null;
    if (row) return row.value;
    const id = `rly_${randomBase62(20)}`;
    this.q.putMeta.run("relay_id", id);
    return id;
  }

  identity(): RelayIdentity | undefined {
    const row = this.q.getMeta.get("identity") as { value: string } | null;
    return row ? (JSON.parse(row.value) as RelayIdentity) : undefined;
  }

  /** A relay started with another key (another project) forgets the previous one's snapshots and keys; its queue still goes out. */
  setIdentity(identity: RelayIdentity): void {
    const before = this.identity();
    this.db.transaction(() => {
      if (before && before.projectId !== identity.projectId) {
        this.db.exec("DELETE FROM snapshots");
        this.db.exec("DELETE FROM known_keys");
      }
      this.q.putMeta.run("identity", JSON.stringify(identity));
    }).immediate();
  }

  saveSnapshot(env: string, json: string, at: number): void {
    this.q.putSnapshot.run(env, json, at);
  }

  snapshots(): { env: string; json: string; savedAt: number }[] {
    return (this.q.snapshots.all() as { env: string; json: string; saved_at: number }[]).map((r) => ({ env: r.env, json: r.json, savedAt: r.saved_at }));
  }

  knownKey(hash: string): SdkKeyInfo | undefined {
    const row = this.q.getKey.get(hash) as { info: string } | null;
    return row ? (JSON.parse(row.info) as SdkKeyInfo) : undefined;
  }

  rememberKey(hash: string, info: SdkKeyInfo, at: number): void {
    this.q.putKey.run(hash, JSON.stringify(info), at);
  }

  forgetKey(hash: string): void {
    this.q.dropKey.run(hash);
  }

  /** Queues one request (a repeat of a delivery id already queued is ignored). Durable when this returns. */
  enqueue(id: string, path: string, headers: Record<string, string>, body: Uint8Array, at: number): void {
    this.q.enqueue.run(id, path, JSON.stringify(headers), body, at);
  }

  next(): QueuedDelivery | undefined {
    const row = this.q.next.get() as { seq: number; id: string; path: string; headers: string; body: Uint8Array; queued_at: number; attempts: number } | null;
    if (!row) return undefined;
    return { seq: row.seq, id: row.id, path: row.path, headers: JSON.parse(row.headers), body: row.body, queuedAt: row.queued_at, attempts: row.attempts };
  }

  remove(seq: number): void {
    this.q.remove.run(seq);
  }

  attempted(seq: number): void {
    this.q.attempt.run(seq);
  }

  depth(): number {
    return (this.q.depth.get() as { n: number }).n;
  }

  /** Epoch ms of the oldest queued request, or undefined when the queue is empty. */
  oldest(): number | undefined {
    return (this.q.oldest.get() as { at: number | null }).at ?? undefined;
  }

  close(): void {
    this.db.close();
  }
}
