import type { ModuleManifest } from "../../lib/module";
import { tokenTools } from "./mcp-tools";
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
  mcpTools: tokenTools,
  bearerResolvers: (service) => [service.bearerResolver()],
};
