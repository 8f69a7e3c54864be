import { type ChangeKind, absence, dryRun } from "../../lib/changes";
import type { Env } from "../../lib/envs";
import type { ServiceContext } from "../../lib/module";
import { ConfigPublishChange, ConfigSchemaChange, CreateConfigBody } from "./contract";
import type { ConfigsService } from "./service";
import type { CreateInput } from "./types";

type PublishBody = { name: string; env: Env; value: unknown; rules?: unknown[] };
type SchemaBody = { name: string; schema: unknown };

/**
 * `config.publish`: the value (and rules, when given) saved as the env's draft and published, in one transaction.
 * A draft someone kept on that env is replaced by it (the published history keeps every version).
 */
export function configChanges(service: ConfigsService, ctx: Pick<ServiceContext, "store">): ChangeKind[] {
  const apply = (projectId: string, body: PublishBody, actor: { email: string; type: string }) =>
    ctx.store.write(async () => {
      await service.saveDraft(projectId, body.name, body.env, body.value, actor, body.rules);
      return service.publishDraft(projectId, body.name, body.env, actor);
    });
  const applySchema = (projectId: string, body: SchemaBody, actor: { email: string; type: string }) => service.patch(projectId, body.name, { schema: body.schema as never }, actor);
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
      description: "A config's value (and rules, when given) published on one env",
      current: async (q, projectId, body) => {
        const state = await service.publishedState(q, projectId, body.name, body.env);
        return { value: state.value, rules: state.rules };
      },
      // Without rules the env keeps the ones it publishes.
      proposed: async (q, projectId, body) => ({ value: body.value, rules: body.rules ?? (await service.publishedState(q, projectId, body.name, body.env)).rules }),
    } satisfies ChangeKind<PublishBody>,
    {
      // A schema holds on every env (env null): a change request or a schedule carries it like any other change.
      kind: "config.schema",
      schema: ConfigSchemaChange,
      describe: (_projectId, body) => ({ target: { type: "config", name: body.name }, env: null, summary: `${body.name}: new schema` }),
      check: (projectId, body) => dryRun(ctx.store, async () => void (await applySchema(projectId, body, { email: "check@svc.local", type: "system" }))),
      fingerprint: async (q, projectId, body) => `schema ${(await service.schemaHash(q, projectId, body.name)).slice(0, 12)}`,
      apply: applySchema,
      description: "A config's JSON Schema (every env's values must fit it)",
      current: async (q, projectId, body) => (await service.publishedState(q, projectId, body.name, "prod")).schema,
      proposed: async (_q, _projectId, body) => body.schema,
    } satisfies ChangeKind<SchemaBody>,
    {
      // A new config's value is served on every env at once (it has no inert state): env null, like a schema.
      kind: "config.create",
      schema: CreateConfigBody,
      describe: (_projectId, body) => {
        const text = body.value === undefined ? "its schema's default" : (JSON.stringify(body.value) ?? "null");
        return { target: { type: "config", name: body.name }, env: null, summary: `new config ${body.name} = ${text.length > 60 ? `${text.slice(0, 57)}…` : text}` };
      },
      check: (projectId, body) => dryRun(ctx.store, async () => void (await service.create(projectId, body, { email: "check@svc.local", type: "system" }))),
      // `absent` while no config has its name: a request goes stale when someone creates one meanwhile.
      fingerprint: (q, projectId, body) => absence(() => service.publishedVersion(q, projectId, body.name, "prod")),
      apply: (projectId, body, actor) => service.create(projectId, body, actor),
      description: "A new config: its value is served on every env at once",
      current: async () => null,
    } satisfies ChangeKind<CreateInput>,
  ];
}
