import type { ModuleManifest } from "../../lib/module";
import type { I18nService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

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
  get migrations() {
    return migrationsCode().I18N_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().I18nService)(ctx),
  routes: (ctx) => routesCode().i18nRoutes(ctx),
  // Read by `svc mcp` only: loaded then, so that the server does not build the tools' zod schemas at start.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).i18nTools;
  },
  snapshot: (service) => ({ field: "translations", published: (projectId) => service().published(projectId) }),
  cli: [{ name: "i18n", order: 25, summary: "Translations: profiles (one per locale) and their keys: list, push a JSON file, set, delete", example: "svc i18n profiles create web-de --locale de", load: async () => (await import("./cli")).i18nCommand }],
};
