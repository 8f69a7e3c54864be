import type { ModuleManifest } from "../../lib/module";
import { auditRoutes } from "./routes";
import { AuditService } from "./service";

declare module "../../lib/module" {
  interface Services {
    audit: AuditService;
  }
}

/**
 * The audit trail, read side. The table and `recordAudit` live in
 * src/lib/audit.ts (every module writes through them; its migrations are
 * applied right after projects, see src/modules/index.ts).
 */
export const auditModule: ModuleManifest<"audit"> = {
  name: "audit",
  migrations: [],
  createService: (ctx) => new AuditService(ctx),
  routes: (ctx) => auditRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).auditTools;
  },
};
