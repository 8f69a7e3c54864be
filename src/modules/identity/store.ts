// Over 400 lines: all of identity's SQL (people, invitations, sign-in links, sessions, OIDC logins) lives here, as the module layout wants (store = SQL).
import type { Queryable, Store } from "../../lib/store";
import type { AccessibleProject, Member, Role, SignedInUser } from "./types";

/**
 * The identity module's queries: memberships as sign-in sees them,
 * single-use sign-in links, sessions, pending OIDC logins and OIDC
 * bindings. Plain functions over a `Queryable` (the store, or the caller's
 * transaction); locks, audit and validation stay in the service. Secrets
 * arrive here already hashed.
 */

/** Rows one cleanup transaction deletes at most (the write lock is held briefly). */
export const CLEANUP_BATCH = 500;

/**
 * Runs a batched DELETE (at most CLEANUP_BATCH rows a transaction, `?1` =
 * the cut-off) until a batch deletes fewer; the number deleted. The SQL
 * selects its batch by primary key: `DELETE FROM t WHERE pk IN (SELECT pk
 * FROM t WHERE ... LIMIT 500)`.
 */
export async function deleteInBatches(store: Store, sql: string, cutoff: string): Promise<number> {
  let total = 0;
  for (;;) {
    const changes = await store.write((tx) => tx.run(sql, cutoff));
    total += changes;
    if (changes < CLEANUP_BATCH) return total;
  }
}

export type MembershipRow = { organisation_id: string; user_id: string; email: string; role: Role; created_at: string };

/** Byte order, as SQLite sorts (PostgreSQL would sort by its collation): lists are sorted in JS on both engines. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// People and what they reach.

/** A user (email compared case-insensitively) who belongs to at least one organisation. */
export async function findMemberByEmail(q: Queryable, email: string): Promise<SignedInUser | null> {
  return (
    (await q.one<SignedInUser>(
      "SELECT u.id, u.email FROM users u WHERE lower(u.email) = lower(?) AND EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id)",
      email,
    )) ?? null
  );
}

/** A user, by id, who belongs to at least one organisation (the by-id twin of findMemberByEmail). */
export async function findMemberById(q: Queryable, userId: string): Promise<SignedInUser | null> {
  return (
    (await q.one<SignedInUser>(
      "SELECT u.id, u.email FROM users u WHERE u.id = ? AND EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id)",
      userId,
    )) ?? null
  );
}

export async function countUsers(q: Queryable): Promise<number> {
  const row = await q.one<{ n: number | string }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM users");
  return Number(row?.n ?? 0);
}

/** Every project of the user's organisations, by organisation (name, then id) then project (name, then id). */
export async function listAccessibleProjects(q: Queryable, userId: string): Promise<AccessibleProject[]> {
  const rows = await q.all<{ id: string; name: string; organisation_id: string; organisation_name: string }>(
    `SELECT p.id, p.name, o.id AS organisation_id, o.name AS organisation_name
       FROM memberships m JOIN organisations o ON o.id = m.organisation_id JOIN projects p ON p.organisation_id = o.id
       WHERE m.user_id = ?`,
    userId,
  );
  // Sorted here, not by the engine: SQLite compares bytes, PostgreSQL its collation.
  rows.sort((a, b) => compare(a.organisation_name, b.organisation_name) || compare(a.organisation_id, b.organisation_id) || compare(a.name, b.name) || compare(a.id, b.id));
  // snake_case aliases: PostgreSQL folds unquoted camelCase aliases to lower case.
  return rows.map((r) => ({ id: r.id, name: r.name, organisationId: r.organisation_id, organisationName: r.organisation_name }));
}

/** The user's role in the organisation of the project, or null. */
export async function findRoleInProject(q: Queryable, projectId: string, userId: string): Promise<Role | null> {
  const row = await q.one<{ role: Role }>(
    `SELECT m.role FROM projects p JOIN memberships m ON m.organisation_id = p.organisation_id
       WHERE p.id = ? AND m.user_id = ?`,
    projectId,
    userId,
  );
  return row?.role ?? null;
}

export async function findRoleInOrganisation(q: Queryable, organisationId: string, userId: string): Promise<Role | null> {
  const row = await q.one<{ role: Role }>("SELECT role FROM memberships WHERE organisation_id = ? AND user_id = ?", organisationId, userId);
  return row?.role ?? null;
}

// Organisations and memberships.

/** The first organisation created (ties by id), or null. */
export async function findFirstOrganisationId(q: Queryable): Promise<string | null> {
  const row = await q.one<{ id: string }>("SELECT id FROM organisations ORDER BY created_at, id LIMIT 1");
  return row?.id ?? null;
}

export async function findOrganisationIdOfProject(q: Queryable, projectId: string): Promise<string | null> {
  const row = await q.one<{ organisation_id: string }>("SELECT organisation_id FROM projects WHERE id = ?", projectId);
  return row?.organisation_id ?? null;
}

/** Adds a membership; 0 when the user already belongs to the organisation (whatever their role). */
export function insertMembership(q: Queryable, organisationId: string, userId: string, role: Role, createdAt: string): Promise<number> {
  return q.run(
    "INSERT INTO memberships (organisation_id, user_id, role, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
    organisationId,
    userId,
    role,
    createdAt,
  );
}

/** Makes the user an owner of the organisation, unless they already belong to it (their role is then left as it is). */
/** Answers 1 when the membership was made, 0 when the person already belonged. */
export function insertOwnerMembershipIfAbsent(q: Queryable, organisationId: string, userId: string, createdAt: string): Promise<number> {
  return q.run(
    "INSERT INTO memberships (organisation_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?) ON CONFLICT DO NOTHING",
    organisationId,
    userId,
    createdAt,
  );
}

/**
 * The members of the project's organisation, by join time then email, then
 * its pending (unexpired) invitations, by invitation time then email.
 */
export async function listMembers(q: Queryable, projectId: string, now: string): Promise<Member[]> {
  const rows = await q.all<{ email: string; role: Role; created_at: string }>(
    `SELECT u.email, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.organisation_id = (SELECT organisation_id FROM projects WHERE id = ?)`,
    projectId,
  );
  rows.sort((a, b) => compare(a.created_at, b.created_at) || compare(a.email, b.email));
  const invited = await q.all<{ email: string; role: Role; created_at: string; expires_at: string }>(
    `SELECT email, role, created_at, expires_at FROM invitations
       WHERE organisation_id = (SELECT organisation_id FROM projects WHERE id = ?) AND expires_at > ?`,
    projectId,
    now,
  );
  invited.sort((a, b) => compare(a.created_at, b.created_at) || compare(a.email, b.email));
  return [
    ...rows.map((r) => ({ email: r.email, role: r.role, status: "active" as const, joinedAt: r.created_at })),
    ...invited.map((r) => ({ email: r.email, role: r.role, status: "invited" as const, joinedAt: null, invitedAt: r.created_at, expiresAt: r.expires_at })),
  ];
}

// Invitations.

export type InvitationRow = { id: string; organisation_id: string; email: string; role: Role; token_hash: string; invited_by: string; created_at: string; expires_at: string };

const INVITATION_COLUMNS = "id, organisation_id, email, role, token_hash, invited_by, created_at, expires_at";

/** The invitation (pending or expired) of that address (case-insensitive) to the organisation, or null. */
export async function findInvitation(q: Queryable, organisationId: string, email: string): Promise<InvitationRow | null> {
  return (await q.one<InvitationRow>(`SELECT ${INVITATION_COLUMNS} FROM invitations WHERE organisation_id = ? AND email = lower(?)`, organisationId, email)) ?? null;
}

export async function insertInvitation(q: Queryable, row: InvitationRow): Promise<void> {
  await q.run(
    `INSERT INTO invitations (${INVITATION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    row.id,
    row.organisation_id,
    row.email.toLowerCase(),
    row.role,
    row.token_hash,
    row.invited_by,
    row.created_at,
    row.expires_at,
  );
}

export async function deleteInvitation(q: Queryable, id: string): Promise<void> {
  await q.run("DELETE FROM invitations WHERE id = ?", id);
}

export async function updateInvitationRole(q: Queryable, id: string, role: Role): Promise<void> {
  await q.run("UPDATE invitations SET role = ? WHERE id = ?", role, id);
}

/** Points an invitation at a new link (an owner copied one; the old link was spent in the same transaction). */
export async function updateInvitationLink(q: Queryable, id: string, tokenHash: string): Promise<void> {
  await q.run("UPDATE invitations SET token_hash = ? WHERE id = ?", tokenHash, id);
}

/** Takes (deletes) the invitation a sign-in link carries and answers it; null when the link is no invitation's. One statement: accepted once. */
export async function takeInvitationOfLink(q: Queryable, tokenHash: string): Promise<InvitationRow | null> {
  return (await q.one<InvitationRow>(`DELETE FROM invitations WHERE token_hash = ? RETURNING ${INVITATION_COLUMNS}`, tokenHash)) ?? null;
}

/** The organisation and role an invitation link offers, while it is pending; for the page that asks to accept it. */
export async function findPendingInvitationOfLink(q: Queryable, tokenHash: string, now: string): Promise<{ organisation_name: string; role: Role } | null> {
  return (
    (await q.one<{ organisation_name: string; role: Role }>(
      `SELECT o.name AS organisation_name, i.role FROM invitations i JOIN organisations o ON o.id = i.organisation_id WHERE i.token_hash = ? AND i.expires_at > ?`,
      tokenHash,
      now,
    )) ?? null
  );
}

/** The membership of the person of that email (case-insensitive) in the organisation, or null. */
export async function findMembershipByEmail(q: Queryable, organisationId: string, email: string): Promise<MembershipRow | null> {
  return (
    (await q.one<MembershipRow>(
      `SELECT m.organisation_id, m.user_id, u.email, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.organisation_id = ? AND lower(u.email) = lower(?)`,
      organisationId,
      email,
    )) ?? null
  );
}

export async function countOwners(q: Queryable, organisationId: string): Promise<number> {
  const row = await q.one<{ n: number | string }>(
    "SELECT CAST(COUNT(*) AS INTEGER) AS n FROM memberships WHERE organisation_id = ? AND role = 'owner'",
    organisationId,
  );
  return Number(row?.n ?? 0);
}

export async function updateMemberRole(q: Queryable, organisationId: string, userId: string, role: Role): Promise<void> {
  await q.run("UPDATE memberships SET role = ? WHERE organisation_id = ? AND user_id = ?", role, organisationId, userId);
}

export async function deleteMembership(q: Queryable, organisationId: string, userId: string): Promise<void> {
  await q.run("DELETE FROM memberships WHERE organisation_id = ? AND user_id = ?", organisationId, userId);
}

// Sign-in links.

export async function insertSignInLink(
  q: Queryable,
  link: { tokenHash: string; purpose: "magic" | "setup"; email: string | null; redirect: string | null; createdAt: string; expiresAt: string },
): Promise<void> {
  await q.run(
    "INSERT INTO sign_in_links (token_hash, purpose, email, redirect, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
    link.tokenHash,
    link.purpose,
    link.email,
    link.redirect,
    link.createdAt,
    link.expiresAt,
  );
}

/** Whether an unused, unexpired link of that purpose exists. */
export async function hasUsableLink(q: Queryable, tokenHash: string, purpose: "magic" | "setup", now: string): Promise<boolean> {
  const row = await q.one<{ one: number }>(
    "SELECT 1 AS one FROM sign_in_links WHERE token_hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?",
    tokenHash,
    purpose,
    now,
  );
  return row !== undefined;
}

/** Marks an unused, unexpired link used and answers what it carried; null when there was none. One statement: of two uses, one wins. */
export async function useSignInLink(
  q: Queryable,
  tokenHash: string,
  purpose: "magic" | "setup",
  now: string,
): Promise<{ email: string | null; redirect: string | null; created_at: string } | null> {
  return (
    (await q.one<{ email: string | null; redirect: string | null; created_at: string }>(
      `UPDATE sign_in_links SET used_at = ?1 WHERE token_hash = ?2 AND purpose = ?3 AND used_at IS NULL AND expires_at > ?1
       RETURNING email, redirect, created_at`,
      now,
      tokenHash,
      purpose,
    )) ?? null
  );
}

/** Spends a link without using it (a withdrawn invitation's): it then signs nobody in. */
export async function spendSignInLink(q: Queryable, tokenHash: string, now: string): Promise<void> {
  await q.run("UPDATE sign_in_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL", now, tokenHash);
}

export async function deleteSetupLinks(q: Queryable): Promise<void> {
  await q.run("DELETE FROM sign_in_links WHERE purpose = 'setup'");
}

// Sessions.

export async function insertSession(q: Queryable, session: { id: string; tokenHash: string; userId: string; createdAt: string; expiresAt: string }): Promise<void> {
  await q.run(
    "INSERT INTO sessions (id, token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
    session.id,
    session.tokenHash,
    session.userId,
    session.createdAt,
    session.expiresAt,
  );
}

/** The user of an unrevoked, unexpired session, with the session's id; null when there is none. */
export async function findLiveSession(q: Queryable, tokenHash: string, now: string): Promise<(SignedInUser & { sessionId: string }) | null> {
  const row = await q.one<{ id: string; user_id: string; email: string }>(
    `SELECT s.id, s.user_id, u.email FROM sessions s JOIN users u ON u.id = s.user_id
       WHERE s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ?`,
    tokenHash,
    now,
  );
  return row ? { id: row.user_id, email: row.email, sessionId: row.id } : null;
}

/** Ends a session; answers 1 when it was live (of two sign-outs at once, one ends it). */
export function revokeSession(q: Queryable, tokenHash: string, now: string): Promise<number> {
  return q.run("UPDATE sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL", now, tokenHash);
}

// OIDC.

export async function deleteExpiredOidcLogins(q: Queryable, now: string): Promise<void> {
  await q.run("DELETE FROM oidc_logins WHERE expires_at <= ?", now);
}

export async function insertOidcLogin(
  q: Queryable,
  login: { stateHash: string; sealed: string; redirect: string | null; createdAt: string; expiresAt: string },
): Promise<void> {
  await q.run(
    "INSERT INTO oidc_logins (state_hash, sealed, redirect, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
    login.stateHash,
    login.sealed,
    login.redirect,
    login.createdAt,
    login.expiresAt,
  );
}

/** Deletes the pending login of a state and answers it (expired or not); null when there was none. */
export async function takeOidcLogin(q: Queryable, stateHash: string): Promise<{ sealed: string; redirect: string | null; expires_at: string } | null> {
  // One statement takes it: of two callbacks with the same state, only one gets the row.
  return (
    (await q.one<{ sealed: string; redirect: string | null; expires_at: string }>(
      "DELETE FROM oidc_logins WHERE state_hash = ? RETURNING sealed, redirect, expires_at",
      stateHash,
    )) ?? null
  );
}

/** The user bound to (issuer, subject), or null. */
export async function findBoundUserId(q: Queryable, issuer: string, subject: string): Promise<string | null> {
  const row = await q.one<{ user_id: string }>("SELECT user_id FROM user_identities WHERE issuer = ? AND subject = ?", issuer, subject);
  return row?.user_id ?? null;
}

/** Whether the user is already bound to some subject of the issuer. */
export async function hasIdentityAt(q: Queryable, issuer: string, userId: string): Promise<boolean> {
  const row = await q.one<{ subject: string }>("SELECT subject FROM user_identities WHERE issuer = ? AND user_id = ? LIMIT 1", issuer, userId);
  return row !== undefined;
}

/** Records a binding's latest email and use. */
export async function touchIdentity(q: Queryable, identity: { issuer: string; subject: string; email: string }, now: string): Promise<void> {
  await q.run(
    "UPDATE user_identities SET email = ?, last_used_at = ? WHERE issuer = ? AND subject = ?",
    identity.email,
    now,
    identity.issuer,
    identity.subject,
  );
}

export async function insertIdentity(q: Queryable, identity: { issuer: string; subject: string; email: string }, userId: string, now: string): Promise<void> {
  await q.run(
    "INSERT INTO user_identities (issuer, subject, user_id, email, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?)",
    identity.issuer,
    identity.subject,
    userId,
    identity.email,
    now,
    now,
  );
}

// Cleanup: `purge*` delete in batches, each batch its own transaction (see deleteInBatches).

export function purgeExpiredSessions(store: Store, now: string): Promise<number> {
  return deleteInBatches(
    store,
    `DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at <= ?1 OR revoked_at IS NOT NULL LIMIT ${CLEANUP_BATCH})`,
    now,
  );
}

export function purgeExpiredSignInLinks(store: Store, now: string): Promise<number> {
  return deleteInBatches(
    store,
    `DELETE FROM sign_in_links WHERE token_hash IN (SELECT token_hash FROM sign_in_links WHERE expires_at <= ?1 LIMIT ${CLEANUP_BATCH})`,
    now,
  );
}

export function purgeExpiredInvitations(store: Store, now: string): Promise<number> {
  return deleteInBatches(store, `DELETE FROM invitations WHERE id IN (SELECT id FROM invitations WHERE expires_at <= ?1 LIMIT ${CLEANUP_BATCH})`, now);
}

export function purgeExpiredOidcLogins(store: Store, now: string): Promise<number> {
  return deleteInBatches(
    store,
    `DELETE FROM oidc_logins WHERE state_hash IN (SELECT state_hash FROM oidc_logins WHERE expires_at <= ?1 LIMIT ${CLEANUP_BATCH})`,
    now,
  );
}
