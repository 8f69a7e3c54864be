import { nodeCrypto } from "../../lib/node-crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBase62 } from "../../lib/ids";

/**
 * Connector credentials at rest: AES-256-GCM with a 96-bit random IV per
 * value and the connector id as additional authenticated data (a sealed
 * value copied onto another connector's row does not open). A sealed value
 * is `v1.<key id>.<iv>.<ciphertext+tag>` (base64url), where the key id is
 * the first 8 hex digits of SHA-256(key): a server with another key says so
 * instead of failing obscurely.
 *
 * The key: SERVICE_SECRET_KEY (32 bytes as 64 hex digits, or base64/base64url)
 * when set; else `<data>/secret.key`, created on first start (mode 0600,
 * 32 random bytes, hex). Servers sharing one PostgreSQL must share the key:
 * set the same SERVICE_SECRET_KEY on each (a per-server key file would make
 * each server's credentials unreadable to the others).
 */

export const SECRET_KEY_FILE = "secret.key";

export type KeySource = "env" | "file" | "ephemeral";

export class SecretKeyError extends Error {}

/** SERVICE_SECRET_KEY as 32 bytes: 64 hex digits, or base64 / base64url of 32 bytes. */
export function parseSecretKey(text: string, label = "SERVICE_SECRET_KEY"): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, "hex");
  if (/^[A-Za-z0-9+/_-]{43,44}={0,2}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (bytes.length === 32) return bytes;
  }
  throw new SecretKeyError(`${label}: must be 32 bytes as 64 hex digits or base64 (make one with: openssl rand -hex 32)`);
}

/**
 * Reads `<dir>/secret.key`, or creates it (0600) when absent. Created under a
 * temporary name and linked into place, so two servers starting together on
 * one data dir agree on one key and none reads a half-written file.
 */
export function loadOrCreateKeyFile(dir: string): Buffer {
  const path = join(dir, SECRET_KEY_FILE);
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = join(dir, `.${SECRET_KEY_FILE}.${randomBase62(8)}`);
    writeFileSync(temp, `${nodeCrypto().randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    try {
      linkSync(temp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      unlinkSync(temp);
    }
  }
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) !== 0) throw new SecretKeyError(`${path}: mode ${mode.toString(8)} lets others read it; chmod 600 it`);
  return parseSecretKey(readFileSync(path, "utf8"), path);
}

export class SecretBox {
  /** First 8 hex digits of SHA-256(key): names the key without revealing it. */
  readonly keyId: string;

  constructor(
    private readonly key: Buffer,
    readonly source: KeySource,
    readonly path?: string,
  ) {
    if (key.length !== 32) throw new SecretKeyError("the secret key must be 32 bytes");
    // Bun's one-shot hasher: the box is made at every start, where node:crypto is not loaded (see lib/node-crypto).
    this.keyId = Bun.SHA256.hash(key, "hex").slice(0, 8);
  }

  /** SERVICE_SECRET_KEY, else `<dataDir>/secret.key`, else (no data dir: embedded use) a key for this process only. */
  static open(options: { secretKey?: string; dataDir?: string }): SecretBox {
    if (options.secretKey) return new SecretBox(parseSecretKey(options.secretKey), "env");
    if (options.dataDir) return new SecretBox(loadOrCreateKeyFile(options.dataDir), "file", join(options.dataDir, SECRET_KEY_FILE));
    return new SecretBox(nodeCrypto().randomBytes(32), "ephemeral");
  }

  seal(plain: string, aad: string): string {
    const iv = nodeCrypto().randomBytes(12);
    const cipher = nodeCrypto().createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(aad, "utf8"));
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `v1.${this.keyId}.${iv.toString("base64url")}.${body.toString("base64url")}`;
  }

  /** Opens a sealed value; throws SecretKeyError naming the cause (another key, tampering). */
  open(sealed: string, aad: string): string {
    const parts = sealed.split(".");
    if (parts.length !== 4 || parts[0] !== "v1") throw new SecretKeyError("stored credentials are not in a known format");
    const [, keyId, ivText, bodyText] = parts as [string, string, string, string];
    if (keyId !== this.keyId) {
      throw new SecretKeyError(`stored credentials were encrypted with key ${keyId}; this server's key is ${this.keyId} (servers on one store must share SERVICE_SECRET_KEY)`);
    }
    const body = Buffer.from(bodyText, "base64url");
    if (body.length < 16) throw new SecretKeyError("stored credentials are truncated");
    try {
      const decipher = nodeCrypto().createDecipheriv("aes-256-gcm", this.key, Buffer.from(ivText, "base64url"));
      decipher.setAAD(Buffer.from(aad, "utf8"));
      decipher.setAuthTag(body.subarray(body.length - 16));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString("utf8");
    } catch {
      throw new SecretKeyError("stored credentials failed their integrity check (altered, or moved from another connector)");
    }
  }

  sealJson(value: Record<string, unknown>, aad: string): string {
    return this.seal(JSON.stringify(value), aad);
  }

  openJson<T = Record<string, unknown>>(sealed: string, aad: string): T {
    return JSON.parse(this.open(sealed, aad)) as T;
  }
}
