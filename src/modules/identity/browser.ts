import { nodeCrypto } from "../../lib/node-crypto";
import { ApiError, forbidden, validation } from "../../lib/errors";
import { randomBase62 } from "../../lib/ids";
import type { Network } from "../../lib/network";
import { messagePage } from "../../web/pages";

/** Browser plumbing shared by the sign-in and device pages: cookies, CSRF, HTML answers. */

export const SESSION_COOKIE = "svc_session";
export const CSRF_COOKIE = "svc_csrf";
/** As long as a session (30 days), renewed at sign-in and by the dashboard. */
const CSRF_MAX_AGE_SECONDS = 30 * 24 * 3600;
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

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && nodeCrypto().timingSafeEqual(x, y);
}

/**
 * The browser plumbing that depends on where the server is (the Network):
 * cookies (Secure over https, as a trusted proxy may say), CSRF, the origin
 * of links handed out, and the client address that rate limits key on.
 */
export function browserKit(network: Network) {
  const cookie = (request: Request, name: string, value: string, options: { maxAgeSeconds: number; httpOnly?: boolean; path?: string }): string => {
    const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${options.path ?? "/"}`, `Max-Age=${options.maxAgeSeconds}`, "SameSite=Lax"];
    if (options.httpOnly !== false) parts.push("HttpOnly");
    if (network.isHttps(request)) parts.push("Secure");
    return parts.join("; ");
  };
  const csrfFor = (request: Request): { token: string; setCookie: string | null } => {
    const existing = parseCookies(request.headers.get("cookie"))[CSRF_COOKIE];
    if (existing && /^[A-Za-z0-9]{32}$/.test(existing)) return { token: existing, setCookie: null };
    const token = randomBase62(32);
    return { token, setCookie: cookie(request, CSRF_COOKIE, token, { maxAgeSeconds: CSRF_MAX_AGE_SECONDS, httpOnly: false }) };
  };
  return {
    cookie,
    clearCookie: (request: Request, name: string, path = "/") => cookie(request, name, "", { maxAgeSeconds: 0, path }),
    /** Origin for links we hand out: SERVICE_PUBLIC_URL, else this request's, when its Host is ours (else BAD_REQUEST). */
    baseUrlOf: (request: Request) => network.publicOrigin(request),
    /** The client address (through trusted proxies only): the key of the per-IP rate limits. */
    clientIp: (request: Request) => network.clientAddress(request),
    /**
     * The CSRF token of this browser (double-submit: a `svc_csrf` cookie the
     * pages mirror into a form field). Readable by the page's own script so
     * that fetch calls can send it as `X-CSRF-Token`.
     */
    csrfFor,
    /**
     * The CSRF cookie issued again with a full lifetime (the same token when
     * the browser has a good one): on sign-in and on every dashboard page, so
     * that it never expires before the session that needs it.
     */
    renewCsrf(request: Request): { token: string; setCookie: string } {
      const { token } = csrfFor(request);
      return { token, setCookie: cookie(request, CSRF_COOKIE, token, { maxAgeSeconds: CSRF_MAX_AGE_SECONDS, httpOnly: false }) };
    },
    /**
     * Every state-changing browser POST: the CSRF token (form field `csrf` or
     * header `X-CSRF-Token`) must equal the `svc_csrf` cookie, and the request
     * must come from one of this server's own origins (Origin, else Referer):
     * never merely the one the request's Host header claims.
     */
    checkCsrf(request: Request, provided: string | undefined): void {
      const expected = parseCookies(request.headers.get("cookie"))[CSRF_COOKIE];
      const token = provided || request.headers.get("x-csrf-token") || "";
      if (!expected || !token || !sameString(expected, token)) {
        throw forbidden("CSRF check failed", "csrf: reload the page and try again (the form's token must match the svc_csrf cookie)");
      }
      const origin = request.headers.get("origin");
      const source = origin && origin !== "null" ? origin : request.headers.get("referer");
      if (!network.isOwnOrigin(source)) {
        throw forbidden("Cross-site request refused", "Origin: the request must come from this server's own pages");
      }
    },
  };
}

export type BrowserKit = ReturnType<typeof browserKit>;

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
export async function formOrJson<T>(request: Request, handler: () => T | Response | Promise<T | Response>): Promise<T> {
  try {
    // Typed as T so routes keep their documented JSON schema; Elysia passes a Response through as it is.
    return (await handler()) as T;
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

export function jsonResponse(body: unknown, cookies: (string | null)[] = [], status = 200): Response {
  const headers = new Headers({ "content-type": "application/json", "cache-control": "no-store" });
  for (const c of cookies) if (c) headers.append("set-cookie", c);
  return new Response(JSON.stringify(body), { status, headers });
}
