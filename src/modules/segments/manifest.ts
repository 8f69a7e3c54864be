import type { ModuleManifest } from "../../lib/module";
import type { SegmentsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    segments: SegmentsService;
  }
}

/**
 * Segments: named sets of units (conditions and/or up to 100,000 ids on one
 * attribute) that gate rules name with in_segment / not_in_segment. The
 * snapshot's `segments` carries each one the env's published rules name, once.
 */
export const segmentsModule: ModuleManifest<"segments"> = {
  name: "segments",
  get migrations() {
    return migrationsCode().SEGMENTS_MIGRATIONS;
  },
  // Its publishable changes (src/lib/changes.ts), loaded with the server's services.
  changes: (service, ctx) => (require("./changes") as typeof import("./changes")).segmentChanges(service, ctx),
  createService: (ctx) => new (serviceCode().SegmentsService)(ctx),
  routes: (ctx) => routesCode().segmentRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).segmentTools;
  },
  snapshot: (service) => ({ field: "segments", published: (projectId, env) => service().publishedForEnv(projectId, env) }),
  // Beside gates (14), which name segments in their rules.
  cli: [{ name: "segments", order: 14.5, summary: "Segments gates reuse (in_segment / not_in_segment): list, get, create, update, delete", example: "svc segments create beta-testers --ids-file beta.csv --description 'Beta programme'", load: async () => (await import("./cli")).segmentsCommand }],
};
