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

/** CI always compiles; locally a binary newer than every source file (and package.json) is reused. */
function binaryIsFresh(): boolean {
  if (process.env.CI && !compiledThisRun) return false;
  try {
    const built = statSync(BINARY).mtimeMs;
    return built > newestMtime(join(ROOT, "src")) && built > statSync(join(ROOT, "package.json")).mtimeMs;
  } catch {
    return false;
  }
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
