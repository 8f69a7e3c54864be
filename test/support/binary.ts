import { readdirSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, run } from "../cli/process";

export const BINARY = join(ROOT, "dist/svc");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * CI compiles once per `npm test` (scripts/test.ts names its start in SVC_TEST_RUN_STARTED: the PostgreSQL half reuses
 * the SQLite half's binary); locally a binary newer than every source file (and package.json) is reused.
 */
function binaryIsFresh(): boolean {
  let built: number;
  try {
    built = statSync(BINARY).mtimeMs;
  } catch {
    return false;
  }
  const runStarted = Number(process.env.SVC_TEST_RUN_STARTED);
  if (process.env.CI && !compiledThisRun && !(runStarted > 0 && built > runStarted)) return false;
  return built > newestMtime(join(ROOT, "src")) && built > statSync(join(ROOT, "package.json")).mtimeMs;
}

let compiledThisRun = false;

/** dist/svc, compiled from the current sources (once per test process). */
export async function ensureBinary(): Promise<string> {
  if (binaryIsFresh()) return BINARY;
  // Built aside and renamed into place: another test run may be executing dist/svc right now.
  const staged = join(ROOT, `dist/.svc-${process.pid}`);
  const build = await run([BUN, "run", "build", "--outfile", staged], { timeoutMs: 240_000 });
  if (build.code !== 0) throw new Error(`bun run build failed (${build.code}):\n${build.stdout}\n${build.stderr}`);
  // The build writes the binary alone (its source map is inside it): nothing else to move.
  renameSync(staged, BINARY);
  compiledThisRun = true;
  return BINARY;
}
