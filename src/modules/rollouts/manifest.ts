import type { ModuleManifest } from "../../lib/module";
import type { RolloutsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    rollouts: RolloutsService;
  }
  interface AppOptions {
    /** How often rollouts are checked (default 1 min; 0: never, tests call `rollouts.monitor.checkAll`). One server per round (a lease). */
    rolloutsEveryMs?: number;
  }
}

/**
 * Guarded rollouts: a gate's new rules or a config's new value released in
 * stages, watched on the error rate and chosen metrics, advanced, paused or
 * rolled back by the monitor.
 */
export const rolloutsModule: ModuleManifest<"rollouts"> = {
  name: "rollouts",
  get migrations() {
    return migrationsCode().ROLLOUTS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().RolloutsService)(ctx),
  routes: (ctx) => routesCode().rolloutRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).rolloutTools;
  },
  // Its publishable change (src/lib/changes.ts), loaded with the server's services.
  changes: (service, ctx) => (require("./changes") as typeof import("./changes")).rolloutChanges(service, ctx),
  snapshot: (service) => ({ field: "rollouts", published: (projectId, env) => service().published(projectId, env) }),
  close: (service) => service.close(),
  cli: [{ name: "rollouts", order: 22, summary: "Guarded rollouts of a gate's rules or a config's value in stages: list, get, create, pause, resume, advance, rollback, delete", example: "svc rollouts create --gate new-checkout --rules-file rules.json --env prod --metric checkout-conversion:higher:2%", load: async () => (await import("./cli")).rolloutsCommand }],
};
