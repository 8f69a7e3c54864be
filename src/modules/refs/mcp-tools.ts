import { z } from "zod";
import { dataOf } from "../../cli/client";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { refRoutes } from "./routes";

export const refTools = [
  defineTool({
    name: "find_flag_references",
    title: "Find flag references in code",
    description:
      "Where a killswitch, gate, config or experiment name is used in the code of the repositories pushed with `svc refs push`: per repository its commit and count, and each reference's file, line and kind (sdk: an SDK call names it; string: the name as a quoted string). total 0 with reposPushed > 0 means no pushed repository uses it; reposPushed 0 means nothing is known. File names come from the repositories.",
    input: { project_id: projectIdArg, flag: z.string().min(1).max(128).describe("The flag's name") },
    annotations: READ_ONLY,
    untrusted: "file and repository names, which come from the code pushed",
    async run({ project_id, flag }, open) {
      return dataOf(open(project_id).api<ReturnType<typeof refRoutes>>().api.admin.refs.get({ query: { flag } }));
    },
  }),
];
