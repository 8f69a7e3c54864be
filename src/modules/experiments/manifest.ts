import type { ModuleManifest } from "../../lib/module";
import type { ExperimentsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    experiments: ExperimentsService;
  }
  interface AppOptions {
    /** How often running experiments' guardrails are checked for auto-rollback (default 15 min; 0: never, tests call `checkGuardrails`). One server per round (a lease). */
    experimentsEveryMs?: number;
  }
}

/**
 * Experiments: variants over a universe's segments, published in the
 * snapshot of their env while running, analysed from the event store, and
 * rolled back automatically when a guardrail gets significantly worse.
 */
export const experimentsModule: ModuleManifest<"experiments"> = {
  name: "experiments",
  get migrations() {
    return migrationsCode().EXPERIMENTS_MIGRATIONS;
  },
  createService: (ctx) => {
    const service = new (serviceCode().ExperimentsService)(ctx);
    service.wire();
    return service;
  },
  routes: (ctx) => routesCode().experimentRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).experimentTools;
  },
  snapshot: (service) => ({ field: "experiments", published: (projectId, env) => service().published(projectId, env) }),
  close: (service) => service.close(),
  cli: [{ name: "experiments", order: 21, summary: "Experiments over a universe's units: list, get, create, update, delete, start, stop, results", example: "svc experiments create checkout-button --universe web-users --variant control=50 --variant green=50 --allocation 0-5000 --primary-metric purchases", load: async () => (await import("./cli")).experimentsCommand }],
};
