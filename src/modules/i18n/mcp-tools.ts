import { z } from "zod";
import { dataOf } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { i18nRoutes } from "./routes";

/** The translation routes, typed from their own schemas. */
const i18n = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof i18nRoutes>>().api.admin.i18n;

const profileArg = z.string().min(1).max(128).describe("Translation profile: its id (i18n_…) or name");

export const i18nTools = [
  defineTool({
    name: "list_i18n_profiles",
    title: "List translation profiles",
    description: "The project's translation profiles: one per locale (a canonical BCP 47 tag such as en or de-CH), each with a name and how many keys it holds (keyCount).",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on the name and the locale") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      return dataOf(i18n(open, project_id).profiles.get({ query: { q: q || undefined } }));
    },
  }),
  defineTool({
    name: "list_i18n_keys",
    title: "List translation keys",
    description: "Translation keys with their values, profile_id and locale: of one profile, or of every profile when none is named. q filters over the key and the value.",
    input: {
      project_id: projectIdArg,
      profile: profileArg.optional(),
      q: z.string().max(100).optional().describe("Case-insensitive substring filter on the key and the value"),
    },
    annotations: READ_ONLY,
    async run({ project_id, profile, q }, open) {
      return dataOf(i18n(open, project_id).keys.get({ query: { profile_id: profile || undefined, q: q || undefined } }));
    },
  }),
  defineTool({
    name: "push_i18n_keys",
    title: "Add translation keys",
    description:
      "Adds keys to a translation profile, insert-only: keys the profile already has keep their value and are reported as skipped. Answers {added, skipped, pushed_count, skipped_count}. Keys: 1-200 of A-Z a-z 0-9 _ . : -; values up to 10,000 characters; at most 1,000 keys per call.",
    input: {
      project_id: projectIdArg,
      profile: profileArg,
      keys: z.record(z.string(), z.string()).describe('The keys to add, as {"checkout.button.pay": "Jetzt bezahlen", ...}'),
    },
    // Repeating the call adds nothing more: keys present are skipped.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async run({ project_id, profile, keys }, open) {
      const body = { profile_id: profile, keys: Object.entries(keys).map(([key, value]) => ({ key, value })) };
      return dataOf(i18n(open, project_id).keys.post(body));
    },
  }),
];
