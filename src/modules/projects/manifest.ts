import type { ModuleManifest } from "../../lib/module";
import { PROJECTS_MIGRATIONS } from "./migrations";
import { projectRoutes } from "./routes";
import { ProjectsService } from "./service";

declare module "../../lib/module" {
  interface Services {
    projects: ProjectsService;
  }
}

/** Organisations, their users and projects (the tenancy every other table hangs from), and project settings. */
export const projectsModule: ModuleManifest<"projects"> = {
  name: "projects",
  migrations: PROJECTS_MIGRATIONS,
  createService: (ctx) => new ProjectsService(ctx),
  routes: (ctx) => projectRoutes(ctx),
};
