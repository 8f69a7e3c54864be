import { recordAudit } from "../../lib/audit";
import { badRequest } from "../../lib/errors";
import { sha256Hex } from "../../lib/ids";
import type { Tx } from "../../lib/store";
import { findLiveSession, findPendingInvitationOfLink, hasUsableLink, insertMembership, revokeSession, takeInvitationOfLink } from "./store";
import { type IdentityCore, MAGIC_LINK_TTL_MS, type SignInResult, organisationLock } from "./core";
import type { Role, SignedInUser } from "./types";

// Magic links (and the invitation links they accept) and the sessions they open.

/**
 * Sends a sign-in link when `email` belongs to a member; for anyone else
 * it silently does nothing, so the answer never tells who has an account.
 */
export async function requestMagicLink(core: IdentityCore, email: string, input: { redirect: string | undefined; baseUrl: string; ip: string }): Promise<void> {
  const normalised = email.trim().toLowerCase();
  // The address first: one address cannot spend the allowances of many emails.
  await core.limiter.take(`magic-link:ip:${input.ip}`, core.rateLimits.magicLinkPerIp);
  await core.limiter.take(`magic-link:email:${normalised}`, core.rateLimits.magicLinkPerEmail);
  const link = await core.store.write(async (tx) => {
    await tx.lock(`identity:email:${normalised}`);
    const user = await core.findMember(normalised);
    return user ? { email: user.email, token: await core.issueLink(tx, "magic", user.email, input.redirect, MAGIC_LINK_TTL_MS) } : null;
  });
  if (!link) return;
  core.dispatch({ to: link.email, url: `${input.baseUrl}/auth/magic?token=${link.token}`, reason: "sign-in" });
}

/** Whether a link is still usable, without using it (the GET that mail scanners may follow). */
export async function isLinkUsable(core: IdentityCore, token: string, purpose: "magic" | "setup"): Promise<boolean> {
  return hasUsableLink(core.store, sha256Hex(token), purpose, core.iso());
}

/**
 * Uses a magic link (once, before it expires) and opens a session for its
 * member. An invitation's link is accepted by its use: the person becomes
 * a member with the invited role, in the same transaction.
 */
export async function consumeMagicLink(core: IdentityCore, token: string): Promise<SignInResult> {
  const hash = sha256Hex(token);
  return core.store.write(async (tx) => {
    await tx.lock(`identity:link:${hash}`);
    const link = await core.takeLink(tx, token, "magic");
    const invitation = await takeInvitationOfLink(tx, hash);
    if (invitation) return acceptInvitation(core, tx, invitation, link.redirect);
    const user = link.email ? await core.findMember(link.email) : null;
    if (!user) throw badRequest("This sign-in link no longer matches a member", "token: ask an owner to invite you again");
    return { sessionToken: await core.createSession(tx, user, "magic-link"), user, redirect: link.redirect ?? undefined };
  });
}

/** What an unused invitation link offers (for the page that asks to accept it); null for any other link. */
export async function invitationOfLink(core: IdentityCore, token: string): Promise<{ organisationName: string; role: Role } | null> {
  const row = await findPendingInvitationOfLink(core.store, sha256Hex(token), core.iso());
  return row ? { organisationName: row.organisation_name, role: row.role } : null;
}

/** Makes the invited person a member (`member.join`) and signs them in; in the transaction that took the invitation. */
async function acceptInvitation(core: IdentityCore, tx: Tx, invitation: { organisation_id: string; email: string; role: Role; expires_at: string }, redirect: string | null): Promise<SignInResult> {
  if (invitation.expires_at <= core.iso()) throw badRequest("This invitation has expired", "token: ask an owner to invite you again");
  await tx.lock(organisationLock(invitation.organisation_id));
  const created = await core.ctx.services.projects.findOrCreateUser(invitation.email);
  const user = { id: created.id, email: created.email };
  const actor = { email: user.email, type: "user" };
  // Already a member by another way (the first owner's address, say): the invitation is spent and the role left as it is.
  if ((await insertMembership(tx, invitation.organisation_id, user.id, invitation.role, core.iso())) > 0) {
    await recordAudit(tx, {
      projectId: null,
      organisationId: invitation.organisation_id,
      action: "member.join",
      subjectId: user.id,
      subjectName: user.email,
      actor,
      detail: { via: "invitation link", role: invitation.role },
    });
  }
  // This sign-in happened in the organisation it joins: its row goes there.
  return { sessionToken: await core.createSession(tx, user, "magic-link", {}, [invitation.organisation_id]), user, redirect: redirect ?? undefined };
}

/** The person of a live session, read from the store on every call (a sign-out holds at once on every server). */
export async function sessionUser(core: IdentityCore, token: string | undefined): Promise<(SignedInUser & { sessionId: string }) | null> {
  if (!token) return null;
  return findLiveSession(core.store, sha256Hex(token), core.iso());
}

/** Signs out (a `session.signout` row of the person's own when the session was live: see createSession). */
export async function endSession(core: IdentityCore, token: string | undefined): Promise<void> {
  if (!token) return;
  const hash = sha256Hex(token);
  await core.store.write(async (tx) => {
    const now = core.iso();
    const user = await findLiveSession(tx, hash, now);
    if ((await revokeSession(tx, hash, now)) === 0 || !user) return;
    await recordAudit(tx, {
      projectId: null,
      organisationId: null,
      action: "session.signout",
      subjectId: user.id,
      subjectName: user.email,
      actor: { email: user.email, type: "user" },
    });
  });
}
