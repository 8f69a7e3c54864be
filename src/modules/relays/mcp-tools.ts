import { z } from "zod";
import { dataOf } from "../../cli/client";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { relaysRoutes } from "./routes";

export const relayTools = [
  defineTool({
    name: "list_relays",
    title: "List edge relays",
    description:
      "The edge relays (`svc serve --relay`) serving the project, as this server sees them: id, name, version, address, first and last seen, and connected (a stream open now or within the last 90 s) or stale (serving its last snapshots, or gone). `q` filters id, name and address.",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring over id, name and address") },
    annotations: READ_ONLY,
    untrusted: "relay names, which the relays send",
    async run({ project_id, q }, open) {
      return dataOf(open(project_id).api<ReturnType<typeof relaysRoutes>>().api.admin.relays.get({ query: q ? { q } : {} }));
    },
  }),
];
