import { ENVS, type Env } from "../../lib/envs";
import { validation } from "../../lib/errors";
import { alerts, events, experiments, metrics } from "./kinds-measures";
import type { Actor, Entry, Kind, Section } from "./types";

export type { Actor, Kind } from "./types";

// Each section of the document: how the project's resources read as entries, how an entry from a file is
// checked and normalised the same way (so the two compare field by field), and how apply makes the
// stored resource into the entry through the owning module's service (its checks, versions and audit).

function fail(at: string, message: string): never {
  throw validation(`Invalid definitions document: ${message}`, `${at}: ${message}`);
}

function text(raw: Record<string, unknown>, field: string, at: string, fallback = ""): string {
  const v = raw[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "string") fail(`${at}.${field}`, "text");
  return v;
}

function list(raw: Record<string, unknown>, field: string, at: string): unknown[] {
  const v = raw[field];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(`${at}.${field}`, "a list");
  return v;
}

function only(raw: Record<string, unknown>, fields: string[], at: string): void {
  const extra = Object.keys(raw).filter((k) => !fields.includes(k));
  if (extra.length > 0) fail(`${at}.${extra[0]}`, `unknown field (one of ${fields.join(", ")})`);
}

/** `envs: {dev: {...}, prod: {...}}` with the envs asked for, each checked by `one`. */
function envsOf<T>(raw: Record<string, unknown>, at: string, envs: readonly Env[], one: (v: Record<string, unknown>, at: string) => T): Partial<Record<Env, T>> {
  const v = raw.envs ?? {};
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail(`${at}.envs`, "an object of envs (dev, staging, prod)");
  const out: Partial<Record<Env, T>> = {};
  for (const [env, state] of Object.entries(v)) {
    if (!(ENVS as readonly string[]).includes(env)) fail(`${at}.envs.${env}`, `not an env (${ENVS.join(", ")})`);
    if (!envs.includes(env as Env)) continue;
    if (typeof state !== "object" || state === null || Array.isArray(state)) fail(`${at}.envs.${env}`, "an object");
    out[env as Env] = one(state as Record<string, unknown>, `${at}.envs.${env}`);
  }
  return out;
}

const sortedKeys = <V>(o: Record<string, V>): Record<string, V> => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const byName = (a: Entry, b: Entry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const envState = <T>(entry: Entry | undefined, env: Env) => (entry?.envs as Partial<Record<Env, T>> | undefined)?.[env];

const segments: Kind = {
  section: "segments",
  async export(ctx, projectId) {
    const out: Entry[] = [];
    for (const s of await ctx.services.segments.list(projectId)) {
      const full = await ctx.services.segments.get(projectId, s.id);
      out.push({ name: full.name, description: full.description, attribute: full.attribute, conditions: full.conditions, ids: full.ids });
    }
    return out.sort(byName);
  },
  normalize(raw, at) {
    only(raw, ["name", "description", "attribute", "conditions", "ids"], at);
    return { name: raw.name as string, description: text(raw, "description", at), attribute: text(raw, "attribute", at, "user_id"), conditions: list(raw, "conditions", at), ids: list(raw, "ids", at) };
  },
  async apply(ctx, projectId, current, next, actor) {
    const input = { description: next.description as string, attribute: next.attribute as string, conditions: next.conditions, ids: next.ids };
    if (!current) {
      await ctx.services.segments.create(projectId, { name: next.name, ...input }, actor);
      return;
    }
    const patch = Object.fromEntries(Object.entries(input).filter(([k, v]) => !same(current[k], v)));
    if (Object.keys(patch).length > 0) await ctx.services.segments.update(projectId, next.name, patch, actor);
  },
  remove: (ctx, projectId, name, actor) => ctx.services.segments.remove(projectId, name, actor),
};

const templates: Kind = {
  section: "templates",
  async export(ctx, projectId) {
    const all = await ctx.services.gates.templates.list(projectId);
    return all.filter((t) => !t.builtIn).map((t) => ({ name: t.name, description: t.description, category: t.category, conditions: t.rules })).sort(byName);
  },
  normalize(raw, at) {
    only(raw, ["name", "description", "category", "conditions"], at);
    return { name: raw.name as string, description: text(raw, "description", at), category: text(raw, "category", at, "condition"), conditions: list(raw, "conditions", at) };
  },
  async apply(ctx, projectId, current, next, actor) {
    const input = { description: next.description as string, category: next.category as string, rules: next.conditions };
    if (!current) await ctx.services.gates.templates.create(projectId, { name: next.name, ...input }, actor);
    else if (!same([current.description, current.category, current.conditions], [next.description, next.category, next.conditions])) await ctx.services.gates.templates.update(projectId, next.name, input, actor);
  },
  remove: (ctx, projectId, name, actor) => ctx.services.gates.templates.remove(projectId, name, actor),
};

type KillswitchState = { value: boolean; switches: Record<string, boolean> };

const killswitches: Kind = {
  section: "killswitches",
  async export(ctx, projectId, envs) {
    return (await ctx.services.killswitches.list(projectId))
      .map((k) => ({ name: k.name, description: k.description ?? "", envs: Object.fromEntries(envs.map((env) => [env, { value: k.envs[env].value, switches: sortedKeys(k.envs[env].switches) }])) }))
      .sort(byName);
  },
  normalize(raw, at, envs) {
    only(raw, ["name", "description", "envs"], at);
    const states = envsOf(raw, at, envs, (s, here): KillswitchState => {
      only(s, ["value", "switches"], here);
      if (typeof s.value !== "boolean") fail(`${here}.value`, "true or false");
      const switches = s.switches ?? {};
      if (typeof switches !== "object" || switches === null || Array.isArray(switches) || Object.values(switches).some((v) => typeof v !== "boolean")) fail(`${here}.switches`, "an object of sub-switch keys to true or false");
      return { value: s.value, switches: sortedKeys(switches as Record<string, boolean>) };
    });
    return { name: raw.name as string, description: text(raw, "description", at), envs: states };
  },
  async apply(ctx, projectId, current, next, actor) {
    const k = ctx.services.killswitches;
    if (!current) await k.create(projectId, { name: next.name, description: (next.description as string) || null }, actor);
    else if (current.description !== next.description) await k.updateDescription(projectId, next.name, next.description as string, actor);
    const now = current ? undefined : await k.get(projectId, next.name);
    for (const env of ENVS) {
      const want = envState<KillswitchState>(next, env);
      if (!want) continue;
      const have = envState<KillswitchState>(current, env) ?? { value: now!.envs[env].value, switches: now!.envs[env].switches };
      if (have.value !== want.value) await k.setValue(projectId, next.name, { env, value: want.value }, actor);
      for (const [switchKey, value] of Object.entries(want.switches)) if (have.switches[switchKey] !== value) await k.setSwitch(projectId, next.name, { env, switchKey, value }, actor);
      for (const switchKey of Object.keys(have.switches)) if (!(switchKey in want.switches)) await k.deleteSwitch(projectId, next.name, { env, switchKey }, actor);
    }
  },
  remove: (ctx, projectId, name, actor) => ctx.services.killswitches.remove(projectId, name, actor),
};

const gates: Kind = {
  section: "gates",
  async export(ctx, projectId, envs) {
    return (await ctx.services.gates.list(projectId)).map((g) => ({ name: g.name, description: g.description, envs: Object.fromEntries(envs.map((env) => [env, { rules: g.envs[env].rules }])) })).sort(byName);
  },
  normalize(raw, at, envs) {
    only(raw, ["name", "description", "envs"], at);
    return {
      name: raw.name as string,
      description: text(raw, "description", at),
      envs: envsOf(raw, at, envs, (s, here) => {
        only(s, ["rules"], here);
        return { rules: list(s, "rules", here) };
      }),
    };
  },
  async apply(ctx, projectId, current, next, actor) {
    const g = ctx.services.gates;
    if (!current) await g.create(projectId, { name: next.name, description: next.description as string }, actor);
    else if (current.description !== next.description) await g.updateDescription(projectId, next.name, next.description as string, actor);
    for (const env of ENVS) {
      const want = envState<{ rules: unknown[] }>(next, env);
      if (!want) continue;
      const have = envState<{ rules: unknown[] }>(current, env) ?? { rules: [] };
      if (!same(have.rules, want.rules)) await g.setRules(projectId, next.name, env, want.rules, actor);
    }
  },
  remove: (ctx, projectId, name, actor) => ctx.services.gates.remove(projectId, name, actor),
};

type ConfigState = { value: unknown; rules: unknown[] };

const configs: Kind = {
  section: "configs",
  async export(ctx, projectId, envs) {
    return (await ctx.services.configs.list(projectId))
      .map((c) => ({ name: c.name, description: c.description, schema: c.schema, envs: Object.fromEntries(envs.map((env) => [env, { value: c.envs[env].value, rules: c.envs[env].rules }])) }))
      .sort(byName);
  },
  normalize(raw, at, envs) {
    only(raw, ["name", "description", "schema", "envs"], at);
    if (raw.schema === undefined) fail(`${at}.schema`, "required (a JSON Schema)");
    return {
      name: raw.name as string,
      description: text(raw, "description", at),
      schema: raw.schema,
      envs: envsOf(raw, at, envs, (s, here): ConfigState => {
        only(s, ["value", "rules"], here);
        if (s.value === undefined) fail(`${here}.value`, "required (any JSON value)");
        return { value: s.value, rules: list(s, "rules", here) };
      }),
    };
  },
  async apply(ctx, projectId, current, next, actor) {
    const c = ctx.services.configs;
    const wanted = next.envs as Partial<Record<Env, ConfigState>>;
    if (!current) {
      const first = wanted.prod ?? wanted.staging ?? wanted.dev;
      await c.create(projectId, { name: next.name, schema: next.schema, value: first?.value, description: next.description as string }, actor);
    } else {
      const patch: { schema?: unknown; description?: string } = {};
      if (!same(current.schema, next.schema)) patch.schema = next.schema;
      if (current.description !== next.description) patch.description = next.description as string;
      if (Object.keys(patch).length > 0) await c.patch(projectId, next.name, patch, actor);
    }
    const stored = await c.get(projectId, next.name);
    for (const env of ENVS) {
      const want = wanted[env];
      if (!want) continue;
      const have = stored.envs[env];
      if (same(have.value, want.value) && same(have.rules, want.rules)) continue;
      if (want.rules.length === 0 && have.rules.length === 0) await c.patch(projectId, next.name, { [env]: want.value }, actor);
      else await c.publishState(projectId, next.name, env, want.value, await c.rulesToPublish(projectId, next.name, env, want.rules), actor);
    }
  },
  remove: (ctx, projectId, name, actor) => ctx.services.configs.remove(projectId, name, actor),
};

const universes: Kind = {
  section: "universes",
  async export(ctx, projectId) {
    return (await ctx.services.universes.list(projectId)).map((u) => ({ name: u.name, unit_type: u.unit_type, holdout_range: u.holdout_range })).sort(byName);
  },
  normalize(raw, at) {
    only(raw, ["name", "unit_type", "holdout_range"], at);
    return { name: raw.name as string, unit_type: text(raw, "unit_type", at, "user_id"), holdout_range: raw.holdout_range ?? null };
  },
  async apply(ctx, projectId, current, next, actor) {
    const input = { unit_type: next.unit_type as "user_id", holdout_range: next.holdout_range as number[] | null };
    if (!current) await ctx.services.universes.create(projectId, { name: next.name, ...input }, actor);
    else if (!same([current.unit_type, current.holdout_range], [next.unit_type, next.holdout_range])) await ctx.services.universes.update(projectId, next.name, input, actor);
  },
  remove: (ctx, projectId, name, actor) => ctx.services.universes.remove(projectId, name, actor),
};

const ATTRIBUTE_FIELDS = ["type", "enumValues", "required", "description", "sdkPath", "deprecated"] as const;

const attributes: Kind = {
  section: "attributes",
  async export(ctx, projectId) {
    // Declared ones only: attributes the server inferred from traffic are not definitions.
    return (await ctx.services.attributes.list(projectId))
      .filter((a) => a.source === "manual")
      .map((a) => ({ name: a.name, type: a.type, enumValues: a.enumValues, required: a.required === 1, description: a.description, sdkPath: a.sdkPath, deprecated: a.deprecated === 1 }))
      .sort(byName);
  },
  normalize(raw, at) {
    only(raw, ["name", ...ATTRIBUTE_FIELDS], at);
    return {
      name: raw.name as string,
      type: text(raw, "type", at, "string"),
      enumValues: raw.enumValues ?? null,
      required: raw.required === true,
      description: raw.description ?? null,
      sdkPath: raw.sdkPath ?? null,
      deprecated: raw.deprecated === true,
    };
  },
  async apply(ctx, projectId, current, next, actor) {
    const a = ctx.services.attributes;
    const input = { type: next.type as never, enumValues: next.enumValues as string[] | null, required: next.required as boolean, description: next.description as string | null, sdkPath: next.sdkPath as string | null };
    // An attribute the server inferred from traffic is not exported, but exists: declaring it updates it.
    const inferred = !current && (await a.list(projectId)).some((x) => x.name === next.name);
    if (!current && !inferred) {
      await a.create(projectId, { name: next.name, ...input }, actor);
      if (next.deprecated === true) await a.update(projectId, next.name, { deprecated: true }, actor);
    } else if (inferred || (current && ATTRIBUTE_FIELDS.some((f) => !same(current[f], next[f])))) await a.update(projectId, next.name, { ...input, deprecated: next.deprecated as boolean }, actor);
  },
};

export const KINDS: Record<Section, Kind> = { attributes, events, segments, templates, killswitches, gates, configs, universes, metrics, alerts, experiments };
