import type { ModuleManifest } from "../../lib/module";
import type { SchedulesService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    schedules: SchedulesService;
  }
  interface AppOptions {
    /** How often each server runs due scheduled steps (default 5 s; 0: never, tests call `schedules.runDue`). */
    schedulesEveryMs?: number;
  }
}

/**
 * Scheduled changes: any publishable change (src/lib/changes.ts) at a time, alone or as a ramp, run once
 * across every server, late (and saying so) after downtime, cancellable while pending.
 */
export const schedulesModule: ModuleManifest<"schedules"> = {
  name: "schedules",
  get migrations() {
    return migrationsCode().SCHEDULES_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().SchedulesService)(ctx),
  routes: (ctx) => routesCode().scheduleRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).scheduleTools;
  },
  close: (service) => service.close(),
  cli: [{ name: "schedules", order: 22.5, summary: "Scheduled changes: a toggle, a config value, gate rules or a segment patch at a time, or a ramp of them", example: "svc schedules create --at 2026-12-01T09:00:00Z --kind killswitch.set --body '{\"name\":\"checkout\",\"env\":\"prod\",\"value\":true}'", load: async () => (await import("./cli")).schedulesCommand }],
};
