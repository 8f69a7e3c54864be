import { join } from "node:path";
import { fileInTgz, tgzOf } from "./tar";

/** One served file, with its gzip form (svc.js) and a strong ETag of its bytes. */
export type SdkFile = { body: Uint8Array<ArrayBuffer>; gzip?: Uint8Array<ArrayBuffer>; etag: string };

/** `svc-sdk.tgz`, the npm package, `svc.js`, its index.js as one browser ES module, and `svc-browser.js`, its browser.js (the browser mode). */
export type SdkArtifacts = { tgz: SdkFile; js: SdkFile; browserJs: SdkFile; version: string };

/** What `bun build --compile` names the embedded dist/svc-sdk.tgz (package.json's build adds it): a hash before the extension. */
const EMBEDDED = /^svc-sdk(?:-[0-9a-z]+)?\.tgz$/;

function sdkFile(body: Uint8Array<ArrayBuffer>, gzip: boolean): SdkFile {
  return { body, gzip: gzip ? (Bun.gzipSync(body, { level: 9 }) as Uint8Array<ArrayBuffer>) : undefined, etag: `"${Bun.hash(body).toString(36)}"` };
}

function fromTgz(tgz: Uint8Array<ArrayBuffer>): SdkArtifacts {
  const js = fileInTgz(tgz, "index.js");
  const browserJs = fileInTgz(tgz, "browser.js");
  const manifest = fileInTgz(tgz, "package.json");
  if (!js || !browserJs || !manifest) throw new Error("the embedded svc-sdk.tgz has no package/index.js, package/browser.js or package/package.json");
  const { version } = JSON.parse(new TextDecoder().decode(manifest)) as { version: string };
  return { tgz: sdkFile(tgz, false), js: sdkFile(js, true), browserJs: sdkFile(browserJs, true), version };
}

/**
 * From source (`npm start`, tests): the package built by build.ts on first use. The path is computed so
 * that `bun build --compile` does not bundle it (it pulls in the TypeScript compiler, which the binary
 * never needs: there the tgz is embedded).
 */
async function fromSource(): Promise<SdkArtifacts> {
  const builder = join(import.meta.dir, ["build", "ts"].join("."));
  const { buildSdkPackage } = (await import(builder)) as typeof import("./build");
  const pkg = await buildSdkPackage();
  return fromTgz(tgzOf(pkg.files));
}

let loading: Promise<SdkArtifacts> | null = null;

/** The SDK's files, read from the binary or built once per process on the first request (a server that never serves them never pays). */
export function sdkArtifacts(): Promise<SdkArtifacts> {
  if (!loading) {
    const embedded = Bun.embeddedFiles.find((file) => EMBEDDED.test((file as Blob & { name: string }).name));
    loading = embedded ? embedded.arrayBuffer().then((buffer) => fromTgz(new Uint8Array(buffer))) : fromSource();
    loading.catch(() => (loading = null));
  }
  return loading;
}
