import type { ModuleManifest } from "../../lib/module";
import type { RelaysService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    relays: RelaysService;
  }
  interface AppOptions {
    /** How recently a relay's stream must have been seen open for it to count as connected (default 90 s; tests shorten it). */
    relayWindowMs?: number;
  }
}

/**
 * Edge relays seen from the upstream: the relay itself (src/modules/relays/edge) has no admin surface, so the server it
 * follows lists it (id, name, version, address, connected or stale) from the X-Svc-Relay header of its calls.
 */
export const relaysModule: ModuleManifest<"relays"> = {
  name: "relays",
  get migrations() {
    return migrationsCode().RELAYS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().RelaysService)(ctx),
  routes: (ctx) => routesCode().relaysRoutes(ctx),
  // Read by `svc mcp` only.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).relayTools;
  },
  cli: [{ name: "relays", order: 26.6, summary: "Edge relays serving the project, as the upstream sees them: list (connected or stale), forget", example: "svc relays list", load: async () => (await import("./cli")).relaysCommand }],
  close: (service) => service.close(),
};
