import type { ModuleManifest } from "../../lib/module";
import type { DeviceService } from "./service";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const migrationsCode = () => require("./migrations") as typeof import("./migrations");
const routesCode = () => require("./routes") as typeof import("./routes");
const serviceCode = () => require("./service") as typeof import("./service");

declare module "../../lib/module" {
  interface Services {
    device: DeviceService;
  }
}

/** Device sign-in of the CLI and tool server (RFC 8628 with PKCE), refresh rotation, and `svc_at_` access tokens. */
export const deviceModule: ModuleManifest<"device"> = {
  name: "device",
  get migrations() {
    return migrationsCode().DEVICE_MIGRATIONS;
  },
  createService: (ctx) => new (serviceCode().DeviceService)(ctx),
  routes: (ctx) => routesCode().deviceRoutes(ctx),
  bearerResolvers: (service) => [service.bearerResolver()],
};
