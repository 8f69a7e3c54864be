import type { ModuleManifest } from "../../lib/module";
import { dashboardRoutes } from "./routes";

declare module "../../lib/module" {
  interface Services {
    dashboard: Record<string, never>;
  }
}

/**
 * The web dashboard (src/web/dashboard and each module's dashboard/ folder),
 * served at `/` from the binary. It has no tables and no service: its pages
 * call the same /api/admin routes as the CLI, with the session cookie.
 */
export const dashboardModule: ModuleManifest<"dashboard"> = {
  name: "dashboard",
  migrations: [],
  createService: () => ({}),
  routes: (ctx) => dashboardRoutes(ctx),
};
