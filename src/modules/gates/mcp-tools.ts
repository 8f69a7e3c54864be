import { z } from "zod";
import { GATE_OPS } from "../../sdk/gates";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, envArg, projectIdArg } from "../../mcp/tool";
import type { gateRoutes } from "./routes";
import { CONDITIONS_MAX, NAME_MAX, RULES_MAX } from "./types";

/** The gate routes, typed from their own schemas. */
const gates = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof gateRoutes>>().api.admin.gates;
const gateName = z.string().min(1).max(NAME_MAX).describe("Gate name or id");

// Strict: a misspelt field is refused, never silently dropped. The server checks each value against its operator.
// A gate rule's condition, and a config rule's (configs' tools use this one: the same conditions, evaluated alike).
export const ruleCondition = z
  .strictObject({
    attr: z.string().min(1).max(128).describe("Context attribute, e.g. email, country, app_version"),
    op: z.enum(GATE_OPS),
    value: z
      .unknown()
      .optional()
      .describe(
        "eq/neq: text, number or boolean; in/not_in: a non-empty list; contains/starts_with/ends_with/regex (RE2): text; gt/gte/lt/lte: a number; semver_*: a version such as 2.4.0; before/after: an ISO date; passes_gate/fails_gate: a gate's name; in_segment/not_in_segment: a segment's name; exists/not_exists: none",
      ),
  })
  .describe("One condition; a rule holds when all of its conditions hold");

const rule = z.strictObject({
  name: z.string().max(100).optional().describe("Shown in explanations"),
  conditions: z.array(ruleCondition).max(CONDITIONS_MAX).describe("All must hold; an empty list holds for everyone"),
  passPercentage: z.number().min(0).max(100).describe("Share (0-100) of the units whose conditions hold that pass, by a stable hash of the unit"),
  unit: z.string().min(1).max(128).optional().describe("Context attribute identifying the unit to bucket; default user_id"),
});

export const gateTools = [
  defineTool({
    name: "list_gates",
    title: "List gates",
    description: "The project's gates with their ordered rule list, version and last publisher on every env (dev, staging, prod).",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on name/description") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      return dataOf(gates(open, project_id).get({ query: { q: q || undefined } }));
    },
  }),
  defineTool({
    name: "list_gate_templates",
    title: "List gate templates",
    description:
      "Ready-made condition lists to start a gate from: the built-ins first (read-only), then the project's own. Each has a name, description, category and its conditions [{attr, op, value}]; use them as a rule's conditions in set_gate_rules.",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on name/description/category") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      return dataOf(gates(open, project_id).templates.get({ query: { q: q || undefined } }));
    },
  }),
  defineTool({
    name: "get_gate",
    title: "Get a gate",
    description: "One gate: description and, on every env, its ordered rule list (the first rule whose conditions all hold decides; none holding means off), version, when and by whom it was published.",
    input: { name: gateName, project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ name, project_id }, open) {
      return dataOf(gates(open, project_id)({ id: seg(name) }).get());
    },
  }),
  defineTool({
    name: "explain_gate",
    title: "Explain a gate's answer",
    description:
      "What the gate answers for an evaluation context on one env (default prod): the value, the rule that decided (0-based ruleIndex, null when none held), the unit's bucket when a percentage decided, and for each earlier rule every condition's outcome and why. Reads only; the same evaluator as the SDKs.",
    input: {
      name: gateName,
      env: envArg.optional().describe("Default prod"),
      context: z.record(z.string(), z.unknown()).describe('The evaluation context: user_id and any attributes, e.g. {"user_id":"user-42","email":"ana@acme.com","country":"de"}'),
      project_id: projectIdArg,
    },
    annotations: READ_ONLY,
    async run({ name, env, context, project_id }, open) {
      return dataOf(gates(open, project_id)({ id: seg(name) }).explain.post({ env, context }));
    },
  }),
  defineTool({
    name: "set_gate_rules",
    title: "Set a gate's rules",
    description:
      "Replaces the whole ordered rule list of a gate on one env and publishes it as a new version; live SDKs see it at once. Sending the same rules again publishes the same rules. An empty list turns the gate off for everyone. Mistakes are refused (VALIDATION naming the rule and field) and change nothing. Call get_gate first to start from the current rules.",
    input: {
      name: gateName,
      env: envArg,
      rules: z.array(rule).max(RULES_MAX).describe("In order: the first rule whose conditions all hold decides"),
      project_id: projectIdArg,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async run({ name, env, rules, project_id }, open) {
      return dataOf(gates(open, project_id)({ id: seg(name) }).rules.put({ env, rules }));
    },
  }),
];
