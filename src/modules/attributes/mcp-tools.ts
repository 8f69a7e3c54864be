import { z } from "zod";
import { dataOf } from "../../cli/client";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { attributeRoutes } from "./routes";

export const attributeTools = [
  defineTool({
    name: "list_attributes",
    title: "List attributes",
    description:
      "The context attributes gate rules can target, by name: declared ones (source manual: type, enum values, required, description, where the SDK reads it) and those seen in evaluation contexts (source auto), with when each was last seen and whether it is deprecated. Rules naming an unknown or deprecated attribute are published with a warning.",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on name/description") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      return dataOf(open(project_id).api<ReturnType<typeof attributeRoutes>>().api.admin.attributes.get({ query: { q: q || undefined } }));
    },
  }),
];
