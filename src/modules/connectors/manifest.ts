import type { ModuleManifest } from "../../lib/module";
import { CONNECTORS_MIGRATIONS } from "./migrations";
import type { ConnectorOptions } from "./options";
import { connectorRoutes } from "./routes";
import { ConnectorsService } from "./service";

declare module "../../lib/module" {
  interface Services {
    connectors: ConnectorsService;
  }
  interface AppOptions {
    /**
     * Vendor URLs, OAuth clients, the secret key and the delivery policy of
     * connectors; SERVICE_* environment variables give the same (options.ts),
     * and these win field by field.
     */
    connectors?: ConnectorOptions;
  }
}

/**
 * Connectors: where a project's events go (Slack, Linear, Google Sheets
 * through OAuth; Claude, Cursor, GitHub and Jules triggers; signed
 * webhooks), with credentials sealed at rest (AES-GCM) and the outbox
 * drainer that delivers every event with retries (drainer.ts).
 */
export const connectorsModule: ModuleManifest<"connectors"> = {
  name: "connectors",
  migrations: CONNECTORS_MIGRATIONS,
  createService: (ctx) => new ConnectorsService(ctx),
  routes: (ctx) => connectorRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).connectorTools;
  },
  close: (service) => service.close(),
};
