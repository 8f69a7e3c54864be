import { VERSION } from "../version";
import type { Command } from "./command";

/** `svc version`: its own module, so that printing the version loads nothing of the server (server-commands.ts loads the app). */
export const versionCommand: Command = {
  name: "version",
  summary: "Print the version",
  examples: ["svc version", "svc version --json"],
  flags: { json: { type: "boolean", help: "Print {version, bun} as JSON" } },
  run({ values }) {
    console.log(values.json ? JSON.stringify({ version: VERSION, bun: Bun.version }) : `svc ${VERSION} (bun ${Bun.version})`);
    return 0;
  },
};
