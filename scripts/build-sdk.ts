/**
 * Builds the TypeScript SDK (src/sdk/index.ts, the single source of truth)
 * into an npm-ready package, `svc-sdk` (src/modules/sdk-package/build.ts says
 * what is in it):
 *
 *   dist/sdk/               package.json, index.js, index.d.ts, README.md (and LICENSE)
 *   --tgz FILE              also the same package as npm's gzipped tarball; `npm run build`
 *                           writes dist/svc-sdk.tgz and embeds it in the binary, which serves it
 *                           at GET /sdk/svc-sdk.tgz (and its index.js at GET /sdk/svc.js)
 *
 * Usage: `npm run build:sdk` (or `bun scripts/build-sdk.ts [--outdir DIR] [--tgz FILE]`).
 * The same source gives the same bytes; the package is written to a fresh
 * directory beside DIR and then renamed into place, so a reader never sees a
 * half-written package. Install it with `npm install ./dist/sdk`, or from a
 * running server with `npm install http://HOST:PORT/sdk/svc-sdk.tgz`.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { SdkBuildError, buildSdkPackage } from "../src/modules/sdk-package/build";
import { tgzOf } from "../src/modules/sdk-package/tar";

const repo = resolve(import.meta.dir, "..");

function fail(message: string): never {
  console.error(`build:sdk: ${message}`);
  process.exit(1);
}

function parseArgs(argv: string[]): { outdir: string; tgz?: string } {
  let outdir = join(repo, "dist/sdk");
  let tgz: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--outdir" && argv[i + 1]) outdir = resolve(argv[++i]!);
    else if (arg.startsWith("--outdir=")) outdir = resolve(arg.slice("--outdir=".length));
    else if (arg === "--tgz" && argv[i + 1]) tgz = resolve(argv[++i]!);
    else if (arg.startsWith("--tgz=")) tgz = resolve(arg.slice("--tgz=".length));
    else fail(`unknown argument ${arg} (usage: build-sdk.ts [--outdir DIR] [--tgz FILE])`);
  }
  return { outdir, tgz };
}

/** Replaces `outdir` with `staging` in one rename (retrying if a concurrent build swapped first). */
function swapInto(staging: string, outdir: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      renameSync(staging, outdir);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (attempt >= 5 || (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "EISDIR" && code !== "ENOTDIR")) throw error;
      const old = `${outdir}.old-${process.pid}-${attempt}`;
      try {
        renameSync(outdir, old);
      } catch (moveError) {
        if ((moveError as NodeJS.ErrnoException).code !== "ENOENT") throw moveError;
      }
      rmSync(old, { recursive: true, force: true });
    }
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const { outdir, tgz } = parseArgs(process.argv.slice(2));
  let pkg: Awaited<ReturnType<typeof buildSdkPackage>>;
  try {
    pkg = await buildSdkPackage();
  } catch (err) {
    if (err instanceof SdkBuildError) fail(err.message);
    throw err;
  }

  mkdirSync(dirname(outdir), { recursive: true });
  const staging = `${outdir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    for (const file of pkg.files) writeFileSync(join(staging, file.name), file.body);
    swapInto(staging, outdir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  if (tgz) {
    mkdirSync(dirname(tgz), { recursive: true });
    const temp = `${tgz}.tmp-${process.pid}`;
    writeFileSync(temp, tgzOf(pkg.files));
    renameSync(temp, tgz);
  }
  const where = relative(process.cwd(), outdir) || ".";
  console.log(`built svc-sdk ${pkg.version} in ${where}${tgz ? ` and ${relative(process.cwd(), tgz)}` : ""} (${Math.round(performance.now() - started)} ms)`);
}

await main();
