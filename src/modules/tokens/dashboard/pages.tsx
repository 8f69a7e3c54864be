import { useState } from "preact/hooks";
import { apiOf, call } from "../../../web/dashboard/api";
import { CredentialList, type MintDialogProps } from "../../../web/dashboard/credential-list";
import { MintSecretDialog, NameField, SelectField } from "../../../web/dashboard/form-kit";
import type { DashboardModule } from "../../../web/dashboard/registry";
import { When } from "../../../web/dashboard/ui";
import type { tokenRoutes } from "../routes";

const tokenApi = apiOf<ReturnType<typeof tokenRoutes>>();
type Access = "read-only" | "read-write";
const ACCESS: { value: Access; text: string }[] = [
  { value: "read-only", text: "read-only: reads everything, changes nothing" },
  { value: "read-write", text: "read-write: also toggles, publishes and edits" },
];

function MintTokenDialog(props: MintDialogProps) {
  const [name, setName] = useState("");
  const [access, setAccess] = useState<Access>("read-only");
  return (
    <MintSecretDialog
      {...props}
      what="API token"
      submitLabel="Create token"
      canSubmit={name.trim() !== ""}
      mint={async () => (await call(tokenApi.api.admin.tokens.post({ name: name.trim(), access }))).token}
      reset={() => setName("")}
      after={<p class="muted small">Use it as SERVICE_CLI_TOKEN in CI.</p>}
    >
      <NameField hint="What uses it, e.g. CI deploy pipeline." value={name} onInput={setName} />
      <SelectField label="Access" value={access} onChange={setAccess} options={ACCESS} />
    </MintSecretDialog>
  );
}

function TokensPage() {
  return (
    <CredentialList
      title="API tokens"
      noun="API token"
      intro="Project tokens for CI and scripts (SERVICE_CLI_TOKEN). A token never mints keys or tokens."
      caption="Live API tokens of this project"
      load={() => call(tokenApi.api.admin.tokens.get())}
      name={(t) => t.name}
      columns={[
        { header: "Access", cell: (t) => t.access },
        { header: "Token", cell: (t) => <code>{t.maskedToken}</code> },
        { header: "Created by", cell: (t) => t.createdBy },
        { header: "Created", cell: (t) => <When iso={t.createdAt} /> },
      ]}
      revoke={{
        label: (t) => `Revoke API token ${t.name}`,
        name: (t) => t.name,
        message: <p>Calls with this token fail from now on. This cannot be undone.</p>,
        confirmLabel: "Revoke token",
        run: (id) => call(tokenApi.api.admin.tokens({ id }).delete()),
      }}
      mintDialog={MintTokenDialog}
    />
  );
}

export const tokensDashboard: DashboardModule = {
  pages: [{ path: "/tokens", title: "API tokens", nav: { label: "API tokens", order: 70, group: "project" }, empty: { about: "API tokens let scripts and CI call the admin API without a person signing in.", command: "svc tokens create ci-deploy --access read-write" }, view: TokensPage }],
};
