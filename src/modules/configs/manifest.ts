import type { ModuleManifest } from "../../lib/module";
import { CONFIGS_MIGRATIONS } from "./migrations";
import { configRoutes } from "./routes";
import { ConfigsService } from "./service";

declare module "../../lib/module" {
  interface Services {
    configs: ConfigsService;
  }
}

/**
 * Dynamic configs: JSON values per env under a JSON Schema, with drafts and
 * activity, versioned per env (src/lib/versioned.ts), published in the SDK
 * snapshot's `configs`.
 */
export const configsModule: ModuleManifest<"configs"> = {
  name: "configs",
  migrations: CONFIGS_MIGRATIONS,
  createService: (ctx) => new ConfigsService(ctx),
  routes: (ctx) => configRoutes(ctx),
  close: (service) => service.close(),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).configTools;
  },
  snapshot: (service) => ({ field: "configs", published: (projectId, env) => service.publishedForEnv(projectId, env) }),
};
