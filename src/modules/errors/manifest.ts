import type { ModuleManifest } from "../../lib/module";
import type { ErrorsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    errors: ErrorsService;
  }
}

/**
 * Tracked production errors: ingest from our SDK path and from any Sentry
 * SDK (envelope and store endpoints), grouped by a fingerprint that
 * survives deploys, with status (resolve, ignore, regressions) and a series
 * per error read from the event store (`$error:<fingerprint>`).
 */
export const errorsModule: ModuleManifest<"errors"> = {
  name: "errors",
  get migrations() {
    return migrationsCode().ERRORS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().ErrorsService)(ctx),
  routes: (ctx) => routesCode().errorRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).errorTools;
  },
  cli: [{ name: "errors", order: 18, summary: "Tracked production errors: list, get, resolve, ignore, reopen, series", example: "svc errors list --status unresolved", load: async () => (await import("./cli")).trackedErrorsCommand }],
};
