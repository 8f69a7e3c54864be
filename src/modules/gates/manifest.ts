import type { ModuleManifest } from "../../lib/module";
import { GATES_MIGRATIONS } from "./migrations";
import { gateRoutes } from "./routes";
import { GatesService } from "./service";

declare module "../../lib/module" {
  interface Services {
    gates: GatesService;
  }
}

/**
 * Gates: who sees what. An ordered rule list per env, versioned
 * (src/lib/versioned.ts), published in the SDK snapshot's `gates` and
 * evaluated by the one evaluator in src/sdk/gates.ts.
 */
export const gatesModule: ModuleManifest<"gates"> = {
  name: "gates",
  migrations: GATES_MIGRATIONS,
  createService: (ctx) => new GatesService(ctx),
  routes: (ctx) => gateRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).gateTools;
  },
  snapshot: (service) => ({ field: "gates", published: (projectId, env) => service.publishedForEnv(projectId, env) }),
};
