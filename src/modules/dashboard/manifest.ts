import type { ModuleManifest } from "../../lib/module";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const routesCode = () => require("./routes") as typeof import("./routes");

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
  routes: (ctx) => routesCode().dashboardRoutes(ctx),
};
