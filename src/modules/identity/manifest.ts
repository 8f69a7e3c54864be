import type { ModuleManifest } from "../../lib/module";
import { IDENTITY_MIGRATIONS } from "./migrations";
import type { SignInOptions } from "./options";
import { identityRoutes } from "./routes";
import { IdentityService } from "./service";
import { sessionResolver } from "./session-credential";

declare module "../../lib/module" {
  interface Services {
    identity: IdentityService;
  }
  interface AppOptions {
    /** Browser sign-in, mail, OIDC and the sign-in clock. */
    signIn?: SignInOptions;
    /**
     * Where mail goes without SMTP, and where the first-run setup link is
     * kept: `<data>/outbox.log` in `svc serve`. Without it, a file under the
     * system's temp directory.
     */
    outboxPath?: string;
  }
}

/** People, organisations' members and browser sign-in (magic links, setup, sessions, OIDC, invitations). */
export const identityModule: ModuleManifest<"identity"> = {
  name: "identity",
  migrations: IDENTITY_MIGRATIONS,
  createService: (ctx) => new IdentityService(ctx),
  routes: (ctx) => identityRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).identityTools;
  },
  sessionResolver: (service, network) => sessionResolver(service, network),
};
