import type { OAuthClient, OAuthProvider, VendorUrls } from "./options";

/**
 * The OAuth 2.0 authorization-code flow with PKCE (RFC 7636, S256) of the
 * OAuth/app providers: the authorize URL, the code exchange and the refresh.
 * Each vendor's endpoints come from settings (options.ts).
 *
 * | provider | authorize | token | scopes |
 * |---|---|---|---|
 * | slack | slackAuthorize | {slackApi}/oauth.v2.access | chat:write, chat:write.public |
 * | linear | linearAuthorize | {linearApi}/oauth/token | read, write, issues:create |
 * | google_sheets | googleAuthorize (offline access) | googleToken | spreadsheets |
 */

export const OAUTH_SCOPES: Record<OAuthProvider, string> = {
  slack: "chat:write,chat:write.public",
  linear: "read,write,issues:create",
  google_sheets: "https://www.googleapis.com/auth/spreadsheets",
};

/** What an OAuth connector's sealed credentials hold. */
export type OAuthTokens = { accessToken: string; refreshToken?: string; expiresAt?: number; scope?: string };

export class OAuthError extends Error {}

export function authorizeUrl(provider: OAuthProvider, urls: VendorUrls, client: OAuthClient, p: { redirectUri: string; state: string; challenge: string }): string {
  const base = provider === "slack" ? urls.slackAuthorize : provider === "linear" ? urls.linearAuthorize : urls.googleAuthorize;
  const url = new URL(base);
  const q = url.searchParams;
  q.set("client_id", client.clientId);
  q.set("redirect_uri", p.redirectUri);
  q.set("state", p.state);
  q.set("code_challenge", p.challenge);
  q.set("code_challenge_method", "S256");
  q.set("scope", OAUTH_SCOPES[provider]);
  if (provider !== "slack") q.set("response_type", "code");
  if (provider === "linear") q.set("prompt", "consent");
  if (provider === "google_sheets") {
    q.set("access_type", "offline");
    q.set("prompt", "consent");
  }
  return url.toString();
}

function tokenUrl(provider: OAuthProvider, urls: VendorUrls): string {
  return provider === "slack" ? `${urls.slackApi}/oauth.v2.access` : provider === "linear" ? `${urls.linearApi}/oauth/token` : urls.googleToken;
}

async function tokenCall(
  provider: OAuthProvider,
  urls: VendorUrls,
  client: OAuthClient,
  form: Record<string, string>,
  doFetch: (url: string, init: RequestInit) => Promise<Response>,
  previous?: OAuthTokens,
): Promise<OAuthTokens> {
  const body = new URLSearchParams({ ...form, client_id: client.clientId, client_secret: client.clientSecret });
  const res = await doFetch(tokenUrl(provider, urls), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: body.toString(),
  });
  let parsed: Record<string, unknown> = {};
  try {
    parsed = (await res.json()) as Record<string, unknown>;
  } catch {
    // Not JSON: the status says what happened.
  }
  // Slack answers 200 with {ok: false, error}; the others a 4xx with {error}.
  if (!res.ok || parsed.ok === false || typeof parsed.access_token !== "string") {
    const why = typeof parsed.error === "string" ? parsed.error : `HTTP ${res.status}`;
    throw new OAuthError(`${provider} token endpoint refused: ${why}`);
  }
  const expiresIn = Number(parsed.expires_in);
  return {
    accessToken: parsed.access_token,
    refreshToken: typeof parsed.refresh_token === "string" ? parsed.refresh_token : previous?.refreshToken,
    expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? Date.now() + expiresIn * 1000 : undefined,
    scope: typeof parsed.scope === "string" ? parsed.scope : previous?.scope,
  };
}

export function exchangeCode(
  provider: OAuthProvider,
  urls: VendorUrls,
  client: OAuthClient,
  p: { code: string; redirectUri: string; verifier: string },
  doFetch: (url: string, init: RequestInit) => Promise<Response>,
): Promise<OAuthTokens> {
  return tokenCall(provider, urls, client, { grant_type: "authorization_code", code: p.code, redirect_uri: p.redirectUri, code_verifier: p.verifier }, doFetch);
}

export function refreshTokens(
  provider: OAuthProvider,
  urls: VendorUrls,
  client: OAuthClient,
  tokens: OAuthTokens,
  doFetch: (url: string, init: RequestInit) => Promise<Response>,
): Promise<OAuthTokens> {
  if (!tokens.refreshToken) throw new OAuthError(`${provider}: the access token expired and there is no refresh token; connect again`);
  return tokenCall(provider, urls, client, { grant_type: "refresh_token", refresh_token: tokens.refreshToken }, doFetch, tokens);
}
