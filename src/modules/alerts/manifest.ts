import type { ModuleManifest } from "../../lib/module";
import { ALERTS_MIGRATIONS } from "./migrations";
import { alertRoutes } from "./routes";
import { AlertsService } from "./service";

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
  migrations: ALERTS_MIGRATIONS,
  createService: (ctx) => new AlertsService(ctx),
  routes: (ctx) => alertRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).alertTools;
  },
  close: (service) => service.close(),
};
