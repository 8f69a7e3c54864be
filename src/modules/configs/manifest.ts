import type { ModuleManifest } from "../../lib/module";
import { configTools } from "./mcp-tools";
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
  mcpTools: configTools,
  snapshot: (service) => ({ field: "configs", published: (projectId, env) => service.publishedForEnv(projectId, env) }),
};
