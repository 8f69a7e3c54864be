import { Elysia } from "elysia";
import { ENVS, type Env } from "../../lib/envs";
import { validation } from "../../lib/errors";
import { describe, jsonBodyPlugin } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { documentBodyPlugin } from "./body";
import { ApplyBody, ApplyProposedSchema, ApplyQuery, ApplyResultSchema, DefinitionsDocumentSchema, ExportQuery, ImportBody, ImportParams, ImportQuery, ImportResultSchema } from "./contract";
import { SECTIONS, type Section, exportYaml } from "./types";

const TAG = "Definitions";

function csv<T extends string>(text: string | undefined, allowed: readonly T[], param: string): T[] | undefined {
  if (text === undefined || text === "") return undefined;
  const parts = text.split(",").map((s) => s.trim());
  for (const p of parts) if (!(allowed as readonly string[]).includes(p)) throw validation(`Unknown ${param} ${p}`, `${param}: comma-separated, each one of ${allowed.join(", ")}`);
  return parts as T[];
}

/** `qa=staging,live=prod` (the query's pattern has checked its shape). */
const envMapOf = (text: string | undefined): Record<string, Env> | undefined =>
  text ? Object.fromEntries(text.split(",").map((pair) => pair.split("=").map((s) => s.trim()) as [string, Env])) : undefined;

const flag = (text: string | undefined, param: string): boolean => {
  if (text === undefined || text === "false") return false;
  if (text === "true") return true;
  throw validation(`Invalid ${param}`, `${param}: true or false`);
};

export function definitionsRoutes(ctx: AppContext) {
  const { definitions } = ctx.services;
  return new Elysia({ name: "definitions", seed: ctx, prefix: "/api/admin" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .use(documentBodyPlugin)
    .get(
      "/export",
      async ({ principal, query }) => {
        const doc = await definitions.export(principal.projectId, { envs: csv<Env>(query.env, ENVS, "env"), only: csv<Section>(query.only, SECTIONS, "only") });
        // The YAML `svc export` writes, byte for byte (the dashboard shows and downloads it).
        if (query.format === "yaml") return new Response(exportYaml(doc), { headers: { "content-type": "application/yaml; charset=utf-8" } }) as unknown as typeof doc;
        return doc;
      },
      {
      admin: "read",
      query: ExportQuery,
      ...describe({
        summary: "The project's definitions as one document (flags as code)",
        tag: TAG,
        auth: "admin",
        description:
          "Attributes, the event catalog, segments, gate templates, killswitches, gates, configs, universes, metrics, alert rules and experiments (their design), each sorted by name, references by name, no ids, salts or secrets: what `svc export` writes (as YAML) and `svc apply` reads back. Two exports of the same definitions are the same bytes. `format=yaml` answers the YAML text `svc export` writes (`application/yaml`) instead of JSON.",
        response: { 200: DefinitionsDocumentSchema },
      }),
    },
    )
    .post(
      "/apply",
      async ({ principal, query, body, set }) => {
        const options = { dryRun: flag(query.dryRun, "dryRun"), prune: flag(query.prune, "prune"), envs: csv<Env>(query.env, ENVS, "env"), title: query.title, reason: query.reason };
        const result = await definitions.applyOrPropose(principal.projectId, body, principal.actor, options);
        if ("request" in result) set.status = 202;
        return result;
      },
      {
        admin: true,
        documentBody: true,
        query: ApplyQuery,
        body: ApplyBody,
        ...describe({
          summary: "Apply a definitions document (plan with dryRun=true); on an env requiring approval, open a change request",
          tag: TAG,
          auth: "admin",
          errors: [404, 409],
          description:
            "Creates what the document adds, changes what differs (one line per field; per env for envs) and, with `prune=true`, deletes what a section lists no longer. Everything goes through the owning modules (their checks, versions and audit rows) in one transaction, in dependency order (attributes and segments before the gates and configs that name them): the first refusal changes nothing at all, and its error names the field. `dryRun=true` runs the whole apply and rolls it back: a plan whose every change was checked. Applying the same document twice changes nothing. A section the document leaves out is not touched. The body is JSON, or with `Content-Type: application/yaml` (or text/plain not opening with `{`) the YAML `svc export` writes.\n\n" +
            "When the approval policy (PUT /api/admin/requests/policy) requires approval on an env the apply would publish on (a segment counts for every env), nothing is published: the answer is 202 with ONE change request (`definitions.apply`, the whole document, titled `title` or `svc apply: <counts>`, with `reason`) and its plan. Another person approves it and it is applied with POST /api/admin/requests/{id}/apply, which publishes exactly the document (a `definitions.apply` audit row naming the request); it goes stale (409) when what the document touches moved in between. A dry run on such a project answers 200 with `approvalRequired: true`. A document touching only envs that need no approval applies directly (200).",
          response: { 200: ApplyResultSchema, 202: ApplyProposedSchema },
        }),
      },
    )
    .post("/import/:tool", ({ params, query, body }) => definitions.importFrom(params.tool, body, { env: query.env, envMap: envMapOf(query.envMap), keepExact: query.keepExact === "true" }), {
      // Conversion only (nothing is read or written, so no audit row): a read-only token may convert.
      admin: "read",
      jsonObjectBody: true,
      params: ImportParams,
      query: ImportQuery,
      body: ImportBody,
      ...describe({
        summary: "Convert another tool's export (Unleash, GrowthBook, LaunchDarkly, Flagsmith) into a definitions document",
        tag: TAG,
        auth: "admin",
        description:
          "The body is the tool's export as it wrote it: Unleash's feature export (`features`, `featureStrategies`, `featureEnvironments`, `segments`), GrowthBook's features payload or REST API feature list, LaunchDarkly's flags list with its segments, Flagsmith's environment document. The same importers as `svc import` map it onto gates, configs, killswitches and segments, and the answer lists every part they could not map and why (`unmapped`: a constraint operator svc lacks, a custom strategy) and the percentage rollouts whose units re-bucket (`rebucketed`: svc hashes units differently; `keepExact=true` keeps only 0 % and 100 % rules). " +
          "Nothing changes: send `document` to POST /api/admin/apply?dryRun=true for the plan, then to POST /api/admin/apply. An export of which nothing maps is VALIDATION saying what the body is not.",
        response: { 200: ImportResultSchema },
      }),
    });
}
