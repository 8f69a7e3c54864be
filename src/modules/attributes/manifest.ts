import type { ModuleManifest } from "../../lib/module";
import type { AttributesService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

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
  get migrations() {
    return migrationsCode().ATTRIBUTES_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().AttributesService)(ctx),
  routes: (ctx) => routesCode().attributeRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).attributeTools;
  },
  close: (service) => service.close(),
  cli: [{ name: "attributes", order: 15, summary: "Context attributes that gates target: list, get, create, update, deprecate", example: "svc attributes list", load: async () => (await import("./cli")).attributesCommand }],
};
