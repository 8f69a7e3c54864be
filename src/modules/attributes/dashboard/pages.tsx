import { useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { OverviewCard } from "../../../web/dashboard/overview-card";
import { ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { ConfirmDialog, Link, When } from "../../../web/dashboard/ui";
import { type Attribute, attributeApi } from "./client";
import { AttributeDialog } from "./form";

/**
 * The attribute catalog: declared attributes (manual) and those seen in
 * evaluation contexts (auto), with their type, enum values and when an
 * evaluation last carried them. Declare, edit, deprecate and restore.
 */
function AttributeList() {
  const session = useSession();
  const writable = can(session, "write");
  const [dialog, setDialog] = useState<{ editing: Attribute | null } | null>(null);
  const [deprecating, setDeprecating] = useState<Attribute | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { data, error: loadError, reload } = useLiveList(() => call(attributeApi.api.admin.attributes.get({ query: {} })), [session.project.id]);

  const setDeprecated = async (a: Attribute, deprecated: boolean) => {
    await call(attributeApi.api.admin.attributes({ id: a.id }).patch({ deprecated }));
    await reload();
    setError(null);
    setMessage(deprecated ? `Deprecated ${a.name}: gate rules naming it now come with a warning` : `Restored ${a.name}`);
  };

  return (
    <ResourceList
      title="Attributes"
      noun="attribute"
      intro={
        <>
          The context attributes <Link href="/gates">gates</Link> target: declared here (manual), or recorded when an evaluation context carries them (auto).
        </>
      }
      items={data}
      error={loadError ?? error}
      message={message}
      create={writable && { label: "Declare attribute", onClick: () => setDialog({ editing: null }) }}
      searchText={(a) => [a.name, a.description]}
      empty="No attributes yet: declare one, or evaluate a gate with a context."
      caption="Attributes of this project with their type, values, source, when last seen and whether deprecated"
      rowKey={(a) => a.id}
      name={(a) => (
        <>
          <span class="mono">{a.name}</span>
          {a.required === 1 && <span class="muted small"> · required</span>}
          {a.description && <div class="muted small">{a.description}</div>}
          {a.sdkPath && (
            <div class="muted small">
              SDK path: <code>{a.sdkPath}</code>
            </div>
          )}
        </>
      )}
      columns={[
        { header: "Type", cell: (a) => a.type },
        { header: "Enum values", cell: (a) => (a.enumValues?.length ? a.enumValues.join(", ") : <span class="muted">none</span>) },
        { header: "Source", cell: (a) => a.source },
        { header: "Last seen", cell: (a) => <When iso={a.lastSeenAt} /> },
        { header: "Deprecated", cell: (a) => (a.deprecated === 1 ? "deprecated" : <span class="muted">no</span>) },
      ]}
      actions={
        writable &&
        ((a) => (
          <div class="row">
            <button type="button" class="secondary small" aria-label={`Edit attribute ${a.name}`} onClick={() => setDialog({ editing: a })}>
              Edit
            </button>
            {a.deprecated === 1 ? (
              <button type="button" class="secondary small" aria-label={`Restore attribute ${a.name}`} onClick={() => setDeprecated(a, false).catch((err) => setError(describeError(err)))}>
                Restore
              </button>
            ) : (
              <button type="button" class="danger secondary small" aria-label={`Deprecate attribute ${a.name}`} onClick={() => setDeprecating(a)}>
                Deprecate
              </button>
            )}
          </div>
        ))
      }
    >
      <AttributeDialog
        open={dialog !== null}
        editing={dialog?.editing ?? null}
        onClose={() => setDialog(null)}
        onSaved={async (saved) => {
          const verb = dialog?.editing ? "Saved" : "Declared";
          setDialog(null);
          await reload();
          setError(null);
          setMessage(`${verb} attribute ${saved.name}`);
        }}
      />
      <ConfirmDialog
        open={deprecating !== null}
        title={`Deprecate ${deprecating?.name ?? ""}?`}
        message={<p>Gates keep working, but publishing rules that name it comes back with a warning. You can restore it later.</p>}
        confirmLabel="Deprecate attribute"
        danger
        onConfirm={() => setDeprecated(deprecating!, true)}
        onClose={() => setDeprecating(null)}
      />
    </ResourceList>
  );
}

function AttributesCard() {
  return (
    <OverviewCard
      load={() => call(attributeApi.api.admin.attributes.get({ query: {} }))}
      href="/attributes"
      main={(data) => (
        <>
          <strong>{data.length}</strong> attributes
        </>
      )}
      more={(data) => `${data.filter((a) => a.source === "auto").length} seen but not declared`}
    />
  );
}

export const attributesDashboard: DashboardModule = {
  pages: [{ path: "/attributes", title: "Attributes", nav: { label: "Attributes", order: 35, group: "release" }, empty: { about: "Attributes are the facts about a user that gate rules test (plan, country…): declared here, or learned when a gate is evaluated with a context.", command: "svc attributes create plan --type enum --enum free,pro,enterprise" }, view: AttributeList }],
  overview: AttributesCard,
};
