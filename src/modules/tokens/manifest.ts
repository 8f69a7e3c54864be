import type { ModuleManifest } from "../../lib/module";
import type { TokensService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    tokens: TokensService;
  }
}

/** Project API tokens (`svc_pat_`, SERVICE_CLI_TOKEN) and their bearer resolver. */
export const tokensModule: ModuleManifest<"tokens"> = {
  name: "tokens",
  get migrations() {
    return migrationsCode().TOKENS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().TokensService)(ctx),
  routes: (ctx) => routesCode().tokenRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).tokenTools;
  },
  bearerResolvers: (service) => [service.bearerResolver()],
  cli: [{ name: "tokens", order: 27, summary: "Project API tokens for CI (SERVICE_CLI_TOKEN): list, create, revoke", example: "svc tokens list", load: async () => (await import("./cli")).tokensCommand }],
};
