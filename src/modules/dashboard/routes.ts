import { Elysia, t } from "elysia";
import { acceptsGzip, etagMatches } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { browserKit, isSafeRedirect, sessionToken } from "../identity/browser";
import { DASHBOARD_SECTIONS } from "../../web/dashboard/sections";
import { ASSET_PREFIX, type BundleFile, dashboardBundle } from "./bundle";

/**
 * Scripts and styles come from this server alone, and nothing may frame the
 * dashboard (a framed toggle is a clickjacked toggle). The document differs
 * per person (signed in or sent to sign in), so no shared cache keeps it.
 */
const DOCUMENT_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cache-control": "private, no-cache",
};

function send(request: Request, file: BundleFile, headers: Record<string, string>, cookies: string[] = []): Response {
  const gzip = acceptsGzip(request.headers.get("accept-encoding"));
  // The two encodings are two representations: each has its own tag.
  const etag = gzip ? `${file.etag.slice(0, -1)}-gz"` : file.etag;
  const out = new Headers({ ...headers, "content-type": file.type, etag, vary: "Accept-Encoding" });
  for (const c of cookies) out.append("set-cookie", c);
  if (etagMatches(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers: out });
  if (gzip) out.set("content-encoding", "gzip");
  return new Response(gzip ? file.gzip : file.body, { headers: out });
}

/**
 * The dashboard's document for a signed-in person, else the sign-in page that comes back here. Exported for
 * GET /metrics, which is both Prometheus's endpoint and the Metrics section: the operations module answers it,
 * and gives browsers (Accept: text/html) this page.
 */
export function dashboardPage(ctx: AppContext) {
  const { identity } = ctx.services;
  const kit = browserKit(ctx.network);
  return async ({ request }: { request: Request }) => {
    const user = await identity.sessionUser(sessionToken(request));
    if (!user) {
      const url = new URL(request.url);
      const back = url.pathname + url.search;
      // A path too long (or odd) to come back to is dropped: the sign-in page would refuse it.
      const location = isSafeRedirect(back) ? `/signin?redirect=${encodeURIComponent(back)}` : "/signin";
      return new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
    }
    // Every page view renews the CSRF cookie the dashboard's writes carry, so it outlives no session and expires before none.
    return send(request, (await dashboardBundle()).index, DOCUMENT_HEADERS, [kit.renewCsrf(request).setCookie]);
  };
}

/**
 * The tab icon every browser asks for at /favicon.ico: a switch, drawn inline (SVG) so that it is in the binary and
 * no page needs a request that leaves the server. Browsers take an SVG at that path by its content type.
 */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f57c3"/><rect x="5" y="10" width="22" height="12" rx="6" fill="#fff"/><circle cx="21" cy="16" r="4" fill="#1f57c3"/></svg>';

/** `/` and every dashboard section (`/metrics` itself is the operations module's, which hands browsers this page). */
export function dashboardRoutes(ctx: AppContext) {
  const page = dashboardPage(ctx);
  const hidden = { detail: { hide: true } };
  const app = new Elysia({ name: "dashboard", seed: ctx })
    .get("/", page, hidden)
    .get("/favicon.ico", () => new Response(FAVICON, { headers: { "content-type": "image/svg+xml; charset=utf-8", "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff" } }), hidden);
  // Elysia's route methods add to the instance itself; the loop's routes need no typed chain.
  for (const section of DASHBOARD_SECTIONS) app.get(`/${section}`, page, hidden).get(`/${section}/*`, page, hidden);
  return app.get(
    `${ASSET_PREFIX}:file`,
    async ({ request, params, set }) => {
      const file = (await dashboardBundle()).assets.get(params.file);
      if (!file) {
        set.status = 404;
        return { error: "No such dashboard asset", code: "NOT_FOUND", detail: `file: ${params.file.slice(0, 128)}` };
      }
      // Asset names carry a hash of their content: a new build is a new name.
      return send(request, file, { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" });
    },
    { params: t.Object({ file: t.String({ maxLength: 200 }) }), detail: { hide: true } },
  );
}
