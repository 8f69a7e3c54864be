import { type AuditActor, SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import { alreadyExists, forbidden, notFound } from "../../lib/errors";
import { newId, sha256Hex } from "../../lib/ids";
import type { Tx } from "../../lib/store";
import {
  type InvitationRow,
  countOwners,
  deleteInvitation,
  deleteMembership,
  findInvitation,
  findMembershipByEmail,
  findOrganisationIdOfProject,
  insertInvitation,
  listMembers,
  spendSignInLink,
  updateInvitationLink,
  updateInvitationRole,
  updateMemberRole,
} from "./store";
import { DEFAULT_INVITE_ROLE, INVITE_LINK_TTL_MS, type IdentityCore, type Invitation, organisationLock } from "./core";
import type { Member, Role } from "./types";

// Invitations and members of an organisation: who belongs, with which role; the organisation keeps an owner.

/**
 * Invites a person to the organisation of the project: a pending
 * invitation and a link valid 7 days (by mail, or to the outbox without
 * SMTP). They become a member only when they use the link (accepting
 * it); until then they reach nothing. ALREADY_EXISTS when they are a
 * member or have a pending invitation; an expired one is replaced.
 */
export async function invite(core: IdentityCore, projectId: string, input: { email: string; role?: Role }, baseUrl: string, actor: AuditActor = SYSTEM_ACTOR): Promise<Invitation> {
  const { token, ...result } = await createInvitation(core, projectId, input, actor);
  core.dispatch({ to: result.email, url: `${baseUrl}/auth/magic?token=${token}`, reason: "invite", organisationName: result.organisationName });
  return result;
}

/** The invitation and its link's secret, without sending it (invite sends it; tests accept it directly). */
export async function createInvitation(core: IdentityCore, projectId: string, input: { email: string; role?: Role }, actor: AuditActor = SYSTEM_ACTOR): Promise<Invitation & { token: string }> {
  const role = input.role ?? DEFAULT_INVITE_ROLE;
  const email = input.email.trim().toLowerCase();
  return core.store.write(async (tx) => {
    // A project never changes organisation: reading it before the lock is safe.
    const organisation = await core.ctx.services.projects.organisationOf(projectId);
    if (!organisation) throw notFound(`Project ${projectId} not found`);
    await tx.lock(organisationLock(organisation.id));
    if (await findMembershipByEmail(tx, organisation.id, email)) throw alreadyExists(`${email} is already a member of this organisation`, "email");
    const nowMs = core.now();
    const pending = await findInvitation(tx, organisation.id, email);
    if (pending && pending.expires_at > core.iso(nowMs)) {
      throw alreadyExists(`${email} is already invited to this organisation (until ${pending.expires_at})`, "email: remove the invitation (DELETE /api/admin/members/{email}) to send a new one");
    }
    if (pending) await deleteInvitation(tx, pending.id);
    const token = await core.issueLink(tx, "magic", email, undefined, INVITE_LINK_TTL_MS, nowMs);
    const createdAt = core.iso(nowMs);
    const expiresAt = core.iso(nowMs + INVITE_LINK_TTL_MS);
    await insertInvitation(tx, {
      id: newId("inv"),
      organisation_id: organisation.id,
      email,
      role,
      token_hash: sha256Hex(token),
      invited_by: actor.email,
      created_at: createdAt,
      expires_at: expiresAt,
    });
    // Membership spans the organisation: a row of the organisation, shown in each of its projects.
    await recordAudit(tx, { projectId: null, organisationId: organisation.id, action: "member.invite", subjectName: email, actor, detail: { role, expiresAt } });
    return { email, role, organisationId: organisation.id, organisationName: organisation.name, createdAt, expiresAt, status: "invited" as const, token };
  });
}

/**
 * A new link for a pending invitation, for an owner to pass on by hand (no mail server, a lost mail).
 * Only hashes of links are stored, so the link sent before cannot be shown again: it is spent, and the
 * invitation accepts the new one until the same `expiresAt`. Audited (`member.invite.link`); the link
 * itself goes only into the answer, never into the audit trail, the log or the outbox.
 */
export async function inviteLink(core: IdentityCore, projectId: string, email: string, baseUrl: string, actor: AuditActor = SYSTEM_ACTOR): Promise<{ email: string; link: string; expiresAt: string }> {
  return core.store.write(async (tx) => {
    const found = await lockedPerson(core, tx, projectId, email);
    if (!("invitation" in found)) throw notFound(`${found.current.email} is already a member: there is no pending invitation to copy`, "email: see GET /api/admin/members (status invited)");
    const { invitation } = found;
    const nowMs = core.now();
    const token = await core.issueLink(tx, "magic", invitation.email, undefined, Date.parse(invitation.expires_at) - nowMs, nowMs);
    await spendSignInLink(tx, invitation.token_hash, core.iso(nowMs));
    await updateInvitationLink(tx, invitation.id, sha256Hex(token));
    await recordAudit(tx, {
      projectId: null,
      organisationId: invitation.organisation_id,
      action: "member.invite.link",
      subjectName: invitation.email,
      actor,
      detail: { role: invitation.role, expiresAt: invitation.expires_at },
    });
    return { email: invitation.email, link: `${baseUrl}/auth/magic?token=${token}`, expiresAt: invitation.expires_at };
  });
}

export async function members(core: IdentityCore, projectId: string): Promise<Member[]> {
  return listMembers(core.store, projectId, core.iso());
}

/** Changes a member's role (or a pending invitation's); the organisation keeps at least one owner. */
export async function setRole(core: IdentityCore, projectId: string, email: string, role: Role, actor: AuditActor = SYSTEM_ACTOR): Promise<Member> {
  return core.store.write(async (tx) => {
    const found = await lockedPerson(core, tx, projectId, email);
    if ("invitation" in found) {
      const { invitation } = found;
      await updateInvitationRole(tx, invitation.id, role);
      await recordAudit(tx, {
        projectId: null,
        organisationId: invitation.organisation_id,
        action: "member.role",
        subjectName: invitation.email,
        actor,
        detail: { from: invitation.role, to: role, status: "invited" },
      });
      return { email: invitation.email, role, status: "invited" as const, joinedAt: null, invitedAt: invitation.created_at, expiresAt: invitation.expires_at };
    }
    const { organisationId, userId, current } = found;
    if (current.role === "owner" && role !== "owner") await keepAnOwner(core, tx, organisationId);
    await updateMemberRole(tx, organisationId, userId, role);
    await recordAudit(tx, {
      projectId: null,
      organisationId,
      action: "member.role",
      subjectId: userId,
      subjectName: current.email,
      actor,
      detail: { from: current.role, to: role },
    });
    return { ...current, role };
  });
}

/**
 * Removes a person from the organisation, never the last owner; or
 * withdraws their pending invitation (its link then signs nobody in). A
 * member's CLI sign-ins end in the same transaction (one
 * `device.token.revoke` row each), so adding them again revives none.
 */
export async function removeMember(core: IdentityCore, projectId: string, email: string, actor: AuditActor = SYSTEM_ACTOR): Promise<void> {
  await core.store.write(async (tx) => {
    const found = await lockedPerson(core, tx, projectId, email);
    if ("invitation" in found) {
      const { invitation } = found;
      await deleteInvitation(tx, invitation.id);
      // Its link would still sign in a person who has an account elsewhere: it is spent with the invitation.
      await spendSignInLink(tx, invitation.token_hash, core.iso());
      await recordAudit(tx, {
        projectId: null,
        organisationId: invitation.organisation_id,
        action: "member.uninvite",
        subjectName: invitation.email,
        actor,
        detail: { role: invitation.role },
      });
      return;
    }
    const { organisationId, userId, current } = found;
    if (current.role === "owner") await keepAnOwner(core, tx, organisationId);
    await deleteMembership(tx, organisationId, userId);
    const cliSignInsRevoked = await core.ctx.services.device.revokeForRemoval(tx, userId, organisationId, actor);
    await recordAudit(tx, {
      projectId: null,
      organisationId,
      action: "member.remove",
      subjectId: userId,
      subjectName: current.email,
      actor,
      detail: { role: current.role, cliSignInsRevoked },
    });
  });
}

/**
 * Locks the organisation of the project (`org:<id>`), then reads the
 * person's membership there, else their pending invitation; call inside
 * the transaction that changes it.
 */
async function lockedPerson(
  core: IdentityCore,
  tx: Tx,
  projectId: string,
  email: string,
): Promise<{ organisationId: string; userId: string; current: Member & { status: "active" } } | { invitation: InvitationRow }> {
  const notMember = () => notFound(`${email} is not a member of this organisation`, "email: see GET /api/admin/members");
  // A project never changes organisation: reading it before the lock is safe.
  const organisationId = await findOrganisationIdOfProject(tx, projectId);
  if (!organisationId) throw notMember();
  await tx.lock(organisationLock(organisationId));
  const row = await findMembershipByEmail(tx, organisationId, email.trim());
  if (row) return { organisationId: row.organisation_id, userId: row.user_id, current: { email: row.email, role: row.role, status: "active", joinedAt: row.created_at } };
  const invitation = await findInvitation(tx, organisationId, email.trim());
  if (invitation && invitation.expires_at > core.iso()) return { invitation };
  throw notMember();
}

/** Refuses a change that would leave the organisation without an owner (call under the organisation's lock, before removing or demoting one). */
async function keepAnOwner(core: IdentityCore, tx: Tx, organisationId: string): Promise<void> {
  if ((await countOwners(tx, organisationId)) <= 1) throw forbidden("An organisation needs at least one owner", "role: make someone else owner first");
}
