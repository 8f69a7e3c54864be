import type { ModuleManifest } from "../../lib/module";
import { ATTRIBUTES_MIGRATIONS } from "./migrations";
import { attributeRoutes } from "./routes";
import { AttributesService } from "./service";

declare module "../../lib/module" {
  interface Services {
    attributes: AttributesService;
  }
  interface AppOptions {
    /** How often attributes seen in evaluation contexts are written (default 10 s). */
    attributesFlushMs?: number;
  }
}

/** The catalog of context attributes that gates target: declared by people, or seen in evaluation contexts. */
export const attributesModule: ModuleManifest<"attributes"> = {
  name: "attributes",
  migrations: ATTRIBUTES_MIGRATIONS,
  createService: (ctx) => new AttributesService(ctx),
  routes: (ctx) => attributeRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).attributeTools;
  },
  close: (service) => service.close(),
};
