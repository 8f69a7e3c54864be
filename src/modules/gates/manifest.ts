import type { ModuleManifest } from "../../lib/module";
import type { GatesService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

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
  get migrations() {
    return migrationsCode().GATES_MIGRATIONS;
  },
  // Its publishable changes (src/lib/changes.ts), loaded with the server's services.
  changes: (service, ctx) => (require("./changes") as typeof import("./changes")).gateChanges(service, ctx),
  createService: (ctx) => new (serviceCode().GatesService)(ctx),
  routes: (ctx) => routesCode().gateRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).gateTools;
  },
  snapshot: (service) => ({ field: "gates", published: (projectId, env) => service().publishedForEnv(projectId, env) }),
  cli: [{ name: "gates", order: 14, summary: "Gates (who sees what): list, get, create, set-rules, explain, history, rollback, delete; templates list, get, create, delete", example: "svc gates list", load: async () => (await import("./cli")).gatesCommand }],
};
