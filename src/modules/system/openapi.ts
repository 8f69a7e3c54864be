import { Elysia, type AnyElysia } from "elysia";
import type { AppContext } from "../../lib/module";
import { ErrorBodySchema, documentedResponses } from "../../lib/http";
import { BODY_READ_TIMEOUT_MS, MAX_BODY_READS, MAX_BODY_READS_PER_CLIENT } from "../../lib/pipeline";
import { VERSION } from "../../version";
import { MODULE_ROUTES } from "../route-table";
// The Scalar API reference bundle is embedded in the binary: the /openapi UI never loads a CDN.
import scalarBundlePath from "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };

/**
 * The Scalar viewer's configuration. Everything it shows or fetches comes
 * from this server; each option below turns off one way the bundle
 * (@scalar/api-reference 1.72) would reach a third-party host:
 * - withDefaultFonts: false drops its @font-face rules for Inter and
 *   JetBrains Mono, which load from fonts.scalar.com; the page uses the
 *   system fonts of `customCss` instead;
 * - showDeveloperTools: "never" removes the toolbar it shows on localhost
 *   (Deploy, Share: uploads the document to api.scalar.com through
 *   proxy.scalar.com, then opens dashboard.scalar.com);
 * - mcp.disabled removes "Generate MCP" and its VS Code / Cursor links (the
 *   same upload, then dashboard.scalar.com), shown on localhost by default;
 * - agent.disabled removes "Ask AI" (Scalar's hosted agent), also shown on
 *   localhost by default;
 * - hideClientButton removes "Open API Client" (client.scalar.com);
 * - telemetry: false; and proxyUrl stays unset, so that "Test Request"
 *   sends straight to this server, never through proxy.scalar.com.
 * The page's Content-Security-Policy (below) allows nothing but this server,
 * so that a bundle update bringing a new outside call fails in the browser.
 */
export const SCALAR_CONFIGURATION = {
  url: "/openapi/json",
  withDefaultFonts: false,
  showDeveloperTools: "never",
  mcp: { disabled: true },
  agent: { disabled: true },
  hideClientButton: true,
  telemetry: false,
  defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
  customCss: `:root {
  --scalar-font: ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --scalar-font-code: ui-monospace, SFMono-Regular, Menlo, Monaco, Consolas, "Liberation Mono", "Courier New", monospace;
}`,
} as const;

/** `'` `"` `&` `<` `>` as entities: the configuration travels in an HTML attribute. */
function attribute(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>svc API reference</title>
    <link rel="icon" href="data:," />
    <style>body { margin: 0; }</style>
  </head>
  <body>
    <script id="api-reference" type="application/json" data-configuration="${attribute(JSON.stringify(SCALAR_CONFIGURATION))}"></script>
    <script src="/openapi/prelude.js"></script>
    <script src="/openapi/scalar.js"></script>
  </body>
</html>
`;

/**
 * Run before the bundle. Zod (inside it) probes `Function("")` to decide
 * whether to compile its validators; under this page's policy (no
 * 'unsafe-eval') that probe is a CSP violation. Jitless mode skips it.
 */
const PRELUDE = `globalThis.__zod_globalConfig = Object.assign(globalThis.__zod_globalConfig ?? {}, { jitless: true });\n`;

/**
 * The page's policy: scripts, fonts, images and fetches from this server
 * only (and SERVICE_PUBLIC_URL, which `servers` names first). Inline styles
 * are allowed because Scalar injects its stylesheet as <style> elements and
 * sets `style` attributes at run time (a nonce cannot cover the latter);
 * `data:` images are the page's empty favicon. No 'unsafe-eval' (see
 * PRELUDE) and no inline script: the configuration is a JSON attribute.
 */
function pagePolicy(publicUrl: string | undefined): string {
  const connect = publicUrl ? `'self' ${publicUrl}` : "'self'";
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${connect}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
  ].join("; ");
}

/**
 * The API reference: the viewer page at /openapi, its bundle, and the
 * OpenAPI document at /openapi/json. The document is generated once (on
 * first request, when every route is registered) from the route schemas by
 * @elysiajs/openapi's generator; only its `servers` is made per request, so
 * that the viewer's code snippets and "Test Request" carry the address the
 * reader actually uses (see `serversFor`).
 */
export function openapiRoutes(ctx: AppContext) {
  // Opened on first request: in the compiled binary, Bun.file on the embedded bundle at start-up costs tens of milliseconds of cold start.
  let scalarBundle: ReturnType<typeof Bun.file> | undefined;
  const policy = pagePolicy(ctx.network.publicUrl);
  let documentParts: { head: string; tail: string } | undefined;

  const plugin = new Elysia({ name: "openapi", seed: ctx });

  /**
   * The document without `servers`, as two JSON fragments to splice the per-request list between. The
   * generator is imported on the first request for it: loading it at start costs every cold start.
   */
  const parts = async () => {
    if (documentParts) return documentParts;
    const { toOpenAPISchema } = await import("@elysiajs/openapi");
    // The document lists every route, also those of modules no request has needed yet.
    ctx.addAllRoutes?.();
    // Dotted paths are not dropped as "static files": /sdk/svc-sdk.tgz and /sdk/svc.js are documented routes; the
    // other dotted ones (this viewer's scripts, dashboard assets) are hidden by their own `detail.hide`.
    const { paths, components } = toOpenAPISchema(documentedApp(plugin), { staticFile: false });
    const head = JSON.stringify({
      openapi: "3.1.2",
      info: {
        title: "svc",
        version: VERSION,
        description: `Feature flags, dynamic configs and experimentation. Errors are \`{error, code, detail?}\`; lists are bare arrays; list operations take \`q\` (≤100 chars, case-insensitive substring over name/title/description). A request body over ${ctx.options.maxBodyBytes} bytes is refused with 413 \`Body too large\` (code BAD_REQUEST); one that has not arrived whole within ${(ctx.options.bodyReads?.timeoutMs ?? BODY_READ_TIMEOUT_MS) / 1000} s with 408 \`Request body timed out\` (code BAD_REQUEST, and the connection is closed). At most ${ctx.options.bodyReads?.max ?? MAX_BODY_READS} bodies are read at once (503 \`Unavailable\` beyond), ${ctx.options.bodyReads?.perClient ?? MAX_BODY_READS_PER_CLIENT} from one client address (429 \`Too many requests\`, code BAD_REQUEST), both with \`Retry-After\`.`,
      },
    });
    const tail = JSON.stringify({
      paths,
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", description: "Admin SDK key (sdk_admin_…), device-flow access token (svc_at_…) or project API token (svc_pat_…)" },
          sdkKey: { type: "apiKey", in: "header", name: "X-SDK-Key", description: "Server (sdk_server_…) or client (sdk_client_…) SDK key" },
        },
        schemas: { ...components.schemas, Error: { ...ErrorBodySchema, $id: undefined } },
      },
    });
    return (documentParts = { head: head.slice(0, -1), tail: tail.slice(1) });
  };

  return plugin
    .get(
      "/openapi",
      () =>
        new Response(PAGE, {
          headers: {
            "content-type": "text/html; charset=utf-8",
            "content-security-policy": policy,
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
          },
        }),
      { detail: { hide: true } },
    )
    .get(
      "/openapi/json",
      async ({ request }) => {
        const { head, tail } = await parts();
        return new Response(`${head},"servers":${JSON.stringify(serversFor(ctx, request))},${tail}`, {
          headers: {
            "content-type": "application/json; charset=utf-8",
            // `servers` follows the request (Host, and X-Forwarded-Proto from a trusted proxy).
            "cache-control": "no-cache",
            vary: "X-Forwarded-Proto",
          },
        });
      },
      { detail: { hide: true } },
    )
    .get(
      "/openapi/prelude.js",
      () => new Response(PRELUDE, { headers: { "content-type": "text/javascript; charset=utf-8", "x-content-type-options": "nosniff" } }),
      { detail: { hide: true } },
    )
    .get(
      "/openapi/scalar.js",
      () =>
        new Response((scalarBundle ??= Bun.file(scalarBundlePath)), {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff" },
        }),
      { detail: { hide: true } },
    );
}

/**
 * The app as the generator reads it (its routes and models), each route's `response` the record its documentation
 * lists: Elysia's own holds the success statuses only (describe(), lib/http.ts). Copies: the routes Elysia serves
 * are left as they are.
 */
function documentedApp(app: AnyElysia): AnyElysia {
  // Both are protected in Elysia's types; the generator calls them the same way.
  const source = app as unknown as { getGlobalDefinitions(): unknown; getGlobalRoutes(): { method: string; path: string; hooks?: { response?: unknown } }[] };
  return {
    getGlobalDefinitions: () => source.getGlobalDefinitions(),
    getGlobalRoutes: () =>
      inDeclaredOrder(source.getGlobalRoutes()).map((route) => {
        const response = documentedResponses(route.hooks?.response);
        return response ? { ...route, hooks: { ...route.hooks, response } } : route;
      }),
  } as unknown as AnyElysia;
}

/**
 * The routes as a full start adds them: this server's own first, then each module's in manifest order (the
 * route table's). Modules are added as requests need them (src/route-loading.ts), so the app holds them in the
 * order they were first asked for; the document's order does not depend on that.
 */
function inDeclaredOrder<R extends { method: string; path: string }>(routes: R[]): R[] {
  const rank = new Map<string, number>();
  for (const list of Object.values(MODULE_ROUTES)) for (const [method, path] of list) if (!rank.has(`${method} ${path}`)) rank.set(`${method} ${path}`, rank.size);
  const rankOf = (route: R) => rank.get(`${route.method} ${route.path}`) ?? -1;
  // Stable: routes outside the table (the server's own) keep their order, ahead of the modules'.
  return [...routes].sort((a, b) => rankOf(a) - rankOf(b));
}

/**
 * The document's `servers`, for this request: SERVICE_PUBLIC_URL when set,
 * then the request's own origin when its Host is one of ours (the address
 * the reader browses, e.g. http://localhost:8080). A Host that is not ours is
 * never echoed into the document; it gets `/` instead, which OpenAPI
 * resolves against the URL the document was loaded from.
 */
export function serversFor(ctx: AppContext, request: Request): { url: string; description: string }[] {
  const servers: { url: string; description: string }[] = [];
  const { network } = ctx;
  if (network.publicUrl) servers.push({ url: network.publicUrl, description: "This server (SERVICE_PUBLIC_URL)" });
  const host = request.headers.get("host");
  const https = network.isHttps(request);
  if (network.isOwnHost(host, https)) {
    const origin = `${https ? "https" : "http"}://${host!.trim().toLowerCase()}`;
    if (origin !== network.publicUrl) servers.push({ url: origin, description: "This server" });
  }
  if (servers.length === 0) servers.push({ url: "/", description: "This server (relative to the document's URL)" });
  return servers;
}
