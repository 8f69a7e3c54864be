import type { ModuleManifest } from "../../lib/module";
import { ERRORS_MIGRATIONS } from "./migrations";
import { errorRoutes } from "./routes";
import { ErrorsService } from "./service";

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
  migrations: ERRORS_MIGRATIONS,
  createService: (ctx) => new ErrorsService(ctx),
  routes: (ctx) => errorRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).errorTools;
  },
};
