import { UsageError } from "../lib/config";
import type { ToggleResult } from "../modules/killswitches/service";
import { ENVS, type Env } from "./client";
import { CLIENT_OPTIONS, clientCommand, emit, envFlag, expectPositionals, openClient, rejectFlags, table } from "./client-command";

const onOff = (v: boolean) => (v ? "on" : "off");
const path = (...parts: string[]) => parts.map(encodeURIComponent).join("/");

export const toggleCommand = clientCommand({
  name: "toggle",
  summary: "Flip a killswitch (or one sub-switch) on one env, or set it with --on/--off",
  usage: "svc toggle <name> [--env prod] [--switch KEY] [--on|--off] [--project ID] [--url URL] [--json]",
  examples: ["svc toggle checkout", "svc toggle checkout --env staging --off", "svc toggle checkout --switch new-ui --on"],
  options: { ...CLIENT_OPTIONS, env: { type: "string" }, switch: { type: "string" }, on: { type: "boolean" }, off: { type: "boolean" } },
  positionals: true,
  async run({ values, positionals }) {
    const [name] = expectPositionals(positionals, 1, "svc toggle <name> [--env prod] [--switch KEY] [--on|--off]");
    if (values.on && values.off) throw new UsageError("--on and --off cannot both be given");
    const switchKey = values.switch as string | undefined;
    if (switchKey === "") throw new UsageError("--switch must not be empty");
    const client = openClient(values);
    const env = envFlag(values.env) ?? client.preferredEnv();
    const body = { env, switchKey, value: values.on ? true : values.off ? false : undefined };
    const r = await client.request<ToggleResult>("POST", `/api/admin/killswitches/${path(name!)}/toggle`, { body });
    emit(values.json, r, () => `${name}${r.switchKey ? `/${r.switchKey}` : ""} on ${r.env}: ${onOff(r.previous)} → ${onOff(r.value)} (version ${r.version})`);
    return 0;
  },
});

type ListedKey = { id: string; type: string; name: string; maskedKey: string; createdAt: string; lastUsedAt: string | null };

const SDK_USAGE = "svc sdk keys list | svc sdk keys create [--type server|client|admin] [--name N] | svc sdk keys revoke <id>";

export const sdkCommand = clientCommand({
  name: "sdk",
  summary: "Manage SDK keys: sdk keys list | create | revoke",
  usage: `${SDK_USAGE}   (each takes [--project ID] [--url URL] [--json])`,
  examples: ["svc sdk keys list", "svc sdk keys create --type client --name web", "svc sdk keys revoke key_…"],
  options: { ...CLIENT_OPTIONS, type: { type: "string" }, name: { type: "string" } },
  positionals: true,
  async run({ values, positionals }) {
    const [group, action, ...rest] = positionals;
    if (group !== "keys") throw new UsageError(`expected: ${SDK_USAGE}`);
    switch (action) {
      case "list": {
        expectPositionals(rest, 0, "svc sdk keys list");
        rejectFlags(values, ["type", "name"], "sdk keys list");
        const keys = await openClient(values).request<ListedKey[]>("GET", "/api/admin/keys");
        emit(values.json, keys, () =>
          keys.length === 0 ? "No SDK keys." : table(["ID", "TYPE", "NAME", "KEY", "CREATED", "LAST USED"], keys.map((k) => [k.id, k.type, k.name, k.maskedKey, k.createdAt, k.lastUsedAt])),
        );
        return 0;
      }
      case "create": {
        expectPositionals(rest, 0, "svc sdk keys create [--type server|client|admin] [--name N]");
        const type = (values.type as string | undefined) ?? "server";
        if (!["server", "client", "admin"].includes(type)) throw new UsageError("--type must be one of server, client, admin");
        const created = await openClient(values).request<{ id: string; key: string; type: string; name: string }>("POST", "/api/admin/keys", {
          body: { type, name: values.name },
        });
        emit(values.json, created, () => `Created ${created.type} key ${created.id}${created.name ? ` (${created.name})` : ""}:\n${created.key}\nThis secret is shown only now: store it safely.`);
        return 0;
      }
      case "revoke": {
        const [id] = expectPositionals(rest, 1, "svc sdk keys revoke <id>");
        rejectFlags(values, ["type", "name"], "sdk keys revoke");
        // A secret given instead of the id is neither sent (it would sit in a URL) nor echoed: only its masked form.
        const secret = /^(sdk|svc)_([a-z]+)_/i.exec(id!);
        if (secret) {
          throw new UsageError(
            `that is a secret (${secret[0]}…${id!.slice(-4)}), not a key id; it was not sent. Find the key's id with \`svc sdk keys list\` (its KEY column shows the same masked form) and run \`svc sdk keys revoke <id>\`.`,
          );
        }
        await openClient(values).request("DELETE", `/api/admin/keys/${path(id!)}`);
        emit(values.json, { id, revoked: true }, () => `Revoked ${id}.`);
        return 0;
      }
      default:
        throw new UsageError(`expected: ${SDK_USAGE}`);
    }
  },
});

type EnvValue = { value: unknown; version: number; updatedAt: string };
type DraftValue = { value: unknown; baseVersion: number; updatedAt: string };
export type ConfigRecord = { id: string; name: string; envs: Record<Env, EnvValue>; drafts: Partial<Record<Env, DraftValue>> };

const CONFIG_USAGE = "svc config get <name> [--env E] | svc config set <name> --env E --value JSON [--publish] | svc config publish <name> --env E";

function parseJsonFlag(text: unknown): unknown {
  if (typeof text !== "string") throw new UsageError("--value JSON is required");
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`--value must be JSON (a string value needs quotes: --value '"text"'), got: ${text}`);
  }
}

function requiredEnv(value: unknown): Env {
  const env = envFlag(value);
  if (!env) throw new UsageError(`--env ${ENVS.join("|")} is required`);
  return env;
}

const pretty = (v: unknown) => JSON.stringify(v, null, 2);

export const configCommand = clientCommand({
  name: "config",
  summary: "Read a dynamic config, save a draft, publish it: config get | set | publish",
  usage: `${CONFIG_USAGE}   (each takes [--project ID] [--url URL] [--json])`,
  examples: ["svc config get checkout-limits --env prod", `svc config set checkout-limits --env staging --value '{"max":5}' --publish`, "svc config publish checkout-limits --env prod"],
  options: { ...CLIENT_OPTIONS, env: { type: "string" }, value: { type: "string" }, publish: { type: "boolean" } },
  positionals: true,
  async run({ values, positionals }) {
    const [action, ...rest] = positionals;
    switch (action) {
      case "get": {
        const [name] = expectPositionals(rest, 1, "svc config get <name> [--env E]");
        rejectFlags(values, ["value", "publish"], "config get");
        const env = envFlag(values.env);
        const cfg = await openClient(values).request<ConfigRecord>("GET", `/api/admin/configs/${path(name!)}`);
        if (env) {
          const result = { id: cfg.id, name: cfg.name, env, ...cfg.envs[env], draft: cfg.drafts[env] ?? null };
          emit(values.json, result, () => {
            const lines = [`${cfg.name} on ${env} (version ${result.version}):`, pretty(result.value)];
            if (result.draft) lines.push(`Unpublished draft (from version ${result.draft.baseVersion}):`, pretty(result.draft.value));
            return lines.join("\n");
          });
        } else {
          emit(values.json, cfg, () =>
            ENVS.flatMap((e) => {
              const draft = cfg.drafts[e];
              return [`${e} (version ${cfg.envs[e].version}): ${JSON.stringify(cfg.envs[e].value)}`, ...(draft ? [`  draft: ${JSON.stringify(draft.value)}`] : [])];
            }).join("\n"),
          );
        }
        return 0;
      }
      case "set": {
        const [name] = expectPositionals(rest, 1, "svc config set <name> --env E --value JSON [--publish]");
        const env = requiredEnv(values.env);
        const value = parseJsonFlag(values.value);
        const client = openClient(values);
        const draft = await client.request<{ id: string; env: Env; baseVersion: number; updatedAt: string }>("PUT", `/api/admin/configs/${path(name!)}/drafts`, {
          body: { env, value },
          requireProject: true,
        });
        if (!values.publish) {
          emit(values.json, { draft }, () => `Saved a draft of ${name} on ${env} (from version ${draft.baseVersion}); publish it with \`svc config publish ${name} --env ${env}\`.`);
          return 0;
        }
        const published = await client.request<{ id: string; env: Env; version: number }>("POST", `/api/admin/configs/${path(name!)}/publish`, {
          body: { env },
          requireProject: true,
        });
        emit(values.json, { draft, published }, () => `Published ${name} on ${env}: version ${published.version}.`);
        return 0;
      }
      case "publish": {
        const [name] = expectPositionals(rest, 1, "svc config publish <name> --env E");
        rejectFlags(values, ["value", "publish"], "config publish");
        const env = requiredEnv(values.env);
        const published = await openClient(values).request<{ id: string; env: Env; version: number }>("POST", `/api/admin/configs/${path(name!)}/publish`, {
          body: { env },
          requireProject: true,
        });
        emit(values.json, published, () => `Published ${name} on ${env}: version ${published.version}.`);
        return 0;
      }
      default:
        throw new UsageError(`expected: ${CONFIG_USAGE}`);
    }
  },
});
