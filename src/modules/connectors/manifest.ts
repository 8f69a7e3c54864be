import type { ModuleManifest } from "../../lib/module";
import type { ConnectorOptions } from "./options";
import type { ConnectorsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

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
  get migrations() {
    return migrationsCode().CONNECTORS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().ConnectorsService)(ctx),
  routes: (ctx) => routesCode().connectorRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).connectorTools;
  },
  close: (service) => service.close(),
  cli: [{ name: "connectors", order: 23, summary: "Where events go (Slack, Linear, Sheets, agent triggers, webhooks): list, get, create, update, enable, disable, delete, deliveries, test", example: "svc connectors create webhook --name intake --event bug.created --set url=https://hooks.example.com/svc", load: async () => (await import("./cli")).connectorsCommand }],
};
