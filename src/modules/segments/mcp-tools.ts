import { z } from "zod";
import { GATE_OPS } from "../../sdk/gates";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { DESTRUCTIVE, READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { segmentRoutes } from "./routes";

/** The segment routes, typed from their own schemas. */
const segments = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof segmentRoutes>>().api.admin.segments;

// The server's limits (service.ts; the tool server does not load server code): it checks them again and names the field.
const IDS_MAX = 100_000;
const ID_CHARS_MAX = 256;
/** Ids an answer lists: a list holds up to 100,000, far more than a conversation should carry. */
const IDS_SHOWN = 100;

const segmentName = z.string().min(1).max(128).describe("Segment name or id (seg_…)");

// Strict: a misspelt field is refused, never silently dropped. The server checks each value against its operator.
const condition = z
  .strictObject({
    attr: z.string().min(1).max(128).describe("Context attribute, e.g. email, country, plan"),
    op: z.enum(GATE_OPS).describe("A gate operator; a segment's conditions cannot use passes_gate, fails_gate, in_segment or not_in_segment"),
    value: z.unknown().optional().describe("eq/neq: text, number or boolean; in/not_in: a non-empty list; contains/starts_with/ends_with/regex: text; gt/gte/lt/lte: a number; semver_*: a version; before/after: an ISO date; exists/not_exists: none"),
  })
  .describe("One condition; a unit is in the segment when all hold");

const ids = (what: string) =>
  z
    .array(z.string().min(1).max(ID_CHARS_MAX))
    .max(IDS_MAX)
    .describe(`${what} (text, up to ${ID_CHARS_MAX} characters each). A request body holds at most 1 MiB: send big lists in batches of about 10,000 with addIds.`);

const fields = {
  description: z.string().max(1000).optional().describe("What the segment is for"),
  attribute: z.string().min(1).max(128).optional().describe("The context attribute matched against the ids (default user_id)"),
  conditions: z.array(condition).max(50).optional().describe("Gate conditions that all hold for a unit in the segment ([]: none; the id list alone decides)"),
};

/** A segment as a conversation sees it: the first 100 ids, with how many there are. */
function shown<S extends { ids: string[]; idCount: number }>(s: S): Omit<S, "ids"> & { ids: string[]; idsTruncated: boolean } {
  return { ...s, ids: s.ids.slice(0, IDS_SHOWN), idsTruncated: s.ids.length > IDS_SHOWN };
}

export const segmentTools = [
  defineTool({
    name: "list_segments",
    title: "List segments",
    description:
      "The project's segments: named sets of units that gate rules reuse with {attr, op: in_segment | not_in_segment, value: <segment name>}. Each has an attribute (default user_id), an id count (the ids themselves are not listed) and conditions.",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on name/description") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      return dataOf(segments(open, project_id).get({ query: { q: q || undefined } }));
    },
  }),
  defineTool({
    name: "get_segment",
    title: "Get a segment",
    description: `One segment: description, attribute, conditions, idCount and the first ${IDS_SHOWN} ids (idsTruncated says whether there are more; a list holds up to ${IDS_MAX.toLocaleString("en")}).`,
    input: { name: segmentName, project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ name, project_id }, open) {
      return shown(await dataOf(segments(open, project_id)({ id: seg(name) }).get()));
    },
  }),
  defineTool({
    name: "create_segment",
    title: "Create a segment",
    description:
      "Creates a segment: a list of unit ids on one attribute (up to 100,000) and/or gate conditions. A unit is in it when its attribute's value is listed, or when the (non-empty) conditions all hold. Name it in gate rules with in_segment / not_in_segment. Returns {id, name}. For a list larger than about 10,000 ids, create it with the first batch and add the rest with update_segment's addIds.",
    input: { name: z.string().min(1).max(128).describe("Unique in the project; not starting with seg_, no '/'"), ...fields, ids: ids("Unit ids").optional(), project_id: projectIdArg },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async run({ name, description, attribute, conditions, ids, project_id }, open) {
      return dataOf(segments(open, project_id).post({ name, description, attribute, conditions, ids }));
    },
  }),
  defineTool({
    name: "update_segment",
    title: "Change a segment",
    description:
      "Changes a segment; only the fields given change. ids replaces the whole list; addIds and removeIds change it instead (removals first; not with ids), at most 100,000 ids afterwards. Every env whose published gate rules name the segment is republished at once. A rename is refused while rules name it. " +
      `Returns the segment with its first ${IDS_SHOWN} ids and idCount. Sending what is already stored changes nothing.`,
    input: {
      name: segmentName,
      rename: z.string().min(1).max(128).optional().describe("A new name"),
      ...fields,
      ids: ids("The whole new id list").optional(),
      addIds: ids("Ids to add; ids already listed stay where they are").optional(),
      removeIds: ids("Ids to take out; ids not listed are ignored").optional(),
      project_id: projectIdArg,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async run({ name, rename, description, attribute, conditions, ids, addIds, removeIds, project_id }, open) {
      const body = { name: rename, description, attribute, conditions, ids, addIds, removeIds };
      return shown(await dataOf(segments(open, project_id)({ id: seg(name) }).patch(body)));
    },
  }),
  defineTool({
    name: "delete_segment",
    title: "Delete a segment",
    description: "Deletes a segment. Refused (ALREADY_EXISTS, naming the gates and envs) while published gate rules name it: change those rules first.",
    input: { name: segmentName, project_id: projectIdArg },
    annotations: DESTRUCTIVE,
    async run({ name, project_id }, open) {
      await dataOf(segments(open, project_id)({ id: seg(name) }).delete());
      return { name, deleted: true };
    },
  }),
];
