import { type ChangeKind, absence, dryRun } from "../../lib/changes";
import type { Env } from "../../lib/envs";
import type { ServiceContext } from "../../lib/module";
import { CreateKillswitchBody, KillswitchSetChange } from "./contract";
import type { CreateInput, KillswitchesService } from "./service";

type SetBody = { name: string; env: Env; value: boolean; switchKey?: string };

/**
 * `killswitch.set`: publish a value, flat or of one sub-switch (a toggle with an explicit value).
 * `killswitch.create`: create one (POST /killswitches' body): created on, it publishes a kill on every env at once.
 */
export function killswitchChanges(service: KillswitchesService, ctx: Pick<ServiceContext, "store">): ChangeKind[] {
  const apply = (projectId: string, body: SetBody, actor: { email: string; type: string }) =>
    service.toggle(projectId, body.name, { env: body.env, switchKey: body.switchKey, value: body.value }, actor);
  return [
    {
      kind: "killswitch.set",
      schema: KillswitchSetChange,
      describe: (_projectId, body) => ({
        target: { type: "killswitch", name: body.name },
        env: body.env,
        summary: `${body.switchKey === undefined ? body.name : `${body.name}/${body.switchKey}`} → ${body.value ? "on" : "off"} (${body.env})`,
      }),
      check: (projectId, body) => dryRun(ctx.store, async () => void (await apply(projectId, body, { email: "check@svc.local", type: "system" }))),
      fingerprint: async (q, projectId, body) => `version ${await service.publishedVersion(q, projectId, body.name, body.env)}`,
      apply,
      description: "A killswitch on or off on one env, flat or one sub-switch",
      // A sub-switch not set yet on the env is null.
      current: async (q, projectId, body) => {
        const state = await service.publishedState(q, projectId, body.name, body.env);
        if (body.switchKey === undefined) return { value: state.value };
        return { switchKey: body.switchKey, value: Object.hasOwn(state.switches, body.switchKey) ? state.switches[body.switchKey] : null };
      },
      proposed: async (_q, _projectId, body) => (body.switchKey === undefined ? { value: body.value } : { switchKey: body.switchKey, value: body.value }),
    } satisfies ChangeKind<SetBody>,
    {
      kind: "killswitch.create",
      schema: CreateKillswitchBody,
      describe: (_projectId, body) => {
        const on = Object.entries(body.switches ?? {}).filter(([, v]) => v).map(([k]) => k);
        const state = body.value ? "on" : on.length > 0 ? `off, ${on.join(", ")} on` : "off";
        return { target: { type: "killswitch", name: body.name }, env: null, summary: `new killswitch ${body.name} (${state})` };
      },
      check: (projectId, body) => dryRun(ctx.store, async () => void (await service.create(projectId, body, { email: "check@svc.local", type: "system" }))),
      // `absent` while no killswitch has its name: a request goes stale when someone creates one meanwhile.
      fingerprint: (q, projectId, body) => absence(() => service.publishedVersion(q, projectId, body.name, "prod")),
      apply: (projectId, body, actor) => service.create(projectId, body, actor),
      description: "A new killswitch that starts on (or with a sub-switch on): off and empty needs no request",
      // Nothing is published under its name yet.
      current: async () => null,
    } satisfies ChangeKind<CreateInput>,
  ];
}
