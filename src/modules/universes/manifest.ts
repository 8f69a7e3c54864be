import type { ModuleManifest } from "../../lib/module";
import type { UniversesService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    universes: UniversesService;
  }
}

/**
 * Universes: unit spaces of 10,000 segments that experiments split, with an
 * optional holdout. Published in the SDK snapshot's `universes` (the same on
 * every env), so that SDKs put each unit in its segment locally
 * (src/sdk/universes.ts).
 */
export const universesModule: ModuleManifest<"universes"> = {
  name: "universes",
  get migrations() {
    return migrationsCode().UNIVERSES_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().UniversesService)(ctx),
  routes: (ctx) => routesCode().universeRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).universeTools;
  },
  snapshot: (service) => ({ field: "universes", published: (projectId) => service().published(projectId) }),
  cli: [{ name: "universes", order: 20, summary: "Universes experiments share (unit type, holdout): list, get, create, update, delete", example: "svc universes create web-users", load: async () => (await import("./cli")).universesCommand }],
};
