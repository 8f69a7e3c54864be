import type { Queryable, Store } from "../../lib/store";
import { CLEANUP_BATCH, deleteInBatches, type SignedInUser } from "../identity/service";

/**
 * The device module's queries: device codes, token families (one per
 * sign-in) and their access and refresh tokens. Plain functions over a
 * `Queryable` (the store, or the caller's transaction); locks and the grant
 * logic stay in the service. Secrets arrive here already hashed.
 */

export type DeviceCodeRow = {
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

export type RefreshRow = {
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

// Device codes.

export async function deleteDeviceCodesExpiredBefore(q: Queryable, cutoff: string): Promise<void> {
  await q.run("DELETE FROM device_codes WHERE expires_at < ?", cutoff);
}

export async function isUserCodeTaken(q: Queryable, userCode: string): Promise<boolean> {
  return (await q.one("SELECT 1 AS one FROM device_codes WHERE user_code = ?", userCode)) !== undefined;
}

/** A new code, `pending`. */
export async function insertDeviceCode(
  q: Queryable,
  code: { id: string; deviceCodeHash: string; userCode: string; codeChallenge: string; clientName: string | null; intervalS: number; createdAt: string; expiresAt: string },
): Promise<void> {
  await q.run(
    `INSERT INTO device_codes (id, device_code_hash, user_code, code_challenge, client_name, status, interval_s, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
    code.id,
    code.deviceCodeHash,
    code.userCode,
    code.codeChallenge,
    code.clientName,
    code.intervalS,
    code.createdAt,
    code.expiresAt,
  );
}

/** The client name of a pending, unexpired code, or null when there is no such code. */
export async function findPendingCode(q: Queryable, userCode: string, now: string): Promise<{ client_name: string | null } | null> {
  return (
    (await q.one<{ client_name: string | null }>(
      "SELECT client_name FROM device_codes WHERE user_code = ? AND status = 'pending' AND expires_at > ?",
      userCode,
      now,
    )) ?? null
  );
}

export async function findCodeIdByDeviceCodeHash(q: Queryable, deviceCodeHash: string): Promise<string | null> {
  const row = await q.one<{ id: string }>("SELECT id FROM device_codes WHERE device_code_hash = ?", deviceCodeHash);
  return row?.id ?? null;
}

export async function findCodeIdByUserCode(q: Queryable, userCode: string): Promise<string | null> {
  const row = await q.one<{ id: string }>("SELECT id FROM device_codes WHERE user_code = ?", userCode);
  return row?.id ?? null;
}

export async function findDeviceCode(q: Queryable, id: string): Promise<DeviceCodeRow | null> {
  return (await q.one<DeviceCodeRow>(`SELECT ${DEVICE_CODE_COLUMNS} FROM device_codes WHERE id = ?`, id)) ?? null;
}

/** Records the person's answer (`approved` with the project bound, or `denied`). */
export async function answerCode(q: Queryable, id: string, answer: { status: "approved" | "denied"; userId: string; projectId: string | null }): Promise<void> {
  await q.run("UPDATE device_codes SET status = ?, user_id = ?, project_id = ? WHERE id = ?", answer.status, answer.userId, answer.projectId, id);
}

/** A poll that came too early: the interval the client must keep from now on. */
export async function slowDownCode(q: Queryable, id: string, intervalS: number, now: string): Promise<void> {
  await q.run("UPDATE device_codes SET interval_s = ?, last_polled_at = ? WHERE id = ?", intervalS, now, id);
}

export async function markCodePolled(q: Queryable, id: string, now: string): Promise<void> {
  await q.run("UPDATE device_codes SET last_polled_at = ? WHERE id = ?", now, id);
}

export async function markCodeRedeemed(q: Queryable, id: string): Promise<void> {
  await q.run("UPDATE device_codes SET status = 'redeemed' WHERE id = ?", id);
}

export async function findUserEmail(q: Queryable, userId: string): Promise<string | null> {
  return (await q.one<{ email: string }>("SELECT email FROM users WHERE id = ?", userId))?.email ?? null;
}

// Token families and tokens.

/** A new sign-in, at generation 1. */
export async function insertTokenFamily(
  q: Queryable,
  family: { id: string; userId: string; projectId: string | null; clientName: string | null; createdAt: string },
): Promise<void> {
  await q.run(
    "INSERT INTO token_families (id, user_id, project_id, client_name, generation, created_at) VALUES (?, ?, ?, ?, 1, ?)",
    family.id,
    family.userId,
    family.projectId,
    family.clientName,
    family.createdAt,
  );
}

export async function insertDeviceToken(
  q: Queryable,
  token: { tokenHash: string; familyId: string; kind: "access" | "refresh"; generation: number; createdAt: string; expiresAt: string },
): Promise<void> {
  await q.run(
    "INSERT INTO device_tokens (token_hash, family_id, kind, generation, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
    token.tokenHash,
    token.familyId,
    token.kind,
    token.generation,
    token.createdAt,
    token.expiresAt,
  );
}

/** The family of a refresh token (used or not), or null. */
export async function findFamilyIdOfRefreshToken(q: Queryable, tokenHash: string): Promise<string | null> {
  const row = await q.one<{ family_id: string }>("SELECT family_id FROM device_tokens WHERE token_hash = ? AND kind = 'refresh'", tokenHash);
  return row?.family_id ?? null;
}

/** Whose sign-in a token family is, for its audit rows. */
export async function findFamilyOwner(q: Queryable, familyId: string): Promise<{ user_id: string; email: string; client_name: string | null; project_id: string | null } | null> {
  return (
    (await q.one<{ user_id: string; email: string; client_name: string | null; project_id: string | null }>(
      "SELECT f.user_id, u.email, f.client_name, f.project_id FROM token_families f JOIN users u ON u.id = f.user_id WHERE f.id = ?",
      familyId,
    )) ?? null
  );
}

/** The family of an access or refresh token, or null. */
export async function findFamilyIdOfToken(q: Queryable, tokenHash: string): Promise<string | null> {
  const row = await q.one<{ family_id: string }>("SELECT family_id FROM device_tokens WHERE token_hash = ?", tokenHash);
  return row?.family_id ?? null;
}

/** A refresh token with its family and the family's person, or null. */
export async function findRefreshToken(q: Queryable, tokenHash: string): Promise<RefreshRow | null> {
  return (
    (await q.one<RefreshRow>(
      `SELECT t.family_id, t.generation, t.expires_at, t.rotated_at, f.generation AS family_generation, f.created_at AS family_created_at,
                f.revoked_at, f.user_id, f.project_id, u.email
         FROM device_tokens t JOIN token_families f ON f.id = t.family_id JOIN users u ON u.id = f.user_id
         WHERE t.token_hash = ? AND t.kind = 'refresh'`,
      tokenHash,
    )) ?? null
  );
}

/**
 * The person behind an unexpired access token of an unrevoked family, with
 * the family and the project bound at login; null when there is none.
 */
export async function findLiveAccessToken(
  q: Queryable,
  tokenHash: string,
  now: string,
): Promise<(SignedInUser & { familyId: string; boundProjectId: string | null }) | null> {
  const row = await q.one<{ family_id: string; user_id: string; project_id: string | null; email: string }>(
    `SELECT f.id AS family_id, f.user_id, f.project_id, u.email
       FROM device_tokens t JOIN token_families f ON f.id = t.family_id JOIN users u ON u.id = f.user_id
       WHERE t.token_hash = ? AND t.kind = 'access' AND t.expires_at > ? AND f.revoked_at IS NULL`,
    tokenHash,
    now,
  );
  return row ? { id: row.user_id, email: row.email, familyId: row.family_id, boundProjectId: row.project_id } : null;
}

export async function markTokenRotated(q: Queryable, tokenHash: string, now: string): Promise<void> {
  await q.run("UPDATE device_tokens SET rotated_at = ? WHERE token_hash = ?", now, tokenHash);
}

export async function setFamilyGeneration(q: Queryable, familyId: string, generation: number): Promise<void> {
  await q.run("UPDATE token_families SET generation = ? WHERE id = ?", generation, familyId);
}

export async function deleteExpiredTokensOfFamily(q: Queryable, familyId: string, now: string): Promise<void> {
  await q.run("DELETE FROM device_tokens WHERE family_id = ? AND expires_at <= ?", familyId, now);
}

/** Revokes the family because a spent refresh token came back. */
export async function revokeFamilyForReuse(q: Queryable, familyId: string, now: string): Promise<void> {
  await q.run("UPDATE token_families SET revoked_at = ?, revoked_reason = 'refresh token reused' WHERE id = ?", now, familyId);
}

/** Revokes the family (logout, or its person removed from an organisation); 0 when it was already revoked. */
export function revokeFamily(q: Queryable, familyId: string, now: string, reason: "revoked" | "member removed" = "revoked"): Promise<number> {
  return q.run("UPDATE token_families SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL", now, reason, familyId);
}

/** A person's unrevoked sign-ins, by id. */
export async function liveFamilyIdsOfUser(q: Queryable, userId: string): Promise<string[]> {
  const rows = await q.all<{ id: string }>("SELECT id FROM token_families WHERE user_id = ? AND revoked_at IS NULL ORDER BY id", userId);
  return rows.map((r) => r.id);
}

// Cleanup: `purge*` delete in batches, each batch its own transaction (see deleteInBatches).

export function purgeExpiredDeviceCodes(store: Store, cutoff: string): Promise<number> {
  return deleteInBatches(
    store,
    `DELETE FROM device_codes WHERE id IN (SELECT id FROM device_codes WHERE expires_at < ?1 LIMIT ${CLEANUP_BATCH})`,
    cutoff,
  );
}

export function purgeExpiredDeviceTokens(store: Store, now: string): Promise<number> {
  return deleteInBatches(
    store,
    `DELETE FROM device_tokens WHERE token_hash IN (SELECT token_hash FROM device_tokens WHERE expires_at <= ?1 LIMIT ${CLEANUP_BATCH})`,
    now,
  );
}

/** Sign-ins that can no longer be used: revoked, begun at or before `cutoff`, or with no token left. */
export function purgeEndedSignIns(store: Store, cutoff: string): Promise<number> {
  return deleteInBatches(
    store,
    `DELETE FROM token_families WHERE id IN (SELECT f.id FROM token_families f
         WHERE f.revoked_at IS NOT NULL OR f.created_at <= ?1 OR NOT EXISTS (SELECT 1 FROM device_tokens t WHERE t.family_id = f.id) LIMIT ${CLEANUP_BATCH})`,
    cutoff,
  );
}
