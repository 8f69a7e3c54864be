import { useState } from "preact/hooks";
import { apiOf, call } from "../../../web/dashboard/api";
import { CredentialList, type MintDialogProps } from "../../../web/dashboard/credential-list";
import { MintSecretDialog, SelectField, TextField, optionsOf, plainOptions } from "../../../web/dashboard/form-kit";
import type { DashboardModule } from "../../../web/dashboard/registry";
import { ENVS, type Env } from "../../../lib/envs";
import { When } from "../../../web/dashboard/ui";
import type { keyRoutes } from "../routes";
import { BrowserKeySnippets } from "./snippets";

const keyApi = apiOf<ReturnType<typeof keyRoutes>>();
type KeyType = "server" | "browser" | "client" | "admin";
const TYPE_HELP: Record<KeyType, string> = {
  server: "server: for backend SDKs (snapshot, stream, OFREP)",
  browser: "browser: for web and mobile apps (evaluated flags of one env, events, errors)",
  client: "client: for the public intake (bug reports, feature requests)",
  admin: "admin: the admin API, like an owner without the people",
};

function MintKeyDialog(props: MintDialogProps) {
  const [type, setType] = useState<KeyType>("server");
  const [env, setEnv] = useState<Env>("prod");
  const [name, setName] = useState("");
  const [minted, setMinted] = useState<{ key: string; env: string } | null>(null);
  const mint = async () => {
    const created = await call(keyApi.api.admin.keys.post({ type, name: name.trim() || undefined, ...(type === "browser" ? { env } : {}) }));
    setMinted(created.type === "browser" && created.env ? { key: created.key, env: created.env } : null);
    return created.key;
  };
  return (
    <MintSecretDialog
      {...props}
      what="SDK key"
      submitLabel="Create key"
      mint={mint}
      reset={() => {
        setName("");
        setMinted(null);
      }}
      after={minted ? <BrowserKeySnippets origin={location.origin} secret={minted.key} env={minted.env} /> : undefined}
    >
      <SelectField label="Type" value={type} onChange={setType} options={optionsOf(Object.keys(TYPE_HELP) as KeyType[], TYPE_HELP)} />
      {type === "browser" && (
        <SelectField label="Env" hint="The one env this key evaluates; it can read no other." value={env} onChange={setEnv} options={plainOptions(ENVS)} />
      )}
      <TextField label="Name" hint="Tells keys apart in lists, e.g. checkout-api (prod)." value={name} onInput={setName} autoComplete="off" />
    </MintSecretDialog>
  );
}

function KeysPage() {
  return (
    <CredentialList
      title="SDK keys"
      noun="SDK key"
      intro="Secrets are shown once, when a key is created; this list shows only their last four characters."
      caption="Live SDK keys of this project"
      load={() => call(keyApi.api.admin.keys.get())}
      name={(k) => k.name || <span class="muted">unnamed</span>}
      columns={[
        { header: "Type", cell: (k) => k.type },
        { header: "Env", cell: (k) => k.env ?? <span class="muted">any</span> },
        { header: "Key", cell: (k) => <code>{k.maskedKey}</code> },
        { header: "Scopes", cell: (k) => k.scopes.join(", "), class: "small" },
        { header: "Created", cell: (k) => <When iso={k.createdAt} /> },
        { header: "Last used", cell: (k) => <When iso={k.lastUsedAt} /> },
      ]}
      revoke={{
        label: (k) => `Revoke ${k.type} key ${k.name || k.maskedKey}`,
        name: (k) => k.name || k.maskedKey,
        message: <p>Every SDK using this key is refused from now on, on every server within a second. This cannot be undone.</p>,
        confirmLabel: "Revoke key",
        run: (id) => call(keyApi.api.admin.keys({ id }).delete()),
      }}
      mintDialog={MintKeyDialog}
    />
  );
}

export const keysDashboard: DashboardModule = {
  pages: [{ path: "/keys", title: "SDK keys", nav: { label: "SDK keys", order: 60, group: "project" }, empty: { about: "SDK keys let your services (server keys) and your web and mobile apps (browser keys) read this project's flags.", command: "svc sdk keys create --type server --name api" }, view: KeysPage }],
};
