import { Elysia } from "elysia";
import { acceptsGzip, describe, etagMatches } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { type SdkFile, sdkArtifacts } from "./artifacts";
import { SdkInfoSchema } from "./contract";

export const SDK_TGZ_PATH = "/sdk/svc-sdk.tgz";
export const SDK_JS_PATH = "/sdk/svc.js";
export const SDK_BROWSER_JS_PATH = "/sdk/svc-browser.js";
export const SDK_INFO_PATH = "/sdk";

/**
 * Public and the same for everyone: any origin may load the module (a `<script type="module">` from
 * another origin needs CORS) and caches may keep it for five minutes, then revalidate by ETag (a new
 * server version is a new file at the same URL).
 */
const HEADERS = {
  "cache-control": "public, max-age=300, must-revalidate",
  "access-control-allow-origin": "*",
  "x-content-type-options": "nosniff",
};

function send(request: Request, file: SdkFile, type: string, extra: Record<string, string> = {}): Response {
  const gzip = file.gzip !== undefined && acceptsGzip(request.headers.get("accept-encoding"));
  // The two encodings are two representations: each has its own tag.
  const etag = gzip ? `${file.etag.slice(0, -1)}-gz"` : file.etag;
  const headers = new Headers({ ...HEADERS, ...extra, "content-type": type, etag, ...(file.gzip ? { vary: "Accept-Encoding" } : {}) });
  if (etagMatches(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  if (gzip) headers.set("content-encoding", "gzip");
  return new Response(gzip ? file.gzip : file.body, { headers });
}

const fileInfo = (path: string, contentType: string, file: SdkFile) => ({ path, contentType, bytes: file.body.byteLength, gzipBytes: file.gzip?.byteLength ?? null, etag: file.etag });

export function sdkPackageRoutes(ctx: AppContext) {
  return new Elysia({ name: "sdk-package", seed: ctx })
    .get(
      SDK_INFO_PATH,
      async ({ request, set }) => {
        const { tgz, js, browserJs, version } = await sdkArtifacts();
        const base = ctx.network.publicOrigin(request);
        // The install lines name the origin this request reached (without SERVICE_PUBLIC_URL): another caller's differs.
        set.headers["cache-control"] = "no-store";
        return {
          version,
          baseUrl: base,
          files: [
            fileInfo(SDK_TGZ_PATH, "application/gzip", tgz),
            fileInfo(SDK_JS_PATH, "text/javascript; charset=utf-8", js),
            fileInfo(SDK_BROWSER_JS_PATH, "text/javascript; charset=utf-8", browserJs),
          ],
          install: {
            npm: `npm install ${base}${SDK_TGZ_PATH}`,
            module: `import { createClient } from "${base}${SDK_JS_PATH}";`,
            browserModule: `import { createBrowserClient } from "${base}${SDK_BROWSER_JS_PATH}";`,
          },
        };
      },
      {
        ...describe({
          summary: "Which SDK this server carries, and how to install it from here",
          tag: "SDK",
          auth: "none",
          errors: [400],
          description:
            "The SDK version this server serves, its three files (path, size, gzipped size, ETag) and the lines that install it from this server: the npm package, the ES module for servers, and the browser mode's module. `svc sdk` and the MCP tool `sdk_install` print the same. A Host header this server does not answer to is BAD_REQUEST (set SERVICE_PUBLIC_URL or SERVICE_ALLOWED_HOSTS).",
          response: { 200: SdkInfoSchema },
        }),
      },
    )
    .get(
      SDK_TGZ_PATH,
      async ({ request }) => {
        const { tgz, version } = await sdkArtifacts();
        return send(request, tgz, "application/gzip", { "content-disposition": `attachment; filename="svc-sdk-${version}.tgz"` });
      },
      {
        ...describe({
          summary: "The SDK as an npm package (svc-sdk, this server's version)",
          tag: "SDK",
          auth: "none",
          description:
            "The npm tarball of `svc-sdk`, the SDK of this server's own version (no dependencies, ESM, with type declarations), built into the binary: install it straight from the server, no registry needed:\n\n" +
            "```sh\nnpm install https://flags.example.com/sdk/svc-sdk.tgz\n```\n\n" +
            "then `import { createClient } from \"svc-sdk\"`. package.json records that URL; install again from it after upgrading the server. Strong `ETag`, `If-None-Match` gives 304.",
        }),
      },
    )
    .get(SDK_JS_PATH, async ({ request }) => send(request, (await sdkArtifacts()).js, "text/javascript; charset=utf-8"), {
      ...describe({
        summary: "The SDK as one browser ES module",
        tag: "SDK",
        auth: "none",
        description:
          "The same SDK as `GET /sdk/svc-sdk.tgz`, as one self-contained ES module for browsers (and Deno, Bun), served with CORS for any origin:\n\n" +
          "```js\nimport { createClient } from \"https://flags.example.com/sdk/svc.js\";\nconst svc = createClient({ baseUrl: \"https://flags.example.com\", sdkKey: \"sdk_server_…\", env: \"prod\" });\n```\n\n" +
          "It reads the snapshot, so it takes a server key: for code that ships to users' browsers use `/sdk/svc-browser.js` with a browser key instead. Strong `ETag`, gzip when accepted.",
      }),
    })
    .get(SDK_BROWSER_JS_PATH, async ({ request }) => send(request, (await sdkArtifacts()).browserJs, "text/javascript; charset=utf-8"), {
      ...describe({
        summary: "The SDK's browser mode as one ES module (under 10 KB gzipped)",
        tag: "SDK",
        auth: "none",
        description:
          "`svc-sdk/browser` as one self-contained ES module, served with CORS for any origin. It takes a browser key and reads only evaluated answers: " +
          "one bulk OFREP call (`POST /ofrep/v1/evaluate/flags`) for the context, re-checked every 30 s (`pollMs`) with `If-None-Match` (a bodiless 304 when nothing changed); no rules, no evaluator:\n\n" +
          "```js\nimport { createBrowserClient } from \"https://flags.example.com/sdk/svc-browser.js\";\n" +
          "const svc = createBrowserClient({ baseUrl: \"https://flags.example.com\", key: \"sdk_browser_…\", context: { targetingKey: \"user-1\" } });\n" +
          "await svc.ready();\nif (svc.isEnabled(\"new-checkout\")) { /* … */ }\n```\n\nStrong `ETag`, gzip when accepted.",
      }),
    });
}
