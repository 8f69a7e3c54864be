import { type ChangeKind, dryRun } from "../../lib/changes";
import type { Env } from "../../lib/envs";
import type { ServiceContext } from "../../lib/module";
import { ConfigPublishChange } from "./contract";
import type { ConfigsService } from "./service";

type PublishBody = { name: string; env: Env; value: unknown; rules?: unknown[] };

/**
 * `config.publish`: the value (and rules, when given) saved as the env's draft and published, in one transaction.
 * A draft someone kept on that env is replaced by it (the published history keeps every version).
 */
export function configChanges(service: ConfigsService, ctx: Pick<ServiceContext, "store">): ChangeKind<PublishBody>[] {
  const apply = (projectId: string, body: PublishBody, actor: { email: string; type: string }) =>
    ctx.store.write(async () => {
      await service.saveDraft(projectId, body.name, body.env, body.value, actor, body.rules);
      return service.publishDraft(projectId, body.name, body.env, actor);
    });
  return [
    {
      kind: "config.publish",
      schema: ConfigPublishChange,
      describe: (_projectId, body) => {
        const text = JSON.stringify(body.value) ?? "null";
        const value = text.length > 60 ? `${text.slice(0, 57)}…` : text;
        const rules = body.rules === undefined ? "" : ` with ${body.rules.length} rule${body.rules.length === 1 ? "" : "s"}`;
        return { target: { type: "config", name: body.name }, env: body.env, summary: `${body.name} on ${body.env} = ${value}${rules}` };
      },
      check: (projectId, body) => dryRun(ctx.store, async () => void (await apply(projectId, body, { email: "check@svc.local", type: "system" }))),
      fingerprint: async (q, projectId, body) => `version ${await service.publishedVersion(q, projectId, body.name, body.env)}`,
      apply,
    },
  ];
}
