import type { ModuleManifest } from "../../lib/module";
import { KILLSWITCHES_MIGRATIONS } from "./migrations";
import { killswitchRoutes } from "./routes";
import { KillswitchesService } from "./service";

declare module "../../lib/module" {
  interface Services {
    killswitches: KillswitchesService;
  }
}

/**
 * Killswitches: a flat boolean plus named sub-switches, versioned per env
 * (src/lib/versioned.ts), published in the SDK snapshot's `killswitches`.
 */
export const killswitchesModule: ModuleManifest<"killswitches"> = {
  name: "killswitches",
  migrations: KILLSWITCHES_MIGRATIONS,
  createService: (ctx) => new KillswitchesService(ctx),
  routes: (ctx) => killswitchRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).killswitchTools;
  },
  snapshot: (service) => ({ field: "killswitches", published: (projectId, env) => service.publishedForEnv(projectId, env) }),
};
