import { type Db, immediate, isBusyError, writeTransaction } from "../../lib/db";
import { badRequest, notFound } from "../../lib/errors";
import { newId, nowIso, randomBase62, sha256Hex } from "../../lib/ids";
import type { Logger } from "../../lib/log";
import { LruCache } from "../../lib/lru";

export const KEY_TYPES = ["admin", "client", "server"] as const;
export type KeyType = (typeof KEY_TYPES)[number];

/** Scope a client key needs to file tickets through the public intake. */
export const PUBLIC_TICKET_SCOPE = "tickets:public_create";

/**
 * Scopes each key type may carry; the list is also the default. Only what
 * exists is advertised: event and error ingest will add their scopes when
 * they are built.
 */
const SCOPES_BY_TYPE: Record<KeyType, readonly string[]> = {
  admin: ["admin"],
  server: ["sdk:read"],
  client: [PUBLIC_TICKET_SCOPE],
};

export type SdkKey = {
  id: string;
  projectId: string;
  type: KeyType;
  name: string;
  scopes: string[];
  allowedOrigin: string | null;
  createdAt: string;
  lastUsedAt: string | null;
};

export type MintedKey = SdkKey & { key: string };

type KeyRow = {
  id: string;
  project_id: string;
  type: KeyType;
  name: string;
  scopes: string;
  secret_tail: string;
  allowed_origin: string | null;
  created_at: string;
  last_used_at: string | null;
};

const KEY_COLUMNS = "id, project_id, type, name, scopes, secret_tail, allowed_origin, created_at, last_used_at";

/** How long a resolved key stays in memory: a revoke by another process on the same file takes effect within this. */
const RESOLVE_CACHE_MS = 5_000;

/** Resolutions kept in memory (known and unknown secrets alike), least recently used forgotten first. */
const RESOLVE_CACHE_ENTRIES = 10_000;

/** What an operator-chosen admin secret (SERVICE_INIT_ADMIN_KEY) must look like. */
export const KEY_SECRET_PATTERN = /^sdk_admin_[A-Za-z0-9]{16,128}$/;

export class KeysService {
  private readonly resolved = new LruCache<string, { key: SdkKey | null; until: number }>(RESOLVE_CACHE_ENTRIES);
  /** keyId → last use (epoch ms) not yet written; flushed on a timer so the request path never writes. */
  private readonly pendingUse = new Map<string, number>();
  private readonly flushTimer: ReturnType<typeof setInterval>;
  private readonly byHash;
  private readonly log: Logger | undefined;

  constructor(
    private readonly db: Db,
    options: { lastUsedFlushMs?: number; log?: Logger } = {},
  ) {
    this.log = options.log;
    this.byHash = db.prepare<KeyRow, [string]>(
      `SELECT ${KEY_COLUMNS} FROM sdk_keys WHERE secret_hash = ? AND revoked_at IS NULL`,
    );
    this.flushTimer = setInterval(() => this.flushLastUsed(), options.lastUsedFlushMs ?? 60_000);
    this.flushTimer.unref?.();
  }

  /**
   * Mints a key. `secret` is only passed for SERVICE_INIT_ADMIN_KEY, where the
   * operator chose the admin key; otherwise a fresh random one is made.
   */
  mint(
    projectId: string,
    input: { type: KeyType; name?: string; scopes?: string[]; allowedOrigin?: string | null },
    secret?: string,
  ): MintedKey {
    const allowed = SCOPES_BY_TYPE[input.type];
    const scopes = input.scopes ?? [...allowed];
    const foreign = scopes.filter((s) => !allowed.includes(s));
    if (foreign.length > 0) {
      throw badRequest(
        `A ${input.type} key cannot carry ${foreign.join(", ")}`,
        `scopes: allowed for ${input.type} keys: ${allowed.join(", ")}`,
      );
    }
    const key = secret ?? `sdk_${input.type}_${randomBase62(32)}`;
    const row: SdkKey = {
      id: newId("key"),
      projectId,
      type: input.type,
      name: input.name?.trim() || `${input.type} key`,
      scopes: [...new Set(scopes)],
      allowedOrigin: input.allowedOrigin ?? null,
      createdAt: nowIso(),
      lastUsedAt: null,
    };
    this.db
      .query(
        `INSERT INTO sdk_keys (id, project_id, type, name, scopes, secret_hash, secret_tail, allowed_origin, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.id,
        projectId,
        row.type,
        row.name,
        JSON.stringify(row.scopes),
        sha256Hex(key),
        key.slice(-4),
        row.allowedOrigin,
        row.createdAt,
      );
    // A chosen secret (SERVICE_INIT_ADMIN_KEY) may have been looked up, and cached as unknown, before.
    this.resolved.delete(sha256Hex(key));
    return { ...row, key };
  }

  /** Live keys of a project, newest first, with a masked tail instead of the secret. */
  list(projectId: string): (SdkKey & { maskedKey: string })[] {
    const rows = this.db
      .query<KeyRow, [string]>(
        `SELECT ${KEY_COLUMNS} FROM sdk_keys WHERE project_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`,
      )
      .all(projectId);
    return rows.map((r) => {
      const key = this.toKey(r);
      const pending = this.pendingUse.get(key.id);
      if (pending !== undefined) {
        const at = new Date(pending).toISOString();
        if (!key.lastUsedAt || at > key.lastUsedAt) key.lastUsedAt = at;
      }
      return { ...key, maskedKey: `sdk_${r.type}_…${r.secret_tail}` };
    });
  }

  async revoke(projectId: string, id: string): Promise<void> {
    const changed = await writeTransaction(this.db, () =>
      this.db.query("UPDATE sdk_keys SET revoked_at = ? WHERE id = ? AND project_id = ? AND revoked_at IS NULL").run(nowIso(), id, projectId).changes,
    );
    if (changed === 0) throw notFound(`No live key ${id} in this project`);
    // Forget cached resolutions so the revoke takes effect at once in this process.
    this.resolved.deleteWhere((entry) => entry.key?.id === id);
  }

  /** A live key of the project by id (no secret), or null. */
  find(projectId: string, id: string): SdkKey | null {
    const row = this.db
      .query<KeyRow, [string, string]>(`SELECT ${KEY_COLUMNS} FROM sdk_keys WHERE id = ? AND project_id = ? AND revoked_at IS NULL`)
      .get(id, projectId);
    return row ? this.toKey(row) : null;
  }

  /** Resolves a presented secret to its live key, or null. Cached briefly; never writes. */
  resolveSecret(secret: string): SdkKey | null {
    const hash = sha256Hex(secret);
    const now = Date.now();
    const cached = this.resolved.get(hash);
    if (cached && cached.until > now) return cached.key;
    const row = this.byHash.get(hash);
    const key = row ? this.toKey(row) : null;
    this.resolved.set(hash, { key, until: now + RESOLVE_CACHE_MS });
    return key;
  }

  /** Notes a use in memory; the timer writes it at most once per flush interval. */
  markUsed(keyId: string): void {
    this.pendingUse.set(keyId, Date.now());
  }

  flushLastUsed(): void {
    if (this.pendingUse.size === 0) return;
    const entries = [...this.pendingUse];
    this.pendingUse.clear();
    try {
      immediate(this.db, () => {
        const update = this.db.query("UPDATE sdk_keys SET last_used_at = ? WHERE id = ?");
        for (const [id, at] of entries) update.run(new Date(at).toISOString(), id);
      });
    } catch (err) {
      // Another process holds the write lock: keep the stamps for the next flush (a newer use wins).
      if (isBusyError(err)) {
        for (const [id, at] of entries) if ((this.pendingUse.get(id) ?? 0) < at) this.pendingUse.set(id, at);
        return;
      }
      // Losing a last-used stamp is harmless; never let the timer crash the server.
      this.log?.warn("last-used flush failed", { error: String(err) });
    }
  }

  /**
   * Stamps the project's allowed origin into every live key. Called by the
   * projects service inside its own transaction when the domain changes.
   */
  stampAllowedOrigin(projectId: string, allowedOrigin: string | null): void {
    this.db
      .query("UPDATE sdk_keys SET allowed_origin = ? WHERE project_id = ? AND revoked_at IS NULL")
      .run(allowedOrigin, projectId);
    this.resolved.deleteWhere((entry) => entry.key?.projectId === projectId);
  }

  close(): void {
    clearInterval(this.flushTimer);
    this.flushLastUsed();
  }

  private toKey(r: KeyRow): SdkKey {
    return {
      id: r.id,
      projectId: r.project_id,
      type: r.type,
      name: r.name,
      scopes: JSON.parse(r.scopes) as string[],
      allowedOrigin: r.allowed_origin,
      createdAt: r.created_at,
      lastUsedAt: r.last_used_at,
    };
  }
}
