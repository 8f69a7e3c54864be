import { nodeCrypto } from "../../lib/node-crypto";
import type * as openid from "openid-client";
import { outgoingFetch } from "../../lib/outgoing";
import { type OidcSettings, isLoopbackHttp } from "./options";

// The OIDC client library (150 KB) loads when a sign-in first needs it: the identity service is made at every start
// (the first-run check), most servers have no OIDC configured, and none needs it before a browser signs in.
const openidCode = () => require("openid-client") as typeof import("openid-client");

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

/** What a verified id_token tells us: who (issuer + subject) and their verified email (lower-cased). */
export type OidcIdentity = { issuer: string; subject: string; email: string };

/** Seconds each request to the provider may take (discovery, token, JWKS). */
const TIMEOUT_S = 10;

/** Every call to the provider (discovery, token, JWKS): no redirects, and at most 64 KiB of any answer (lib/outgoing.ts). */
const providerFetch: openid.CustomFetch = (url, options) => outgoingFetch(url, options as RequestInit, { timeoutMs: TIMEOUT_S * 1000 });
/** Leeway for exp, nbf and iat of id_tokens. */
const CLOCK_TOLERANCE_S = 60;


/**
 * OpenID Connect relying party on openid-client (panva): discovery, the
 * authorization code flow with PKCE (S256), state and nonce, the code
 * exchange, and id_token checks (iss, aud, azp, exp, nbf, iat, nonce and,
 * explicitly enabled, the signature against the provider's JWKS). Every
 * failure leaves as an OidcError.
 */
export class OidcClient {
  private metadata: Promise<openid.ServerMetadata> | null = null;
  /** The provider's JWKS as openid-client cached it, carried from one sign-in's configuration to the next. */
  private jwksCache: openid.ExportedJWKSCache | undefined;
  /** http:// is allowed only for a loopback issuer. */
  private readonly insecure: boolean;

  constructor(
    readonly settings: OidcSettings,
    /** The service clock: id_token times are checked against it (as everything else in svc). */
    private readonly now: () => number,
  ) {
    this.insecure = isLoopbackHttp(settings.issuer);
  }

  async authorizationUrl(input: { redirectUri: string; state: string; nonce: string; codeVerifier: string }): Promise<string> {
    const openidClient = openidCode();
    const config = await this.configuration();
    try {
      return openidClient
        .buildAuthorizationUrl(config, {
          redirect_uri: input.redirectUri,
          scope: "openid email profile",
          state: input.state,
          nonce: input.nonce,
          code_challenge: await openidClient.calculatePKCECodeChallenge(input.codeVerifier),
          code_challenge_method: "S256",
        })
        .toString();
    } catch (err) {
      throw toOidcError(err, "authorization endpoint");
    }
  }

  /**
   * Exchanges the code of the provider's redirect (`callbackUrl`: our
   * callback address with every parameter the provider sent) and returns
   * who the verified id_token names. A missing or false `email_verified` is
   * refused unless the operator allowed unverified addresses.
   */
  async signIn(input: { callbackUrl: URL; codeVerifier: string; state: string; nonce: string }): Promise<OidcIdentity> {
    const openidClient = openidCode();
    const config = await this.configuration();
    let claims: openid.IDToken | undefined;
    try {
      const tokens = await openidClient.authorizationCodeGrant(config, input.callbackUrl, {
        pkceCodeVerifier: input.codeVerifier,
        expectedState: input.state,
        expectedNonce: input.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (err) {
      throw toOidcError(err, "token endpoint");
    } finally {
      this.jwksCache = openidClient.getJwksCache(config) ?? this.jwksCache;
    }
    if (!claims) throw new OidcError("The identity provider returned no id_token", 502);
    if (typeof claims.sub !== "string" || claims.sub === "") throw new OidcError("The id_token names no subject", 401);
    const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
    if (!email.includes("@")) throw new OidcError("The identity provider did not share an email address (scope email)", 401);
    if (claims.email_verified !== true && !this.settings.allowUnverifiedEmail) {
      throw new OidcError(
        claims.email_verified === undefined
          ? "The identity provider does not say that this email address is verified (no email_verified claim), so it cannot sign you in here"
          : "The identity provider has not verified this email address; verify it there, then sign in again",
        401,
      );
    }
    return { issuer: claims.iss, subject: claims.sub, email };
  }

  /** The provider's metadata, discovered once (a failed discovery is retried on the next sign-in). */
  private discover(): Promise<openid.ServerMetadata> {
    this.metadata ??= (async () => {
      const openidClient = openidCode();
      let config: openid.Configuration;
      try {
        // openid-client checks that the document names the issuer we were configured with (OIDC Discovery §4.3).
        config = await openidClient.discovery(new URL(this.settings.issuer), this.settings.clientId, undefined, undefined, {
          timeout: TIMEOUT_S,
          execute: this.insecure ? [openidClient.allowInsecureRequests] : [],
          [openidClient.customFetch]: providerFetch,
        });
      } catch (err) {
        throw toOidcError(err, "discovery document");
      }
      const metadata = config.serverMetadata();
      if (typeof metadata.jwks_uri !== "string") throw new OidcError("The provider's discovery document lacks jwks_uri", 502);
      if (this.insecure) {
        // A loopback issuer may use http, but only towards itself.
        for (const field of ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const) {
          const value = metadata[field];
          if (typeof value === "string" && !value.startsWith("https:") && !isLoopbackHttp(value)) {
            throw new OidcError(`The provider's ${field} must be https or on this machine: ${value}`, 502);
          }
        }
      }
      return metadata;
    })();
    this.metadata.catch(() => (this.metadata = null));
    return this.metadata;
  }

  /**
   * One openid-client configuration per use: discovery is cached, and the
   * client's clock skew follows the service clock at this moment.
   */
  private async configuration(): Promise<openid.Configuration> {
    const openidClient = openidCode();
    const metadata = await this.discover();
    const methods = metadata.token_endpoint_auth_methods_supported;
    // client_secret_basic is the OIDC default; use the body only where the provider supports nothing else.
    const auth =
      methods && !methods.includes("client_secret_basic") && methods.includes("client_secret_post")
        ? openidClient.ClientSecretPost(this.settings.clientSecret)
        : openidClient.ClientSecretBasic(this.settings.clientSecret);
    try {
      const config = new openidClient.Configuration(
        metadata,
        this.settings.clientId,
        {
          client_secret: this.settings.clientSecret,
          [openidClient.clockSkew]: Math.round((this.now() - Date.now()) / 1000),
          [openidClient.clockTolerance]: CLOCK_TOLERANCE_S,
        },
        auth,
      );
      config.timeout = TIMEOUT_S;
      config[openidClient.customFetch] = providerFetch;
      if (this.insecure) openidClient.allowInsecureRequests(config);
      // openid-client skips the id_token signature when the token came straight from the token endpoint over TLS; svc checks it anyway.
      openidClient.enableNonRepudiationChecks(config);
      if (this.jwksCache) openidClient.setJwksCache(config, this.jwksCache);
      return config;
    } catch (err) {
      throw toOidcError(err, "discovery document");
    }
  }
}

type ProcessingCause = { message?: string; cause?: { claim?: unknown; header?: { alg?: unknown }; claims?: unknown } };

const CLAIM_MISMATCH: Record<string, string> = {
  iss: "The id_token was issued by another issuer",
  aud: "The id_token is meant for another client",
  azp: "The id_token was issued to another party",
  nonce: "The id_token nonce does not match this sign-in",
};

const TIMESTAMP_FAILURE: Record<string, string> = {
  exp: "The id_token has expired",
  nbf: "The id_token is not valid yet",
  iat: "The id_token was issued too long ago",
  auth_time: "The sign-in at the identity provider is too old",
};

/**
 * Maps whatever openid-client (or fetch under it) throws to an OidcError:
 * 401 when the answer fails to prove a person (the id_token's signature,
 * claims or times, a refused code), 502 when the provider could not be
 * reached or answered something unusable. Nothing raw escapes (it would
 * become a 500).
 */
export function toOidcError(err: unknown, what: string): OidcError {
  if (err instanceof OidcError) return err;
  const openidClient = openidCode();
  if (err instanceof openidClient.ResponseBodyError) {
    if (err.error === "invalid_grant") {
      return new OidcError("The identity provider refused the authorization code (used, expired or not ours); start again", 401);
    }
    const description = err.error_description ? `: ${err.error_description.slice(0, 200)}` : "";
    return new OidcError(`The identity provider's ${what} answered ${err.status} ${err.error}${description}`, 502);
  }
  if (err instanceof openidClient.AuthorizationResponseError) {
    return new OidcError(`The identity provider answered ${err.error}${err.error_description ? `: ${err.error_description.slice(0, 200)}` : ""}`, 401);
  }
  if (err instanceof openidClient.WWWAuthenticateChallengeError) {
    return new OidcError(`The identity provider's ${what} refused svc's client credentials (${err.status})`, 502);
  }
  if (err instanceof openidClient.ClientError) {
    const cause = (err.cause ?? {}) as ProcessingCause;
    const detail = cause.message ?? err.message;
    switch (err.code) {
      case "OAUTH_JWT_CLAIM_COMPARISON_FAILED": {
        const claim = String(cause.cause?.claim ?? "");
        return new OidcError(CLAIM_MISMATCH[claim] ?? `The id_token does not match this sign-in (${claim || detail})`, 401);
      }
      case "OAUTH_JWT_TIMESTAMP_CHECK_FAILED":
        return new OidcError(TIMESTAMP_FAILURE[String(cause.cause?.claim ?? "")] ?? "The id_token is not valid at this time", 401);
      case "OAUTH_KEY_SELECTION_FAILED":
        return new OidcError("No signing key of the provider matches the id_token", 401);
      case "OAUTH_INVALID_RESPONSE":
      case "OAUTH_PARSE_ERROR":
        if (/signature verification failed/i.test(detail)) return new OidcError("The id_token signature does not verify", 401);
        if (/"alg" header/.test(detail)) return new OidcError(`id_token algorithm ${String(cause.cause?.header?.alg ?? "(none)")} is not accepted`, 401);
        if (/"state"|"iss" \(issuer\) response parameter/.test(detail)) return new OidcError("The provider's answer does not belong to this sign-in; start again", 401);
        if (/JWT "\w+" .*claim (missing|type)/.test(detail)) return new OidcError(`The id_token is incomplete: ${detail}`, 401);
        return new OidcError(`The identity provider's ${what} sent an invalid answer: ${detail}`, 502);
      case "OAUTH_TIMEOUT":
        return new OidcError(`The identity provider's ${what} did not answer within ${TIMEOUT_S} s`, 502);
      case "OAUTH_HTTP_REQUEST_FORBIDDEN":
      case "OAUTH_REQUEST_PROTOCOL_FORBIDDEN":
        return new OidcError(`The identity provider's ${what} must be reached over https`, 502);
      case "OAUTH_RESPONSE_IS_NOT_CONFORM": {
        const status = err.cause instanceof Response ? ` HTTP ${err.cause.status}` : "";
        return new OidcError(`The identity provider's ${what} answered${status || " unexpectedly"}`, 502);
      }
      case "OAUTH_RESPONSE_IS_NOT_JSON":
        return new OidcError(`The identity provider's ${what} did not answer JSON`, 502);
      case "OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED":
        return new OidcError(`The provider's ${what} does not match the configured issuer (${detail})`, 502);
      default:
        return new OidcError(`Single sign-on failed at the identity provider's ${what}: ${detail}`, 502);
    }
  }
  // fetch under Bun reports an unreachable host as a TypeError (code ECONNREFUSED and the like); openid-client lets TypeErrors through.
  const message = err instanceof Error ? err.message : String(err);
  if (String((err as { code?: unknown })?.code ?? "").startsWith("ERR_INVALID_ARG")) {
    return new OidcError(`svc could not use the identity provider's ${what}: ${message}`, 502);
  }
  return new OidcError(`The identity provider's ${what} could not be reached (${message})`, 502);
}

// Pending logins: the PKCE verifier and the nonce are sealed under a key only the browser's cookie holds.

export type PendingSecrets = { codeVerifier: string; nonce: string };

const SEAL_LABEL = "svc oidc pending login v1\0";

function sealKey(browserKey: string): Buffer {
  return nodeCrypto().createHash("sha256").update(SEAL_LABEL).update(browserKey).digest();
}

/** AES-256-GCM of the secrets under a key derived from `browserKey`, bound to the row (`stateHash` as associated data): base64url(iv ‖ tag ‖ ciphertext). */
export function sealPendingLogin(browserKey: string, stateHash: string, secrets: PendingSecrets): string {
  const iv = nodeCrypto().randomBytes(12);
  const cipher = nodeCrypto().createCipheriv("aes-256-gcm", sealKey(browserKey), iv);
  cipher.setAAD(Buffer.from(stateHash));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(secrets), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64url");
}

/** The secrets, or null when `browserKey` is not the one they were sealed with (or the row was altered). */
export function unsealPendingLogin(browserKey: string, stateHash: string, sealed: string): PendingSecrets | null {
  try {
    const raw = Buffer.from(sealed, "base64url");
    if (raw.length < 12 + 16 + 1) return null;
    const decipher = nodeCrypto().createDecipheriv("aes-256-gcm", sealKey(browserKey), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(stateHash));
    decipher.setAuthTag(raw.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    const value = JSON.parse(plain) as Partial<PendingSecrets>;
    if (typeof value.codeVerifier !== "string" || typeof value.nonce !== "string") return null;
    return { codeVerifier: value.codeVerifier, nonce: value.nonce };
  } catch {
    return null;
  }
}
