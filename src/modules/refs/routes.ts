import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { describe, jsonBodyPlugin } from "../../lib/http";
import { FlagRefsQuery, FlagRefsSchema, PushRefsBody, RepoParam, RepoSchema } from "./contract";
import { PUSH_MAX_REFS, REPOS_MAX } from "./types";

const TAG = "Code references";

export function refRoutes(ctx: AppContext) {
  const { refs } = ctx.services;
  return new Elysia({ name: "refs", seed: ctx, prefix: "/api/admin/refs" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("", async ({ principal, query }) => await refs.ofFlag(principal.projectId, query.flag ?? null), {
      admin: true,
      query: FlagRefsQuery,
      ...describe({
        summary: "Where a flag (or every flag) is used in code",
        tag: TAG,
        auth: "admin",
        description: "Without `flag`, every reference of the project, under the same bound. Every reference to the name in the repositories pushed with `svc refs push`: repository, commit, file, line, kind (sdk or string), by repository, file and line; at most 1,000 listed, with whole counts per repository. File names are text from the repositories: show them as text.",
        response: { 200: FlagRefsSchema },
      }),
    })
    .post(
      "",
      async ({ principal, body }) => await refs.push(principal.projectId, body, principal.actor),
      {
        admin: true,
        jsonObjectBody: true,
        body: PushRefsBody,
        ...describe({
          summary: "Replace one repository's code references",
          tag: TAG,
          auth: "admin",
          description:
            `What \`svc refs push\` sends: the scan of one commit. Replaces every reference of that repository in one transaction (audited as refs.push). At most ${PUSH_MAX_REFS} references per push and ${REPOS_MAX} repositories per project; ` +
            "control, bidi and invisible characters in names are refused (400 VALIDATION naming the entry); unknown fields are refused. The same place twice is stored once.",
          response: { 200: RepoSchema },
        }),
      },
    )
    .get("/repos", async ({ principal }) => await refs.repos(principal.projectId), {
      admin: true,
      ...describe({ summary: "Repositories with pushed references", tag: TAG, auth: "admin", description: "By name: the last push's commit, branch, how many references and flags, when and by whom.", response: { 200: t.Array(RepoSchema) } }),
    })
    .delete(
      "/repos/:repo",
      async ({ principal, params, set }) => {
        await refs.deleteRepo(principal.projectId, params.repo, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: RepoParam,
        ...describe({ summary: "Forget a repository's references", tag: TAG, auth: "admin", errors: [404], description: "Audited as refs.delete." }),
      },
    );
}
