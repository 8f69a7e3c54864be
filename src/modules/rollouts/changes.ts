import { type ChangeKind, dryRun } from "../../lib/changes";
import type { Env } from "../../lib/envs";
import type { ServiceContext } from "../../lib/module";
import { CreateRolloutBody } from "./contract";
import type { CreateInput, RolloutsService } from "./service";
import { DEFAULT_STAGES, type Stage } from "./types";

type StartBody = CreateInput & { env: Env };

/**
 * `rollout.start`: starts a guarded rollout (the body is POST /api/admin/rollouts' own), so that one on an env
 * requiring approval goes through a change request. Approved with its start, the rollout's later moves (stages,
 * completion, rollback, by the monitor or a person) need no request of their own.
 */
export function rolloutChanges(service: RolloutsService, ctx: Pick<ServiceContext, "store" | "services">): ChangeKind<StartBody>[] {
  const apply = (projectId: string, body: StartBody, actor: { email: string; type: string }) => service.create(projectId, body, actor);
  return [
    {
      kind: "rollout.start",
      schema: CreateRolloutBody,
      describe: (_projectId, body) => {
        const type = body.gate !== undefined ? "gate" : "config";
        const name = body.gate ?? body.config ?? "";
        const stages = (body.stages ?? DEFAULT_STAGES).map((s: Stage) => `${s.percent} %`).join(" → ");
        return { target: { type, name }, env: body.env, summary: `rollout of ${type} ${name} on ${body.env}: ${stages}` };
      },
      check: (projectId, body) => dryRun(ctx.store, async () => void (await apply(projectId, body, { email: "check@svc.local", type: "system" }))),
      // What the subject publishes now on the env: the rollout starts from it and completes to the change.
      fingerprint: async (q, projectId, body) => {
        const version = body.gate !== undefined ? await ctx.services.gates.publishedVersion(q, projectId, body.gate, body.env) : await ctx.services.configs.publishedVersion(q, projectId, body.config ?? "", body.env);
        return `version ${version}`;
      },
      apply,
      description: "A guarded rollout of a gate's new rules or a config's new value on one env, in stages",
      // What the subject publishes now on the env, beside the rollout's body (its change and plan).
      current: async (q, projectId, body) =>
        body.gate !== undefined ? { rules: (await ctx.services.gates.publishedState(q, projectId, body.gate, body.env)).rules } : await ctx.services.configs.publishedState(q, projectId, body.config ?? "", body.env).then(({ value, rules }) => ({ value, rules })),
    },
  ];
}
