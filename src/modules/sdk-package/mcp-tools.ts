import { dataOf } from "../../cli/client";
import { READ_ONLY, defineTool } from "../../mcp/tool";
import type { sdkPackageRoutes } from "./routes";

export const sdkPackageTools = [
  defineTool({
    name: "sdk_install",
    title: "How to install the SDK",
    description:
      "The SDK version this svc server carries, its files (path, size, ETag) and the lines that install it from this server: `npm install <server>/sdk/svc-sdk.tgz`, the ES module for servers and scripts (takes a server key), and the browser mode's ES module (takes a browser key, safe in code shipped to users). Use it when adding svc to an app.",
    input: {},
    annotations: READ_ONLY,
    async run(_input, open) {
      return dataOf(open(undefined).api<ReturnType<typeof sdkPackageRoutes>>({ withoutProject: true }).sdk.get());
    },
  }),
];
