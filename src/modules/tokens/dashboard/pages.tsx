import { useState } from "preact/hooks";
import { apiOf, call } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { ConfirmDialog, Dialog, ErrorMessage, Field, FormActions, Loading, SecretOnce, Status, When, useLoad, useSecretMint } from "../../../web/dashboard/ui";
import type { tokenRoutes } from "../routes";

const tokenApi = apiOf<ReturnType<typeof tokenRoutes>>();
type Access = "read-only" | "read-write";

function MintTokenDialog({ open, onClose, onMinted }: { open: boolean; onClose: () => void; onMinted: () => Promise<void> }) {
  const [name, setName] = useState("");
  const [access, setAccess] = useState<Access>("read-only");
  const { secret, error, busy, close, submit } = useSecretMint(async () => (await call(tokenApi.api.admin.tokens.post({ name: name.trim(), access }))).token, onMinted, () => {
    setName("");
    onClose();
  });
  return (
    <Dialog open={open} title={secret ? "Your new API token" : "New API token"} onClose={close}>
      {secret ? (
        <>
          <SecretOnce secret={secret} what="API token" />
          <p class="muted small">Use it as SERVICE_CLI_TOKEN in CI.</p>
          <div class="actions">
            <button type="button" onClick={close}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          <Field label="Name" hint="What uses it, e.g. CI deploy pipeline.">
            {(attrs) => <input {...attrs} required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} autoComplete="off" />}
          </Field>
          <Field label="Access">
            {(attrs) => (
              <select {...attrs} value={access} onChange={(e) => setAccess((e.target as HTMLSelectElement).value as Access)}>
                <option value="read-only">read-only: reads everything, changes nothing</option>
                <option value="read-write">read-write: also toggles, publishes and edits</option>
              </select>
            )}
          </Field>
          <FormActions error={error} onCancel={close} submitLabel="Create token" disabled={busy || !name.trim()} />
        </form>
      )}
    </Dialog>
  );
}

function TokensPage() {
  const session = useSession();
  const manage = can(session, "manage");
  const { data, error, reload } = useLoad(() => call(tokenApi.api.admin.tokens.get()), [session.project.id]);
  const [minting, setMinting] = useState(false);
  const [revoking, setRevoking] = useState<{ id: string; name: string } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  return (
    <>
      <div class="page-head">
        <h1>API tokens</h1>
        {manage && (
          <button type="button" onClick={() => setMinting(true)}>
            New API token
          </button>
        )}
      </div>
      <p class="muted">Project tokens for CI and scripts (SERVICE_CLI_TOKEN). A token never mints keys or tokens.</p>
      <ErrorMessage error={error} />
      <Status message={message} />
      {!data ? (
        !error && <Loading />
      ) : data.length === 0 ? (
        <p class="muted">No API tokens yet.</p>
      ) : (
        <table>
          <caption class="visually-hidden">Live API tokens of this project</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Access</th>
              <th scope="col">Token</th>
              <th scope="col">Created by</th>
              <th scope="col">Created</th>
              {manage && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {data.map((t) => (
              <tr key={t.id}>
                <th scope="row">{t.name}</th>
                <td>{t.access}</td>
                <td>
                  <code>{t.maskedToken}</code>
                </td>
                <td>{t.createdBy}</td>
                <td>
                  <When iso={t.createdAt} />
                </td>
                {manage && (
                  <td>
                    <button type="button" class="danger secondary small" aria-label={`Revoke API token ${t.name}`} onClick={() => setRevoking({ id: t.id, name: t.name })}>
                      Revoke
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <MintTokenDialog open={minting} onClose={() => setMinting(false)} onMinted={reload} />
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke ${revoking?.name ?? ""}?`}
        message={<p>Calls with this token fail from now on. This cannot be undone.</p>}
        confirmLabel="Revoke token"
        danger
        onConfirm={async () => {
          await call(tokenApi.api.admin.tokens({ id: revoking!.id }).delete());
          setMessage(`Revoked ${revoking!.name}`);
          await reload();
        }}
        onClose={() => setRevoking(null)}
      />
    </>
  );
}

export const tokensDashboard: DashboardModule = {
  pages: [{ path: "/tokens", title: "API tokens", nav: { label: "API tokens", order: 70 }, view: TokensPage }],
};
