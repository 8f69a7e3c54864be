import type { ModuleManifest } from "../../lib/module";
import { TOKENS_MIGRATIONS } from "./migrations";
import { tokenRoutes } from "./routes";
import { TokensService } from "./service";

declare module "../../lib/module" {
  interface Services {
    tokens: TokensService;
  }
}

/** Project API tokens (`svc_pat_`, SERVICE_CLI_TOKEN) and their bearer resolver. */
export const tokensModule: ModuleManifest<"tokens"> = {
  name: "tokens",
  migrations: TOKENS_MIGRATIONS,
  createService: (ctx) => new TokensService(ctx),
  routes: (ctx) => tokenRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).tokenTools;
  },
  bearerResolvers: (service) => [service.bearerResolver()],
};
