import { type AuditActor, SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import type { KeyDirectory, SdkKeyInfo } from "../../lib/auth";
import type { Env } from "../../lib/envs";
import { ApiError, alreadyExists, badRequest, bodyTooLarge, notFound, validation } from "../../lib/errors";
import { checkNameChars } from "../../lib/validate";
import { newId, nowIso, randomBase62, sha256Hex } from "../../lib/ids";
import { LruCache } from "../../lib/lru";
import { RateLimiter, SyncedRateLimiter } from "../../lib/rate-limit";
import type { ServiceContext } from "../../lib/module";
import { RESYNC } from "../../lib/store";
import {
  findLiveKey,
  findLiveKeyByHash,
  insertKey,
  keyNames,
  listLiveKeys,
  markKeysUsed,
  revokeLiveKey,
  setAllowedOriginOfLiveKeys,
  toKey,
  toKeyInfo,
} from "./store";
import { type BrowserKeyLimits, DEFAULT_BROWSER_KEY_LIMITS, KEY_TYPES, type KeyType, type SdkKey } from "./types";
export { type BrowserKeyLimits, KEY_TYPES, type KeyType, type SdkKey };

/** Scope a client key needs to file tickets through the public intake. */
export const PUBLIC_TICKET_SCOPE = "tickets:public_create";

/** The browser key's scopes (DECISIONS "The browser key and other SDK ecosystems"). */
export const EVALUATE_SCOPE = "flags:evaluate";
export const EVENTS_SCOPE = "events:ingest";
export const ERRORS_SCOPE = "errors:ingest";

/**
 * Scopes each key type may carry; the list is also the default. Only what
 * exists is advertised: event and error ingest will add their scopes when
 * they are built.
 */
const SCOPES_BY_TYPE: Record<KeyType, readonly string[]> = {
  admin: ["admin"],
  server: ["sdk:read"],
  client: [PUBLIC_TICKET_SCOPE],
  // Shipped inside web and mobile apps, so readable by anyone: evaluated answers and ingest, never rules or salts.
  browser: [EVALUATE_SCOPE, EVENTS_SCOPE, ERRORS_SCOPE],
};

export type MintedKey = SdkKey & { key: string };

export type MintInput = {
  type: KeyType;
  name?: string;
  scopes?: string[];
  /** The env a browser key evaluates (default: the project's defaultEnv); other types take none. */
  env?: Env;
  /** Origin browsers may use the key from; when not given, the project's (read under the project's lock). */
  allowedOrigin?: string | null;
  /** Who mints it, for the audit row (default: svc itself). */
  actor?: AuditActor;
};

/**
 * The store channel the key cache follows, on every server:
 * - `revoked:<keyId>`: forget that key;
 * - `minted:<sha256 of the secret>`: forget a cached "unknown" for that secret;
 * - `project:<projectId>`: forget the project's keys (their allowed origin changed).
 * RESYNC (announcements may have been missed) forgets everything.
 */
export const KEYS_CHANNEL = "keys";

/**
 * A safety net only: every change that matters is announced on KEYS_CHANNEL
 * and evicts at once. This bounds how long an entry could outlive a missed
 * announcement.
 */
const RESOLVE_CACHE_MS = 60_000;

/** Resolutions kept in memory (known and unknown secrets alike), least recently used forgotten first. */
const RESOLVE_CACHE_ENTRIES = 10_000;

const DEFAULT_FLUSH_MS = 60_000;

/** What an operator-chosen admin secret (SERVICE_INIT_ADMIN_KEY) must look like. */
export const KEY_SECRET_PATTERN = /^sdk_admin_[A-Za-z0-9]{16,128}$/;

type CacheEntry = { key: SdkKeyInfo | null; until: number };

export class KeysService implements KeyDirectory {
  /** sha256(secret) → resolution. */
  private readonly resolved = new LruCache<string, CacheEntry>(RESOLVE_CACHE_ENTRIES);
  /** Bumped by every eviction: a resolution read before one is not cached (it may be what was evicted). */
  private generation = 0;
  /** keyId → last use (epoch ms) not yet written; flushed on a timer so the request path never writes. */
  private readonly pendingUse = new Map<string, number>();
  private readonly flushTimer: ReturnType<typeof setInterval>;
  private flushing: Promise<void> | null = null;
  private readonly unlisten: () => void;
  /** What one browser key may cost (ServerOptions.browserKeys over the defaults). */
  readonly browserLimits: BrowserKeyLimits;
  /** Browser-key ingest calls per project and client address (this process's count: one address mostly reaches one server). */
  private readonly browserIngest = new RateLimiter();
  /** Browser-key ingest calls per key, from all addresses: shared by every server to within about a second of each server's calls. */
  private readonly browserKeyIngest: SyncedRateLimiter;

  constructor(private readonly ctx: ServiceContext) {
    this.browserLimits = { ...DEFAULT_BROWSER_KEY_LIMITS, ...ctx.options.browserKeys };
    this.browserKeyIngest = new SyncedRateLimiter(ctx.store);
    this.unlisten = ctx.store.listen(KEYS_CHANNEL, (payload) => this.onAnnouncement(payload));
    this.flushTimer = setInterval(() => {
      if (!this.flushing) void this.flushLastUsed();
    }, ctx.options.lastUsedFlushMs ?? DEFAULT_FLUSH_MS);
    this.flushTimer.unref?.();
  }

  /**
   * Mints a key. `secret` is only passed for SERVICE_INIT_ADMIN_KEY, where the
   * operator chose the admin key; otherwise a fresh random one is made.
   * Joins the caller's transaction when there is one.
   */
  async mint(projectId: string, input: MintInput, secret?: string): Promise<MintedKey> {
    const allowed = SCOPES_BY_TYPE[input.type];
    const scopes = input.scopes ?? [...allowed];
    const foreign = scopes.filter((s) => !allowed.includes(s));
    if (foreign.length > 0) {
      throw badRequest(
        `A ${input.type} key cannot carry ${foreign.join(", ")}`,
        `scopes: allowed for ${input.type} keys: ${allowed.join(", ")}`,
      );
    }
    if (input.env !== undefined && input.type !== "browser") {
      throw validation(`A ${input.type} key is not bound to an env`, "env: only browser keys are bound to one env; server keys read any env (the `env` query)");
    }
    const key = secret ?? `sdk_${input.type}_${randomBase62(32)}`;
    const hash = sha256Hex(key);
    const id = newId("key");
    const name = input.name?.trim() || `${input.type} key`;
    checkNameChars("name", name);
    const uniqueScopes = [...new Set(scopes)];
    try {
      return await this.ctx.store.write(async (tx) => {
        let allowedOrigin = input.allowedOrigin;
        let allowedOrigins: string[] | null = allowedOrigin ? [allowedOrigin] : null;
        if (allowedOrigin === undefined) {
          // Read under the project's lock, so that a concurrent change of its origins cannot miss this key.
          await tx.lock(`project:${projectId}`);
          allowedOrigin = await this.ctx.services.projects.allowedOrigin(projectId);
          allowedOrigins = await this.ctx.services.projects.admittedOrigins(projectId);
        }
        const env = input.type === "browser" ? (input.env ?? (await this.ctx.services.projects.find(projectId))?.defaultEnv ?? "prod") : null;
        const row: SdkKey = { id, projectId, type: input.type, name, scopes: uniqueScopes, allowedOrigin, allowedOrigins, env, createdAt: nowIso(), lastUsedAt: null };
        await insertKey(tx, row, hash, key.slice(-4));
        // A chosen secret (SERVICE_INIT_ADMIN_KEY) may have been looked up, and cached as unknown, on any server.
        tx.announce(KEYS_CHANNEL, `minted:${hash}`);
        await recordAudit(tx, {
          projectId,
          action: "key.mint",
          subjectId: row.id,
          subjectName: row.name,
          actor: input.actor ?? SYSTEM_ACTOR,
          detail: { type: row.type, scopes: row.scopes, allowedOrigin: row.allowedOrigin, ...(env ? { env } : {}) },
        });
        return { ...row, key };
      });
    } catch (err) {
      // Only a chosen secret can collide (a random one has 190 bits).
      if (this.ctx.store.isUniqueViolation(err)) throw alreadyExists("A key with this secret already exists", "choose another secret");
      throw err;
    }
  }

  /** Live keys of a project, newest first, with a masked tail instead of the secret. */
  async list(projectId: string): Promise<(SdkKey & { maskedKey: string })[]> {
    const rows = await listLiveKeys(this.ctx.store, projectId);
    return rows.map((r) => {
      const key = toKey(r);
      const pending = this.pendingUse.get(key.id);
      if (pending !== undefined) {
        const at = new Date(pending).toISOString();
        if (!key.lastUsedAt || at > key.lastUsedAt) key.lastUsedAt = at;
      }
      return { ...key, maskedKey: `sdk_${r.type}_…${r.secret_tail}` };
    });
  }

  /** Revokes a live key of the project; every server forgets it once the transaction commits. */
  async revoke(projectId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      // One statement decides and writes: no lock needed.
      const row = await revokeLiveKey(tx, projectId, id, nowIso());
      if (!row) throw notFound(`No live key ${id} in this project`);
      tx.announce(KEYS_CHANNEL, `revoked:${id}`);
      await recordAudit(tx, { projectId, action: "key.revoke", subjectId: id, subjectName: row.name, actor, detail: { type: row.type } });
    });
  }

  /** Key id → name, for the named keys of this project among `ids` (revoked ones too): what audit rows show for `…-key:` actors. */
  async names(projectId: string, ids: readonly string[]): Promise<Map<string, string>> {
    return await keyNames(this.ctx.store, projectId, ids);
  }

  /** A live key of the project by id (no secret), or null. */
  async find(projectId: string, id: string): Promise<SdkKey | null> {
    const row = await findLiveKey(this.ctx.store, projectId, id);
    return row ? toKey(row) : null;
  }

  /**
   * From memory only (the SDK fast paths): the live key of a secret, null for
   * a secret known not to be one, undefined when not in memory (ask `resolve`).
   */
  cached(secret: string): SdkKeyInfo | null | undefined {
    const hash = sha256Hex(secret);
    const entry = this.resolved.get(hash);
    if (!entry) return undefined;
    if (entry.until <= Date.now()) {
      this.resolved.delete(hash);
      return undefined;
    }
    return entry.key;
  }

  /** Reads the live key of a secret from the store (never writes) and keeps the answer in memory. */
  async resolve(secret: string): Promise<SdkKeyInfo | null> {
    const hash = sha256Hex(secret);
    const generation = this.generation;
    const row = await findLiveKeyByHash(this.ctx.store, hash);
    const key: SdkKeyInfo | null = row ? toKeyInfo(row) : null;
    // Something was evicted while we read: what we read may be what it was about, so it is answered but not kept.
    if (generation === this.generation) this.resolved.set(hash, { key, until: Date.now() + RESOLVE_CACHE_MS });
    return key;
  }

  /** Notes a use in memory; the timer writes it at most once per flush interval. */
  markUsed(keyId: string): void {
    this.pendingUse.set(keyId, Date.now());
  }

  /**
   * Writes the last-use stamps noted since the previous flush. Never throws:
   * when the store is busy or unavailable the stamps are kept for the next
   * flush; any other failure loses them (harmless) with a warning.
   */
  async flushLastUsed(): Promise<void> {
    while (this.flushing) await this.flushing;
    const run: Promise<void> = this.writeLastUsed().finally(() => {
      this.flushing = null;
    });
    this.flushing = run;
    await run;
  }

  private async writeLastUsed(): Promise<void> {
    if (this.pendingUse.size === 0) return;
    const entries = [...this.pendingUse];
    this.pendingUse.clear();
    try {
      await this.ctx.store.write((tx) => markKeysUsed(tx, entries));
    } catch (err) {
      if (err instanceof ApiError && err.code === "UNAVAILABLE") {
        // The store is busy or down: keep the stamps for the next flush (a newer use wins).
        for (const [id, at] of entries) if ((this.pendingUse.get(id) ?? 0) < at) this.pendingUse.set(id, at);
        return;
      }
      // Losing a last-used stamp is harmless; never let the timer crash the server.
      this.ctx.log.warn("last-used flush failed", { error: String(err) });
    }
  }

  /**
   * Stamps the project's allowed origin (its domain's) and every origin it
   * admits (with its `allowedOrigins`) into every live key. Called by the
   * projects service inside its own transaction (under the project's lock)
   * when either changes; every server forgets the project's keys (and its
   * CORS answers) on commit.
   */
  async stampAllowedOrigin(projectId: string, allowedOrigin: string | null, allowedOrigins: string[] | null = allowedOrigin ? [allowedOrigin] : null): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      await setAllowedOriginOfLiveKeys(tx, projectId, allowedOrigin, allowedOrigins);
      tx.announce(KEYS_CHANNEL, `project:${projectId}`);
    });
  }

  /**
   * An ingest call (events, errors, Sentry) made with a browser key: counted against the client address's rate
   * within the project, then the key's (so that one project's flood never limits another's callers), then
   * its body against the browser cap. Throws 429 `Too many requests` (Retry-After) or 413 `Body too large`.
   */
  admitBrowserIngest(call: { keyId: string; projectId: string; address: string; bodyBytes: number }): void {
    const limits = this.browserLimits;
    // The address first: one address's flood is stopped before it uses up the allowance the key's other callers share.
    this.browserIngest.take(`address:${call.projectId}:${call.address}`, limits.perAddress);
    this.browserKeyIngest.take(`browser-key:${call.keyId}`, limits.perKey);
    if (call.bodyBytes > limits.maxBodyBytes) {
      const error = bodyTooLarge();
      throw new ApiError(error.code, error.message, `at most ${limits.maxBodyBytes} bytes with a browser key`, error.status);
    }
  }

  /** Stops the timer and the cache's subscription, then writes what is pending. */
  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    this.unlisten();
    await this.browserKeyIngest.close();
    await this.flushLastUsed();
    if (this.pendingUse.size > 0) this.ctx.log.warn("last-used stamps not written at shutdown: the store is unavailable", { keys: this.pendingUse.size });
  }

  private onAnnouncement(payload: string): void {
    this.generation++;
    const colon = payload.indexOf(":");
    const kind = colon < 0 ? "" : payload.slice(0, colon);
    const subject = payload.slice(colon + 1);
    if (payload !== RESYNC && subject !== "") {
      if (kind === "revoked") return this.resolved.deleteWhere((entry) => entry.key?.id === subject);
      if (kind === "minted") return void this.resolved.delete(subject);
      if (kind === "project") return this.resolved.deleteWhere((entry) => entry.key?.projectId === subject);
    }
    // RESYNC, or a payload this binary does not know (a newer server): forget everything.
    this.resolved.deleteWhere(() => true);
  }
}
