// Over 400 lines: the browser sign-in pages and the people routes share their cookies, CSRF and messages here.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { ApiError, forbidden, unauthorized } from "../../lib/errors";
import { ListQuery, describe, filterByQuery } from "../../lib/http";
import { accountPage, magicPage, messagePage, setupDonePage, setupPage, signinPage } from "../../web/pages";
import {
  OIDC_COOKIE,
  SESSION_COOKIE,
  browserKit,
  checkRedirect,
  formOrJson,
  htmlResponse,
  isFormPost,
  isSafeRedirect,
  jsonResponse,
  parseCookies,
  redirectResponse,
  sessionToken,
} from "./browser";
import {
  InvitationSchema,
  InviteBody,
  InviteFormBody,
  LogoutBody,
  MagicConsumeBody,
  MagicLinkBody,
  MagicLinkSentSchema,
  EmailParam,
  InviteLinkSchema,
  MeSchema,
  RoleBody,
  MemberSchema,
  OidcCallbackQuery,
  RedirectQuery,
  SetupBody,
  SetupDoneSchema,
  SignedInSchema,
  TokenQuery,
} from "./contract";
import { OidcError } from "./oidc";
import { SESSION_TTL_MS, type SignInResult } from "./service";

const CHECK_MAIL = "If this address belongs to an account, a sign-in link is on its way. Check your mail.";
/** Without SMTP the link is only in the outbox file: the person at the keyboard is told where (issue 27, item 12). */
// Anyone may ask for a sign-in link: the answer names the file, never the server's path to it (owners see that in Members).
const checkMail = (mail: { configured: boolean }) =>
  mail.configured ? CHECK_MAIL : "If this address belongs to an account, a sign-in link is on its way. No mail server is set: the link is in outbox.log, in the data directory on the server.";
const BROWSER_POST =
  "Browser endpoint: needs the CSRF token (`csrf` field or `X-CSRF-Token`, equal to the `svc_csrf` cookie the pages set) and a same-origin Origin or Referer. A plain form post gets HTML (or a 303) back; JSON gets JSON.";
const OIDC_COOKIE_PATH = "/auth/oidc";
const MEMBERS_PERMISSION = "Only a signed-in owner may do this: membership spans the whole organisation, so SDK keys and API tokens never can.";

/** Browser sign-in pages and endpoints, plus the people endpoints of the admin API. */
export function identityRoutes(ctx: AppContext) {
  const { identity, projects } = ctx.services;
  const kit = browserKit(ctx.network);
  const { cookie, clearCookie, csrfFor, checkCsrf, baseUrlOf, clientIp } = kit;

  /** Opens the session in this browser (ending any it had), then goes on. */
  const signedIn = async (request: Request, result: SignInResult, cookies: string[] = []) => {
    await identity.endSession(sessionToken(request));
    const session = cookie(request, SESSION_COOKIE, result.sessionToken, { maxAgeSeconds: SESSION_TTL_MS / 1000 });
    // The dashboard's writes need the CSRF cookie for as long as the session lives.
    const csrf = kit.renewCsrf(request).setCookie;
    // Where the person was going, else the dashboard.
    const next = result.redirect ?? "/";
    return isFormPost(request) || request.method === "GET"
      ? redirectResponse(next, [...cookies, session, csrf])
      : jsonResponse({ ok: true, email: result.user.email, redirect: next }, [...cookies, session, csrf]);
  };

  const failurePage = (title: string, err: unknown, cookies: string[] = []) => {
    if (err instanceof OidcError) return htmlResponse(messagePage(title, err.message, `<a class="button" href="/signin">Back to sign-in</a>`), { status: err.status, cookies });
    if (err instanceof ApiError) return htmlResponse(messagePage(title, err.message), { status: err.status, cookies });
    throw err;
  };

  const browser = new Elysia({ name: "identity-browser", seed: ctx })
    .get(
      "/signin",
      async ({ request, query }) => {
        const csrf = csrfFor(request);
        const redirect = query.redirect && isSafeRedirect(query.redirect) ? query.redirect : "";
        const user = await identity.sessionUser(sessionToken(request));
        if (user) {
          return htmlResponse(accountPage({ email: user.email, csrf: csrf.token, projects: await identity.accessibleProjects(user.id), next: redirect || null }), {
            cookies: [csrf.setCookie],
          });
        }
        const ssoHref = identity.oidc ? `/auth/oidc/start${redirect ? `?redirect=${encodeURIComponent(redirect)}` : ""}` : null;
        return htmlResponse(signinPage({ csrf: csrf.token, redirect, ssoHref }), { cookies: [csrf.setCookie] });
      },
      { query: RedirectQuery, detail: { hide: true } },
    )
    .post(
      "/auth/magic-link",
      ({ body, request }) =>
        formOrJson(request, async () => {
          checkCsrf(request, body.csrf);
          const redirect = checkRedirect(body.redirect);
          await identity.requestMagicLink(body.email, { redirect, baseUrl: baseUrlOf(request), ip: clientIp(request) });
          const message = checkMail(identity.mailDelivery);
          return isFormPost(request) ? htmlResponse(messagePage(identity.mailDelivery.configured ? "Check your mail" : "Find the link on the server", message)) : { ok: true as const, message };
        }),
      {
        body: MagicLinkBody,
        ...describe({
          summary: "Mail a single-use sign-in link (valid 15 minutes)",
          tag: "Sign-in",
          auth: "none",
          errors: [400, 403, 429],
          description: `Always the same answer, whether or not the address has an account (only members may sign in). Without SMTP the link is appended to <data>/outbox.log on the server (never to the server log), and the answer says so. Rate-limited per address and per client (429 with Retry-After). ${BROWSER_POST}`,
          response: { 200: MagicLinkSentSchema },
        }),
      },
    )
    .get(
      "/auth/magic",
      async ({ request, query }) => {
        const csrf = csrfFor(request);
        // Showing a button instead of signing in at once: mail scanners follow GETs, and must not spend the link.
        if (!query.token || !(await identity.isLinkUsable(query.token, "magic"))) {
          return htmlResponse(messagePage("Link expired", "This sign-in link is invalid, used or expired.", `<a class="button" href="/signin">Get a new link</a>`), {
            status: 400,
            cookies: [csrf.setCookie],
          });
        }
        return htmlResponse(magicPage({ csrf: csrf.token, token: query.token, invitation: await identity.invitationOfLink(query.token) }), { cookies: [csrf.setCookie] });
      },
      { query: TokenQuery, detail: { hide: true } },
    )
    .post(
      "/auth/magic",
      ({ body, request }) =>
        formOrJson(request, async () => {
          checkCsrf(request, body.csrf);
          return signedIn(request, await identity.consumeMagicLink(body.token));
        }),
      {
        body: MagicConsumeBody,
        ...describe({
          summary: "Use a sign-in link and open a browser session",
          tag: "Sign-in",
          auth: "none",
          errors: [400, 403],
          description: `Single use; sets the \`svc_session\` cookie (HttpOnly, SameSite=Lax, Secure over https, 30 days). ${BROWSER_POST}`,
          response: { 200: SignedInSchema },
        }),
      },
    )
    .post(
      "/auth/logout",
      ({ body, request }) =>
        formOrJson(request, async () => {
          checkCsrf(request, body.csrf);
          await identity.endSession(sessionToken(request));
          const clear = clearCookie(request, SESSION_COOKIE);
          return isFormPost(request) ? redirectResponse("/signin", [clear]) : jsonResponse({ ok: true }, [clear]);
        }),
      {
        body: LogoutBody,
        ...describe({ summary: "End the browser session", tag: "Sign-in", auth: "none", errors: [400, 403], description: BROWSER_POST }),
      },
    )
    .post(
      "/auth/invite",
      ({ body, request }) =>
        formOrJson(request, async () => {
          checkCsrf(request, body.csrf);
          const user = await identity.sessionUser(sessionToken(request));
          if (!user) throw unauthorized("Sign in first", "Open /signin, then invite from there");
          const role = await identity.roleIn(user.id, body.project_id);
          if (!role) throw forbidden("You are not a member of that organisation", `project_id: ${body.project_id.slice(0, 128)}`);
          if (role !== "owner") throw forbidden(`Your role (${role}) cannot invite people`, "Ask an owner of the organisation to invite them, or to make you owner");
          const invitation = await identity.invite(body.project_id, { email: body.email, role: body.role }, baseUrlOf(request), { email: user.email, type: "user" });
          if (!isFormPost(request)) return invitation;
          return htmlResponse(
            messagePage(
              "Invitation sent",
              `${invitation.email} is invited to ${invitation.organisationName} as ${invitation.role}: a link valid 7 days is on its way, and they become a member when they accept it.`,
              `<a class="button" href="/signin">Back</a>`,
            ),
          );
        }),
      {
        body: InviteFormBody,
        ...describe({
          summary: "Invite a teammate from the browser (session)",
          tag: "Sign-in",
          auth: "none",
          errors: [400, 401, 403, 409],
          description: `A signed-in owner invites someone to one of their organisations (named by one of its projects) as owner, editor (the default) or viewer; they get a link valid 7 days and become a member only when they accept it (until then they reach nothing). ${BROWSER_POST}`,
          response: { 200: InvitationSchema },
        }),
      },
    )
    .get(
      "/setup",
      async ({ request, query }) => {
        const csrf = csrfFor(request);
        if (await identity.isSetUp()) {
          return htmlResponse(messagePage("Already set up", "This server already has its first owner.", `<a class="button" href="/signin">Sign in</a>`), {
            status: 400,
            cookies: [csrf.setCookie],
          });
        }
        if (!query.token || !(await identity.isLinkUsable(query.token, "setup"))) {
          return htmlResponse(messagePage("Setup link expired", "This setup link is invalid, used or expired. Restart the server for a new one (it is printed to the log)."), {
            status: 400,
            cookies: [csrf.setCookie],
          });
        }
        return htmlResponse(setupPage({ csrf: csrf.token, token: query.token }), { cookies: [csrf.setCookie] });
      },
      { query: TokenQuery, detail: { hide: true } },
    )
    .post(
      "/setup",
      ({ body, request }) =>
        formOrJson(request, async () => {
          checkCsrf(request, body.csrf);
          const result = await identity.completeSetup(body.token, { email: body.email, organisationName: body.organisation, projectName: body.project });
          const session = cookie(request, SESSION_COOKIE, result.sessionToken, { maxAgeSeconds: SESSION_TTL_MS / 1000 });
          const done = {
            ok: true as const,
            email: result.user.email,
            redirect: "/",
            organisationId: result.organisationId,
            projectId: result.projectId,
            keys: result.keys,
          };
          if (!isFormPost(request)) return jsonResponse(done, [session]);
          return htmlResponse(
            setupDonePage({
              email: result.user.email,
              organisation: result.organisationName,
              project: result.projectName,
              projectId: result.projectId,
              base: baseUrlOf(request),
              keys: result.keys,
            }),
            { cookies: [session] },
          );
        }),
      {
        body: SetupBody,
        ...describe({
          summary: "First run: create the first organisation, project and owner",
          tag: "Sign-in",
          auth: "none",
          errors: [400, 403],
          description: `Takes the single-use setup link the server prints on its first start (when no user exists and SERVICE_ADMIN_EMAIL is unset), signs the owner in, and answers the project's first admin, server and client keys (shown only here) with the next steps: a page for a form post, JSON otherwise. ${BROWSER_POST}`,
          response: { 200: SetupDoneSchema },
        }),
      },
    )
    .get(
      "/auth/oidc/start",
      async ({ request, query }) => {
        const redirect = query.redirect && isSafeRedirect(query.redirect) ? query.redirect : undefined;
        try {
          // The cookie is `<state>.<browserKey>`: the key unseals this browser's pending login at the callback.
          const started = await identity.beginOidc({ redirect, baseUrl: baseUrlOf(request) });
          return redirectResponse(started.url, [cookie(request, OIDC_COOKIE, started.cookie, { maxAgeSeconds: 600, path: OIDC_COOKIE_PATH })]);
        } catch (err) {
          return failurePage("Single sign-on failed", err);
        }
      },
      { query: RedirectQuery, detail: { hide: true } },
    )
    .get(
      "/auth/oidc/callback",
      async ({ request, query }) => {
        const clear = clearCookie(request, OIDC_COOKIE, OIDC_COOKIE_PATH);
        if (query.error) {
          return htmlResponse(messagePage("Single sign-on failed", `The identity provider answered ${query.error}${query.error_description ? `: ${query.error_description}` : ""}.`), {
            status: 401,
            cookies: [clear],
          });
        }
        try {
          const result = await identity.finishOidc({
            // Every parameter the provider sent (RFC 9207 `iss` included), not only those the schema names.
            callback: new URL(request.url).searchParams,
            stateCookie: parseCookies(request.headers.get("cookie"))[OIDC_COOKIE],
            baseUrl: baseUrlOf(request),
          });
          return await signedIn(request, result, [clear]);
        } catch (err) {
          return failurePage("Single sign-on failed", err, [clear]);
        }
      },
      { query: OidcCallbackQuery, detail: { hide: true } },
    );

  const people = new Elysia({ name: "identity-admin", seed: ctx, prefix: "/api/admin" })
    .use(ctx.auth)
    .post(
      "/invites",
      async ({ principal, body, request, set }) => {
        const invitation = await identity.invite(principal.projectId, body, baseUrlOf(request), principal.actor);
        set.status = 201;
        return invitation;
      },
      {
        admin: "members",
        body: InviteBody,
        ...describe({
          summary: "Invite a person to the organisation of the project",
          tag: "People",
          auth: "admin",
          errors: [404, 409],
          description: `Sends them a single-use link valid 7 days (by SMTP; without SMTP it is appended to \`<data>/outbox.log\`). They become a member only when they use it (accepting the invitation; it also signs them in): until then they are listed in /members with \`status: "invited"\` and reach nothing, whether or not they already have an account. 409 when they already belong to the organisation or have a pending invitation (remove it with DELETE /members/{email} to send a new one). ${MEMBERS_PERMISSION}`,
          response: { 201: InvitationSchema },
        }),
      },
    )
    .get("/members", async ({ principal, query }) => filterByQuery(await identity.members(principal.projectId), query.q, (m) => [m.email]), {
      admin: true,
      query: ListQuery,
      ...describe({
        summary: "People of the project's organisation",
        tag: "People",
        auth: "admin",
        description: 'Members (`status: "active"`, by join time) then pending invitations (`status: "invited"`, `joinedAt: null`, until `expiresAt`), who reach nothing until they accept.',
        response: { 200: t.Array(MemberSchema) },
      }),
    })
    .patch("/members/:email", ({ principal, params, body }) => identity.setRole(principal.projectId, params.email, body.role, principal.actor), {
      admin: "members",
      params: EmailParam,
      body: RoleBody,
      ...describe({
        summary: "Change a person's role",
        tag: "People",
        auth: "admin",
        errors: [404],
        description: `viewer reads; editor also writes; owner also manages members, keys, tokens and settings. The organisation keeps at least one owner (demoting the last one is FORBIDDEN). A pending invitation's role can be changed too (it applies when they accept). ${MEMBERS_PERMISSION}`,
        response: { 200: MemberSchema },
      }),
    })
    .post("/members/:email/invite-link", ({ principal, params, request }) => identity.inviteLink(principal.projectId, params.email, baseUrlOf(request), principal.actor), {
      admin: "members",
      params: EmailParam,
      ...describe({
        summary: "A new link for a pending invitation, to pass on by hand",
        tag: "People",
        auth: "admin",
        errors: [404],
        description: `For when the mail did not arrive, or no mail server is set (the first link is then only in \`<data>/outbox.log\`). Only hashes of links are stored, so this makes a new single-use link valid until the invitation's \`expiresAt\`; the link sent before stops working. Audited as \`member.invite.link\` (without the link). 404 when the person has no pending invitation. ${MEMBERS_PERMISSION}`,
        response: { 200: InviteLinkSchema },
      }),
    })
    .delete(
      "/members/:email",
      async ({ principal, params, set }) => {
        await identity.removeMember(principal.projectId, params.email, principal.actor);
        set.status = 204;
      },
      {
        admin: "members",
        params: EmailParam,
        ...describe({
          summary: "Remove a person from the organisation, or withdraw their invitation",
          tag: "People",
          auth: "admin",
          errors: [404],
          description: `They lose every project of the organisation at once, and every CLI sign-in (device-flow access and refresh tokens) they have ends in the same transaction, whichever project it was approved for (a \`device.token.revoke\` row each): adding them again revives none. Their browser sessions stay valid only for other organisations they belong to. The last owner cannot be removed. For a pending invitation, withdraws it (its link then signs nobody in). ${MEMBERS_PERMISSION}`,
        }),
      },
    )
    .get(
      "/me",
      async ({ headers, request }) => {
        const caller = await ctx.authenticator.identify(request, headers);
        // A person whose bound project is gone (or who never had one) still learns who they are and what they reach.
        if (caller.userId && !headers["x-project-id"] && (!caller.defaultProjectId || !(await caller.access(caller.defaultProjectId)))) {
          return {
            user: { email: caller.actor.email },
            project: null,
            projects: await identity.accessibleProjects(caller.userId),
            credential: { kind: caller.kind as "user_token" | "session", readOnly: true, role: null, permissions: [] },
          };
        }
        const principal = await ctx.authenticator.forProject(caller, headers, request.method, true);
        const project = await projects.get(principal.projectId);
        const credential = {
          kind: principal.kind as "user_token" | "session" | "admin_key" | "api_token",
          readOnly: principal.readOnly,
          role: principal.role ?? null,
          permissions: [...principal.permissions],
        };
        // Whether links go by mail; the outbox's path only to those who manage people (who pass such links on).
        const delivery = identity.mailDelivery;
        const mail = delivery.configured || !principal.permissions.includes("members") ? { configured: delivery.configured } : delivery;
        if (principal.userId) {
          return { user: { email: principal.actor.email }, project: { id: project.id, name: project.name }, projects: await identity.accessibleProjects(principal.userId), credential, mail };
        }
        const organisation = await projects.organisationOf(project.id);
        return {
          user: { email: principal.actor.email },
          project: { id: project.id, name: project.name },
          projects: [{ id: project.id, name: project.name, organisationId: project.organisationId, organisationName: organisation?.name ?? "" }],
          credential,
          mail,
        };
      },
      {
        ...describe({
          summary: "Who is calling, the active project and every project they reach",
          tag: "People",
          auth: "admin",
          errors: [404],
          description:
            "For a person (access token): their email, the selected project (X-Project-Id, else the one bound at login; null when there is none), their role there and the projects of all their organisations. For an admin key or API token: `user.email` is the actor its audit rows record (`admin-key:…@keys.local`, `api-token:…@tokens.local`) and `projects` is its one project. `credential.permissions` says what the caller may do in the selected project. `mail.configured` is false when no SMTP server is set (links then go to the outbox file, whose path `mail.outbox` names for owners).",
          response: { 200: MeSchema },
        }),
      },
    );

  return new Elysia({ name: "identity", seed: ctx }).use(browser).use(people);
}
