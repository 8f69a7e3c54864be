import { UsageError } from "../../lib/usage-error";
import { type Mailer, parseSmtpUrl } from "./mail";
import type { RateRule } from "../../lib/rate-limit";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Plain http to the provider is allowed only for an issuer on this machine
 * (a development or test provider); everything else must be https.
 */
export function isLoopbackHttp(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" && LOOPBACK_HOSTS.has(parsed.hostname);
  } catch {
    return false;
  }
}

export type OidcSettings = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL=true: accept an id_token without `email_verified: true` (for a provider that lacks the claim). */
  allowUnverifiedEmail?: boolean;
};

/** Rate limits of the unauthenticated sign-in endpoints (fixed windows, shared by every server on the store). */
export type SignInRateLimits = {
  magicLinkPerEmail: RateRule;
  magicLinkPerIp: RateRule;
  deviceCodePerIp: RateRule;
};

export const DEFAULT_RATE_LIMITS: SignInRateLimits = {
  magicLinkPerEmail: { limit: 5, windowMs: 15 * 60_000 },
  magicLinkPerIp: { limit: 30, windowMs: 15 * 60_000 },
  deviceCodePerIp: { limit: 30, windowMs: 10 * 60_000 },
};

/** How people sign in: where links point, how they are delivered, the optional identity provider. */
export type SignInOptions = {
  /**
   * SERVICE_SMTP_URL: `smtps://user:pass@host:port` (TLS from the start, port 465) or
   * `smtp://user:pass@host:port` (STARTTLS required, port 587); `smtp://…?tls=off` for a
   * plain-text relay. Without it, mail goes to `<data>/outbox.log`.
   */
  smtpUrl?: string;
  /** SERVICE_SMTP_FROM: sender address of sign-in mails. */
  mailFrom?: string;
  /** Extra CA certificate (PEM) trusted for the SMTP server's certificate (tests trust a self-signed one). */
  smtpCa?: string;
  /** Replaces SMTP and the outbox (tests capture links with it). */
  mailer?: Mailer;
  /** SERVICE_OIDC_ISSUER, SERVICE_OIDC_CLIENT_ID, SERVICE_OIDC_CLIENT_SECRET, SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL. */
  oidc?: OidcSettings;
  /** Clock in epoch milliseconds (tests move it to reach expiries). */
  now?: () => number;
  rateLimits?: Partial<SignInRateLimits>;
  /**
   * Seconds a device-flow client waits between polls (SPEC: about two; tests that sign the CLI in dozens of times
   * shorten it to one). Not an environment setting.
   */
  deviceIntervalS?: number;
};

function httpUrl(value: string, what: string, protocols: string[]): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${what} is not a URL: ${value}`);
  }
  if (!protocols.includes(url.protocol)) throw new UsageError(`${what} must start with ${protocols.map((p) => `${p}//`).join(" or ")}`);
  return url;
}

/** Reads the sign-in settings of `svc serve` from its environment; a malformed value is an error at start. */
export function signInOptionsFromEnv(env: Record<string, string | undefined>): SignInOptions {
  const options: SignInOptions = {};
  if (env.SERVICE_SMTP_URL) {
    parseSmtpUrl(env.SERVICE_SMTP_URL);
    options.smtpUrl = env.SERVICE_SMTP_URL;
  }
  if (env.SERVICE_SMTP_FROM) options.mailFrom = env.SERVICE_SMTP_FROM;
  const issuer = env.SERVICE_OIDC_ISSUER;
  const clientId = env.SERVICE_OIDC_CLIENT_ID;
  const clientSecret = env.SERVICE_OIDC_CLIENT_SECRET;
  if (issuer || clientId || clientSecret) {
    if (!issuer || !clientId || !clientSecret) {
      throw new UsageError("OIDC needs all of SERVICE_OIDC_ISSUER, SERVICE_OIDC_CLIENT_ID and SERVICE_OIDC_CLIENT_SECRET");
    }
    const issuerUrl = httpUrl(issuer, "SERVICE_OIDC_ISSUER", ["http:", "https:"]);
    if (issuerUrl.protocol === "http:" && !isLoopbackHttp(issuer)) {
      throw new UsageError("SERVICE_OIDC_ISSUER must be https:// (plain http:// only for 127.0.0.1, ::1 or localhost)");
    }
    options.oidc = { issuer: issuer.replace(/\/+$/, ""), clientId, clientSecret };
    const allowUnverified = env.SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL;
    if (allowUnverified !== undefined && allowUnverified !== "") {
      if (allowUnverified !== "true" && allowUnverified !== "false") {
        throw new UsageError(`SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL must be true or false, not ${JSON.stringify(allowUnverified)}`);
      }
      options.oidc.allowUnverifiedEmail = allowUnverified === "true";
    }
  } else if (env.SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL) {
    throw new UsageError("SERVICE_OIDC_ALLOW_UNVERIFIED_EMAIL needs SERVICE_OIDC_ISSUER, SERVICE_OIDC_CLIENT_ID and SERVICE_OIDC_CLIENT_SECRET");
  }
  return options;
}
