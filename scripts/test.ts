/**
 * `npm test`: the whole suite on SQLite, then again on a throwaway
 * PostgreSQL cluster this script starts itself (test/support/postgres-cluster.ts).
 * Arguments pass through to `bun test` (file filters, -t). SVC_TEST_ENGINES
 * picks engines: "sqlite", "postgres" or both (the default).
 * Without PostgreSQL's server binaries the PostgreSQL half says so loudly.
 */
import { startCluster } from "../test/support/postgres-cluster";

const args = process.argv.slice(2);
const engines = (process.env.SVC_TEST_ENGINES ?? "sqlite,postgres").split(",").map((e) => e.trim());
const bun = process.execPath;

function runSuite(engine: string, env: Record<string, string>): number {
  console.error(`\n==> test suite on ${engine}\n`);
  const result = Bun.spawnSync([bun, "test", "--timeout", "60000", ...args], { env: { ...process.env, ...env }, stdio: ["inherit", "inherit", "inherit"] });
  return result.exitCode ?? 1;
}

let failed = false;
if (engines.includes("sqlite")) failed = runSuite("SQLite", { SVC_TEST_STORE: "" }) !== 0 || failed;
if (engines.includes("postgres")) {
  const cluster = await startCluster();
  if (!cluster) {
    console.error("\n!!!! PostgreSQL half SKIPPED: no PostgreSQL server binaries (initdb) found. Install them (apt-get install -y postgresql) to test on both engines. !!!!\n");
    if (process.env.CI) failed = true;
  } else {
    try {
      failed = runSuite(`PostgreSQL (${cluster.url})`, { SVC_TEST_STORE: cluster.url }) !== 0 || failed;
    } finally {
      cluster.stop();
    }
  }
}
process.exit(failed ? 1 : 0);
