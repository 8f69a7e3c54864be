import type { ModuleManifest } from "../../lib/module";
import type { RefsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    refs: RefsService;
  }
}

/** Code references: where flag names are used in the code of pushed repositories (`svc refs scan|push`). */
export const refsModule: ModuleManifest<"refs"> = {
  name: "refs",
  get migrations() {
    return migrationsCode().REFS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().RefsService)(ctx),
  routes: (ctx) => routesCode().refRoutes(ctx),
  // Read by `svc mcp` only.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).refTools;
  },
  cli: [{ name: "refs", order: 26.5, summary: "Code references: scan a directory for flag names, push them, list where a flag is used", example: "svc refs scan", load: async () => (await import("./cli")).refsCommand }],
};
