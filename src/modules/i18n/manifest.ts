import type { ModuleManifest } from "../../lib/module";
import { I18N_MIGRATIONS } from "./migrations";
import { i18nRoutes } from "./routes";
import { I18nService } from "./service";

declare module "../../lib/module" {
  interface Services {
    i18n: I18nService;
  }
}

/**
 * Translations: profiles (one per locale) and their keys, pushed insert-only
 * and edited one at a time. Published in the SDK snapshot's `translations`
 * (`{locale: {key: value}}`, the same on every env) while the project's
 * `moduleTranslations` is on; the SDK's `t(key)` reads it (src/sdk/index.ts).
 */
export const i18nModule: ModuleManifest<"i18n"> = {
  name: "i18n",
  migrations: I18N_MIGRATIONS,
  createService: (ctx) => new I18nService(ctx),
  routes: (ctx) => i18nRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).i18nTools;
  },
  snapshot: (service) => ({ field: "translations", published: (projectId) => service.published(projectId) }),
};
