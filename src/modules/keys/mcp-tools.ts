import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { DESTRUCTIVE, READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { keyRoutes } from "./routes";

/** The SDK key routes, typed from their own schemas. */
const keys = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof keyRoutes>>().api.admin.keys;

export const keyTools = [
  defineTool({
    name: "list_sdk_keys",
    title: "List SDK keys",
    description: "The project's live SDK keys: id, type, name, scopes, a masked tail and when each was created and last used. Never the secrets.",
    input: { project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ project_id }, open) {
      const all = await dataOf(keys(open, project_id).get());
      // Field by field, so a secret can never pass through even if the server sent one.
      return all.map((k) => ({ id: k.id, type: k.type, env: k.env, name: k.name, scopes: k.scopes, maskedKey: k.maskedKey, createdAt: k.createdAt, lastUsedAt: k.lastUsedAt }));
    },
  }),
  defineTool({
    name: "create_browser_key",
    title: "Create a browser key",
    description:
      "Mints a browser SDK key for one env: the key a web or mobile app ships with (it is public by design). It reads evaluated flags of that env only (OFREP, GrowthBook remote evaluation) and sends events and errors (also as a Sentry DSN); never rules, salts or other envs. " +
      "Returns the secret once. Only browser keys can be made here: server and admin keys must not pass through a conversation. Needs the owner role.",
    input: {
      env: z.enum(["dev", "staging", "prod"]).optional().describe("The env the key evaluates (default: the project's defaultEnv)"),
      name: z.string().max(200).optional().describe("A label, e.g. the app's name"),
      project_id: projectIdArg,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async run({ env, name, project_id }, open) {
      const created = await dataOf(keys(open, project_id).post({ type: "browser", ...(env ? { env } : {}), ...(name ? { name } : {}) }));
      return { id: created.id, key: created.key, type: created.type, env: created.env, name: created.name, scopes: created.scopes };
    },
  }),
  defineTool({
    name: "revoke_sdk_key",
    title: "Revoke an SDK key",
    description: "Revokes one SDK key by its id (from list_sdk_keys); every SDK using it is refused from then on, on every server within a second. Needs the owner role. Never pass the secret itself.",
    input: { id: z.string().regex(/^key_/, "an SDK key id starts with key_ (see list_sdk_keys)").max(128).describe("The key's id, key_…"), project_id: projectIdArg },
    annotations: DESTRUCTIVE,
    async run({ id, project_id }, open) {
      await dataOf(keys(open, project_id)({ id: seg(id) }).delete());
      return { id, revoked: true };
    },
  }),
];
