import { useState } from "preact/hooks";
import { apiOf, call } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { ResourceList } from "../../../web/dashboard/resource-list";
import { ConfirmDialog, Dialog, Field, FormActions, SecretOnce, When, useLoad, useSecretMint } from "../../../web/dashboard/ui";
import type { keyRoutes } from "../routes";

const keyApi = apiOf<ReturnType<typeof keyRoutes>>();
type KeyType = "server" | "client" | "admin";
const TYPE_HELP: Record<KeyType, string> = {
  server: "server: for backend SDKs (snapshot, stream, OFREP)",
  client: "client: for browsers and apps (public intake)",
  admin: "admin: the admin API, like an owner without the people",
};

function MintKeyDialog({ open, onClose, onMinted }: { open: boolean; onClose: () => void; onMinted: () => Promise<void> }) {
  const [type, setType] = useState<KeyType>("server");
  const [name, setName] = useState("");
  const { secret, error, busy, close, submit } = useSecretMint(async () => (await call(keyApi.api.admin.keys.post({ type, name: name.trim() || undefined }))).key, onMinted, () => {
    setName("");
    onClose();
  });
  return (
    <Dialog open={open} title={secret ? "Your new SDK key" : "New SDK key"} onClose={close}>
      {secret ? (
        <>
          <SecretOnce secret={secret} what="SDK key" />
          <div class="actions">
            <button type="button" onClick={close}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          <Field label="Type">
            {(attrs) => (
              <select {...attrs} value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value as KeyType)}>
                {(Object.keys(TYPE_HELP) as KeyType[]).map((t) => (
                  <option key={t} value={t}>
                    {TYPE_HELP[t]}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Name" hint="Tells keys apart in lists, e.g. checkout-api (prod).">
            {(attrs) => <input {...attrs} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} autoComplete="off" />}
          </Field>
          <FormActions error={error} onCancel={close} submitLabel="Create key" disabled={busy} />
        </form>
      )}
    </Dialog>
  );
}

function KeysPage() {
  const session = useSession();
  const manage = can(session, "manage");
  const { data, error, reload } = useLoad(() => call(keyApi.api.admin.keys.get()), [session.project.id]);
  const [minting, setMinting] = useState(false);
  const [revoking, setRevoking] = useState<{ id: string; name: string } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  return (
    <ResourceList
      title="SDK keys"
      noun="SDK key"
      intro="Secrets are shown once, when a key is created; this list shows only their last four characters."
      items={data}
      error={error}
      message={message}
      create={manage && { label: "New SDK key", onClick: () => setMinting(true) }}
      caption="Live SDK keys of this project"
      rowKey={(k) => k.id}
      name={(k) => k.name || <span class="muted">unnamed</span>}
      columns={[
        { header: "Type", cell: (k) => k.type },
        { header: "Key", cell: (k) => <code>{k.maskedKey}</code> },
        { header: "Scopes", cell: (k) => k.scopes.join(", "), class: "small" },
        { header: "Created", cell: (k) => <When iso={k.createdAt} /> },
        { header: "Last used", cell: (k) => <When iso={k.lastUsedAt} /> },
      ]}
      actions={
        manage &&
        ((k) => (
          <button type="button" class="danger secondary small" aria-label={`Revoke ${k.type} key ${k.name || k.maskedKey}`} onClick={() => setRevoking({ id: k.id, name: k.name || k.maskedKey })}>
            Revoke
          </button>
        ))
      }
    >
      <MintKeyDialog open={minting} onClose={() => setMinting(false)} onMinted={reload} />
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke ${revoking?.name ?? ""}?`}
        message={<p>Every SDK using this key is refused from now on, on every server within a second. This cannot be undone.</p>}
        confirmLabel="Revoke key"
        danger
        onConfirm={async () => {
          await call(keyApi.api.admin.keys({ id: revoking!.id }).delete());
          setMessage(`Revoked ${revoking!.name}`);
          await reload();
        }}
        onClose={() => setRevoking(null)}
      />
    </ResourceList>
  );
}

export const keysDashboard: DashboardModule = {
  pages: [{ path: "/keys", title: "SDK keys", nav: { label: "SDK keys", order: 60, group: "project" }, empty: { about: "SDK keys let your services (server keys) and web pages (client keys) read this project's flags.", command: "svc sdk keys create --type server --name api" }, view: KeysPage }],
};
