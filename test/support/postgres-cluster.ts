import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A throwaway PostgreSQL cluster for the test suite: initdb and pg_ctl in a
 * temp dir, on a free port, as the `postgres` user when run as root (the
 * server refuses to run as root). Answers null when the server binaries are
 * not installed (`apt-get install -y postgresql`).
 */
export type Cluster = { url: string; stop(): void };

export function findPostgresBin(): string | null {
  const explicit = process.env.SVC_PG_BIN;
  if (explicit && existsSync(join(explicit, "initdb"))) return explicit;
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], "bin");
  }
  const which = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" });
  const found = which.stdout.trim();
  return found ? found.replace(/\/initdb$/, "") : null;
}

async function freePort(): Promise<number> {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = server.port!;
  server.stop(true);
  return port;
}

export async function startCluster(): Promise<Cluster | null> {
  const bin = findPostgresBin();
  if (!bin) return null;
  const dir = mkdtempSync(join(tmpdir(), "svc-pg-"));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => {
    const full = asRoot ? ["runuser", ["-u", "postgres", "--", join(bin, cmd), ...args]] as const : [join(bin, cmd), args] as const;
    const result = spawnSync(full[0], [...full[1]], { encoding: "utf8" });
    if (result.status !== 0) throw new Error(`${cmd} failed: ${result.stderr || result.stdout}`);
  };
  if (asRoot) {
    const uid = Number(spawnSync("id", ["-u", "postgres"], { encoding: "utf8" }).stdout.trim());
    const gid = Number(spawnSync("id", ["-g", "postgres"], { encoding: "utf8" }).stdout.trim());
    chownSync(dir, uid, gid);
  }
  run("initdb", ["-D", join(dir, "data"), "-A", "trust", "-U", "postgres", "--locale=C", "-E", "UTF8"]);
  const port = await freePort();
  // fsync off: a throwaway cluster; the crash test kills svc, not PostgreSQL.
  run("pg_ctl", ["-D", join(dir, "data"), "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400`, "-l", join(dir, "log"), "-w", "start"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run("pg_ctl", ["-D", join(dir, "data"), "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
