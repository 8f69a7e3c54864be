import { Elysia, t } from "elysia";
import { cookieValue } from "../../lib/auth";
import type { AppContext } from "../../lib/module";
import { DASHBOARD_SECTIONS } from "../../web/dashboard/sections";
import { ASSET_PREFIX, type BundleFile, dashboardBundle } from "./bundle";

/**
 * CodeMirror writes its styles into <style> elements, hence 'unsafe-inline'
 * for styles only; scripts come from this server alone, and nothing may
 * frame the dashboard (a framed toggle is a clickjacked toggle).
 */
const DOCUMENT_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cache-control": "no-cache",
};

function send(request: Request, file: BundleFile, headers: Record<string, string>): Response {
  const common = { ...headers, "content-type": file.type, etag: file.etag, vary: "Accept-Encoding" };
  if (request.headers.get("if-none-match") === file.etag) return new Response(null, { status: 304, headers: common });
  const gzip = /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
  return new Response(gzip ? file.gzip : file.body, { headers: gzip ? { ...common, "content-encoding": "gzip" } : common });
}

/** `/` and every dashboard section: the document for a signed-in person, else the sign-in page that comes back here. */
export function dashboardRoutes(ctx: AppContext) {
  const { identity } = ctx.services;
  const page = async ({ request }: { request: Request }) => {
    const user = await identity.sessionUser(cookieValue(request.headers.get("cookie"), "svc_session"));
    if (!user) {
      const url = new URL(request.url);
      return new Response(null, { status: 303, headers: { location: `/signin?redirect=${encodeURIComponent(url.pathname + url.search)}`, "cache-control": "no-store" } });
    }
    return send(request, (await dashboardBundle()).index, DOCUMENT_HEADERS);
  };
  const hidden = { detail: { hide: true } };
  const app = new Elysia({ name: "dashboard", seed: ctx }).get("/", page, hidden);
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
