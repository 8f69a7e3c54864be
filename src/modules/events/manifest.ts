import type { ModuleManifest } from "../../lib/module";
import { EVENTS_MIGRATIONS } from "./migrations";
import { eventCatalogRoutes } from "./routes";
import { EventsService } from "./service";

declare module "../../lib/module" {
  interface Services {
    events: EventsService;
  }
}

/** The event catalog: the names metrics reference, registered by people or discovered (pending) from ingest. */
export const eventsModule: ModuleManifest<"events"> = {
  name: "events",
  migrations: EVENTS_MIGRATIONS,
  createService: (ctx) => new EventsService(ctx),
  routes: (ctx) => eventCatalogRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).eventCatalogTools;
  },
  close: (service) => service.close(),
};
