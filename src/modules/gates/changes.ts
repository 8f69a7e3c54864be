import { type ChangeKind, absence, dryRun } from "../../lib/changes";
import type { Env } from "../../lib/envs";
import type { ServiceContext } from "../../lib/module";
import { CreateGateBody, GateRulesChange } from "./contract";
import type { GateRule } from "../../sdk/gates";
import type { GatesService } from "./service";
import type { CreateGateInput } from "./types";

type RulesBody = { name: string; env: Env; rules: GateRule[] };

/** How a rule list reads in a list of changes: its rules' pass percentages (`2 rules: 100 %, 25 %`). */
function rulesSummary(rules: { passPercentage: number }[]): string {
  if (rules.length === 0) return "no rules (off)";
  return `${rules.length} rule${rules.length === 1 ? "" : "s"}: ${rules.map((r) => `${r.passPercentage} %`).join(", ")}`;
}

/**
 * `gate.rules`: publish a whole rule list on one env (a percentage ramp is a schedule of these).
 * `gate.create`: create one (POST /gates' body): with rules (or a template) it passes units on every env at once.
 */
export function gateChanges(service: GatesService, ctx: Pick<ServiceContext, "store">): ChangeKind[] {
  const apply = (projectId: string, body: RulesBody, actor: { email: string; type: string }) => service.setRules(projectId, body.name, body.env, body.rules, actor);
  return [
    {
      kind: "gate.rules",
      schema: GateRulesChange,
      describe: (_projectId, body) => ({ target: { type: "gate", name: body.name }, env: body.env, summary: `${body.name} on ${body.env}: ${rulesSummary(body.rules)}` }),
      check: (projectId, body) => dryRun(ctx.store, async () => void (await apply(projectId, body, { email: "check@svc.local", type: "system" }))),
      fingerprint: async (q, projectId, body) => `version ${await service.publishedVersion(q, projectId, body.name, body.env)}`,
      apply,
      description: "A gate's whole rule list on one env (who gets the feature)",
      current: async (q, projectId, body) => (await service.publishedState(q, projectId, body.name, body.env)).rules,
      proposed: async (_q, _projectId, body) => body.rules,
    } satisfies ChangeKind<RulesBody>,
    {
      kind: "gate.create",
      schema: CreateGateBody,
      describe: (_projectId, body) => ({
        target: { type: "gate", name: body.name },
        env: null,
        summary: `new gate ${body.name}: ${body.template !== undefined ? `template ${body.template} at ${body.passPercentage ?? 100} %` : rulesSummary(body.rules ?? [])}`,
      }),
      check: (projectId, body) => dryRun(ctx.store, async () => void (await service.create(projectId, body, { email: "check@svc.local", type: "system" }))),
      // `absent` while no gate has its name: a request goes stale when someone creates one meanwhile.
      fingerprint: (q, projectId, body) => absence(() => service.publishedVersion(q, projectId, body.name, "prod")),
      apply: (projectId, body, actor) => service.create(projectId, body, actor),
      description: "A new gate with rules or a template (one without rules needs no request)",
      current: async () => null,
    } satisfies ChangeKind<CreateGateInput>,
  ];
}
