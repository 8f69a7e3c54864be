import type { ModuleManifest } from "../../lib/module";
import type { GrowthbookService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const routesCode = () => require("./routes") as typeof import("./routes");
const adminRoutesCode = () => require("./admin-routes") as typeof import("./admin-routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    growthbook: GrowthbookService;
  }
}

/**
 * GrowthBook's SDK protocol over the published snapshot (DECISIONS, "The browser key and other SDK
 * ecosystems"): `GET /api/features/{key}`, `GET /sub/{key}` and remote evaluation, so GrowthBook's SDKs in
 * about 13 languages evaluate svc's flags with svc's buckets. No tables: the payload is a pure mapping of
 * each prepared snapshot entry (mapping.ts, shared with the edge relay), made once per entry. The service
 * only reads that mapping back for the admin surfaces (what maps, what is served instead).
 */
export const growthbookModule: ModuleManifest<"growthbook"> = {
  name: "growthbook",
  migrations: [],
  createService: (ctx) => new (serviceCode().GrowthbookService)(ctx),
  routes: (ctx) => routesCode().growthbookRoutes(ctx).use(adminRoutesCode().growthbookAdminRoutes(ctx)),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).growthbookTools;
  },
  // Beside the SDK keys (`svc sdk`), whose server key GrowthBook's SDKs use as their clientKey.
  cli: [{ name: "growthbook", order: 29.5, summary: "GrowthBook SDKs: what they get on an env and what does not map", example: "svc growthbook status --env prod", load: async () => (await import("./cli")).growthbookCommand }],
};
