import { Elysia } from "elysia";
import type { AppContext } from "../../lib/module";
import { unauthorized } from "../../lib/errors";
import { describe } from "../../lib/http";
import { deviceEnterPage, devicePage, messagePage } from "../../web/pages";
import {
  browserKit,
  formOrJson,
  htmlResponse,
  isFormPost,
  redirectResponse,
  sessionToken,
} from "../identity/browser";
import {
  ConfirmBody,
  ConfirmResultSchema,
  DeviceCodeBody,
  DeviceCodeSchema,
  DevicePageQuery,
  DeviceTokenBody,
  RefreshBody,
  RevokeBody,
  RevokeResultSchema,
  TokenPairSchema,
} from "./contract";

const GRANT_ERRORS =
  "Errors are 400 `{error, code: \"BAD_REQUEST\", error_description}` with `error` one of `authorization_pending`, `slow_down` (also `interval`, the new seconds to wait: 5 more each time), `access_denied`, `expired_token`, `invalid_grant`.";

export function deviceRoutes(ctx: AppContext) {
  const { device, identity } = ctx.services;
  const { baseUrlOf, checkCsrf, clientIp, csrfFor } = browserKit(ctx.network);

  return new Elysia({ name: "device", seed: ctx })
    .post(
      "/auth/device/code",
      ({ body, request }) =>
        device.createCode({ codeChallenge: body.code_challenge, clientName: body.client_name }, { baseUrl: baseUrlOf(request), ip: clientIp(request) }),
      {
        body: DeviceCodeBody,
        ...describe({
          summary: "Start a device sign-in (RFC 8628 with PKCE S256)",
          tag: "Sign-in",
          auth: "none",
          errors: [400, 429],
          description: "JSON or form-encoded. Rate-limited per client address (429 with Retry-After). The person opens `verification_uri_complete`, signs in and approves; the client polls /auth/device/token every `interval` seconds.",
          response: { 200: DeviceCodeSchema },
        }),
      },
    )
    .post("/auth/device/token", ({ body }) => device.exchange({ deviceCode: body.device_code, codeVerifier: body.code_verifier }), {
      body: DeviceTokenBody,
      ...describe({
        summary: "Poll for the token pair of a device sign-in",
        tag: "Sign-in",
        auth: "none",
        errors: [400],
        description: `The code_verifier is required and checked on every poll (a wrong one is invalid_grant). A device_code is redeemable once. ${GRANT_ERRORS}`,
        response: { 200: TokenPairSchema },
      }),
    })
    .post("/auth/device/refresh", ({ body }) => device.refresh(body.refresh_token), {
      body: RefreshBody,
      ...describe({
        summary: "Rotate a refresh token into a new pair",
        tag: "Sign-in",
        auth: "none",
        errors: [400],
        description: `The presented refresh token is spent. Presenting a spent one again revokes every token of that sign-in (invalid_grant): clients refresh under a lock, so a reuse means a copy. A sign-in ends 90 days after it began, however often it is refreshed. ${GRANT_ERRORS}`,
        response: { 200: TokenPairSchema },
      }),
    })
    .post("/auth/device/revoke", async ({ body }) => ({ revoked: await device.revoke(body.token) }), {
      body: RevokeBody,
      ...describe({
        summary: "Log out: revoke an access or refresh token and its whole sign-in",
        tag: "Sign-in",
        auth: "none",
        errors: [400],
        description: "Holding the token is the authorisation (RFC 7009). Answers 200 also for unknown tokens.",
        response: { 200: RevokeResultSchema },
      }),
    })
    .post(
      "/auth/device/confirm",
      ({ body, request }) =>
        formOrJson(request, async () => {
          checkCsrf(request, body.csrf);
          const user = await identity.sessionUser(sessionToken(request));
          if (!user) throw unauthorized("Sign in first", "Cookie svc_session: sign in at /signin");
          const result = await device.confirm(user, {
            deviceCode: body.device_code,
            userCode: body.user_code,
            action: body.action,
            projectId: body.project_id || undefined,
          });
          if (!isFormPost(request)) return result;
          return result.status === "approved"
            ? htmlResponse(messagePage("Device approved", "The device is signed in. You can close this tab and return to your terminal."))
            : htmlResponse(messagePage("Device denied", "The device was not signed in. You can close this tab."));
        }),
      {
        body: ConfirmBody,
        ...describe({
          summary: "Approve or deny a device sign-in (browser session)",
          tag: "Sign-in",
          auth: "none",
          errors: [400, 401, 403, 404],
          description:
            "Needs the `svc_session` cookie, the CSRF token (`csrf` field or `X-CSRF-Token`, equal to the `svc_csrf` cookie) and a same-origin Origin or Referer. Identify the request by `device_code` or `user_code`. A plain form post gets an HTML page back.",
          response: { 200: ConfirmResultSchema },
        }),
      },
    )
    .get(
      "/device",
      async ({ request, query }) => {
        const user = await identity.sessionUser(sessionToken(request));
        if (!user) {
          const here = new URL(request.url);
          return redirectResponse(`/signin?redirect=${encodeURIComponent(here.pathname + here.search)}`);
        }
        const csrf = csrfFor(request);
        if (!query.user_code) return htmlResponse(deviceEnterPage("Enter the code your device shows."), { cookies: [csrf.setCookie] });
        const pending = await device.pendingRequest(query.user_code);
        if (!pending) {
          return htmlResponse(deviceEnterPage("That code is unknown, expired or already answered. Check it and try again."), {
            status: 404,
            cookies: [csrf.setCookie],
          });
        }
        const projects = await identity.accessibleProjects(user.id);
        const selected = projects.find((p) => p.id === query.project_id)?.id ?? projects[0]?.id ?? null;
        return htmlResponse(
          devicePage({ csrf: csrf.token, email: user.email, userCode: pending.userCode, clientName: pending.clientName, projects, selectedProjectId: selected }),
          { cookies: [csrf.setCookie] },
        );
      },
      { query: DevicePageQuery, detail: { hide: true } },
    );
}
