import type { AppOptions } from "../../lib/module";
import { type ResolvedConnectorOptions, connectorOptionsFromEnv, resolveConnectorOptions } from "./options";
import { SecretBox } from "./secrets";

type ConnectorSettings = { options: ResolvedConnectorOptions; box: SecretBox };
const opened = new WeakMap<AppOptions, ConnectorSettings>();

/**
 * The connectors' settings and secret box, as their service opens them: SERVICE_* variables over the server's
 * options; SERVICE_SECRET_KEY, else `<data>/secret.key` (made on first use). Throws on a bad key or setting, so
 * a server calls it at start: its connectors service is made after its first answer (src/app.ts, services on
 * demand), and a bad key must stop the start as it always has. Opened once per server (its options object): the
 * service made later takes what the start opened, without reading the key file and hashing the key again.
 */
export function openConnectorSettings(options: AppOptions): ConnectorSettings {
  let settings = opened.get(options);
  if (!settings) {
    const dataDir = options.outboxPath ? options.outboxPath.replace(/[\\/][^\\/]*$/, "") : undefined;
    const resolved = resolveConnectorOptions(connectorOptionsFromEnv(process.env), options.connectors, dataDir);
    settings = { options: resolved, box: SecretBox.open(resolved) };
    opened.set(options, settings);
  }
  return settings;
}
