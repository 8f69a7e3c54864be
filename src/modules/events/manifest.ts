import type { ModuleManifest } from "../../lib/module";
import { eventCatalogTools } from "./mcp-tools";
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
  mcpTools: eventCatalogTools,
  close: (service) => service.close(),
};
