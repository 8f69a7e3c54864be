import type { ModuleManifest } from "../../lib/module";
import type { UsageService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    usage: UsageService;
  }
  interface AppOptions {
    /** How often evaluation counts are written (default 5 s; SERVICE_USAGE_FLUSH_MS). */
    usageFlushMs?: number;
    /** How often the weekly stale digest is considered (default hourly). */
    staleDigestCheckMs?: number;
  }
}

/** Evaluation counts per flag, env and day, each flag's usage, stale flags and their weekly digest (issue 30). */
export const usageModule: ModuleManifest<"usage"> = {
  name: "usage",
  get migrations() {
    return migrationsCode().USAGE_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().UsageService)(ctx),
  routes: (ctx) => routesCode().usageRoutes(ctx),
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).usageTools;
  },
  cli: [{ name: "flags", order: 14.5, summary: "Flags of every kind: stale ones, and a flag's evaluation counts", example: "svc flags stale", load: async () => (await import("./cli")).flagsCommand }],
  close: (service) => service.close(),
};
