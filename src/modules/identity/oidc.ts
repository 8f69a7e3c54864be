import { pkceChallenge } from "../../lib/ids";
import type { OidcSettings } from "./options";

/** Why an OIDC sign-in failed; shown to the person on the callback page. */
export class OidcError extends Error {
  constructor(
    message: string,
    /** 502 when the provider misbehaved, 401 when its answer proves nobody, 403 when it proves someone without an account. */
    readonly status: 401 | 403 | 502,
  ) {
    super(message);
  }
}

type Discovery = {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  token_endpoint_auth_methods_supported?: string[];
};

type Jwk = JsonWebKey & { kid?: string; use?: string; alg?: string };

export type IdTokenClaims = { sub: string; email: string; [claim: string]: unknown };

const FETCH_TIMEOUT_MS = 10_000;
const CLOCK_SKEW_S = 60;
const JWKS_TTL_MS = 10 * 60_000;
/** An unknown `kid` may mean the provider rotated keys; refetch, but not more often than this. */
const JWKS_REFETCH_MIN_MS = 60_000;

const ALGORITHMS: Record<string, { import: RsaHashedImportParams | EcKeyImportParams | Algorithm; verify: Algorithm | RsaPssParams | EcdsaParams }> = {
  RS256: { import: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, verify: { name: "RSASSA-PKCS1-v1_5" } },
  RS384: { import: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-384" }, verify: { name: "RSASSA-PKCS1-v1_5" } },
  RS512: { import: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-512" }, verify: { name: "RSASSA-PKCS1-v1_5" } },
  PS256: { import: { name: "RSA-PSS", hash: "SHA-256" }, verify: { name: "RSA-PSS", saltLength: 32 } as RsaPssParams },
  PS384: { import: { name: "RSA-PSS", hash: "SHA-384" }, verify: { name: "RSA-PSS", saltLength: 48 } as RsaPssParams },
  PS512: { import: { name: "RSA-PSS", hash: "SHA-512" }, verify: { name: "RSA-PSS", saltLength: 64 } as RsaPssParams },
  ES256: { import: { name: "ECDSA", namedCurve: "P-256" }, verify: { name: "ECDSA", hash: "SHA-256" } as EcdsaParams },
  ES384: { import: { name: "ECDSA", namedCurve: "P-384" }, verify: { name: "ECDSA", hash: "SHA-384" } as EcdsaParams },
  ES512: { import: { name: "ECDSA", namedCurve: "P-521" }, verify: { name: "ECDSA", hash: "SHA-512" } as EcdsaParams },
  EdDSA: { import: { name: "Ed25519" }, verify: { name: "Ed25519" } },
};

export function base64UrlDecode(part: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(part, "base64url"));
}

function jsonPart(part: string): Record<string, unknown> {
  try {
    const value = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {}
  throw new OidcError("The identity provider sent a malformed id_token", 502);
}

/**
 * OpenID Connect relying party: discovery, the authorization code flow with
 * PKCE, and id_token checks (signature against the provider's JWKS with
 * WebCrypto, then iss, aud, azp, exp, nbf and nonce).
 */
export class OidcClient {
  private discovery: Promise<Discovery> | null = null;
  private jwks: { keys: Jwk[]; fetchedAt: number } | null = null;

  constructor(
    readonly settings: OidcSettings,
    private readonly now: () => number,
  ) {}

  async authorizationUrl(input: { redirectUri: string; state: string; nonce: string; codeVerifier: string }): Promise<string> {
    const discovery = await this.discover();
    const url = new URL(discovery.authorization_endpoint);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("client_id", this.settings.clientId);
    url.searchParams.set("redirect_uri", input.redirectUri);
    url.searchParams.set("scope", "openid email profile");
    url.searchParams.set("state", input.state);
    url.searchParams.set("nonce", input.nonce);
    url.searchParams.set("code_challenge", pkceChallenge(input.codeVerifier));
    url.searchParams.set("code_challenge_method", "S256");
    return url.toString();
  }

  /** Exchanges the code and returns the verified id_token claims. */
  async signIn(input: { code: string; codeVerifier: string; redirectUri: string; nonce: string }): Promise<IdTokenClaims> {
    const discovery = await this.discover();
    const body = new URLSearchParams({
      grant_type: "authorization_code",
      code: input.code,
      redirect_uri: input.redirectUri,
      code_verifier: input.codeVerifier,
      client_id: this.settings.clientId,
    });
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
    const methods = discovery.token_endpoint_auth_methods_supported;
    // client_secret_basic is the OIDC default; use the body only where the provider supports nothing else.
    if (methods && !methods.includes("client_secret_basic") && methods.includes("client_secret_post")) {
      body.set("client_secret", this.settings.clientSecret);
    } else {
      const id = encodeURIComponent(this.settings.clientId);
      const secret = encodeURIComponent(this.settings.clientSecret);
      headers.authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
    }
    const response = await this.fetchJson(discovery.token_endpoint, { method: "POST", headers, body: body.toString() }, "token endpoint");
    const idToken = response.id_token;
    if (typeof idToken !== "string") throw new OidcError("The identity provider returned no id_token", 502);
    return this.verifyIdToken(idToken, input.nonce);
  }

  async verifyIdToken(idToken: string, nonce: string): Promise<IdTokenClaims> {
    const parts = idToken.split(".");
    if (parts.length !== 3) throw new OidcError("The identity provider sent a malformed id_token", 502);
    const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
    const header = jsonPart(headerPart);
    const alg = typeof header.alg === "string" ? header.alg : "";
    const algorithm = ALGORITHMS[alg];
    if (!algorithm) throw new OidcError(`id_token algorithm ${alg || "(none)"} is not accepted`, 401);
    const jwk = await this.keyFor(typeof header.kid === "string" ? header.kid : undefined, alg);
    let valid = false;
    try {
      const key = await crypto.subtle.importKey("jwk", jwk, algorithm.import, false, ["verify"]);
      valid = await crypto.subtle.verify(algorithm.verify, key, base64UrlDecode(signaturePart), new TextEncoder().encode(`${headerPart}.${payloadPart}`));
    } catch {
      valid = false;
    }
    if (!valid) throw new OidcError("The id_token signature does not verify", 401);

    const claims = jsonPart(payloadPart);
    const nowS = this.now() / 1000;
    if (claims.iss !== this.settings.issuer) throw new OidcError("The id_token was issued by another issuer", 401);
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audiences.includes(this.settings.clientId)) throw new OidcError("The id_token is meant for another client", 401);
    if (audiences.length > 1 && claims.azp !== undefined && claims.azp !== this.settings.clientId) {
      throw new OidcError("The id_token was issued to another party", 401);
    }
    if (typeof claims.exp !== "number" || claims.exp + CLOCK_SKEW_S < nowS) throw new OidcError("The id_token has expired", 401);
    if (typeof claims.nbf === "number" && claims.nbf - CLOCK_SKEW_S > nowS) throw new OidcError("The id_token is not valid yet", 401);
    if (claims.nonce !== nonce) throw new OidcError("The id_token nonce does not match this sign-in", 401);
    if (typeof claims.sub !== "string") throw new OidcError("The id_token names no subject", 401);
    if (typeof claims.email !== "string" || !claims.email.includes("@")) {
      throw new OidcError("The identity provider did not share an email address (scope email)", 401);
    }
    if (claims.email_verified === false) throw new OidcError("The identity provider has not verified this email address", 401);
    return claims as IdTokenClaims;
  }

  private discover(): Promise<Discovery> {
    this.discovery ??= (async () => {
      const doc = await this.fetchJson(`${this.settings.issuer}/.well-known/openid-configuration`, {}, "discovery document");
      for (const field of ["issuer", "authorization_endpoint", "token_endpoint", "jwks_uri"] as const) {
        if (typeof doc[field] !== "string") throw new OidcError(`The provider's discovery document lacks ${field}`, 502);
      }
      // OIDC Discovery §4.3: the document must name exactly the issuer we were configured with.
      if (doc.issuer !== this.settings.issuer) throw new OidcError(`The provider calls itself ${String(doc.issuer)}, not ${this.settings.issuer}`, 502);
      return doc as unknown as Discovery;
    })();
    // A failed discovery is retried on the next sign-in rather than remembered.
    this.discovery.catch(() => (this.discovery = null));
    return this.discovery;
  }

  private async keyFor(kid: string | undefined, alg: string): Promise<Jwk> {
    const pick = (keys: Jwk[]) =>
      keys.find((k) => (kid === undefined || k.kid === kid) && (k.use === undefined || k.use === "sig") && (k.alg === undefined || k.alg === alg));
    const now = this.now();
    if (this.jwks && now - this.jwks.fetchedAt < JWKS_TTL_MS) {
      const key = pick(this.jwks.keys);
      if (key) return key;
      if (now - this.jwks.fetchedAt < JWKS_REFETCH_MIN_MS) throw new OidcError("No signing key of the provider matches the id_token", 401);
    }
    const discovery = await this.discover();
    const doc = await this.fetchJson(discovery.jwks_uri, {}, "JWKS");
    if (!Array.isArray(doc.keys)) throw new OidcError("The provider's JWKS has no keys", 502);
    this.jwks = { keys: doc.keys as Jwk[], fetchedAt: now };
    const key = pick(this.jwks.keys);
    if (!key) throw new OidcError("No signing key of the provider matches the id_token", 401);
    return key;
  }

  private async fetchJson(url: string, init: RequestInit, what: string): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(url, { ...init, redirect: "error", signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    } catch (err) {
      throw new OidcError(`The identity provider's ${what} could not be reached (${(err as Error).message})`, 502);
    }
    const text = await response.text();
    if (!response.ok) throw new OidcError(`The identity provider's ${what} answered ${response.status}: ${text.slice(0, 200)}`, 502);
    try {
      const value = JSON.parse(text);
      if (typeof value === "object" && value !== null && !Array.isArray(value)) return value;
    } catch {}
    throw new OidcError(`The identity provider's ${what} did not answer JSON`, 502);
  }
}
