import type { ModuleManifest } from "../../lib/module";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const routesCode = () => require("./routes") as typeof import("./routes");

declare module "../../lib/module" {
  interface Services {
    growthbook: Record<string, never>;
  }
}

/**
 * GrowthBook's SDK protocol over the published snapshot (DECISIONS, "The browser key and other SDK
 * ecosystems"): `GET /api/features/{key}`, `GET /sub/{key}` and remote evaluation, so GrowthBook's SDKs in
 * about 13 languages evaluate svc's flags with svc's buckets. No tables and no service: the payload is a
 * pure mapping of each prepared snapshot entry (mapping.ts, shared with the edge relay), made once per entry.
 */
export const growthbookModule: ModuleManifest<"growthbook"> = {
  name: "growthbook",
  migrations: [],
  createService: () => ({}),
  routes: (ctx) => routesCode().growthbookRoutes(ctx),
};
