import { useState } from "preact/hooks";
import { apiOf, call } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { ConfirmDialog, Dialog, ErrorMessage, Field, FormActions, Loading, SecretOnce, Status, When, useLoad, useSecretMint } from "../../../web/dashboard/ui";
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
    <>
      <div class="page-head">
        <h1>SDK keys</h1>
        {manage && (
          <button type="button" onClick={() => setMinting(true)}>
            New SDK key
          </button>
        )}
      </div>
      <p class="muted">Secrets are shown once, when a key is created; this list shows only their last four characters.</p>
      <ErrorMessage error={error} />
      <Status message={message} />
      {!data ? (
        !error && <Loading />
      ) : (
        <table>
          <caption class="visually-hidden">Live SDK keys of this project</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Key</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              {manage && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {data.map((k) => (
              <tr key={k.id}>
                <th scope="row">{k.name || <span class="muted">unnamed</span>}</th>
                <td>{k.type}</td>
                <td>
                  <code>{k.maskedKey}</code>
                </td>
                <td class="small">{k.scopes.join(", ")}</td>
                <td>
                  <When iso={k.createdAt} />
                </td>
                <td>
                  <When iso={k.lastUsedAt} />
                </td>
                {manage && (
                  <td>
                    <button type="button" class="danger secondary small" aria-label={`Revoke ${k.type} key ${k.name || k.maskedKey}`} onClick={() => setRevoking({ id: k.id, name: k.name || k.maskedKey })}>
                      Revoke
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
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
    </>
  );
}

export const keysDashboard: DashboardModule = {
  pages: [{ path: "/keys", title: "SDK keys", nav: { label: "SDK keys", order: 60 }, view: KeysPage }],
};
