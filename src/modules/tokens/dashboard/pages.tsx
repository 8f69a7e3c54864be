import { useState } from "preact/hooks";
import { apiOf, call } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { ResourceList } from "../../../web/dashboard/resource-list";
import { ConfirmDialog, Dialog, Field, FormActions, SecretOnce, When, useLoad, useSecretMint } from "../../../web/dashboard/ui";
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
    <ResourceList
      title="API tokens"
      noun="API token"
      intro="Project tokens for CI and scripts (SERVICE_CLI_TOKEN). A token never mints keys or tokens."
      items={data}
      error={error}
      message={message}
      create={manage && { label: "New API token", onClick: () => setMinting(true) }}
      caption="Live API tokens of this project"
      rowKey={(t) => t.id}
      name={(t) => t.name}
      columns={[
        { header: "Access", cell: (t) => t.access },
        { header: "Token", cell: (t) => <code>{t.maskedToken}</code> },
        { header: "Created by", cell: (t) => t.createdBy },
        { header: "Created", cell: (t) => <When iso={t.createdAt} /> },
      ]}
      actions={
        manage &&
        ((t) => (
          <button type="button" class="danger secondary small" aria-label={`Revoke API token ${t.name}`} onClick={() => setRevoking({ id: t.id, name: t.name })}>
            Revoke
          </button>
        ))
      }
    >
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
    </ResourceList>
  );
}

export const tokensDashboard: DashboardModule = {
  pages: [{ path: "/tokens", title: "API tokens", nav: { label: "API tokens", order: 70, group: "project" }, empty: { about: "API tokens let scripts and CI call the admin API without a person signing in.", command: "svc tokens create ci-deploy --access read-write" }, view: TokensPage }],
};
