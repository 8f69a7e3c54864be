import type { AuditActor } from "../../lib/audit";
import type { ServiceContext } from "../../lib/module";
import type { Store } from "../../lib/store";
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
 * one face the routes and other modules call: it holds the core (private,
 * so its links, sessions and mail are the flows' alone) and shows only what
 * was public before the split.
 */
export class IdentityService {
  readonly #core: IdentityCore;

  constructor(ctx: ServiceContext) {
    this.#core = new IdentityCore(ctx);
  }

  // Read by the device flow (its clock and sign-in rate limits) and the routes (is OIDC configured).
  get now(): () => number {
    return this.#core.now;
  }
  get limiter(): IdentityCore["limiter"] {
    return this.#core.limiter;
  }
  get rateLimits(): IdentityCore["rateLimits"] {
    return this.#core.rateLimits;
  }
  get oidc(): IdentityCore["oidc"] {
    return this.#core.oidc;
  }
  get options(): IdentityCore["options"] {
    return this.#core.options;
  }
  /** Where mail goes without SMTP (and where the first-run setup link is kept). */
  get outboxPath(): string {
    return this.#core.outboxPath;
  }
  /** Whether mail is sent, or where it goes instead (the dashboard tells the owner). */
  get mailDelivery(): IdentityCore["mailDelivery"] {
    return this.#core.mailDelivery;
  }

  private get store(): Store {
    return this.#core.store;
  }

  /** A user who belongs to at least one organisation: only they may sign in. */
  findMember(email: string): Promise<SignedInUser | null> {
    return this.#core.findMember(email);
  }

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
    return links.requestMagicLink(this.#core, email, input);
  }
  isLinkUsable(token: string, purpose: "magic" | "setup"): Promise<boolean> {
    return links.isLinkUsable(this.#core, token, purpose);
  }
  consumeMagicLink(token: string): Promise<SignInResult> {
    return links.consumeMagicLink(this.#core, token);
  }
  invitationOfLink(token: string): Promise<{ organisationName: string; role: Role } | null> {
    return links.invitationOfLink(this.#core, token);
  }
  sessionUser(token: string | undefined): Promise<(SignedInUser & { sessionId: string }) | null> {
    return links.sessionUser(this.#core, token);
  }
  endSession(token: string | undefined): Promise<void> {
    return links.endSession(this.#core, token);
  }

  // First run (setup.ts).

  bootstrap(input: { adminEmail?: string; baseUrl: string }): Promise<{ setupUrl: string } | null> {
    return setup.bootstrap(this.#core, input);
  }
  completeSetup(token: string, input: { email: string; organisationName: string; projectName: string }): ReturnType<typeof setup.completeSetup> {
    return setup.completeSetup(this.#core, token, input);
  }
  isSetUp(): Promise<boolean> {
    return setup.isSetUp(this.#core);
  }

  // OIDC (oidc-signin.ts).

  beginOidc(input: { redirect: string | undefined; baseUrl: string }): Promise<{ url: string; cookie: string }> {
    return oidcSignIn.beginOidc(this.#core, input);
  }
  finishOidc(input: { callback: URLSearchParams; stateCookie: string | undefined; baseUrl: string }): Promise<SignInResult> {
    return oidcSignIn.finishOidc(this.#core, input);
  }

  // Invitations and members (members.ts).

  invite(projectId: string, input: { email: string; role?: Role }, baseUrl: string, actor?: AuditActor): Promise<Invitation> {
    return people.invite(this.#core, projectId, input, baseUrl, actor);
  }
  createInvitation(projectId: string, input: { email: string; role?: Role }, actor?: AuditActor): Promise<Invitation & { token: string }> {
    return people.createInvitation(this.#core, projectId, input, actor);
  }
  members(projectId: string): Promise<Member[]> {
    return people.members(this.#core, projectId);
  }
  setRole(projectId: string, email: string, role: Role, actor?: AuditActor): Promise<Member> {
    return people.setRole(this.#core, projectId, email, role, actor);
  }
  inviteLink(projectId: string, email: string, baseUrl: string, actor?: AuditActor): Promise<{ email: string; link: string; expiresAt: string }> {
    return people.inviteLink(this.#core, projectId, email, baseUrl, actor);
  }
  removeMember(projectId: string, email: string, actor?: AuditActor): Promise<void> {
    return people.removeMember(this.#core, projectId, email, actor);
  }

  /**
   * Deletes expired or revoked sessions, expired sign-in links and pending
   * OIDC logins, in batches of 500 rows per transaction (the write lock is
   * held briefly). Answers how many rows of each went.
   */
  async removeExpired(): Promise<{ sessions: number; signInLinks: number; oidcLogins: number; invitations: number }> {
    const now = this.#core.iso();
    return {
      sessions: await purgeExpiredSessions(this.store, now),
      signInLinks: await purgeExpiredSignInLinks(this.store, now),
      oidcLogins: await purgeExpiredOidcLogins(this.store, now),
      invitations: await purgeExpiredInvitations(this.store, now),
    };
  }
}
