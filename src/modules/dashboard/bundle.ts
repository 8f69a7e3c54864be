import { basename, join } from "node:path";
import dashboardHtml from "../../web/dashboard/index.html";

/** One file of the dashboard bundle, kept in memory with its gzip form and its ETag. */
export type BundleFile = { body: Uint8Array<ArrayBuffer>; gzip: Uint8Array<ArrayBuffer>; type: string; etag: string };

/** The dashboard: its HTML document and the hashed assets it references under /assets/. */
export type DashboardBundle = { index: BundleFile; assets: Map<string, BundleFile> };

export const ASSET_PREFIX = "/assets/";

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
};

function typeOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return TYPES[dot >= 0 ? name.slice(dot) : ""] ?? "application/octet-stream";
}

function bundleFile(body: Uint8Array<ArrayBuffer>, type: string): BundleFile {
  return { body, gzip: Bun.gzipSync(body, { level: 9 }), type, etag: `"${Bun.hash(body).toString(36)}"` };
}

/** What `bun build --compile` embeds for an HTML import: the built files, with their paths in the binary. */
type CompiledHtmlBundle = { index: string; files?: { path: string; loader: string }[] };

/**
 * In the compiled binary the HTML import carries the files `bun build
 * --compile` bundled into it; the document references them from the root
 * (`/chunk-….js`), and here they move under /assets/ so that no asset name
 * can shadow a route.
 */
async function fromCompiled(bundle: CompiledHtmlBundle): Promise<DashboardBundle> {
  const assets = new Map<string, BundleFile>();
  let index: BundleFile | null = null;
  for (const file of bundle.files ?? []) {
    const body = new Uint8Array(await Bun.file(file.path).arrayBuffer());
    const name = basename(file.path);
    if (file.loader === "html") {
      const html = new TextDecoder().decode(body).replace(/(src|href)="\/(?!\/)/g, `$1="${ASSET_PREFIX}`);
      index = bundleFile(new Uint8Array(new TextEncoder().encode(html)), TYPES[".html"]!);
    } else {
      assets.set(name, bundleFile(body, typeOf(name)));
    }
  }
  if (!index) throw new Error("the dashboard bundle has no HTML document");
  return { index, assets };
}

/** From source (`bun src/main.ts serve`, tests): Bun's bundler, minified, in memory; once per process. */
async function fromSource(): Promise<DashboardBundle> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "../../web/dashboard/index.html")],
    target: "browser",
    minify: !process.env.SVC_DASHBOARD_DEBUG,
    publicPath: ASSET_PREFIX,
    // Every name carries a hash of its content: assets are served as immutable.
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
  });
  if (!result.success) throw new AggregateError(result.logs, "the dashboard did not build");
  const assets = new Map<string, BundleFile>();
  let index: BundleFile | null = null;
  for (const output of result.outputs) {
    const body = new Uint8Array(await output.arrayBuffer());
    const name = basename(output.path);
    if (name.endsWith(".html")) index = bundleFile(body, TYPES[".html"]!);
    else assets.set(name, bundleFile(body, typeOf(name)));
  }
  if (!index) throw new Error("the dashboard build produced no HTML document");
  return { index, assets };
}

let loading: Promise<DashboardBundle> | null = null;

/** The bundle, built or read once per process on first use (a server that never serves a page never pays for it). */
export function dashboardBundle(): Promise<DashboardBundle> {
  if (!loading) {
    const compiled = dashboardHtml as unknown as CompiledHtmlBundle;
    loading = compiled.files?.length ? fromCompiled(compiled) : fromSource();
    loading.catch(() => (loading = null));
  }
  return loading;
}
