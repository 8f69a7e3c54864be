import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { opsRoutes } from "./routes";

/** The queue's admin routes, typed from their own schemas. */
const ops = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof opsRoutes>>().api.admin.ops;

const TYPES = ["bug", "feature_request", "error", "alert"] as const;
const STATUSES = ["pending_approval", "open", "in_progress", "done", "rejected"] as const;

export const opsTools = [
  defineTool({
    name: "list_queue_items",
    title: "List queue items",
    description:
      "The project's queue: bug reports and feature requests (filed by people or the public intake; intake items wait in pending_approval until a person approves them) and the error and alert items svc files for tracked errors and firing alert rules. " +
      "Pending approval first, then newest first. Each has a per-project number, type, status (pending_approval, open, in_progress, done, rejected), priority (high, medium, low, nice_to_have), title and text fields.",
    input: {
      project_id: projectIdArg,
      q: z.string().max(100).optional().describe("Case-insensitive substring over the title and text fields"),
      type: z.enum(TYPES).optional().describe("Only items of this type"),
      status: z.enum(STATUSES).optional().describe("Only items in this status"),
    },
    annotations: READ_ONLY,
    untrusted: "the titles and text fields of items filed through the public intake (anonymous people) and the messages of SDK-reported errors",
    async run({ project_id, q, type, status }, open) {
      // An empty q is left out, as before.
      return dataOf(ops(open, project_id).get({ query: { q: q || undefined, type, status } }));
    },
  }),
  defineTool({
    name: "get_queue_item",
    title: "Get a queue item",
    description: "One queue item by its number in the project (e.g. 42) or its id (fb_…): type, status, priority, title, steps to reproduce, actual and expected result, use case, who filed it and when.",
    input: { item: z.string().min(1).max(128).describe("The item's number (42) or id (fb_…)"), project_id: projectIdArg },
    annotations: READ_ONLY,
    untrusted: "the titles and text fields of items filed through the public intake (anonymous people) and the messages of SDK-reported errors",
    async run({ item, project_id }, open) {
      return dataOf(ops(open, project_id)({ id: seg(item.replace(/^#/, "")) }).get());
    },
  }),
];
