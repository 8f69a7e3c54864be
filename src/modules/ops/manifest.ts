import type { ModuleManifest } from "../../lib/module";
import type { IntakeOptions } from "./intake";
import type { OpsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    ops: OpsService;
  }
  interface AppOptions {
    /** The public intake's rate and body limits (SERVICE_INTAKE_* in `svc serve`; see intake.ts). */
    intake?: Partial<IntakeOptions>;
  }
}

/**
 * Queue items: bug reports and feature requests filed by people or through
 * the public intake (POST /ops/bug, /ops/feature-request with a client key;
 * the edge role), approved on the dashboard, and the error and alert items
 * svc files itself for tracked errors and firing alert rules. New items and
 * approvals go to the connectors through the outbox.
 */
export const opsModule: ModuleManifest<"ops"> = {
  name: "ops",
  get migrations() {
    return migrationsCode().OPS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().OpsService)(ctx),
  routes: (ctx) => routesCode().opsRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).opsTools;
  },
  cli: [{ name: "ops", order: 24, summary: "The queue of bug reports and feature requests: list, get, create, update, approve, reject", example: "svc ops list --status pending_approval", load: async () => (await import("./cli")).opsCommand }],
};
