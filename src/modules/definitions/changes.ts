import type { ChangeKind } from "../../lib/changes";
import { ENVS, type Env } from "../../lib/envs";
import { validation } from "../../lib/errors";
import { DefinitionsApplyChange } from "./contract";
import { APPLY_CHANGE, type DefinitionsService, countsText } from "./service";
import { type DefinitionsDocument, SECTIONS, type Section } from "./types";

type ApplyBody = { document: DefinitionsDocument; prune?: boolean; env?: string; summary?: { create: number; update: number; delete: number } };

const CHECK_ACTOR = { email: "check@svc.local", type: "system" };

const envsOf = (body: ApplyBody): Env[] | undefined => (body.env ? (body.env.split(",") as Env[]) : undefined);
const sectionsOf = (body: ApplyBody): Section[] => SECTIONS.filter((s) => body.document[s] !== undefined);
const options = (body: ApplyBody) => ({ prune: body.prune === true, envs: envsOf(body) });

/**
 * `definitions.apply` (issue 31 with issue 30): a whole definitions document applied as one change, what
 * `POST /api/admin/apply` opens a change request with when an env it publishes on requires approval. Applying it
 * is the definitions apply itself, joining the request's transaction as the approved path.
 */
export function definitionChanges(service: DefinitionsService): ChangeKind<ApplyBody>[] {
  return [
    {
      kind: APPLY_CHANGE,
      schema: DefinitionsApplyChange,
      describe: (_projectId, body) => {
        const envs = envsOf(body);
        // The plan's counts when apply opened it (checked against the plan then); else what the document lists.
        const what = body.summary ? countsText(body.summary) : sectionsOf(body).map((s) => `${body.document[s]!.length} ${s}`).join(", ") || "nothing";
        return { target: { type: "project", name: "definitions" }, env: envs?.length === 1 ? envs[0]! : null, summary: `apply definitions: ${what}${body.prune ? " (prune)" : ""}` };
      },
      // The whole apply, rolled back: every change checked as it will be made.
      check: async (projectId, body) => {
        const plan = await service.apply(projectId, body.document, CHECK_ACTOR, { ...options(body), dryRun: true });
        if (plan.changes.length === 0) throw validation("The document changes nothing", "document: the project already matches it");
        if (body.summary && countsText(body.summary) !== countsText(plan.summary)) throw validation("summary is not the document's plan", `summary: the plan is ${countsText(plan.summary)}`);
      },
      // What the document touches as exported now (its sections, its envs): any move there makes the request stale.
      fingerprint: async (_q, projectId, body) => {
        // Read through the store, which inside the request's transaction reads through that transaction.
        const now = await service.export(projectId, { envs: envsOf(body) ?? ENVS, only: sectionsOf(body) });
        return `definitions ${Bun.SHA256.hash(JSON.stringify(now), "hex").slice(0, 12)}`;
      },
      apply: (projectId, body, actor) => service.apply(projectId, body.document, actor, options(body)),
      description: "A whole definitions document (svc apply), applied as one change",
      // The document's sections as exported now (on its envs), beside the document itself.
      current: (_q, projectId, body) => service.export(projectId, { envs: envsOf(body) ?? ENVS, only: sectionsOf(body) }),
      proposed: async (_q, _projectId, body) => body.document,
    },
  ];
}
