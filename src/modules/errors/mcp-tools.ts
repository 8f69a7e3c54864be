import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { errorRoutes } from "./routes";
import { ERROR_STATUSES, SETTABLE_STATUSES } from "./types";

/** The tracked errors' admin routes, typed from their own schemas. */
const errors = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof errorRoutes>>().api.admin.errors;
const errorRef = z.string().min(1).max(128).describe("Error id (err_…), its fingerprint, or a unique id prefix of at least 6 characters");

export const errorTools = [
  defineTool({
    name: "list_errors",
    title: "List tracked errors",
    description:
      "The project's tracked production errors, most recently seen first: type, message, culprit (top in-app frame), status (unresolved, resolved, ignored, regressed), occurrence count, distinct affected units, first and last seen.",
    input: {
      project_id: projectIdArg,
      status: z.enum(ERROR_STATUSES).optional().describe("Only errors with this status; regressed ones were resolved and happened again"),
      q: z.string().max(100).optional().describe("Case-insensitive substring filter on type/message"),
    },
    annotations: READ_ONLY,
    untrusted: "error types, messages, culprits, stack frames, source context lines, tags, releases, environments and unit ids as SDKs reported them (from apps anyone can run)",
    async run({ project_id, status, q }, open) {
      // An empty q is left out, as before.
      return dataOf(errors(open, project_id).get({ query: { status, q: q || undefined } }));
    },
  }),
  defineTool({
    name: "get_error",
    title: "Get a tracked error",
    description:
      "One tracked error: fingerprint, type, message, culprit, status and who changed it when, count, affected units, first and last seen, " +
      "and its kept occurrences newest first (the last 20 and a sample of 5 older ones), each with its stack frames innermost first " +
      "(function, file, line, column, inApp, context lines when the SDK sent them), tags, release, environment and unit id: where it broke, not only that it did.",
    input: { id: errorRef, project_id: projectIdArg },
    annotations: READ_ONLY,
    untrusted: "error types, messages, culprits, stack frames, source context lines, tags, releases, environments and unit ids as SDKs reported them (from apps anyone can run)",
    async run({ id, project_id }, open) {
      return dataOf(errors(open, project_id)({ id: seg(id) }).get());
    },
  }),
  defineTool({
    name: "set_error_status",
    title: "Resolve, ignore or reopen an error",
    description:
      "Sets a tracked error's status: resolved (a new occurrence then marks it regressed), ignored (stays ignored whatever happens), or unresolved. Audited. Setting the current status again changes nothing.",
    input: { id: errorRef, status: z.enum(SETTABLE_STATUSES), project_id: projectIdArg },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    untrusted: "error types, messages, culprits, stack frames, source context lines, tags, releases, environments and unit ids as SDKs reported them (from apps anyone can run)",
    async run({ id, status, project_id }, open) {
      return dataOf(errors(open, project_id)({ id: seg(id) }).patch({ status }));
    },
  }),
];
