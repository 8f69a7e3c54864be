import type { ModuleManifest } from "../../lib/module";
import type { SignInOptions } from "./options";
import type { IdentityService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");
const sessionCredentialCode = () => require("./session-credential") as typeof import("./session-credential");

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
  get migrations() {
    return migrationsCode().IDENTITY_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().IdentityService)(ctx),
  routes: (ctx) => routesCode().identityRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).identityTools;
  },
  sessionResolver: (service, network) => sessionCredentialCode().sessionResolver(service, network),
  cli: [{ name: "members", order: 28, summary: "People of the project's organisation: list, invite, set-role, remove", example: "svc members list", load: async () => (await import("./cli")).membersCommand }],
};
