import { type Credential, ROLE_PERMISSIONS, type SessionResolver } from "../../lib/auth";
import type { Network } from "../../lib/network";
import { SESSION_COOKIE, browserKit } from "./browser";
import type { IdentityService } from "./service";

/**
 * The `svc_session` cookie as an /api/admin credential, so the dashboard
 * calls the same admin API as the CLI. Every project of the person's
 * organisations, with their role there; no default project (the dashboard
 * always names one with X-Project-Id). Writes need the CSRF token
 * (`X-CSRF-Token` equal to the `svc_csrf` cookie) and one of our origins.
 */
export function sessionResolver(identity: IdentityService, network: Network): SessionResolver {
  const kit = browserKit(network);
  return {
    cookie: SESSION_COOKIE,
    checkWrite: (request) => kit.checkCsrf(request, undefined),
    resolve: async (token): Promise<Credential | null> => {
      const user = await identity.sessionUser(token);
      if (!user) return null;
      return {
        kind: "session",
        credentialId: user.sessionId,
        defaultProjectId: null,
        access: async (projectId) => {
          const role = await identity.roleIn(user.id, projectId);
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
