import { timingSafeEqual } from "node:crypto";
import { ApiError, forbidden, validation } from "../../lib/errors";
import { randomBase62 } from "../../lib/ids";
import { messagePage } from "../../web/pages";

/** Browser plumbing shared by the sign-in and device pages: cookies, CSRF, HTML answers. */

export const SESSION_COOKIE = "svc_session";
export const CSRF_COOKIE = "svc_csrf";
export const OIDC_COOKIE = "svc_oidc";

export function parseCookies(header: string | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    if (!name || name in out) continue;
    try {
      out[name] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      // A cookie another app on this host wrote badly is not ours to fail on.
    }
  }
  return out;
}

/** TLS as the browser sees it: direct, or terminated by a proxy that says so. */
export function isHttps(request: Request): boolean {
  return request.url.startsWith("https:") || request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https";
}

export function cookie(
  request: Request,
  name: string,
  value: string,
  options: { maxAgeSeconds: number; httpOnly?: boolean; path?: string },
): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${options.path ?? "/"}`, `Max-Age=${options.maxAgeSeconds}`, "SameSite=Lax"];
  if (options.httpOnly !== false) parts.push("HttpOnly");
  if (isHttps(request)) parts.push("Secure");
  return parts.join("; ");
}

export function clearCookie(request: Request, name: string, path = "/"): string {
  return cookie(request, name, "", { maxAgeSeconds: 0, path });
}

/** Origin for links we hand out: SERVICE_PUBLIC_URL when set, else the one the request came to. */
export function baseUrlOf(request: Request, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const url = new URL(request.url);
  return `${isHttps(request) ? "https:" : url.protocol}//${url.host}`;
}

/**
 * The CSRF token of this browser (double-submit: a `svc_csrf` cookie the
 * pages mirror into a form field). Readable by the page's own script so
 * that fetch calls can send it as `X-CSRF-Token`.
 */
export function csrfFor(request: Request): { token: string; setCookie: string | null } {
  const existing = parseCookies(request.headers.get("cookie"))[CSRF_COOKIE];
  if (existing && /^[A-Za-z0-9]{32}$/.test(existing)) return { token: existing, setCookie: null };
  const token = randomBase62(32);
  return { token, setCookie: cookie(request, CSRF_COOKIE, token, { maxAgeSeconds: 30 * 24 * 3600, httpOnly: false }) };
}

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Every state-changing browser POST: the CSRF token (form field `csrf` or
 * header `X-CSRF-Token`) must equal the `svc_csrf` cookie, and the request
 * must come from our own pages (Origin, else Referer, on this host).
 */
export function checkCsrf(request: Request, provided: string | undefined, publicUrl: string | undefined): void {
  const expected = parseCookies(request.headers.get("cookie"))[CSRF_COOKIE];
  const token = provided || request.headers.get("x-csrf-token") || "";
  if (!expected || !token || !sameString(expected, token)) {
    throw forbidden("CSRF check failed", "csrf: reload the page and try again (the form's token must match the svc_csrf cookie)");
  }
  const hosts = new Set([request.headers.get("host") ?? new URL(request.url).host]);
  if (publicUrl) hosts.add(new URL(publicUrl).host);
  const origin = request.headers.get("origin");
  const source = origin && origin !== "null" ? origin : request.headers.get("referer");
  let host: string | null = null;
  try {
    host = source ? new URL(source).host : null;
  } catch {
    host = null;
  }
  if (!host || !hosts.has(host)) {
    throw forbidden("Cross-site request refused", "Origin: the request must come from this server's own pages");
  }
}

/** A plain HTML form posts urlencoded (or multipart); our JSON clients post JSON. */
export function isFormPost(request: Request): boolean {
  const type = request.headers.get("content-type") ?? "";
  return type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data");
}

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  // same-origin keeps tokens in page URLs away from other sites, yet keeps Origin on our own form posts.
  "referrer-policy": "same-origin",
};

export function htmlResponse(html: string, options: { status?: number; cookies?: (string | null)[] } = {}): Response {
  const headers = new Headers(PAGE_HEADERS);
  for (const c of options.cookies ?? []) if (c) headers.append("set-cookie", c);
  return new Response(html, { status: options.status ?? 200, headers });
}

export function redirectResponse(location: string, cookies: (string | null)[] = []): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const c of cookies) if (c) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

/**
 * Runs a browser POST handler. A plain form gets an HTML page for our
 * errors; a JSON caller gets the usual error body from the root handler.
 */
export function formOrJson<T>(request: Request, handler: () => T | Response): T {
  try {
    // Typed as T so routes keep their documented JSON schema; Elysia passes a Response through as it is.
    return handler() as T;
  } catch (err) {
    if (err instanceof ApiError && isFormPost(request)) {
      return htmlResponse(messagePage(err.status === 429 ? "Too many requests" : "That did not work", [err.message, err.detail ?? ""].filter(Boolean).join(": ")), {
        status: err.status,
      }) as T;
    }
    throw err;
  }
}

/**
 * A post-sign-in destination: a path on this server only (no scheme, no
 * `//host`, no backslash tricks). Empty means none.
 */
export function checkRedirect(value: string | undefined, field = "redirect"): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!isSafeRedirect(value)) throw validation("redirect must be a path on this server", `${field}: a path starting with a single /`);
  return value;
}

export function isSafeRedirect(value: string): boolean {
  return value.length <= 2000 && /^\/(?![/\\])/.test(value) && !/[\u0000-\u001f\\]/.test(value);
}

/** The browser's session secret, if it sent one. */
export function sessionToken(request: Request): string | undefined {
  return parseCookies(request.headers.get("cookie"))[SESSION_COOKIE];
}

/** The peer address, the key of the per-IP rate limits. */
export function clientIp(server: { requestIP(request: Request): { address: string } | null } | null, request: Request): string {
  return server?.requestIP(request)?.address ?? "unknown";
}

export function jsonResponse(body: unknown, cookies: (string | null)[] = [], status = 200): Response {
  const headers = new Headers({ "content-type": "application/json", "cache-control": "no-store" });
  for (const c of cookies) if (c) headers.append("set-cookie", c);
  return new Response(JSON.stringify(body), { status, headers });
}
