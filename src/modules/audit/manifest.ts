import type { ModuleManifest } from "../../lib/module";
import type { AuditService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

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
  createService: (ctx) => new (serviceCode().AuditService)(ctx),
  routes: (ctx) => routesCode().auditRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).auditTools;
  },
  cli: [{ name: "audit", order: 30, summary: "The project's audit trail: who changed what, newest first", example: "svc audit list", load: async () => (await import("./cli")).auditCommand }],
};
