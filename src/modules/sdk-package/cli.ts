import { dataOf } from "../../cli/client";
import { JSON_FLAG, URL_FLAG, emit, openClient, table } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import { kilobytes } from "./format";
import type { sdkPackageRoutes } from "./routes";

/** `svc sdk install`; the keys module's `svc sdk keys …` are the noun's other subcommands (src/main.ts merges them). */
export const sdkPackageCommand: Command = {
  name: "sdk",
  summary: "the SDK itself: sdk install (its version and the lines that install it from the server)",
  details: [
    "Each svc server serves its own SDK, no registry needed: the npm package, the same SDK as one ES module for servers and scripts (a server key), and the browser mode as one ES module (a browser key, safe to ship to users). `svc sdk install` prints the version and the install lines for the server you are signed in to (GET /sdk; SERVICE_PUBLIC_URL names it when set). Install again after upgrading the server: package.json records the URL.",
  ],
  examples: ["svc sdk install", "svc sdk install --json"],
  subcommands: [
    {
      name: "install",
      summary: "The SDK version the server carries, its files, and the lines that install it from that server",
      examples: ["svc sdk install", "svc sdk install --json"],
      flags: { json: JSON_FLAG, url: URL_FLAG },
      async run({ values }) {
        const client = openClient(values);
        const info = await dataOf(client.api<ReturnType<typeof sdkPackageRoutes>>({ withoutProject: true }).sdk.get());
        emit(values.json, info, () =>
          [
            `svc-sdk ${info.version} from ${info.baseUrl}`,
            "",
            "Install the npm package (Node, Bun, bundlers):",
            `  ${info.install.npm}`,
            "Or load it as one ES module (servers, Deno, Bun scripts; takes a server key):",
            `  ${info.install.module}`,
            "In code that ships to users' browsers (takes a browser key):",
            `  ${info.install.browserModule}`,
            "",
            table(
              ["FILE", "SIZE", "GZIPPED", "ETAG"],
              info.files.map((f) => [f.path, kilobytes(f.bytes), f.gzipBytes === null ? "-" : kilobytes(f.gzipBytes), f.etag]),
            ),
          ].join("\n"),
        );
        return 0;
      },
    },
  ],
};
