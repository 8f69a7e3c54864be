import type { ModuleManifest } from "../../lib/module";

// Server code loads on first use: svc's CLI reads every manifest for its nouns and must not pay for it.
const routesCode = () => require("./routes") as typeof import("./routes");

declare module "../../lib/module" {
  interface Services {
    sdkPackage: Record<string, never>;
  }
}

/**
 * The SDK from the server itself (DECISIONS, "The SDK, from the server
 * itself"): `GET /sdk/svc-sdk.tgz` is the npm package of this server's own
 * SDK version (`npm install http://HOST:PORT/sdk/svc-sdk.tgz`), and
 * `GET /sdk/svc.js` the same SDK as one browser ES module. No tables, no
 * service, no credentials: the SDK is public code, the keys are not.
 */
export const sdkPackageModule: ModuleManifest<"sdkPackage"> = {
  name: "sdkPackage",
  migrations: [],
  createService: () => ({}),
  routes: (ctx) => routesCode().sdkPackageRoutes(ctx),
  // Read by `svc mcp` only.
  get mcpTools() {
    return (require("./mcp-tools") as typeof import("./mcp-tools")).sdkPackageTools;
  },
  // `svc sdk install`: one noun with the keys module's `svc sdk keys …` (src/main.ts merges nouns of one name).
  cli: [
    {
      name: "sdk",
      order: 29,
      summary: "the SDK itself: sdk install (its version and the lines that install it from the server)",
      example: "svc sdk install",
      load: async () => (await import("./cli")).sdkPackageCommand,
    },
  ],
};
