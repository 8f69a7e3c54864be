import type { ModuleManifest } from "../../lib/module";
import type { KillswitchesService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

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
  get migrations() {
    return migrationsCode().KILLSWITCHES_MIGRATIONS;
  },
  // Its publishable changes (src/lib/changes.ts), loaded with the server's services.
  changes: (service, ctx) => (require("./changes") as typeof import("./changes")).killswitchChanges(service, ctx),
  createService: (ctx) => new (serviceCode().KillswitchesService)(ctx),
  routes: (ctx) => routesCode().killswitchRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).killswitchTools;
  },
  snapshot: (service) => ({ field: "killswitches", published: (projectId, env) => service().publishedForEnv(projectId, env) }),
  cli: [{ name: "toggle", order: 12, summary: "Flip a killswitch (or one sub-switch) on one env, or set it with --on/--off", example: "svc toggle checkout", load: async () => (await import("./cli")).toggleCommand }, { name: "killswitches", order: 13, summary: "Killswitches: list, get, create, delete, history, toggle", example: "svc killswitches list", load: async () => (await import("./cli")).killswitchesCommand }],
};
