import type { ModuleManifest } from "../../lib/module";
import type { KeysService } from "./service";
import type { BrowserKeyLimits } from "./types";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    keys: KeysService;
  }
  interface AppOptions {
    /** How often SDK keys' last-use stamps are written (default 60 s). */
    lastUsedFlushMs?: number;
    /** What one browser key may cost: ingest rates per key and address, body cap, new catalog rows, errors and attributes (keys/types.ts). */
    browserKeys?: Partial<BrowserKeyLimits>;
  }
}

/**
 * SDK keys: minting, listing and revoking them, and the key directory the
 * authenticator asks (an in-memory cache that follows the store's `keys`
 * channel on every server).
 */
export const keysModule: ModuleManifest<"keys"> = {
  name: "keys",
  get migrations() {
    return migrationsCode().KEYS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().KeysService)(ctx),
  routes: (ctx) => routesCode().keyRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).keyTools;
  },
  close: (service) => service.close(),
  cli: [{ name: "sdk", order: 29, summary: "SDK keys: sdk keys list | create | revoke", example: "svc sdk keys list", load: async () => (await import("./cli")).sdkCommand }],
};
