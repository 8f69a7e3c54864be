import type { ModuleManifest } from "../../lib/module";
import type { ConfigsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

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
  get migrations() {
    return migrationsCode().CONFIGS_MIGRATIONS;
  },
  // Its publishable changes (src/lib/changes.ts), loaded with the server's services.
  changes: (service, ctx) => (require("./changes") as typeof import("./changes")).configChanges(service, ctx),
  createService: (ctx) => new (serviceCode().ConfigsService)(ctx),
  routes: (ctx) => routesCode().configRoutes(ctx),
  close: (service) => service.close(),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).configTools;
  },
  snapshot: (service) => ({ field: "configs", published: (projectId, env) => service().publishedForEnv(projectId, env) }),
  cli: [{ name: "configs", aliases: ["config"], order: 26, summary: "Dynamic configs: list, get, create, set (save a draft), publish, rules (show, set), explain, history, rollback, activity; schema get, set", example: "svc configs list", load: async () => (await import("./cli")).configsCommand }],
};
