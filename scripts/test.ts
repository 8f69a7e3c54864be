/**
 * `npm test`: the whole suite on SQLite, then again on a throwaway
 * PostgreSQL cluster this script starts itself (test/support/postgres-cluster.ts).
 * Arguments pass through to `bun test` (file filters, -t). SVC_TEST_ENGINES
 * picks engines: "sqlite", "postgres" or both (the default).
 * Without PostgreSQL's server binaries the PostgreSQL half says so loudly.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster } from "../test/support/postgres-cluster";

const args = process.argv.slice(2);
const engines = (process.env.SVC_TEST_ENGINES ?? "sqlite,postgres").split(",").map((e) => e.trim());
const bun = process.execPath;
// When this run started: a binary the SQLite half compiled (test/support/binary.ts) serves the PostgreSQL half too.
process.env.SVC_TEST_RUN_STARTED = String(Date.now());

// Each half also writes a JUnit report, so the failures of both halves are listed again at the very end: a CI log
// that keeps only its tail (the PostgreSQL half's) still names what failed on SQLite.
const reportDir = mkdtempSync(join(tmpdir(), "svc-test-report-"));
const ownReporter = args.some((a) => a.startsWith("--reporter") || a === "--dots");
const summaries: string[] = [];

function xmlText(s: string): string {
  return s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&quot;/g, '"').replace(/&apos;/g, "'")
    .replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** The failing tests of one JUnit report: "file:line describe > test", then the failure's first lines. */
function failuresOf(xml: string): string[] {
  const found: string[] = [];
  for (const m of xml.matchAll(/<testcase ([^>]*)>\s*<failure[^>]*message="([^"]*)"/g)) {
    const attr = (name: string) => xmlText(m[1]!.match(new RegExp(`\\b${name}="([^"]*)"`))?.[1] ?? "");
    const where = `${attr("file")}:${attr("line")}`;
    // Bun writes the describe chain innermost first ("inner > outer"); read outermost first.
    const chain = attr("classname").split(" > ").filter(Boolean).reverse();
    const message = xmlText(m[2]!).split("\n").filter((l) => l.trim()).slice(0, 4).map((l) => `      ${l.slice(0, 200)}`);
    found.push([`  ${where}  ${[...chain, attr("name")].join(" > ")}`, ...message].join("\n"));
  }
  return found;
}

function runSuite(engine: string, env: Record<string, string>): number {
  console.error(`\n==> test suite on ${engine}\n`);
  const report = join(reportDir, `${engine.split(" ")[0]}.xml`);
  const reporter = ownReporter ? [] : ["--reporter=junit", `--reporter-outfile=${report}`];
  const result = Bun.spawnSync([bun, "test", "--timeout", "60000", ...reporter, ...args], { env: { ...process.env, ...env }, stdio: ["inherit", "inherit", "inherit"] });
  const code = result.exitCode ?? 1;
  if (!ownReporter) {
    let failures: string[] = [];
    try {
      failures = failuresOf(readFileSync(report, "utf8"));
    } catch {
      // No report: bun test died before writing it; the exit code below says so.
    }
    const head = `${engine.split(" ")[0]}: exit ${code}, ${failures.length} failing test(s)`;
    const hint = code !== 0 && failures.length === 0 ? ["  (no failing test recorded: look above for an error outside a test, or a crash)"] : [];
    summaries.push([head, ...failures, ...hint].join("\n"));
  }
  return code;
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
if (summaries.length > 0) console.error(`\n==> summary\n${summaries.join("\n")}`);
rmSync(reportDir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
