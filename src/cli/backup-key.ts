import type { Database } from "bun:sqlite";
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { randomBase62 } from "../lib/ids";
import { SECRET_KEY_FILE, SecretBox, SecretKeyError, parseSecretKey } from "../modules/connectors/secrets";
import { CliError } from "./errors";

/*
 * The secret key beside a backup (issue 27, item 18). Connector credentials in
 * service.db are sealed with <data>/secret.key: a database restored without it
 * comes back with every connector broken. `svc backup --out FILE` writes the key
 * as FILE.secret.key (0600); `svc restore` puts it back as <data>/secret.key,
 * and refuses, before writing anything, a backup whose sealed credentials no
 * available key opens.
 */

/** Where `svc backup --out FILE` writes the key. */
export const keyBesideBackup = (backup: string): string => `${backup}.secret.key`;

/** Writes `text` as a new file at `path`, mode 0600, under a temporary name linked into place (never over an existing file). */
function writeKeyFile(path: string, text: string): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.${basename(path)}.${randomBase62(8)}`);
  writeFileSync(temp, text, { mode: 0o600, flag: "wx" });
  try {
    linkSync(temp, path);
  } finally {
    unlinkSync(temp);
  }
}

function keyIdOfFile(path: string): { text: string; keyId: string } {
  const text = readFileSync(path, "utf8");
  try {
    return { text, keyId: new SecretBox(parseSecretKey(text, path), "file").keyId };
  } catch (err) {
    if (err instanceof SecretKeyError) throw new CliError(`${path} is not an svc secret key: ${err.message}`, "SECRET_KEY_MISMATCH", "name the secret.key of the data directory the backup came from");
    throw err;
  }
}

/** The backup side: the data dir's key file (undefined when the server seals with SERVICE_SECRET_KEY or has no key yet). */
export function keyToBackUp(dataDir: string, out: string): { from: string; to: string } | undefined {
  const from = join(dataDir, SECRET_KEY_FILE);
  if (!existsSync(from)) return undefined;
  const to = keyBesideBackup(out);
  if (existsSync(to)) throw new CliError(`${to} already exists`, "ALREADY_EXISTS", "choose a new file name (backups never overwrite)");
  return { from, to };
}

export function writeKeyBackup(plan: { from: string; to: string }): void {
  writeKeyFile(plan.to, readFileSync(plan.from, "utf8"));
}

/** The key ids (`v1.<id>.…`) the backup's sealed connector credentials need. */
export function sealedKeyIds(db: Database): { ids: string[]; connectors: number } {
  const tables = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'connectors'").get();
  if (!tables) return { ids: [], connectors: 0 };
  const rows = db.query("SELECT credentials FROM connectors WHERE credentials IS NOT NULL").all() as { credentials: string }[];
  return { ids: [...new Set(rows.map((r) => r.credentials.split(".")[1] ?? "?"))].sort(), connectors: rows.length };
}

export type KeyRestore =
  | { kind: "copy"; from: string; to: string; text: string; keyId: string }
  | { kind: "kept"; path: string; keyId: string }
  | { kind: "env"; keyId: string }
  | { kind: "none" };

/**
 * Decides, before anything is written, which key the restored server will use: SERVICE_SECRET_KEY when
 * set; else a secret.key already in the data directory; else `--secret-key PATH`, FILE.secret.key, or a
 * secret.key beside FILE (the scheduled backups' directory), copied in. A key that does not open the
 * backup's sealed credentials is refused, and so is no key at all when there are some, unless
 * `--without-secret-key` (the connectors' credentials must then be entered again).
 */
export function planKeyRestore(input: { from: string; dataDir: string; secretKey?: string; withoutKey: boolean; sealed: { ids: string[]; connectors: number }; envKey?: string }): KeyRestore {
  const { sealed } = input;
  const need = sealed.ids.join(", ");
  const check = (keyId: string, what: string) => {
    if (sealed.connectors > 0 && !sealed.ids.every((id) => id === keyId)) {
      throw new CliError(
        `the backup's ${sealed.connectors} connector(s) hold credentials sealed with key ${need}; ${what} is key ${keyId}`,
        "SECRET_KEY_MISMATCH",
        "use the secret.key of the data directory the backup came from (`svc backup` writes it as FILE.secret.key), or --without-secret-key to restore and enter the connectors' credentials again",
      );
    }
  };
  if (input.envKey) {
    const keyId = new SecretBox(parseSecretKey(input.envKey), "env").keyId;
    check(keyId, "SERVICE_SECRET_KEY");
    return { kind: "env", keyId };
  }
  const existing = join(input.dataDir, SECRET_KEY_FILE);
  if (existsSync(existing)) {
    const { keyId } = keyIdOfFile(existing);
    check(keyId, existing);
    return { kind: "kept", path: existing, keyId };
  }
  const candidates = input.secretKey !== undefined ? [resolve(input.secretKey)] : [keyBesideBackup(input.from), join(dirname(input.from), SECRET_KEY_FILE)];
  const found = candidates.find((path) => existsSync(path) && statSync(path).isFile());
  if (input.secretKey !== undefined && !found) throw new CliError(`no secret key at ${candidates[0]}`, "NOT_FOUND", "--secret-key names the secret.key of the data directory the backup came from");
  if (found) {
    const { text, keyId } = keyIdOfFile(found);
    check(keyId, found);
    return { kind: "copy", from: found, to: existing, text, keyId };
  }
  if (sealed.connectors > 0 && !input.withoutKey) {
    throw new CliError(
      `the backup's ${sealed.connectors} connector(s) hold credentials sealed with key ${need}, and no secret key is beside it (${candidates.join(", ")})`,
      "SECRET_KEY_MISSING",
      "pass --secret-key PATH (the old data directory's secret.key, or the FILE.secret.key `svc backup` wrote) or set SERVICE_SECRET_KEY; --without-secret-key restores anyway, and those connectors' credentials must be entered again",
    );
  }
  return { kind: "none" };
}

/** Puts a planned key copy in place (0600). */
export function placeKey(plan: KeyRestore): void {
  if (plan.kind === "copy") writeKeyFile(plan.to, plan.text);
}
