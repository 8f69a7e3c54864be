import type { Queryable } from "../../lib/store";

/**
 * Whether a server's start has first-run work for the identity service (`bootstrap`: SERVICE_ADMIN_EMAIL's owner,
 * or the setup link while nobody exists). Every start after the first answers it with one read and leaves the
 * service unmade until a request needs it: making it loads its code (sign-in links, OIDC, members), about 2 ms of
 * the compiled binary's cold start (issue 32). `bootstrap` decides again under its lock.
 */
export async function firstRunPending(q: Queryable, adminEmail: string | undefined): Promise<boolean> {
  if (adminEmail) return true;
  return (await q.one<{ one: number }>("SELECT 1 AS one FROM users LIMIT 1")) === undefined;
}
