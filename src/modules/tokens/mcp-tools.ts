import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { DESTRUCTIVE, READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { tokenRoutes } from "./routes";

/** The API token routes, typed from their own schemas. */
const tokens = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof tokenRoutes>>().api.admin.tokens;

/**
 * Listing and revoking API tokens. Minting one is left to `svc tokens create`
 * on purpose: a secret shown once belongs in a terminal the user reads, not
 * in a model's transcript.
 */
export const tokenTools = [
  defineTool({
    name: "list_api_tokens",
    title: "List API tokens",
    description: "The project's live API tokens (SERVICE_CLI_TOKEN for CI): id, name, access (read-only or read-write), a masked tail, who created each and when. Never the secrets.",
    input: { project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ project_id }, open) {
      const live = await dataOf(tokens(open, project_id).get());
      return live.map((t) => ({ id: t.id, name: t.name, access: t.access, maskedToken: t.maskedToken, createdBy: t.createdBy, createdAt: t.createdAt }));
    },
  }),
  defineTool({
    name: "revoke_api_token",
    title: "Revoke an API token",
    description: "Revokes one API token by its id (from list_api_tokens); calls with it fail from then on, on every server within a second. Needs the owner role.",
    input: { id: z.string().regex(/^tok_/, "an API token id starts with tok_ (see list_api_tokens)").max(128).describe("The token's id, tok_…"), project_id: projectIdArg },
    annotations: DESTRUCTIVE,
    async run({ id, project_id }, open) {
      await dataOf(tokens(open, project_id)({ id: seg(id) }).delete());
      return { id, revoked: true };
    },
  }),
];
