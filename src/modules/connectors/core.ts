import { notFound, validation } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import { TargetRefused, checkTarget, outgoingFetch } from "../../lib/outgoing";
import type { Queryable } from "../../lib/store";
import type { ResolvedConnectorOptions } from "./options";
import { type Credentials, PROVIDER_SPECS, type Provider } from "./providers";
import type { SecretBox } from "./secrets";
import { openConnectorSettings } from "./settings";
import { type ConnectorRow, connectorsNamed, findConnector } from "./store";
import { notConnector } from "./types";

/**
 * What every connectors flow stands on: the resolved options, the secret box
 * that seals credentials, and finding a connector by id or name. The service
 * (CRUD), the OAuth flow and the delivery flow share one instance.
 */
export class ConnectorsCore {
  readonly options: ResolvedConnectorOptions;
  readonly box: SecretBox;
  private keyFileWarned = false;

  constructor(readonly ctx: ServiceContext) {
    ({ options: this.options, box: this.box } = openConnectorSettings(ctx.options));
  }

  /**
   * Said once, when a secret is first sealed (not at every start, where most
   * installs have no connector yet): on PostgreSQL several servers share the
   * rows, and a key file is this server's alone.
   */
  warnIfKeyFileOnPostgres(): void {
    if (this.keyFileWarned || this.box.source !== "file" || this.ctx.store.engine !== "postgres") return;
    this.keyFileWarned = true;
    this.ctx.log.warn("connector credentials are sealed with this server's own key file; servers sharing this PostgreSQL must share one key: set SERVICE_SECRET_KEY on each", { keyFile: this.box.path, keyId: this.box.keyId });
  }

  /**
   * A webhook's URL as a target: VALIDATION when it names or resolves to a
   * private, loopback, link-local … address or a metadata name (lib/outgoing.ts).
   * A name that does not resolve now is taken: the delivery checks it again.
   */
  async checkWebhookUrl(url: unknown): Promise<void> {
    if (typeof url !== "string") return;
    try {
      await checkTarget(url.trim(), { allowPrivate: this.options.allowPrivateTargets }, { mustResolve: false });
    } catch (err) {
      if (err instanceof TargetRefused) throw validation("config.url is not an allowed target", `config.url: ${err.message}`);
      throw err;
    }
  }

  /** The OAuth token calls go to the operator's vendor URLs: no target check, but the same answer cap and no redirects. */
  fetch(url: string, init: RequestInit): Promise<Response> {
    return outgoingFetch(url, init, { timeoutMs: this.options.sendTimeoutMs });
  }

  // ---- Credentials and lookups

  openCredentials(row: Pick<ConnectorRow, "id" | "credentials">): Credentials {
    return this.box.openJson<Credentials>(row.credentials!, row.id);
  }

  /** The credentials columns for a connector: sealed JSON and the field names (null when there are none). */
  sealed(connectorId: string, credentials: Credentials): Pick<ConnectorRow, "credentials" | "credential_fields"> {
    const present = Object.fromEntries(Object.entries(credentials).filter(([, v]) => v !== undefined));
    const fields = Object.keys(present).filter((k) => k !== "expiresAt" && k !== "scope");
    if (fields.length === 0) return { credentials: null, credential_fields: "[]" };
    this.warnIfKeyFileOnPostgres();
    return { credentials: this.box.sealJson(present, connectorId), credential_fields: JSON.stringify(fields) };
  }

  checkEnableable(row: ConnectorRow): void {
    const spec = PROVIDER_SPECS[row.provider as Provider];
    if (spec.kind === "oauth" && row.credentials === null) {
      throw validation(`Connect the ${row.provider} connector before enabling it`, `enabled: no credentials yet; run its OAuth flow (POST /api/admin/connectors/${row.id}/oauth/start)`);
    }
  }

  /** By id, else by name when exactly one connector of the project has it. */
  async find(q: Queryable, projectId: string, idOrName: string): Promise<ConnectorRow> {
    const row = await findConnector(q, projectId, idOrName);
    if (row) return row;
    const named = await connectorsNamed(q, projectId, idOrName);
    if (named.length === 1) return named[0]!;
    if (named.length > 1) throw notFound(`Several connectors are named ${idOrName}`, "id: use the connector's id (svc connectors list shows it)");
    throw notConnector(idOrName);
  }
}
