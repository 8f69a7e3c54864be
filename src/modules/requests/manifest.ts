import type { ModuleManifest } from "../../lib/module";
import type { RequestsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    requests: RequestsService;
  }
}

/** Change requests (four eyes, issue 30): the approval policy, requests, approvals, apply as approved; the direct-publish guard. */
export const requestsModule: ModuleManifest<"requests"> = {
  name: "requests",
  get migrations() {
    return migrationsCode().REQUESTS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().RequestsService)(ctx),
  routes: (ctx) => routesCode().requestRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).requestTools;
  },
  cli: [{ name: "requests", order: 22.6, summary: "Change requests (four eyes): propose changes, have another person approve them, apply them as approved", example: "svc requests open --title 'Raise checkout limits' --file changes.json", load: async () => (await import("./cli")).requestsCommand }],
};
