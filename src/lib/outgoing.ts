import type * as Dns from "node:dns/promises";
import type * as Net from "node:net";
import type * as Zlib from "node:zlib";

/*
 * node:dns/promises, node:net and node:zlib load on first use: the compiled binary loads every built-in a static
 * import names before anything runs, and these three cost about 6 ms of every start (issue 32, start-up) while only
 * an outgoing call or a target check needs them.
 */
const lookup: typeof Dns.lookup = ((...args: Parameters<typeof Dns.lookup>) => (require("node:dns/promises") as typeof Dns).lookup(...args)) as typeof Dns.lookup;
const isIP = (input: string): number => (require("node:net") as typeof Net).isIP(input);
const zlibModule = () => require("node:zlib") as typeof Zlib;

/**
 * Every request svc sends to another server (connector deliveries, OAuth
 * token calls, OIDC discovery and token calls) goes through `outgoingFetch`:
 *
 * - a vendor's answer is read up to 64 KiB, never more, compressed or not:
 *   fetch is asked not to decompress (`decompress: false`; Bun's own
 *   decompression inflated a 400 KB gzip answer to 400 MB even when the
 *   stream was dropped at 64 KiB), the raw bytes are counted, and a
 *   compressed answer is inflated by us, stopping at 64 KiB;
 * - redirects are never followed (a 3xx is the answer);
 * - a target a user typed (a webhook's URL) is checked before the call:
 *   a name or address that is loopback, private (RFC 1918, ULA), link-local,
 *   CGNAT, multicast, unspecified or reserved, or a cloud metadata name, is
 *   refused (SERVICE_CONNECTOR_PRIVATE_TARGETS=allow lifts all but the
 *   metadata names); the name is resolved here and the connection goes to
 *   the checked address (Host and TLS server name stay the URL's), so a
 *   name that resolves differently a moment later (DNS rebinding) cannot
 *   slip through.
 */

/** The most of any answer svc reads. */
export const ANSWER_LIMIT_BYTES = 64 * 1024;
/** How long a name may take to resolve before the target counts as unreachable. */
const RESOLVE_TIMEOUT_MS = 5_000;

/** Names that reach a cloud's instance metadata (credentials!) from inside it; never a target, even when private targets are allowed. */
const METADATA_NAMES = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.internal",
  "metadata.oraclecloud.com",
  "metadata.tencentyun.com",
  "100-100-100-200.metadata",
]);
/** Metadata addresses that no private-target allowance opens (AWS, GCP, Azure, Oracle, Alibaba; AWS's IPv6 one). */
const METADATA_ADDRESSES = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2:0:0:0:0:0:254"]);

/** A target svc will not call, with the reason in words (VALIDATION detail, delivery error). */
export class TargetRefused extends Error {}

function ipv4(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const out = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : Number.NaN));
  return out.every((n) => n >= 0 && n <= 255) ? out : null;
}

/** An IPv6 address as eight 16-bit groups (a trailing dotted IPv4 folded in), or null. */
function ipv6(text: string): number[] | null {
  let s = text.replace(/%.*$/, "").toLowerCase();
  const dotted = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(s);
  if (dotted) {
    const v4 = ipv4(dotted[1]!);
    if (!v4) return null;
    s = `${s.slice(0, dotted.index)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === "" ? [] : h.split(":"));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 2 && missing < 1) || (halves.length === 1 && missing !== 0)) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  const out = all.map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? Number.parseInt(g, 16) : Number.NaN));
  return out.length === 8 && out.every((n) => !Number.isNaN(n)) ? out : null;
}

function v4Class(a: number[]): string | null {
  const [x, y] = a as [number, number, number, number];
  if (x === 0) return "unspecified";
  if (x === 127) return "loopback";
  if (x === 10 || (x === 172 && y >= 16 && y <= 31) || (x === 192 && y === 168)) return "private";
  if (x === 169 && y === 254) return "link-local";
  if (x === 100 && y >= 64 && y <= 127) return "CGNAT";
  if (x >= 224 && x <= 239) return "multicast";
  if (x >= 240) return "reserved";
  if ((x === 192 && y === 0 && a[2] === 0) || (x === 198 && (y === 18 || y === 19))) return "reserved";
  return null;
}

/**
 * Why an address may not be a target (loopback, private, link-local, CGNAT,
 * multicast, unspecified, reserved), or null for a public one. IPv4 inside
 * IPv6 (mapped, compatible, NAT64, 6to4) is judged as the IPv4 it carries.
 */
export function refusedAddressClass(address: string): string | null {
  const v4 = ipv4(address);
  if (v4) return v4Class(v4);
  const g = ipv6(address);
  if (!g) return "unreadable";
  const [a, b] = g as [number, number, number, number, number, number, number, number];
  const embedded = (hi: number, lo: number) => v4Class([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  if (g.every((n) => n === 0)) return "unspecified";
  if (g.slice(0, 7).every((n) => n === 0) && g[7] === 1) return "loopback";
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64).
  if (g.slice(0, 5).every((n) => n === 0) && (g[5] === 0xffff || g[5] === 0)) return embedded(g[6]!, g[7]!) ?? (g[5] === 0 ? "reserved" : null);
  if (a === 0x64 && b === 0xff9b && g.slice(2, 6).every((n) => n === 0)) return embedded(g[6]!, g[7]!);
  if (a === 0x2002) return embedded(b, g[2]!);
  if ((a & 0xfe00) === 0xfc00) return "private";
  if ((a & 0xffc0) === 0xfe80) return "link-local";
  if ((a & 0xffc0) === 0xfec0) return "private";
  if ((a & 0xff00) === 0xff00) return "multicast";
  return null;
}

function isMetadata(address: string): boolean {
  const g = ipv6(address);
  const normal = g ? g.map((n) => n.toString(16)).join(":") : address;
  return METADATA_ADDRESSES.has(normal) || (g !== null && g.slice(0, 5).every((n) => n === 0) && g[5] === 0xffff && METADATA_ADDRESSES.has(`${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`));
}

/** The URL's host as a name or address: no brackets, no trailing dot, lower case. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
}

export type TargetPolicy = {
  /** SERVICE_CONNECTOR_PRIVATE_TARGETS=allow: private, loopback and link-local addresses may be targets (metadata never). */
  allowPrivate: boolean;
  /** The resolver (tests and embeddings may stand one in). */
  resolve?: (name: string) => Promise<string[]>;
};

async function resolveName(name: string): Promise<string[]> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new TargetRefused(`${name} did not resolve within ${RESOLVE_TIMEOUT_MS / 1000} s`)), RESOLVE_TIMEOUT_MS).unref?.());
  const found = await Promise.race([lookup(name, { all: true, verbatim: true }), timeout]);
  return found.map((a) => a.address);
}

function refuseAddress(host: string, address: string, policy: TargetPolicy): void {
  if (isMetadata(address)) throw new TargetRefused(`${host} is a cloud metadata address`);
  const why = refusedAddressClass(address);
  if (why && !policy.allowPrivate) {
    const named = host === address ? host : `${host} resolves to ${address}, which`;
    throw new TargetRefused(`${named} is a ${why} address; targets must be public (an operator allows private ones with SERVICE_CONNECTOR_PRIVATE_TARGETS=allow)`);
  }
}

/**
 * Checks a target URL the way a delivery will: its name (localhost, a cloud
 * metadata name) and every address it resolves to. Answers the addresses
 * (empty when `resolveNow` is false and the host is a name, or when the name
 * does not resolve and `mustResolve` is false: the delivery checks again).
 */
export async function checkTarget(raw: string, policy: TargetPolicy, options: { mustResolve: boolean } = { mustResolve: true }): Promise<string[]> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused("not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TargetRefused("only http:// and https:// targets are called");
  const host = hostOf(url);
  if (host === "") throw new TargetRefused("the URL has no host");
  if (isIP(host)) {
    refuseAddress(host, host, policy);
    return [host];
  }
  if (METADATA_NAMES.has(host)) throw new TargetRefused(`${host} is a cloud metadata name`);
  if ((host === "localhost" || host.endsWith(".localhost")) && !policy.allowPrivate) {
    throw new TargetRefused(`${host} is a loopback name; targets must be public (an operator allows private ones with SERVICE_CONNECTOR_PRIVATE_TARGETS=allow)`);
  }
  let addresses: string[];
  try {
    addresses = await (policy.resolve ?? resolveName)(host);
  } catch (err) {
    if (!options.mustResolve) return [];
    if (err instanceof TargetRefused) throw err;
    throw new TargetRefused(`${host} does not resolve (${(err as { code?: string }).code ?? "no address"})`);
  }
  if (addresses.length === 0) {
    if (!options.mustResolve) return [];
    throw new TargetRefused(`${host} does not resolve`);
  }
  for (const address of addresses) refuseAddress(host, address, policy);
  return addresses;
}

export type OutgoingOptions = {
  /** Abort after this long (the whole call, answer included). */
  timeoutMs: number;
  /** Check the URL as a user-given target, and connect to the checked address. Omit for the operator's own settings (vendor base URLs). */
  target?: TargetPolicy;
};

/** Inflates at most `limit` bytes of a compressed answer (whatever the ratio, memory stays about `limit`). */
async function inflateCapped(raw: Uint8Array, encoding: string, limit: number): Promise<Uint8Array | null> {
  const zlib = zlibModule();
  let stream: Zlib.Gunzip | Zlib.Unzip | Zlib.BrotliDecompress;
  if (encoding === "gzip" || encoding === "x-gzip" || encoding === "deflate") stream = zlib.createUnzip({ chunkSize: 16 * 1024, finishFlush: zlib.constants.Z_SYNC_FLUSH });
  else if (encoding === "br") stream = zlib.createBrotliDecompress({ chunkSize: 16 * 1024, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
  else return null;
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((done) => {
    const finish = () => done();
    stream.on("data", (chunk: Buffer) => {
      if (size < limit) {
        chunks.push(chunk);
        size += chunk.length;
      }
      if (size >= limit) {
        stream.destroy();
        done();
      }
    });
    stream.on("error", finish);
    stream.on("end", finish);
    stream.on("close", finish);
    stream.end(raw);
  });
  return Buffer.concat(chunks).subarray(0, limit);
}

/** Reads at most `limit` raw bytes of a body, then lets the rest go (the connection is dropped). */
async function readCapped(res: Response, limit: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!res.body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > limit) {
        chunks.push(value.subarray(0, limit - size));
        size = limit;
        truncated = true;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    if (truncated) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { bytes, truncated };
}

/** Headers of a body we already read and decoded: no length or encoding of the wire form. */
function readHeaders(source: Headers, truncated: boolean): Headers {
  const headers = new Headers(source);
  headers.delete("content-encoding");
  headers.delete("content-length");
  headers.delete("transfer-encoding");
  if (truncated) headers.set("x-svc-answer-truncated", String(ANSWER_LIMIT_BYTES));
  return headers;
}

/**
 * fetch for every outgoing call (see the file's comment): the answer comes
 * back as a Response whose body is already read, at most 64 KiB (decoded),
 * with `x-svc-answer-truncated` set when there was more. Throws TargetRefused
 * for a refused target, and what fetch throws otherwise.
 */
export async function outgoingFetch(raw: string, init: RequestInit, options: OutgoingOptions): Promise<Response> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  let url = raw;
  const headers = new Headers(init.headers);
  let tls: { serverName: string } | undefined;
  if (options.target) {
    const addresses = await checkTarget(raw, options.target);
    const parsed = new URL(raw);
    const host = hostOf(parsed);
    if (!isIP(host)) {
      // Connect to the address just checked, not to whatever the name resolves to a moment later.
      const address = addresses[0]!;
      if (!headers.has("host")) headers.set("host", parsed.host);
      if (parsed.protocol === "https:") tls = { serverName: host };
      parsed.hostname = address.includes(":") ? `[${address}]` : address;
      url = parsed.toString();
    }
  }
  if (!headers.has("accept-encoding")) headers.set("accept-encoding", "identity");
  const res = await fetch(url, { ...init, headers, redirect: "manual", decompress: false, signal, ...(tls ? { tls } : {}) });
  const { bytes, truncated } = await readCapped(res, ANSWER_LIMIT_BYTES);
  const encoding = (res.headers.get("content-encoding") ?? "").trim().toLowerCase();
  let body: Uint8Array = bytes;
  if (encoding !== "" && encoding !== "identity" && bytes.byteLength > 0) {
    // A vendor that compresses though we asked for identity: inflate at most the limit; an unknown coding reads as nothing.
    body = (await inflateCapped(bytes, encoding, ANSWER_LIMIT_BYTES)) ?? new Uint8Array(0);
  }
  const status = res.status >= 200 && res.status <= 599 ? res.status : 502;
  const nullBody = status === 204 || status === 205 || status === 304;
  return new Response(nullBody ? null : (body as Uint8Array<ArrayBuffer>), { status, statusText: res.statusText, headers: readHeaders(res.headers, truncated || body.byteLength >= ANSWER_LIMIT_BYTES) });
}
