import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { describe } from "../../lib/http";

export function systemRoutes(ctx: AppContext) {
  return new Elysia({ name: "system", seed: ctx })
    .get("/healthz", () => ({ ok: true as const }), {
      ...describe({ summary: "Liveness probe", tag: "System", auth: "none", response: { 200: t.Object({ ok: t.Literal(true) }) } }),
    });
}
