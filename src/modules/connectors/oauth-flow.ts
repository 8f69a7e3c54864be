import { recordAudit } from "../../lib/audit";
import { validation } from "../../lib/errors";
import { nowIso, pkceChallenge, randomBase62, sha256Hex } from "../../lib/ids";
import { OUTBOX_CHANNEL } from "../../lib/outbox";
import type { SendTarget } from "./adapters";
import type { ConnectorsCore } from "./core";
import { OAuthError, type OAuthTokens, authorizeUrl, exchangeCode, refreshTokens } from "./oauth";
import { OAUTH_ENV, type OAuthProvider } from "./options";
import { type Credentials, OAUTH_PROVIDERS, PROVIDER_SPECS, type Provider } from "./providers";
import { connectorById, updateConnector } from "./store";
import { ACTIONS, type Actor, OAUTH_CALLBACK_PATH, OAUTH_STATE_TTL_MS, type OAuthBinding, type OAuthBrowser, lockScope } from "./types";

/**
 * Connecting an OAuth/app connector: starting the flow (state + PKCE bound
 * to who started it), completing it on the vendor's redirect, and keeping
 * the access token fresh for the drainer.
 */
export class ConnectorsOAuthFlow {
  private readonly refreshing = new Map<string, Promise<OAuthTokens>>();

  constructor(private readonly core: ConnectorsCore) {}

  private get ctx() {
    return this.core.ctx;
  }

  /** Starts the OAuth flow of an OAuth/app connector: the vendor's authorize URL to send the browser to (state + PKCE, 10 minutes). */
  async start(projectId: string, id: string, p: { origin: string; returnTo?: string; binding: OAuthBinding }, actor: Actor): Promise<{ url: string; expiresAt: string }> {
    const row = await this.core.find(this.ctx.store, projectId, id);
    const spec = PROVIDER_SPECS[row.provider as Provider];
    if (spec.kind !== "oauth") throw validation(`A ${row.provider} connector has no OAuth flow`, `id: only ${OAUTH_PROVIDERS.join(", ")} connect through OAuth`);
    const provider = row.provider as OAuthProvider;
    const client = this.core.options.oauth[provider];
    if (!client) {
      const vendor = OAUTH_ENV[provider];
      throw validation(`OAuth for ${provider} is not configured on this server`, `provider: set SERVICE_${vendor}_CLIENT_ID and SERVICE_${vendor}_CLIENT_SECRET (the OAuth app's client) and restart`);
    }
    if (p.returnTo !== undefined && !/^\/(?!\/)[^\s\\]*$/.test(p.returnTo)) throw validation("returnTo must be a path on this server", "returnTo: a path such as /dashboard/connectors");
    const state = randomBase62(32);
    const verifier = randomBase62(64);
    const stateHash = sha256Hex(state);
    const redirectUri = `${p.origin}${OAUTH_CALLBACK_PATH}`;
    const expiresAt = Date.now() + OAUTH_STATE_TTL_MS;
    await this.ctx.store.write(async (tx) => {
      await tx.run("DELETE FROM connector_oauth_states WHERE expires_at < ?", Date.now());
      await tx.run(
        "INSERT INTO connector_oauth_states (state_hash, connector_id, project_id, verifier, redirect_uri, return_to, actor_email, actor_type, expires_at, session_id, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        stateHash,
        row.id,
        projectId,
        (this.core.warnIfKeyFileOnPostgres(), this.core.box.seal(verifier, `oauth:${stateHash}`)),
        redirectUri,
        p.returnTo ?? null,
        actor.email,
        actor.type,
        expiresAt,
        p.binding.sessionId,
        p.binding.userId,
      );
    });
    return { url: authorizeUrl(provider, this.core.options.urls, client, { redirectUri, state, challenge: pkceChallenge(verifier) }), expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * The vendor's redirect back: the state (single use, 10 minutes) names the
   * connector and the PKCE verifier; the code is exchanged for tokens, which
   * are sealed onto the connector, and the connector is enabled.
   *
   * Only in the browser that started it: the state is bound to the signed-in
   * session that started the flow (or, started with a device-flow token, to
   * its person; with an admin key, to anyone signed in who administers the
   * project). Otherwise an attacker could start a flow on their own
   * connector and have a victim's browser finish it, putting the victim's
   * vendor account on the attacker's connector: such a callback is refused,
   * its code never exchanged, nothing stored.
   */
  async callback(p: { state?: string; code?: string; error?: string }, browser: OAuthBrowser | null): Promise<{ connectorId: string | null; returnTo: string | null; error: string | null }> {
    if (!p.state) return { connectorId: null, returnTo: null, error: "The authorization answer has no state; start again from the dashboard" };
    const stateHash = sha256Hex(p.state);
    const pending = await this.ctx.store.write(async (tx) => {
      const row = await tx.one<{
        connector_id: string;
        project_id: string;
        verifier: string;
        redirect_uri: string;
        return_to: string | null;
        actor_email: string;
        actor_type: string;
        expires_at: number | string;
        session_id: string | null;
        user_id: string | null;
      }>("SELECT connector_id, project_id, verifier, redirect_uri, return_to, actor_email, actor_type, expires_at, session_id, user_id FROM connector_oauth_states WHERE state_hash = ?", stateHash);
      if (row) await tx.run("DELETE FROM connector_oauth_states WHERE state_hash = ?", stateHash);
      return row;
    });
    if (!pending || Number(pending.expires_at) < Date.now()) return { connectorId: null, returnTo: null, error: "This authorization link is unknown, used or expired; start again from the dashboard" };
    if (!browser) {
      return { connectorId: null, returnTo: null, error: "Connecting must finish in the browser, signed in to svc, that started it. Nothing was stored: sign in and start connecting again from the dashboard" };
    }
    const same = pending.session_id !== null ? browser.sessionId === pending.session_id : pending.user_id !== null ? browser.userId === pending.user_id : await browser.administers(pending.project_id);
    if (!same) {
      this.ctx.log.warn("connector OAuth callback from another session refused", { connectorId: pending.connector_id });
      return { connectorId: null, returnTo: null, error: "This authorization was started by someone else or in another browser session. Nothing was stored: start connecting again from the dashboard yourself" };
    }
    const back = { connectorId: pending.connector_id, returnTo: pending.return_to };
    if (p.error || !p.code) return { ...back, error: `The provider refused the authorization: ${(p.error ?? "no code").slice(0, 100)}` };
    const connector = await connectorById(this.ctx.store, pending.connector_id);
    if (!connector) return { ...back, error: "The connector was deleted meanwhile" };
    const provider = connector.provider as OAuthProvider;
    const client = this.core.options.oauth[provider];
    if (!client) return { ...back, error: `OAuth for ${provider} is not configured on this server` };
    let tokens: OAuthTokens;
    try {
      const verifier = this.core.box.open(pending.verifier, `oauth:${stateHash}`);
      tokens = await exchangeCode(provider, this.core.options.urls, client, { code: p.code, redirectUri: pending.redirect_uri, verifier }, (url, init) => this.core.fetch(url, init));
    } catch (err) {
      this.ctx.log.warn("connector OAuth code exchange failed", { connectorId: connector.id, provider, error: String(err) });
      return { ...back, error: err instanceof OAuthError ? err.message : "The code could not be exchanged for a token" };
    }
    const actor = { email: pending.actor_email, type: pending.actor_type };
    await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(pending.project_id));
      const row = await connectorById(tx, connector.id);
      if (!row) return;
      await updateConnector(tx, { ...row, ...this.core.sealed(row.id, tokens as unknown as Credentials), enabled: 1, updated_at: nowIso() });
      await recordAudit(tx, { projectId: pending.project_id, action: ACTIONS.connect, subjectId: row.id, subjectName: row.name, actor, detail: { provider, scope: tokens.scope ?? null, expiresAt: tokens.expiresAt ? new Date(tokens.expiresAt).toISOString() : null } });
      tx.announce(OUTBOX_CHANNEL, row.id);
    });
    return { ...back, error: null };
  }

  /** The OAuth access token to send with, refreshed (once per connector at a time) when it expires within a minute. */
  async token(target: SendTarget): Promise<string> {
    const tokens = target.credentials as unknown as OAuthTokens;
    if (typeof tokens.accessToken !== "string") throw new OAuthError(`${target.provider} is not connected: run its OAuth flow (POST /api/admin/connectors/${target.id}/oauth/start)`);
    if (tokens.expiresAt === undefined || Number(tokens.expiresAt) - Date.now() > 60_000) return tokens.accessToken;
    let running = this.refreshing.get(target.id);
    if (!running) {
      running = this.refresh(target, tokens).finally(() => this.refreshing.delete(target.id));
      this.refreshing.set(target.id, running);
    }
    const fresh = await running;
    target.credentials = fresh as unknown as Credentials;
    return fresh.accessToken;
  }

  private async refresh(target: SendTarget, tokens: OAuthTokens): Promise<OAuthTokens> {
    const provider = target.provider as OAuthProvider;
    const client = this.core.options.oauth[provider];
    if (!client) throw new OAuthError(`OAuth for ${provider} is not configured on this server: cannot refresh the token`);
    const fresh = await refreshTokens(provider, this.core.options.urls, client, tokens, (url, init) => this.core.fetch(url, init));
    await this.ctx.store.write(async (tx) => {
      const row = await connectorById(tx, target.id);
      if (row) await updateConnector(tx, { ...row, ...this.core.sealed(row.id, fresh as unknown as Credentials), updated_at: nowIso() });
    });
    return fresh;
  }
}
