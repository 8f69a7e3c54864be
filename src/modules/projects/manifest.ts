import type { ModuleManifest } from "../../lib/module";
import type { ProjectsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    projects: ProjectsService;
  }
}

/** Organisations, their users and projects (the tenancy every other table hangs from), and project settings. */
export const projectsModule: ModuleManifest<"projects"> = {
  name: "projects",
  get migrations() {
    return migrationsCode().PROJECTS_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().ProjectsService)(ctx),
  routes: (ctx) => routesCode().projectRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).projectTools;
  },
  cli: [{ name: "projects", order: 11, summary: "Projects you can reach: list, create, get and update their settings", example: "svc projects list", load: async () => (await import("./cli")).projectsCommand }],
};
