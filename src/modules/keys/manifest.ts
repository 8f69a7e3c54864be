import type { ModuleManifest } from "../../lib/module";
import { KEYS_MIGRATIONS } from "./migrations";
import { keyRoutes } from "./routes";
import { KeysService } from "./service";

declare module "../../lib/module" {
  interface Services {
    keys: KeysService;
  }
  interface AppOptions {
    /** How often SDK keys' last-use stamps are written (default 60 s). */
    lastUsedFlushMs?: number;
  }
}

/**
 * SDK keys: minting, listing and revoking them, and the key directory the
 * authenticator asks (an in-memory cache that follows the store's `keys`
 * channel on every server).
 */
export const keysModule: ModuleManifest<"keys"> = {
  name: "keys",
  migrations: KEYS_MIGRATIONS,
  createService: (ctx) => new KeysService(ctx),
  routes: (ctx) => keyRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).keyTools;
  },
  close: (service) => service.close(),
};
