import { randomBytes, timingSafeEqual } from "node:crypto";
import { type BearerResolver, type Credential, ROLE_PERMISSIONS } from "../../lib/auth";
import { ApiError, type ErrorBody, badRequest, forbidden, notFound, validation } from "../../lib/errors";
import { newId, pkceChallenge, randomBase62, sha256Hex } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Store, Tx } from "../../lib/store";
import { CLEANUP_BATCH, deleteInBatches, type SignedInUser } from "../identity/service";

export const DEVICE_CODE_TTL_MS = 600_000;
export const POLL_INTERVAL_S = 2;
/** RFC 8628 §3.5: each slow_down adds 5 seconds to the interval the client must keep. */
const SLOW_DOWN_STEP_S = 5;
/** Network jitter: a poll this much early still counts as on time. */
const POLL_TOLERANCE_MS = 250;
export const ACCESS_TOKEN_TTL_MS = 3600_000;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600_000;
/**
 * The longest one sign-in lasts, however often it is refreshed: every token of
 * a family expires by then, and the person signs in again.
 */
export const SIGN_IN_MAX_LIFETIME_MS = 90 * 24 * 3600_000;
/** Device codes are kept a day past expiry so that late polls still get expired_token. */
const DEVICE_CODE_RETENTION_MS = 24 * 3600_000;

export const ACCESS_TOKEN_PREFIX = "svc_at_";
export const REFRESH_TOKEN_PREFIX = "svc_rt_";

/** RFC 8628 §6.1: consonants only, so no words and no 0/O or 1/I confusion. */
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const USER_CODE_LENGTH = 8;

export type GrantError = "authorization_pending" | "slow_down" | "access_denied" | "expired_token" | "invalid_grant";

/** The OAuth error body of the token, refresh endpoints: `{error, code, error_description}`. */
export class DeviceGrantError extends ApiError {
  constructor(
    readonly grantError: GrantError,
    description: string,
    /** The interval to keep from now on (slow_down). */
    readonly interval?: number,
  ) {
    super("BAD_REQUEST", description, undefined, 400);
  }

  override toBody(): ErrorBody & { error_description: string; interval?: number } {
    const body = { error: this.grantError, code: this.code, error_description: this.message };
    return this.interval === undefined ? body : { ...body, interval: this.interval };
  }
}

export type DeviceCodeGrant = {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
};

export type TokenPair = {
  access_token: string;
  refresh_token: string;
  token_type: "Bearer";
  expires_in: number;
  project_id: string | null;
  user_email: string;
};

type DeviceCodeRow = {
  id: string;
  user_code: string;
  code_challenge: string;
  client_name: string | null;
  status: "pending" | "approved" | "denied" | "redeemed";
  user_id: string | null;
  project_id: string | null;
  interval_s: number;
  last_polled_at: string | null;
  expires_at: string;
};

const DEVICE_CODE_COLUMNS = "id, user_code, code_challenge, client_name, status, user_id, project_id, interval_s, last_polled_at, expires_at";

/** Lock scope of one sign-in (token family): rotation, reuse detection and revocation. */
function familyLock(familyId: string): string {
  return `device:family:${familyId}`;
}

type RefreshRow = {
  family_id: string;
  generation: number;
  expires_at: string;
  rotated_at: string | null;
  family_generation: number;
  family_created_at: string;
  revoked_at: string | null;
  user_id: string;
  project_id: string | null;
  email: string;
};

type Outcome<T> = { ok: T } | { error: DeviceGrantError };

export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** Accepts what people type: any case, with or without the dash or spaces. */
export function normaliseUserCode(input: string): string | null {
  const code = input.toUpperCase().replace(/[^A-Z]/g, "");
  if (code.length !== USER_CODE_LENGTH) return null;
  for (const c of code) if (!USER_CODE_ALPHABET.includes(c)) return null;
  return code;
}

function newUserCode(): string {
  let code = "";
  // 256 = 20 * 12 + 16: reject the top 16 byte values so every letter is equally likely.
  while (code.length < USER_CODE_LENGTH) {
    for (const b of randomBytes(16)) {
      if (b < 240 && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[b % 20];
    }
  }
  return code;
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) must equal the challenge sent with the code request. */
function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(pkceChallenge(verifier));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/**
 * The device authorization flow of the CLI and the tool server: codes,
 * browser approval, the PKCE-checked token exchange, refresh rotation
 * with reuse detection, revocation, and the `svc_at_` bearer resolver.
 *
 * Access tokens are read from the store on every request (nothing is
 * cached), so a revoked sign-in stops working on every server at once.
 */
export class DeviceService {
  constructor(private readonly ctx: ServiceContext) {}

  private get store(): Store {
    return this.ctx.store;
  }

  /** Reached lazily: the identity service may be created after this one. */
  private get identity() {
    return this.ctx.services.identity;
  }

  private get now(): number {
    return this.identity.now();
  }

  private iso(ms = this.now): string {
    return new Date(ms).toISOString();
  }

  async createCode(input: { codeChallenge: string; clientName?: string }, request: { baseUrl: string; ip: string }): Promise<DeviceCodeGrant> {
    this.identity.limiter.take(`device-code:ip:${request.ip}`, this.identity.rateLimits.deviceCodePerIp);
    const deviceCode = randomBase62(43);
    const now = this.now;
    const userCode = await this.store.write(async (tx) => {
      // Picking a user code that is not taken is a read-then-write: one at a time.
      await tx.lock("device:user-codes");
      await tx.run("DELETE FROM device_codes WHERE expires_at < ?", this.iso(now - DEVICE_CODE_RETENTION_MS));
      let code = newUserCode();
      while (await tx.one("SELECT 1 AS one FROM device_codes WHERE user_code = ?", code)) code = newUserCode();
      await tx.run(
        `INSERT INTO device_codes (id, device_code_hash, user_code, code_challenge, client_name, status, interval_s, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
        newId("dev"),
        sha256Hex(deviceCode),
        code,
        input.codeChallenge,
        input.clientName?.trim() || null,
        POLL_INTERVAL_S,
        this.iso(now),
        this.iso(now + DEVICE_CODE_TTL_MS),
      );
      return formatUserCode(code);
    });
    return {
      device_code: deviceCode,
      user_code: userCode,
      verification_uri: `${request.baseUrl}/device`,
      verification_uri_complete: `${request.baseUrl}/device?user_code=${userCode}`,
      expires_in: DEVICE_CODE_TTL_MS / 1000,
      interval: POLL_INTERVAL_S,
    };
  }

  /** A request still waiting for its person, for the approval page. */
  async pendingRequest(userCode: string): Promise<{ userCode: string; clientName: string | null } | null> {
    const code = normaliseUserCode(userCode);
    if (!code) return null;
    const row = await this.store.one<{ client_name: string | null }>(
      "SELECT client_name FROM device_codes WHERE user_code = ? AND status = 'pending' AND expires_at > ?",
      code,
      this.iso(),
    );
    return row ? { userCode: formatUserCode(code), clientName: row.client_name } : null;
  }

  /** The signed-in person approves (binding a project they can reach) or denies a pending request. */
  async confirm(
    user: SignedInUser,
    input: { deviceCode?: string; userCode?: string; action: "approve" | "deny"; projectId?: string },
  ): Promise<{ status: "approved" | "denied"; user_code: string; project_id: string | null }> {
    if (!input.deviceCode && !input.userCode) throw validation("Name the sign-in request", "device_code or user_code: one is required");
    return this.store.write(async (tx) => {
      let projectId: string | null = null;
      if (input.action === "approve") {
        if (input.projectId) {
          if (!(await this.identity.canAccess(user.id, input.projectId))) {
            throw forbidden("You cannot reach that project", `project_id: ${input.projectId} is not in your organisations`);
          }
          projectId = input.projectId;
        } else {
          projectId = (await this.identity.accessibleProjects(user.id))[0]?.id ?? null;
        }
      }
      const row = await this.lockedCode(tx, input);
      if (!row) throw notFound("No such sign-in request", input.deviceCode ? "device_code" : "user_code");
      if (row.expires_at <= this.iso()) throw badRequest("This sign-in request has expired", "start the sign-in again on the device");
      if (row.status !== "pending") throw badRequest("This sign-in request was already answered", `status: ${row.status}`);
      const status = input.action === "approve" ? "approved" : "denied";
      await tx.run("UPDATE device_codes SET status = ?, user_id = ?, project_id = ? WHERE id = ?", status, user.id, projectId, row.id);
      return { status, user_code: formatUserCode(row.user_code), project_id: projectId };
    });
  }

  /**
   * The polled token request. Every answer but the pair is a
   * DeviceGrantError; poll bookkeeping (slow_down) commits before it is thrown.
   * The code is locked first, so that it is redeemed once however many polls race.
   */
  async exchange(input: { deviceCode: string; codeVerifier: string }): Promise<TokenPair> {
    const outcome = await this.store.write(async (tx): Promise<Outcome<TokenPair>> => {
      const row = await this.lockedCode(tx, { deviceCode: input.deviceCode });
      if (!row) return { error: new DeviceGrantError("invalid_grant", "Unknown device_code") };
      if (!pkceMatches(input.codeVerifier, row.code_challenge)) {
        return { error: new DeviceGrantError("invalid_grant", "code_verifier does not match the code_challenge of this request") };
      }
      if (row.status === "redeemed") return { error: new DeviceGrantError("invalid_grant", "This device_code was already redeemed") };
      const now = this.now;
      if (row.expires_at <= this.iso(now)) return { error: new DeviceGrantError("expired_token", "The device_code has expired; start again") };
      const intervalS = Number(row.interval_s);
      if (row.last_polled_at && now - Date.parse(row.last_polled_at) < intervalS * 1000 - POLL_TOLERANCE_MS) {
        const interval = intervalS + SLOW_DOWN_STEP_S;
        await tx.run("UPDATE device_codes SET interval_s = ?, last_polled_at = ? WHERE id = ?", interval, this.iso(now), row.id);
        return { error: new DeviceGrantError("slow_down", `Polling too fast; wait ${interval} seconds between requests`, interval) };
      }
      await tx.run("UPDATE device_codes SET last_polled_at = ? WHERE id = ?", this.iso(now), row.id);
      if (row.status === "pending") return { error: new DeviceGrantError("authorization_pending", "Waiting for the user to approve in the browser") };
      if (row.status === "denied") return { error: new DeviceGrantError("access_denied", "The user denied this sign-in") };
      const email = row.user_id ? (await tx.one<{ email: string }>("SELECT email FROM users WHERE id = ?", row.user_id))?.email : undefined;
      if (!row.user_id || !email) return { error: new DeviceGrantError("invalid_grant", "The approving user no longer exists") };
      await tx.run("UPDATE device_codes SET status = 'redeemed' WHERE id = ?", row.id);
      const familyId = newId("tfam");
      await tx.run(
        "INSERT INTO token_families (id, user_id, project_id, client_name, generation, created_at) VALUES (?, ?, ?, ?, 1, ?)",
        familyId,
        row.user_id,
        row.project_id,
        row.client_name,
        this.iso(now),
      );
      const pair = await this.issuePair(tx, familyId, 1, now + SIGN_IN_MAX_LIFETIME_MS);
      return {
        ok: { access_token: pair.access_token, refresh_token: pair.refresh_token, token_type: "Bearer", expires_in: ACCESS_TOKEN_TTL_MS / 1000, project_id: row.project_id, user_email: email },
      };
    });
    if ("error" in outcome) throw outcome.error;
    return outcome.ok;
  }

  /**
   * Rotates a refresh token: a new pair, the old refresh token spent. A spent
   * token presented again revokes the whole family: it was copied, or the
   * client lost the answer (clients refresh under a lock, so two processes of
   * one client never present the same token). A sign-in ends
   * SIGN_IN_MAX_LIFETIME_MS after it began, however often it is refreshed.
   * The family is locked first (`device:family:<id>`): of two servers
   * presenting the same token at once, one rotates and the other sees a reuse.
   */
  async refresh(refreshToken: string): Promise<TokenPair> {
    const hash = sha256Hex(refreshToken);
    const outcome = await this.store.write(async (tx): Promise<Outcome<TokenPair>> => {
      // A token's family never changes: finding it before the lock is safe.
      const token = await tx.one<{ family_id: string }>("SELECT family_id FROM device_tokens WHERE token_hash = ? AND kind = 'refresh'", hash);
      if (!token) return { error: new DeviceGrantError("invalid_grant", "Unknown refresh token") };
      await tx.lock(familyLock(token.family_id));
      const row = await tx.one<RefreshRow>(
        `SELECT t.family_id, t.generation, t.expires_at, t.rotated_at, f.generation AS family_generation, f.created_at AS family_created_at,
                f.revoked_at, f.user_id, f.project_id, u.email
         FROM device_tokens t JOIN token_families f ON f.id = t.family_id JOIN users u ON u.id = f.user_id
         WHERE t.token_hash = ? AND t.kind = 'refresh'`,
        hash,
      );
      if (!row) return { error: new DeviceGrantError("invalid_grant", "Unknown refresh token") };
      if (row.revoked_at) return { error: new DeviceGrantError("invalid_grant", "This sign-in was revoked; sign in again") };
      const now = this.now;
      if (row.rotated_at !== null) {
        await tx.run("UPDATE token_families SET revoked_at = ?, revoked_reason = 'refresh token reused' WHERE id = ?", this.iso(now), row.family_id);
        return { error: new DeviceGrantError("invalid_grant", "This refresh token was already used; every token of this sign-in is now revoked") };
      }
      if (row.expires_at <= this.iso(now)) return { error: new DeviceGrantError("invalid_grant", "The refresh token has expired; sign in again") };
      const familyEnd = Date.parse(row.family_created_at) + SIGN_IN_MAX_LIFETIME_MS;
      if (familyEnd <= now) return { error: new DeviceGrantError("invalid_grant", "This sign-in has reached its 90-day limit; sign in again") };

      const generation = Number(row.family_generation) + 1;
      const pair = await this.issuePair(tx, row.family_id, generation, familyEnd);
      await tx.run("UPDATE device_tokens SET rotated_at = ? WHERE token_hash = ?", this.iso(now), hash);
      await tx.run("UPDATE token_families SET generation = ? WHERE id = ?", generation, row.family_id);
      await tx.run("DELETE FROM device_tokens WHERE family_id = ? AND expires_at <= ?", row.family_id, this.iso(now));
      return {
        ok: {
          access_token: pair.access_token,
          refresh_token: pair.refresh_token,
          token_type: "Bearer",
          expires_in: Math.floor((pair.accessExpiresMs - now) / 1000),
          project_id: row.project_id,
          user_email: row.email,
        },
      };
    });
    if ("error" in outcome) throw outcome.error;
    return outcome.ok;
  }

  /**
   * Deletes device codes a day past expiry (late polls still learn
   * expired_token until then), expired tokens, and sign-ins that can no
   * longer be used (revoked, past their 90 days, or with no token left),
   * in batches of 500 rows per transaction.
   */
  async removeExpired(): Promise<{ deviceCodes: number; deviceTokens: number; signIns: number }> {
    const now = this.now;
    const deviceCodes = await deleteInBatches(
      this.store,
      `DELETE FROM device_codes WHERE id IN (SELECT id FROM device_codes WHERE expires_at < ?1 LIMIT ${CLEANUP_BATCH})`,
      this.iso(now - DEVICE_CODE_RETENTION_MS),
    );
    const deviceTokens = await deleteInBatches(
      this.store,
      `DELETE FROM device_tokens WHERE token_hash IN (SELECT token_hash FROM device_tokens WHERE expires_at <= ?1 LIMIT ${CLEANUP_BATCH})`,
      this.iso(now),
    );
    const signIns = await deleteInBatches(
      this.store,
      `DELETE FROM token_families WHERE id IN (SELECT f.id FROM token_families f
         WHERE f.revoked_at IS NOT NULL OR f.created_at <= ?1 OR NOT EXISTS (SELECT 1 FROM device_tokens t WHERE t.family_id = f.id) LIMIT ${CLEANUP_BATCH})`,
      this.iso(now - SIGN_IN_MAX_LIFETIME_MS),
    );
    return { deviceCodes, deviceTokens, signIns };
  }

  /** Logout: revokes the whole family of an access or refresh token. False when the token is unknown or already revoked. */
  async revoke(token: string): Promise<boolean> {
    return this.store.write(async (tx) => {
      const row = await tx.one<{ family_id: string }>("SELECT family_id FROM device_tokens WHERE token_hash = ?", sha256Hex(token));
      if (!row) return false;
      await tx.lock(familyLock(row.family_id));
      const changed = await tx.run(
        "UPDATE token_families SET revoked_at = ?, revoked_reason = 'revoked' WHERE id = ? AND revoked_at IS NULL",
        this.iso(),
        row.family_id,
      );
      return changed > 0;
    });
  }

  /** The person behind a live access token, and the project bound at login: read from the store on every call. */
  private async userOfAccessToken(secret: string): Promise<(SignedInUser & { familyId: string; boundProjectId: string | null }) | null> {
    if (!secret.startsWith(ACCESS_TOKEN_PREFIX)) return null;
    const row = await this.store.one<{ family_id: string; user_id: string; project_id: string | null; email: string }>(
      `SELECT f.id AS family_id, f.user_id, f.project_id, u.email
       FROM device_tokens t JOIN token_families f ON f.id = t.family_id JOIN users u ON u.id = f.user_id
       WHERE t.token_hash = ? AND t.kind = 'access' AND t.expires_at > ? AND f.revoked_at IS NULL`,
      sha256Hex(secret),
      this.iso(),
    );
    return row ? { id: row.user_id, email: row.email, familyId: row.family_id, boundProjectId: row.project_id } : null;
  }

  /**
   * `svc_at_` on /api/admin: every project of the person's organisations;
   * without X-Project-Id the one bound at login, while they can still reach it.
   */
  bearerResolver(): BearerResolver {
    return {
      prefix: ACCESS_TOKEN_PREFIX,
      resolve: async (secret): Promise<Credential | null> => {
        const user = await this.userOfAccessToken(secret);
        if (!user) return null;
        // The bound project stays the default even when the person lost it: calls then get FORBIDDEN, not "no project".
        return {
          kind: "user_token",
          credentialId: user.familyId,
          defaultProjectId: user.boundProjectId,
          access: async (projectId) => {
            const role = await this.identity.roleIn(user.id, projectId);
            return role ? { permissions: ROLE_PERMISSIONS[role], role } : null;
          },
          actor: { email: user.email, type: "user" },
          scopes: [],
          allowedOrigin: null,
          userId: user.id,
        };
      },
    };
  }

  /**
   * Finds a code by device_code or user_code, locks it (`device:code:<id>`)
   * and reads it again under the lock. A code's id never changes, so finding
   * it before the lock is safe.
   */
  private async lockedCode(tx: Tx, input: { deviceCode?: string; userCode?: string }): Promise<DeviceCodeRow | null> {
    let found: { id: string } | undefined;
    if (input.deviceCode) {
      found = await tx.one<{ id: string }>("SELECT id FROM device_codes WHERE device_code_hash = ?", sha256Hex(input.deviceCode));
    } else {
      const code = input.userCode ? normaliseUserCode(input.userCode) : null;
      found = code ? await tx.one<{ id: string }>("SELECT id FROM device_codes WHERE user_code = ?", code) : undefined;
    }
    if (!found) return null;
    await tx.lock(`device:code:${found.id}`);
    return (await tx.one<DeviceCodeRow>(`SELECT ${DEVICE_CODE_COLUMNS} FROM device_codes WHERE id = ?`, found.id)) ?? null;
  }

  /** A new pair of the family; neither token outlives the sign-in's end (`familyEndMs`). */
  private async issuePair(tx: Tx, familyId: string, generation: number, familyEndMs: number): Promise<{ access_token: string; refresh_token: string; accessExpiresMs: number }> {
    const access = `${ACCESS_TOKEN_PREFIX}${randomBase62(43)}`;
    const refresh = `${REFRESH_TOKEN_PREFIX}${randomBase62(43)}`;
    const now = this.now;
    const accessExpiresMs = Math.min(now + ACCESS_TOKEN_TTL_MS, familyEndMs);
    const insert = "INSERT INTO device_tokens (token_hash, family_id, kind, generation, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)";
    await tx.run(insert, sha256Hex(access), familyId, "access", generation, this.iso(now), this.iso(accessExpiresMs));
    await tx.run(insert, sha256Hex(refresh), familyId, "refresh", generation, this.iso(now), this.iso(Math.min(now + REFRESH_TOKEN_TTL_MS, familyEndMs)));
    return { access_token: access, refresh_token: refresh, accessExpiresMs };
  }
}
