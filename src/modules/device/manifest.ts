import type { ModuleManifest } from "../../lib/module";
import { DEVICE_MIGRATIONS } from "./migrations";
import { deviceRoutes } from "./routes";
import { DeviceService } from "./service";

declare module "../../lib/module" {
  interface Services {
    device: DeviceService;
  }
}

/** Device sign-in of the CLI and tool server (RFC 8628 with PKCE), refresh rotation, and `svc_at_` access tokens. */
export const deviceModule: ModuleManifest<"device"> = {
  name: "device",
  migrations: DEVICE_MIGRATIONS,
  createService: (ctx) => new DeviceService(ctx),
  routes: (ctx) => deviceRoutes(ctx),
  bearerResolvers: (service) => [service.bearerResolver()],
};
