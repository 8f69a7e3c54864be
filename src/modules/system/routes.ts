import { Elysia, t } from "elysia";
import type { AppContext } from "../../app";
import { describe } from "../../lib/http";
// The Scalar API reference bundle is embedded in the binary: the /openapi UI never loads a CDN.
import scalarBundlePath from "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };

export function systemRoutes(ctx: AppContext) {
  const scalarBundle = Bun.file(scalarBundlePath);
  return new Elysia({ name: "system", seed: ctx })
    .get("/healthz", () => ({ ok: true as const }), {
      ...describe({ summary: "Liveness probe", tag: "System", auth: "none", response: { 200: t.Object({ ok: t.Literal(true) }) } }),
    })
    .get(
      "/openapi/scalar.js",
      () =>
        new Response(scalarBundle, {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
        }),
      { detail: { hide: true } },
    );
}
