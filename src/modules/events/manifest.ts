import type { ModuleManifest } from "../../lib/module";
import type { EventsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    events: EventsService;
  }
}

/** The event catalog: the names metrics reference, registered by people or discovered (pending) from ingest. */
export const eventsModule: ModuleManifest<"events"> = {
  name: "events",
  get migrations() {
    return migrationsCode().EVENTS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().EventsService)(ctx),
  routes: (ctx) => routesCode().eventRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).eventCatalogTools;
  },
  close: (service) => service.close(),
  cli: [{ name: "events", order: 16, summary: "The event catalog (the analytics events metrics count): list, get, create, approve, update, delete; counts and recent (what arrived)", example: "svc events list", load: async () => (await import("./cli")).eventsCommand }],
};
