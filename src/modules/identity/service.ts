import { type Db, immediate } from "../../lib/db";
import { alreadyExists, badRequest, notFound, validation } from "../../lib/errors";
import { newId, randomBase62, sha256Hex } from "../../lib/ids";
import type { ProjectsService } from "../projects/service";
import { LogMailer, type Mailer, type SignInMail, SmtpMailer } from "./mail";
import { OidcClient, OidcError } from "./oidc";
import { DEFAULT_RATE_LIMITS, type SignInOptions, type SignInRateLimits } from "./options";
import { RateLimiter } from "./rate-limit";

export const MAGIC_LINK_TTL_MS = 15 * 60_000;
export const INVITE_LINK_TTL_MS = 7 * 24 * 3600_000;
export const SESSION_TTL_MS = 30 * 24 * 3600_000;
/** The first-run setup link; every start of a still-empty server prints a fresh one. */
export const SETUP_LINK_TTL_MS = 24 * 3600_000;
const OIDC_LOGIN_TTL_MS = 10 * 60_000;

export const INVITE_ROLES = ["admin", "member"] as const;
export type Role = "owner" | "admin" | "member";

export type SignedInUser = { id: string; email: string };
export type AccessibleProject = { id: string; name: string; organisationId: string; organisationName: string };
export type Member = { email: string; role: Role; joinedAt: string };
export type Invitation = { email: string; role: Role; organisationId: string; organisationName: string; createdAt: string };

/** What a finished browser sign-in hands to the routes: the session secret for the cookie, and where to go. */
export type SignInResult = { sessionToken: string; user: SignedInUser; redirect: string | undefined };

/**
 * People and their browser sign-in: members of organisations, single-use
 * links (magic links, the first-run setup link), sessions, OIDC and
 * invitations. Only SHA-256 hashes of every secret are stored.
 */
export class IdentityService {
  readonly now: () => number;
  readonly limiter: RateLimiter;
  readonly rateLimits: SignInRateLimits;
  readonly oidc: OidcClient | null;
  private readonly mailer: Mailer;
  private readonly canAccessStatement;
  private readonly sessionStatement;

  constructor(
    private readonly db: Db,
    private readonly projects: ProjectsService,
    readonly options: SignInOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.limiter = new RateLimiter(this.now);
    this.rateLimits = { ...DEFAULT_RATE_LIMITS, ...options.rateLimits };
    this.oidc = options.oidc ? new OidcClient(options.oidc, this.now) : null;
    this.mailer = options.mailer ?? (options.smtpUrl ? new SmtpMailer(options.smtpUrl, options.mailFrom) : new LogMailer());
    this.canAccessStatement = db.prepare<{ ok: number }, [string, string]>(
      `SELECT 1 AS ok FROM projects p JOIN memberships m ON m.organisation_id = p.organisation_id
       WHERE p.id = ? AND m.user_id = ?`,
    );
    this.sessionStatement = db.prepare<{ id: string; user_id: string; email: string }, [string, string]>(
      `SELECT s.id, s.user_id, u.email FROM sessions s JOIN users u ON u.id = s.user_id
       WHERE s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ?`,
    );
  }

  private iso(ms = this.now()): string {
    return new Date(ms).toISOString();
  }

  // People and what they reach.

  /** A user who belongs to at least one organisation: only they may sign in. */
  findMember(email: string): SignedInUser | null {
    return (
      this.db
        .query<SignedInUser, [string]>(
          "SELECT u.id, u.email FROM users u WHERE u.email = ? AND EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id)",
        )
        .get(email.trim().toLowerCase()) ?? null
    );
  }

  accessibleProjects(userId: string): AccessibleProject[] {
    return this.db
      .query<AccessibleProject, [string]>(
        `SELECT p.id, p.name, o.id AS organisationId, o.name AS organisationName
         FROM memberships m JOIN organisations o ON o.id = m.organisation_id JOIN projects p ON p.organisation_id = o.id
         WHERE m.user_id = ? ORDER BY o.name, o.id, p.name, p.id`,
      )
      .all(userId);
  }

  canAccess(userId: string, projectId: string): boolean {
    return this.canAccessStatement.get(projectId, userId) !== null;
  }

  // Magic links.

  /**
   * Sends a sign-in link when `email` belongs to a member; for anyone else
   * it silently does nothing, so the answer never tells who has an account.
   */
  requestMagicLink(email: string, input: { redirect: string | undefined; baseUrl: string; ip: string }): void {
    const normalised = email.trim().toLowerCase();
    this.limiter.take(`magic-link:ip:${input.ip}`, this.rateLimits.magicLinkPerIp);
    this.limiter.take(`magic-link:email:${normalised}`, this.rateLimits.magicLinkPerEmail);
    const link = immediate(this.db, () => {
      const user = this.findMember(normalised);
      return user ? { email: user.email, token: this.issueLink("magic", user.email, input.redirect, MAGIC_LINK_TTL_MS) } : null;
    });
    if (!link) return;
    this.dispatch({ to: link.email, url: `${input.baseUrl}/auth/magic?token=${link.token}`, reason: "sign-in" });
  }

  /** Whether a link is still usable, without using it (the GET that mail scanners may follow). */
  isLinkUsable(token: string, purpose: "magic" | "setup"): boolean {
    return (
      this.db
        .query("SELECT 1 FROM sign_in_links WHERE token_hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?")
        .get(sha256Hex(token), purpose, this.iso()) !== null
    );
  }

  /** Uses a magic link (once, before it expires) and opens a session for its member. */
  consumeMagicLink(token: string): SignInResult {
    return immediate(this.db, () => {
      const link = this.takeLink(token, "magic");
      const user = link.email ? this.findMember(link.email) : null;
      if (!user) throw badRequest("This sign-in link no longer matches a member", "token: ask an owner to invite you again");
      return { sessionToken: this.createSession(user.id), user, redirect: link.redirect ?? undefined };
    });
  }

  // Sessions.

  sessionUser(token: string | undefined): (SignedInUser & { sessionId: string }) | null {
    if (!token) return null;
    const row = this.sessionStatement.get(sha256Hex(token), this.iso());
    return row ? { id: row.user_id, email: row.email, sessionId: row.id } : null;
  }

  endSession(token: string | undefined): void {
    if (!token) return;
    this.db.query("UPDATE sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL").run(this.iso(), sha256Hex(token));
  }

  // First run.

  /**
   * At server start. With `adminEmail` (SERVICE_ADMIN_EMAIL) that person is
   * made owner of the first organisation (a default one is created when
   * there is none) and signs in by magic link. Otherwise, while nobody
   * exists at all, it returns a fresh single-use setup link to print.
   */
  bootstrap(input: { adminEmail?: string; baseUrl: string }): { setupUrl: string } | null {
    if (input.adminEmail) {
      this.ensureAdmin(input.adminEmail);
      return null;
    }
    return immediate(this.db, () => {
      if (this.countUsers() > 0) return null;
      // One live setup link at a time: a restart replaces the one printed before.
      this.db.query("DELETE FROM sign_in_links WHERE purpose = 'setup'").run();
      const token = this.issueLink("setup", null, undefined, SETUP_LINK_TTL_MS);
      return { setupUrl: `${input.baseUrl}/setup?token=${token}` };
    });
  }

  /** The setup form: creates the first organisation, project and owner, and signs the owner in. */
  completeSetup(token: string, input: { email: string; organisationName: string; projectName: string }): SignInResult & { projectId: string } {
    if (input.organisationName.trim() === "") throw validation("organisation must not be empty", "organisation: at least one non-space character");
    if (input.projectName.trim() === "") throw validation("project must not be empty", "project: at least one non-space character");
    return immediate(this.db, () => {
      this.takeLink(token, "setup");
      if (this.countUsers() > 0) throw badRequest("svc is already set up", "token: sign in at /signin instead");
      const { user, project } = this.projects.createOrganisationWithProject({
        projectName: input.projectName.trim(),
        organisationName: input.organisationName.trim(),
        ownerEmail: input.email,
      });
      const member = { id: user.id, email: user.email };
      return { sessionToken: this.createSession(user.id), user: member, redirect: undefined, projectId: project.id };
    });
  }

  // OIDC.

  async beginOidc(input: { redirect: string | undefined; baseUrl: string }): Promise<{ url: string; state: string }> {
    if (!this.oidc) throw notFound("Single sign-on is not configured on this server");
    const state = randomBase62(32);
    const nonce = randomBase62(32);
    const codeVerifier = randomBase62(64);
    const now = this.now();
    immediate(this.db, () => {
      this.db.query("DELETE FROM oidc_logins WHERE expires_at <= ?").run(this.iso(now));
      this.db
        .query("INSERT INTO oidc_logins (state_hash, nonce, code_verifier, redirect, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)")
        .run(sha256Hex(state), nonce, codeVerifier, input.redirect ?? null, this.iso(now), this.iso(now + OIDC_LOGIN_TTL_MS));
    });
    const url = await this.oidc.authorizationUrl({ redirectUri: `${input.baseUrl}/auth/oidc/callback`, state, nonce, codeVerifier });
    return { url, state };
  }

  /**
   * The provider's redirect back: the state must be the one this browser
   * started (its cookie) and unused; then the code is exchanged and the
   * id_token checked before a member's session is opened.
   */
  async finishOidc(input: { code: string | undefined; state: string | undefined; stateCookie: string | undefined; baseUrl: string }): Promise<SignInResult> {
    if (!this.oidc) throw notFound("Single sign-on is not configured on this server");
    if (!input.state || !input.stateCookie || input.state !== input.stateCookie) {
      throw new OidcError("This sign-in was started in another browser or has expired; start again", 401);
    }
    const login = this.db
      .query<{ nonce: string; code_verifier: string; redirect: string | null }, [string, string]>(
        "DELETE FROM oidc_logins WHERE state_hash = ? AND expires_at > ? RETURNING nonce, code_verifier, redirect",
      )
      .get(sha256Hex(input.state), this.iso());
    if (!login) throw new OidcError("This sign-in was already used or has expired; start again", 401);
    if (!input.code) throw new OidcError("The identity provider sent no authorization code", 502);
    const claims = await this.oidc.signIn({
      code: input.code,
      codeVerifier: login.code_verifier,
      redirectUri: `${input.baseUrl}/auth/oidc/callback`,
      nonce: login.nonce,
    });
    const user = this.findMember(claims.email);
    if (!user) throw new OidcError(`${claims.email} has no account here; ask an owner to invite you`, 403);
    return { sessionToken: this.createSession(user.id), user, redirect: login.redirect ?? undefined };
  }

  // Invitations and members.

  /**
   * Adds a person to the organisation of the project and sends them a
   * sign-in link valid 7 days (by mail, or to the server log without SMTP).
   */
  invite(projectId: string, input: { email: string; role?: (typeof INVITE_ROLES)[number] }, baseUrl: string): Invitation {
    const role = input.role ?? "member";
    const invitation = immediate(this.db, () => {
      const organisation = this.projects.organisationOf(projectId);
      if (!organisation) throw notFound(`Project ${projectId} not found`);
      const user = this.projects.findOrCreateUser(input.email);
      const createdAt = this.iso();
      const inserted = this.db
        .query("INSERT INTO memberships (organisation_id, user_id, role, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .run(organisation.id, user.id, role, createdAt).changes;
      if (inserted === 0) throw alreadyExists(`${user.email} is already a member of this organisation`, "email");
      const token = this.issueLink("magic", user.email, undefined, INVITE_LINK_TTL_MS);
      return { email: user.email, role, organisationId: organisation.id, organisationName: organisation.name, createdAt, token };
    });
    const { token, ...result } = invitation;
    this.dispatch({ to: result.email, url: `${baseUrl}/auth/magic?token=${token}`, reason: "invite", organisationName: result.organisationName });
    return result;
  }

  members(projectId: string): Member[] {
    return this.db
      .query<Member, [string]>(
        `SELECT u.email, m.role, m.created_at AS joinedAt FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.organisation_id = (SELECT organisation_id FROM projects WHERE id = ?) ORDER BY m.created_at, u.email`,
      )
      .all(projectId);
  }

  /** Whether anybody exists yet (then the setup link has no use). */
  isSetUp(): boolean {
    return this.countUsers() > 0;
  }

  // Internals.

  private countUsers(): number {
    return (this.db.query("SELECT COUNT(*) AS n FROM users").get() as { n: number }).n;
  }

  private ensureAdmin(email: string): void {
    immediate(this.db, () => {
      if (this.findMember(email)) return;
      const first = this.db.query<{ id: string }, []>("SELECT id FROM organisations ORDER BY created_at, rowid LIMIT 1").get();
      if (!first) {
        this.projects.createOrganisationWithProject({ projectName: "Default project", organisationName: "Default organisation", ownerEmail: email });
        return;
      }
      const user = this.projects.findOrCreateUser(email);
      this.db
        .query("INSERT INTO memberships (organisation_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?) ON CONFLICT DO NOTHING")
        .run(first.id, user.id, this.iso());
    });
  }

  private issueLink(purpose: "magic" | "setup", email: string | null, redirect: string | undefined, ttlMs: number): string {
    const token = randomBase62(43);
    const now = this.now();
    this.db
      .query("INSERT INTO sign_in_links (token_hash, purpose, email, redirect, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(sha256Hex(token), purpose, email, redirect ?? null, this.iso(now), this.iso(now + ttlMs));
    return token;
  }

  /** Marks a link used; call inside the transaction that acts on it. */
  private takeLink(token: string, purpose: "magic" | "setup"): { email: string | null; redirect: string | null } {
    const now = this.iso();
    const link = this.db
      .query<{ email: string | null; redirect: string | null }, [string, string, string, string]>(
        `UPDATE sign_in_links SET used_at = ?1 WHERE token_hash = ?2 AND purpose = ?3 AND used_at IS NULL AND expires_at > ?4
         RETURNING email, redirect`,
      )
      .get(now, sha256Hex(token), purpose, now);
    if (!link) {
      throw badRequest(
        purpose === "setup" ? "This setup link is invalid, used or expired" : "This sign-in link is invalid, used or expired",
        purpose === "setup" ? "token: restart the server for a new setup link" : "token: request a new link at /signin",
      );
    }
    return link;
  }

  private createSession(userId: string): string {
    const token = randomBase62(43);
    const now = this.now();
    this.db
      .query("INSERT INTO sessions (id, token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)")
      .run(newId("ses"), sha256Hex(token), userId, this.iso(now), this.iso(now + SESSION_TTL_MS));
    return token;
  }

  /** Mail leaves after the answer: a slow SMTP server must not show who has an account by timing. */
  private dispatch(mail: SignInMail): void {
    this.mailer.send(mail).catch((err) => {
      process.stderr.write(`${JSON.stringify({ ts: this.iso(), level: "error", msg: "sign-in mail failed", email: mail.to, error: String(err) })}\n`);
    });
  }
}
