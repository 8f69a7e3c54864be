import type { ModuleManifest } from "../../lib/module";
import { UNIVERSES_MIGRATIONS } from "./migrations";
import { universeRoutes } from "./routes";
import { UniversesService } from "./service";

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
  migrations: UNIVERSES_MIGRATIONS,
  createService: (ctx) => new UniversesService(ctx),
  routes: (ctx) => universeRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).universeTools;
  },
  snapshot: (service) => ({ field: "universes", published: (projectId) => service.published(projectId) }),
};
