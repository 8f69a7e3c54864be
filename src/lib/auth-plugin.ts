import { Elysia } from "elysia";
import type { AdminAuthOptions, Authenticator, Principal, SdkRule } from "./auth";

// Apart from src/lib/auth.ts, which has no Elysia in it: a server makes its Authenticator at start, and the plugin
// with its app, after the first answer (issue 32).

/**
 * The auth plugin: `admin` and `sdk` macros that resolve `principal`.
 * Authentication runs in `transform`, i.e. before body validation, so a
 * caller without a valid credential learns nothing about the body rules.
 * Seeded with the authenticator so each app instance keeps its own.
 */
export function authPlugin(authenticator: Authenticator) {
  const principals = new WeakMap<Request, Principal>();
  return new Elysia({ name: "auth", seed: authenticator }).macro({
    admin: (options: AdminAuthOptions) => ({
      async transform({ headers, request }) {
        principals.set(request, await authenticator.admin(request, headers, options));
      },
      resolve({ request }) {
        return { principal: principals.get(request)! };
      },
    }),
    sdk: (rule: SdkRule) => ({
      async transform({ headers, request }) {
        principals.set(request, await authenticator.sdk(headers, rule, request));
      },
      resolve({ request }) {
        return { principal: principals.get(request)! };
      },
    }),
  });
}
