import { networkInterfaces } from "node:os";
import type ProxyAddr from "proxy-addr";
import { badRequest } from "./errors";
import { originalRequest } from "./pipeline";
import { UsageError } from "./usage-error";

let proxyAddrModule: typeof ProxyAddr | undefined;

/**
 * proxy-addr, loaded when trusted proxies are configured (SERVICE_TRUSTED_PROXIES): most servers have none, and
 * loading it (ipaddr.js under it builds its tables) was part of every start.
 */
function proxyaddr(): typeof ProxyAddr {
  proxyAddrModule ??= require("proxy-addr") as typeof ProxyAddr;
  return proxyAddrModule;
}

/**
 * Where the server is, as browsers and mail see it, and who is really
 * calling when a reverse proxy stands in front:
 * - links we mail or hand out (magic, invite, setup, device verification)
 *   use SERVICE_PUBLIC_URL when set; otherwise the request's Host, but only
 *   a Host that is one of ours (SERVICE_ALLOWED_HOSTS, else the address the
 *   server was started on), so that nobody can make the server mail a live
 *   token pointing at their own site;
 * - a browser form post must come from one of those origins (CSRF);
 * - X-Forwarded-For and X-Forwarded-Proto count only when the connection
 *   comes from an address in SERVICE_TRUSTED_PROXIES.
 */
export type NetworkOptions = {
  /** SERVICE_PUBLIC_URL, as an origin (`https://flags.example.com`). */
  publicUrl?: string;
  /** SERVICE_ALLOWED_HOSTS: `host` or `host:port` names browsers may use besides the public URL. */
  allowedHosts?: string[];
  /** SERVICE_TRUSTED_PROXIES: addresses or CIDR ranges (and `loopback`, `linklocal`, `uniquelocal`). */
  trustedProxies?: string[];
};

type PeerSource = { requestIP(request: Request): { address: string } | null };

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/** `Host` as compared here: lower case, no trailing dot, always with a port. */
function normaliseHost(host: string, defaultPort: number): string | null {
  const value = host.trim().toLowerCase();
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+?)\.?(?::(\d{1,5}))?$/.exec(value);
  if (!match) return null;
  return `${match[1]}:${match[2] ?? defaultPort}`;
}

/**
 * The host name to show for a bind address: `localhost` for a wildcard bind
 * (0.0.0.0, ::), so that the `listening on` line, the first-run setup link
 * and the CLI's default URL (`http://localhost:8080`) name the same origin
 * and the browser's session cookie follows from one to the other.
 */
export function displayHost(bindHost: string): string {
  if (bindHost === "0.0.0.0" || bindHost === "::" || bindHost === "") return "localhost";
  return bracketed(bindHost);
}

function bracketed(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}

export class Network {
  readonly publicUrl: string | undefined;
  private readonly configuredHosts: string[];
  private readonly trust: ((address: string, index: number) => boolean) | null;
  private hosts = new Set<string>();
  private peers: PeerSource | null = null;

  constructor(options: NetworkOptions = {}) {
    this.publicUrl = options.publicUrl;
    this.configuredHosts = options.allowedHosts ?? [];
    this.trust = options.trustedProxies && options.trustedProxies.length > 0 ? proxyaddr().compile(options.trustedProxies) : null;
  }

  /**
   * The server now listens on `host:port`: those names become ours. A wildcard
   * bind (0.0.0.0, ::) makes every local interface address ours, by IP only
   * (an IP in Host cannot be an attacker's domain), plus localhost.
   */
  listening(host: string, port: number, peers: PeerSource | null): void {
    this.peers = peers;
    const hosts = new Set<string>();
    const add = (name: string, defaultPort = port) => {
      const normal = normaliseHost(name, defaultPort);
      if (normal) hosts.add(normal);
    };
    const wildcard = host === "0.0.0.0" || host === "::" || host === "";
    if (wildcard || LOOPBACK_NAMES.includes(host) || host === "::1" || host.startsWith("127.")) {
      for (const name of LOOPBACK_NAMES) add(`${name}:${port}`);
    }
    if (wildcard) {
      for (const list of Object.values(networkInterfaces())) {
        for (const item of list ?? []) add(`${bracketed(item.address.replace(/%.*$/, ""))}:${port}`);
      }
    } else {
      add(`${bracketed(host)}:${port}`);
    }
    for (const name of this.configuredHosts) add(name, port);
    if (this.publicUrl) {
      const url = new URL(this.publicUrl);
      add(url.host, url.protocol === "https:" ? 443 : 80);
    }
    this.hosts = hosts;
  }

  /** Whether `Host` names this server (see the class comment). */
  isOwnHost(hostHeader: string | null, https: boolean): boolean {
    if (!hostHeader) return false;
    const normal = normaliseHost(hostHeader, https ? 443 : 80);
    return normal !== null && this.hosts.has(normal);
  }

  /** The connection's own peer address ("unknown" without a server, as in app.handle tests). */
  peerAddress(request: Request): string {
    return this.peers?.requestIP(originalRequest.get(request) ?? request)?.address ?? "unknown";
  }

  /** The client's address: the peer, or what trusted proxies say they forwarded for. Keys rate limits. */
  clientAddress(request: Request): string {
    const peer = this.peerAddress(request);
    if (!this.trust || peer === "unknown" || !this.trust(peer, 0)) return peer;
    const forwardedFor = request.headers.get("x-forwarded-for") ?? "";
    return proxyaddr()({ connection: { remoteAddress: peer }, headers: { "x-forwarded-for": forwardedFor } } as never, this.trust);
  }

  /** TLS as the browser sees it: direct, or terminated by a trusted proxy that says so. */
  isHttps(request: Request): boolean {
    if (request.url.startsWith("https:")) return true;
    if (!this.trust) return false;
    const proto = request.headers.get("x-forwarded-proto");
    if (!proto) return false;
    const peer = this.peerAddress(request);
    return peer !== "unknown" && this.trust(peer, 0) && proto.split(",")[0]!.trim().toLowerCase() === "https";
  }

  /**
   * The origin of links handed out for this request: SERVICE_PUBLIC_URL, else
   * the request's own origin when its Host is ours. Anything else is refused.
   */
  publicOrigin(request: Request): string {
    if (this.publicUrl) return this.publicUrl;
    const host = request.headers.get("host");
    const https = this.isHttps(request);
    if (!this.isOwnHost(host, https)) throw unknownHost(host);
    return `${https ? "https" : "http"}://${host!.trim().toLowerCase()}`;
  }

  /** Whether a browser's Origin (or Referer) is one of this server's own. */
  isOwnOrigin(source: string | null): boolean {
    if (!source) return false;
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      return false;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return false;
    if (this.publicUrl && url.origin === this.publicUrl) return true;
    return this.isOwnHost(url.host, url.protocol === "https:");
  }

  /**
   * The browser-facing paths (sign-in pages, /auth/*, /setup, /device) answer
   * only on our own host names unless SERVICE_PUBLIC_URL fixes every link;
   * null when the request may go on, else the error to answer.
   */
  checkBrowserHost(request: Request) {
    if (this.publicUrl) return null;
    const host = request.headers.get("host");
    return this.isOwnHost(host, this.isHttps(request)) ? null : unknownHost(host);
  }

  /** The names `Host` may carry, for messages and tests. */
  ownHosts(): string[] {
    return [...this.hosts];
  }
}

function unknownHost(host: string | null) {
  return badRequest(
    "This server does not answer to that host name",
    `Host: ${(host ?? "(none)").slice(0, 200)} is not an address of this server; set SERVICE_PUBLIC_URL to the URL people use (or list the name in SERVICE_ALLOWED_HOSTS)`,
  );
}

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** Reads SERVICE_PUBLIC_URL, SERVICE_ALLOWED_HOSTS and SERVICE_TRUSTED_PROXIES; a malformed value is an error at start. */
export function networkOptionsFromEnv(env: Record<string, string | undefined>): NetworkOptions {
  const options: NetworkOptions = {};
  if (env.SERVICE_PUBLIC_URL) {
    let url: URL;
    try {
      url = new URL(env.SERVICE_PUBLIC_URL);
    } catch {
      throw new UsageError(`SERVICE_PUBLIC_URL is not a URL: ${env.SERVICE_PUBLIC_URL}`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError("SERVICE_PUBLIC_URL must start with http:// or https://");
    options.publicUrl = url.origin;
  }
  const hosts = list(env.SERVICE_ALLOWED_HOSTS);
  for (const host of hosts) {
    if (!normaliseHost(host, 80)) throw new UsageError(`SERVICE_ALLOWED_HOSTS: ${host} is not a host name (use names like flags.example.com or 10.0.0.5:8080, comma-separated)`);
  }
  if (hosts.length > 0) options.allowedHosts = hosts;
  const proxies = list(env.SERVICE_TRUSTED_PROXIES);
  if (proxies.length > 0) {
    try {
      proxyaddr().compile(proxies);
    } catch (err) {
      throw new UsageError(`SERVICE_TRUSTED_PROXIES: ${(err as Error).message} (use addresses or CIDR ranges like 10.0.0.0/8, or loopback, comma-separated)`);
    }
    options.trustedProxies = proxies;
  }
  return options;
}
