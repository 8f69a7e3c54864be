import type { AuditActor } from "../../lib/audit";
import { CLEANUP_BATCH, deleteInBatches, findRoleInOrganisation, findRoleInProject, listAccessibleProjects, purgeExpiredInvitations, purgeExpiredOidcLogins, purgeExpiredSessions, purgeExpiredSignInLinks } from "./store";
import { IdentityCore, type Invitation, type SignInResult } from "./core";
import * as links from "./links";
import * as setup from "./setup";
import * as oidcSignIn from "./oidc-signin";
import * as people from "./members";
import { ROLES, type Role, type SignedInUser, type AccessibleProject, type Member } from "./types";
export { ROLES, type Role, type SignedInUser, type AccessibleProject, type Member };
export {
  DEFAULT_INVITE_ROLE,
  FALLBACK_OUTBOX_PATH,
  INVITE_LINK_TTL_MS,
  MAGIC_LINK_TTL_MS,
  SESSION_TTL_MS,
  SETUP_LINK_TTL_MS,
  organisationLock,
  type Invitation,
  type SignInMethod,
  type SignInResult,
} from "./core";

// The device module runs its cleanup through these.
export { CLEANUP_BATCH, deleteInBatches };

/**
 * People and their browser sign-in: members of organisations, single-use
 * links (magic links, the first-run setup link), sessions, OIDC and
 * invitations. Only SHA-256 hashes of every secret are stored.
 *
 * Nothing about sessions or memberships is cached: every request reads them
 * from the store, so a sign-out, a removal or a role change holds on every
 * server from the next request on.
 *
 * The flows live in links.ts, setup.ts, oidc-signin.ts and members.ts; what
 * they share (clock, mailer, links, sessions) in core.ts. This class is the
 * one face the routes and other modules call.
 */
export class IdentityService extends IdentityCore {
  // People and what they reach.

  async accessibleProjects(userId: string): Promise<AccessibleProject[]> {
    return listAccessibleProjects(this.store, userId);
  }

  /** The person's role in the organisation of the project, or null when they are not a member. */
  async roleIn(userId: string, projectId: string): Promise<Role | null> {
    return findRoleInProject(this.store, projectId, userId);
  }

  /** The person's role in an organisation, or null when they are not a member. */
  async roleInOrganisation(userId: string, organisationId: string): Promise<Role | null> {
    return findRoleInOrganisation(this.store, organisationId, userId);
  }

  async canAccess(userId: string, projectId: string): Promise<boolean> {
    return (await this.roleIn(userId, projectId)) !== null;
  }

  // Magic links and sessions (links.ts).

  requestMagicLink(email: string, input: { redirect: string | undefined; baseUrl: string; ip: string }): Promise<void> {
    return links.requestMagicLink(this, email, input);
  }
  isLinkUsable(token: string, purpose: "magic" | "setup"): Promise<boolean> {
    return links.isLinkUsable(this, token, purpose);
  }
  consumeMagicLink(token: string): Promise<SignInResult> {
    return links.consumeMagicLink(this, token);
  }
  invitationOfLink(token: string): Promise<{ organisationName: string; role: Role } | null> {
    return links.invitationOfLink(this, token);
  }
  sessionUser(token: string | undefined): Promise<(SignedInUser & { sessionId: string }) | null> {
    return links.sessionUser(this, token);
  }
  endSession(token: string | undefined): Promise<void> {
    return links.endSession(this, token);
  }

  // First run (setup.ts).

  bootstrap(input: { adminEmail?: string; baseUrl: string }): Promise<{ setupUrl: string } | null> {
    return setup.bootstrap(this, input);
  }
  completeSetup(token: string, input: { email: string; organisationName: string; projectName: string }): ReturnType<typeof setup.completeSetup> {
    return setup.completeSetup(this, token, input);
  }
  isSetUp(): Promise<boolean> {
    return setup.isSetUp(this);
  }

  // OIDC (oidc-signin.ts).

  beginOidc(input: { redirect: string | undefined; baseUrl: string }): Promise<{ url: string; cookie: string }> {
    return oidcSignIn.beginOidc(this, input);
  }
  finishOidc(input: { callback: URLSearchParams; stateCookie: string | undefined; baseUrl: string }): Promise<SignInResult> {
    return oidcSignIn.finishOidc(this, input);
  }

  // Invitations and members (members.ts).

  invite(projectId: string, input: { email: string; role?: Role }, baseUrl: string, actor?: AuditActor): Promise<Invitation> {
    return people.invite(this, projectId, input, baseUrl, actor);
  }
  createInvitation(projectId: string, input: { email: string; role?: Role }, actor?: AuditActor): Promise<Invitation & { token: string }> {
    return people.createInvitation(this, projectId, input, actor);
  }
  members(projectId: string): Promise<Member[]> {
    return people.members(this, projectId);
  }
  setRole(projectId: string, email: string, role: Role, actor?: AuditActor): Promise<Member> {
    return people.setRole(this, projectId, email, role, actor);
  }
  inviteLink(projectId: string, email: string, baseUrl: string, actor?: AuditActor): Promise<{ email: string; link: string; expiresAt: string }> {
    return people.inviteLink(this, projectId, email, baseUrl, actor);
  }
  removeMember(projectId: string, email: string, actor?: AuditActor): Promise<void> {
    return people.removeMember(this, projectId, email, actor);
  }

  /**
   * Deletes expired or revoked sessions, expired sign-in links and pending
   * OIDC logins, in batches of 500 rows per transaction (the write lock is
   * held briefly). Answers how many rows of each went.
   */
  async removeExpired(): Promise<{ sessions: number; signInLinks: number; oidcLogins: number; invitations: number }> {
    const now = this.iso();
    return {
      sessions: await purgeExpiredSessions(this.store, now),
      signInLinks: await purgeExpiredSignInLinks(this.store, now),
      oidcLogins: await purgeExpiredOidcLogins(this.store, now),
      invitations: await purgeExpiredInvitations(this.store, now),
    };
  }
}
