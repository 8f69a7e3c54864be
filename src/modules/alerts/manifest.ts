import type { ModuleManifest } from "../../lib/module";
import type { AlertsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    alerts: AlertsService;
  }
  interface AppOptions {
    /** How often alert rules are evaluated (default 60 s; 0: never, tests call `evaluateDue`). One server per round (a lease). */
    alertsEveryMs?: number;
  }
}

/** Alert rules: a metric against a threshold over a trailing window, evaluated every minute; transitions audited and notified. */
export const alertsModule: ModuleManifest<"alerts"> = {
  name: "alerts",
  get migrations() {
    return migrationsCode().ALERTS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().AlertsService)(ctx),
  routes: (ctx) => routesCode().alertRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).alertTools;
  },
  close: (service) => service.close(),
  cli: [{ name: "alerts", order: 19, summary: "Alert rules on metrics: list, get, create, update (deleting is done in the dashboard)", example: "svc alerts list", load: async () => (await import("./cli")).alertsCommand }],
};
