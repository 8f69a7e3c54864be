import type { ModuleManifest } from "../../lib/module";
import type { DefinitionsService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    definitions: DefinitionsService;
  }
}

/**
 * Flags as code (issue 31): `GET /api/admin/export` and `POST /api/admin/apply` over the other modules'
 * services, and the `svc export`, `svc plan`, `svc apply` and `svc import` commands. It owns no tables.
 */
export const definitionsModule: ModuleManifest<"definitions"> = {
  name: "definitions",
  migrations: [],
  createService: (ctx) => new (serviceCode().DefinitionsService)(ctx),
  routes: (ctx) => routesCode().definitionsRoutes(ctx),
  // `definitions.apply`: a whole document as one change (apply opens a change request with it on an env requiring approval).
  changes: (service) => (require("./changes") as typeof import("./changes")).definitionChanges(service),
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).definitionTools;
  },
  cli: [
    { name: "export", order: 40, summary: "Write the project's definitions as one YAML (or JSON) document: flags as code", example: "svc export > svc.yaml", load: async () => (await import("./cli")).exportCommand },
    { name: "plan", order: 41, summary: "Show what `svc apply FILE` would change; exit 0: nothing, 2: changes, 1: error (for CI)", example: "svc plan svc.yaml", load: async () => (await import("./cli")).planCommand },
    { name: "apply", order: 42, summary: "Make the project match a definitions file: one transaction, all or nothing", example: "svc apply svc.yaml", load: async () => (await import("./cli")).applyCommand },
    { name: "import", order: 43, summary: "Move in from Unleash, GrowthBook, LaunchDarkly or Flagsmith: their export mapped onto gates, configs and segments", example: "svc import unleash export.json --out svc.yaml", load: async () => (await import("./import-cli")).importCommand },
  ],
};
