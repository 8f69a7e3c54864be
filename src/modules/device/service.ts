// One piece: the OAuth device grant (codes, PKCE, token pairs, refresh rotation, revocation) is one security flow, read best in one place.
import { nodeCrypto } from "../../lib/node-crypto";
import { type AuditActor, type AuditEntry, SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import { type BearerResolver, type Credential, ROLE_PERMISSIONS } from "../../lib/auth";
import { ApiError, type ErrorBody, badRequest, forbidden, notFound, validation } from "../../lib/errors";
import { newId, pkceChallenge, randomBase62, sha256Hex } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Store, Tx } from "../../lib/store";
import type { SignedInUser } from "../identity/service";
import {
  type DeviceCodeRow,
  answerCode,
  deleteDeviceCodesExpiredBefore,
  deleteExpiredTokensOfFamily,
  findCodeIdByDeviceCodeHash,
  findCodeIdByUserCode,
  findDeviceCode,
  findFamilyIdOfRefreshToken,
  findFamilyIdOfToken,
  findFamilyOwner,
  findLiveAccessToken,
  findPendingCode,
  findRefreshToken,
  findUserEmail,
  insertDeviceCode,
  insertDeviceToken,
  insertTokenFamily,
  isUserCodeTaken,
  liveFamilyIdsOfUser,
  markCodePolled,
  markCodeRedeemed,
  markTokenRotated,
  purgeEndedSignIns,
  purgeExpiredDeviceCodes,
  purgeExpiredDeviceTokens,
  revokeFamily,
  revokeFamilyForReuse,
  setFamilyGeneration,
  slowDownCode,
} from "./store";

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

/** Lock scope of one sign-in (token family): rotation, reuse detection and revocation. */
function familyLock(familyId: string): string {
  return `device:family:${familyId}`;
}

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
    for (const b of nodeCrypto().randomBytes(16)) {
      if (b < 240 && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[b % 20];
    }
  }
  return code;
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) must equal the challenge sent with the code request. */
function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(pkceChallenge(verifier));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && nodeCrypto().timingSafeEqual(computed, expected);
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

  private get intervalS(): number {
    return this.ctx.options.signIn?.deviceIntervalS ?? POLL_INTERVAL_S;
  }

  private iso(ms = this.now): string {
    return new Date(ms).toISOString();
  }

  async createCode(input: { codeChallenge: string; clientName?: string }, request: { baseUrl: string; ip: string }): Promise<DeviceCodeGrant> {
    await this.identity.limiter.take(`device-code:ip:${request.ip}`, this.identity.rateLimits.deviceCodePerIp);
    const deviceCode = randomBase62(43);
    const now = this.now;
    const userCode = await this.store.write(async (tx) => {
      // Picking a user code that is not taken is a read-then-write: one at a time.
      await tx.lock("device:user-codes");
      await deleteDeviceCodesExpiredBefore(tx, this.iso(now - DEVICE_CODE_RETENTION_MS));
      let code = newUserCode();
      while (await isUserCodeTaken(tx, code)) code = newUserCode();
      await insertDeviceCode(tx, {
        id: newId("dev"),
        deviceCodeHash: sha256Hex(deviceCode),
        userCode: code,
        codeChallenge: input.codeChallenge,
        clientName: input.clientName?.trim() || null,
        intervalS: this.intervalS,
        createdAt: this.iso(now),
        expiresAt: this.iso(now + DEVICE_CODE_TTL_MS),
      });
      return formatUserCode(code);
    });
    return {
      device_code: deviceCode,
      user_code: userCode,
      verification_uri: `${request.baseUrl}/device`,
      verification_uri_complete: `${request.baseUrl}/device?user_code=${userCode}`,
      expires_in: DEVICE_CODE_TTL_MS / 1000,
      interval: this.intervalS,
    };
  }

  /** A request still waiting for its person, for the approval page. */
  async pendingRequest(userCode: string): Promise<{ userCode: string; clientName: string | null } | null> {
    const code = normaliseUserCode(userCode);
    if (!code) return null;
    const row = await findPendingCode(this.store, code, this.iso());
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
      await answerCode(tx, row.id, { status, userId: user.id, projectId });
      await this.audit(tx, projectId, {
        action: input.action === "approve" ? "device.approve" : "device.deny",
        subjectId: row.id,
        subjectName: row.client_name ?? "CLI sign-in",
        actor: { email: user.email, type: "user" },
        detail: { userCode: formatUserCode(row.user_code), projectId },
      });
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
        await slowDownCode(tx, row.id, interval, this.iso(now));
        return { error: new DeviceGrantError("slow_down", `Polling too fast; wait ${interval} seconds between requests`, interval) };
      }
      await markCodePolled(tx, row.id, this.iso(now));
      if (row.status === "pending") return { error: new DeviceGrantError("authorization_pending", "Waiting for the user to approve in the browser") };
      if (row.status === "denied") return { error: new DeviceGrantError("access_denied", "The user denied this sign-in") };
      const email = row.user_id ? await findUserEmail(tx, row.user_id) : null;
      if (!row.user_id || !email) return { error: new DeviceGrantError("invalid_grant", "The approving user no longer exists") };
      await markCodeRedeemed(tx, row.id);
      const familyId = newId("tfam");
      await insertTokenFamily(tx, { id: familyId, userId: row.user_id, projectId: row.project_id, clientName: row.client_name, createdAt: this.iso(now) });
      const pair = await this.issuePair(tx, familyId, 1, now + SIGN_IN_MAX_LIFETIME_MS);
      // The CLI's token is minted for the person who approved, for the project they chose: that project's organisation has the row.
      await this.audit(tx, row.project_id, {
        action: "device.token.mint",
        subjectId: familyId,
        subjectName: row.client_name ?? "CLI sign-in",
        actor: { email, type: "user" },
        detail: { projectId: row.project_id },
      });
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
      const familyId = await findFamilyIdOfRefreshToken(tx, hash);
      if (!familyId) return { error: new DeviceGrantError("invalid_grant", "Unknown refresh token") };
      await tx.lock(familyLock(familyId));
      const row = await findRefreshToken(tx, hash);
      if (!row) return { error: new DeviceGrantError("invalid_grant", "Unknown refresh token") };
      if (row.revoked_at) return { error: new DeviceGrantError("invalid_grant", "This sign-in was revoked; sign in again") };
      const now = this.now;
      if (row.rotated_at !== null) {
        await revokeFamilyForReuse(tx, row.family_id, this.iso(now));
        await this.auditRevoke(tx, row.family_id, "refresh token reused", SYSTEM_ACTOR);
        return { error: new DeviceGrantError("invalid_grant", "This refresh token was already used; every token of this sign-in is now revoked") };
      }
      if (row.expires_at <= this.iso(now)) return { error: new DeviceGrantError("invalid_grant", "The refresh token has expired; sign in again") };
      const familyEnd = Date.parse(row.family_created_at) + SIGN_IN_MAX_LIFETIME_MS;
      if (familyEnd <= now) return { error: new DeviceGrantError("invalid_grant", "This sign-in has reached its 90-day limit; sign in again") };

      const generation = Number(row.family_generation) + 1;
      const pair = await this.issuePair(tx, row.family_id, generation, familyEnd);
      await markTokenRotated(tx, hash, this.iso(now));
      await setFamilyGeneration(tx, row.family_id, generation);
      await deleteExpiredTokensOfFamily(tx, row.family_id, this.iso(now));
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
    const deviceCodes = await purgeExpiredDeviceCodes(this.store, this.iso(now - DEVICE_CODE_RETENTION_MS));
    const deviceTokens = await purgeExpiredDeviceTokens(this.store, this.iso(now));
    const signIns = await purgeEndedSignIns(this.store, this.iso(now - SIGN_IN_MAX_LIFETIME_MS));
    return { deviceCodes, deviceTokens, signIns };
  }

  /** Logout: revokes the whole family of an access or refresh token. False when the token is unknown or already revoked. */
  async revoke(token: string): Promise<boolean> {
    return this.store.write(async (tx) => {
      const familyId = await findFamilyIdOfToken(tx, sha256Hex(token));
      if (!familyId) return false;
      await tx.lock(familyLock(familyId));
      const changed = await revokeFamily(tx, familyId, this.iso());
      // Holding the token is the authorisation: the sign-in's person is who signed out.
      if (changed > 0) await this.auditRevoke(tx, familyId, "sign-out");
      return changed > 0;
    });
  }

  /**
   * Ends every CLI sign-in of a person who is being removed from an
   * organisation, in the removal's transaction (call under the
   * organisation's lock). A sign-in reaches every organisation of its
   * person, so each one ends, whichever project it was approved for: none
   * of them comes back if the person is added again. One
   * `device.token.revoke` row each, in the organisation that removed them
   * (the project is named only when it is one of that organisation's).
   */
  async revokeForRemoval(tx: Tx, userId: string, organisationId: string, actor: AuditActor): Promise<number> {
    let revoked = 0;
    const now = this.iso();
    for (const familyId of await liveFamilyIdsOfUser(tx, userId)) {
      await tx.lock(familyLock(familyId));
      if ((await revokeFamily(tx, familyId, now, "member removed")) === 0) continue;
      revoked++;
      const owner = await findFamilyOwner(tx, familyId);
      const projectOrganisation = owner?.project_id ? (await this.ctx.services.projects.organisationOf(owner.project_id))?.id : null;
      await recordAudit(tx, {
        projectId: null,
        organisationId,
        action: "device.token.revoke",
        subjectId: familyId,
        subjectName: owner?.client_name ?? "CLI sign-in",
        actor,
        detail: { reason: "member removed", projectId: projectOrganisation === organisationId ? owner!.project_id : null },
      });
    }
    return revoked;
  }

  /**
   * A CLI sign-in event, in the caller's transaction: a row of the
   * organisation of the project it was approved for (no project: all its
   * projects show it), and of no other; a sign-in approved for no project
   * is the person's own row, in no organisation's trail.
   */
  private async audit(tx: Tx, projectId: string | null, entry: Omit<AuditEntry, "projectId" | "organisationId">): Promise<void> {
    const organisation = projectId ? await this.ctx.services.projects.organisationOf(projectId) : null;
    await recordAudit(tx, { ...entry, projectId: null, organisationId: organisation?.id ?? null });
  }

  private async auditRevoke(tx: Tx, familyId: string, reason: string, actor?: { email: string; type: string }): Promise<void> {
    const owner = await findFamilyOwner(tx, familyId);
    if (!owner) return;
    await this.audit(tx, owner.project_id, {
      action: "device.token.revoke",
      subjectId: familyId,
      subjectName: owner.client_name ?? "CLI sign-in",
      actor: actor ?? { email: owner.email, type: "user" },
      detail: { reason, projectId: owner.project_id },
    });
  }

  /** The person behind a live access token, and the project bound at login: read from the store on every call. */
  private async userOfAccessToken(secret: string): Promise<(SignedInUser & { familyId: string; boundProjectId: string | null }) | null> {
    if (!secret.startsWith(ACCESS_TOKEN_PREFIX)) return null;
    return findLiveAccessToken(this.store, sha256Hex(secret), this.iso());
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
    let id: string | null;
    if (input.deviceCode) {
      id = await findCodeIdByDeviceCodeHash(tx, sha256Hex(input.deviceCode));
    } else {
      const code = input.userCode ? normaliseUserCode(input.userCode) : null;
      id = code ? await findCodeIdByUserCode(tx, code) : null;
    }
    if (!id) return null;
    await tx.lock(`device:code:${id}`);
    return findDeviceCode(tx, id);
  }

  /** A new pair of the family; neither token outlives the sign-in's end (`familyEndMs`). */
  private async issuePair(tx: Tx, familyId: string, generation: number, familyEndMs: number): Promise<{ access_token: string; refresh_token: string; accessExpiresMs: number }> {
    const access = `${ACCESS_TOKEN_PREFIX}${randomBase62(43)}`;
    const refresh = `${REFRESH_TOKEN_PREFIX}${randomBase62(43)}`;
    const now = this.now;
    const accessExpiresMs = Math.min(now + ACCESS_TOKEN_TTL_MS, familyEndMs);
    await insertDeviceToken(tx, { tokenHash: sha256Hex(access), familyId, kind: "access", generation, createdAt: this.iso(now), expiresAt: this.iso(accessExpiresMs) });
    await insertDeviceToken(tx, {
      tokenHash: sha256Hex(refresh),
      familyId,
      kind: "refresh",
      generation,
      createdAt: this.iso(now),
      expiresAt: this.iso(Math.min(now + REFRESH_TOKEN_TTL_MS, familyEndMs)),
    });
    return { access_token: access, refresh_token: refresh, accessExpiresMs };
  }
}
