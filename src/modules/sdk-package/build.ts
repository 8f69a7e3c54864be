/**
 * Builds the npm package `svc-sdk` from src/sdk (the single source of truth), in memory:
 *
 *   package.json   name, the repo's version, ESM exports with types, no dependencies
 *   index.js       one self-contained ES module (Bun's bundler, target browser, not minified)
 *   index.d.ts     declarations emitted by the TypeScript compiler
 *   browser.js     `svc-sdk/browser`: the browser mode (src/sdk/browser.ts), its own self-contained module,
 *                  without the gate evaluator or RE2 (browser.d.ts its declarations)
 *   README.md      src/sdk/README.md
 *   LICENSE        the repo's LICENSE, when it has one
 *
 * Used by `npm run build:sdk` (scripts/build-sdk.ts: a directory, and the tgz the compiled binary
 * embeds) and by a server run from source on its first GET /sdk/… (artifacts.ts). It needs the
 * TypeScript compiler and the source tree, so the compiled binary never loads it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";

export class SdkBuildError extends Error {}

function fail(message: string): never {
  throw new SdkBuildError(message);
}

const repo = resolve(import.meta.dir, "../../..");
const sdkDir = join(repo, "src/sdk");
const entry = join(sdkDir, "index.ts");
const browserEntry = join(sdkDir, "browser.ts");

/**
 * What must not appear in the package's code (comments aside): it has to run unchanged in
 * browsers, Deno, Node and Bun, so no runtime's globals, no Node modules, no imports at all.
 */
const FORBIDDEN: [RegExp, string][] = [
  [/\b(?:Bun|Deno)\b/, "a Bun or Deno global"],
  [/\b(?:process|Buffer|global|__dirname|__filename|NodeJS)\b/, "a Node global"],
  [/["'`]node:/, "a node: module"],
  [/\brequire\s*\(/, "require()"],
  [/^\s*import\b|\bimport\s*\(|\bfrom\s*["'`]/m, "an import (the bundle must be self-contained)"],
  [/^\s*\/\/\/\s*<reference/m, "a triple-slash reference (it would pull in runtime types)"],
];

/** The code of a file without its block comments and whole-line // comments (/// directives stay). */
function codeOf(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/(?!\/)[^\n]*$/gm, "");
}

async function bundle(banner: string, from = entry): Promise<string> {
  const built = await Bun.build({ entrypoints: [from], root: sdkDir, target: "browser", format: "esm", minify: false, sourcemap: "none", banner });
  if (!built.success) fail(`bun build failed:\n${built.logs.map(String).join("\n")}`);
  const [output] = built.outputs;
  if (!output || built.outputs.length !== 1) fail(`bun build wrote ${built.outputs.length} files, expected one`);
  return output.text();
}

/**
 * `tsc --declaration --emitDeclarationOnly` through the compiler API, with
 * only the standard and DOM libraries: no Bun or Node types, so source that
 * leans on either fails here.
 */
function declarations(): { index: string; browser: string } {
  const options: ts.CompilerOptions = {
    declaration: true,
    emitDeclarationOnly: true,
    noEmitOnError: true,
    strict: true,
    target: ts.ScriptTarget.ES2020,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2020.d.ts", "lib.dom.d.ts"],
    types: [],
    skipLibCheck: true,
    rootDir: sdkDir,
    outDir: join(sdkDir, "__declarations__"),
  };
  const program = ts.createProgram([entry, browserEntry], options);
  const emitted = new Map<string, string>();
  const result = program.emit(undefined, (fileName, text) => emitted.set(relative(options.outDir!, fileName), text), undefined, true);
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (diagnostics.length > 0) {
    const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => repo, getNewLine: () => "\n" };
    fail(`src/sdk does not type-check as a standalone package (standard + DOM types only):\n${ts.formatDiagnostics(diagnostics, host)}`);
  }
  const text = emitted.get("index.d.ts");
  const browser = emitted.get("browser.d.ts");
  // browser.d.ts stands alone: its types are its own (it imports only code, never types, from the other files).
  if (browser === undefined || /from ["']\.\//.test(browser)) fail("tsc emitted no browser.d.ts, or one that imports another file's types");
  emitted.delete("browser.d.ts");
  if (!text) fail(`tsc emitted ${[...emitted.keys()].join(", ") || "nothing"}, expected index.d.ts`);
  // One declaration file, like the one bundled module: the other modules' declarations (gates.d.ts) come
  // first, and index.d.ts loses its import and re-export lines of them (their names are now in the same file).
  // Modules import each other too (experiments.d.ts imports from ./gates): those lines go from every part.
  const local = new RegExp(`^.*from ["']\\./(${[...emitted.keys()].map((f) => f.replace(/\.d\.ts$/, "")).join("|")})(\\.ts)?["'];\\s*$`, "gm");
  const parts: string[] = [];
  for (const [file, body] of emitted) {
    if (file === "index.d.ts") continue;
    if (file.includes("/")) fail(`tsc emitted ${file}: src/sdk must stay one flat folder`);
    parts.push(body.replace(/^export \{\};\s*$/m, "").replace(local, ""));
  }
  return { index: [...parts, text.replace(local, "")].join("\n"), browser };
}

function packageJson(version: string, license: string | undefined, hasLicenseFile: boolean): string {
  const manifest = {
    name: "svc-sdk",
    version,
    description: "SDK for svc, the self-hosted feature-flag service: killswitches, configs and gates (evaluated locally) from a live snapshot (Node 18+, Bun, Deno, browsers)",
    keywords: ["feature-flags", "killswitch", "remote-config", "svc"],
    ...(license ? { license } : {}),
    type: "module",
    main: "./index.js",
    types: "./index.d.ts",
    exports: {
      ".": { types: "./index.d.ts", import: "./index.js", default: "./index.js" },
      "./browser": { types: "./browser.d.ts", import: "./browser.js", default: "./browser.js" },
      "./package.json": "./package.json",
    },
    files: ["index.js", "index.d.ts", "browser.js", "browser.d.ts", "README.md", ...(hasLicenseFile ? ["LICENSE"] : [])],
    sideEffects: false,
    engines: { node: ">=18" },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

export type SdkPackage = { version: string; files: { name: string; body: Uint8Array }[] };

/** The package's files, in the order a tarball lists them (package.json first, as npm pack does). */
export async function buildSdkPackage(): Promise<SdkPackage> {
  const root = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { version: string; license?: string };
  const licenseFile = ["LICENSE", "LICENSE.md", "LICENSE.txt"].map((name) => join(repo, name)).find((path) => existsSync(path));
  const banner = `// svc-sdk ${root.version}: built from src/sdk/index.ts by scripts/build-sdk.ts; do not edit.`;
  const browserBanner = `// svc-sdk/browser ${root.version}: built from src/sdk/browser.ts by scripts/build-sdk.ts; do not edit.`;
  const [js, browserJs, dts] = [await bundle(banner), await bundle(browserBanner, browserEntry), declarations()];
  for (const [file, text] of [["index.js", js], ["index.d.ts", dts.index], ["browser.js", browserJs], ["browser.d.ts", dts.browser]] as const) {
    // The declarations keep the source's doc comments (whose examples read process.env): check the code only.
    for (const [pattern, what] of FORBIDDEN) {
      if (pattern.test(codeOf(text))) fail(`${file} contains ${what} (${pattern}); the package must stay runtime-neutral`);
    }
  }
  const text = (s: string) => new TextEncoder().encode(s);
  const files = [
    { name: "package.json", body: text(packageJson(root.version, root.license, licenseFile !== undefined)) },
    { name: "index.js", body: text(js) },
    { name: "index.d.ts", body: text(dts.index) },
    { name: "browser.js", body: text(browserJs) },
    { name: "browser.d.ts", body: text(dts.browser) },
    { name: "README.md", body: new Uint8Array(readFileSync(join(sdkDir, "README.md"))) },
    ...(licenseFile ? [{ name: "LICENSE", body: new Uint8Array(readFileSync(licenseFile)) }] : []),
  ];
  return { version: root.version, files };
}
