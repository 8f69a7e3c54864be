import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { requestRoutes } from "./routes";
import { CHANGES_MAX, STATES } from "./types";

/** The request routes, typed from their own schemas. */
const requests = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof requestRoutes>>().api.admin.requests;

const change = z
  .object({ kind: z.enum(["killswitch.set", "config.publish", "config.schema", "gate.rules", "segment.update"]) })
  .passthrough()
  .describe(
    "The change, flat: killswitch.set {name, env, value, switchKey?}; config.publish {name, env, value, rules?}; config.schema {name, schema}; gate.rules {name, env, rules: [{conditions, passPercentage}]}; segment.update {name, patch}",
  );

// No approve, reject or apply tool: only people approve (the API refuses tokens), and applying is theirs to decide.
export const requestTools = [
  defineTool({
    name: "list_change_requests",
    title: "List change requests",
    description: "The project's change requests, newest first: title, state (open, approved, applied, rejected, withdrawn, stale), author, approvals so far of those required, heldBy (the schedule that applies it at its time, if any), and each change with its summary.",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Substring of the id, title, reason or author"), state: z.enum(STATES).optional() },
    annotations: READ_ONLY,
    async run({ project_id, q, state }, open) {
      return dataOf(requests(open, project_id).get({ query: { q: q || undefined, state } }));
    },
  }),
  defineTool({
    name: "get_change_request",
    title: "Get a change request",
    description:
      "One change request with its changes (each with the fingerprint of what was published when it was opened, `proposed`, and while it is open, approved or stale `current`: what is published now in the same shape, for a diff), approvals and decision.",
    input: { request: z.string().min(1).max(128).describe("Request id (cr_…) or a unique prefix"), project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ request, project_id }, open) {
      return dataOf(requests(open, project_id)({ id: seg(request) }).get());
    },
  }),
  defineTool({
    name: "open_change_request",
    title: "Open a change request",
    description:
      "Proposes changes for people to approve (an env that requires approval refuses direct publishes). Each change is checked now as its module would check it. A person other than the author approves it and applies it; you cannot approve.",
    input: {
      title: z.string().min(1).max(200),
      reason: z.string().max(2000).optional(),
      changes: z.array(change).min(1).max(CHANGES_MAX),
      project_id: projectIdArg,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async run({ title, reason, changes, project_id }, open) {
      return dataOf(requests(open, project_id).post({ title, reason, changes } as never));
    },
  }),
];
