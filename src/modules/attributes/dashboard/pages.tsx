import { useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { ConfirmDialog, ErrorMessage, Link, Loading, SearchBox, Status, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
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
  const [q, setQ] = useState("");
  const [dialog, setDialog] = useState<{ editing: Attribute | null } | null>(null);
  const [deprecating, setDeprecating] = useState<Attribute | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { data, error: loadError, reload } = useLoad(() => call(attributeApi.api.admin.attributes.get({ query: {} })), [session.project.id]);
  useLiveReload(reload);
  const needle = q.toLowerCase();
  const shown = data?.filter((a) => !q || a.name.toLowerCase().includes(needle) || (a.description ?? "").toLowerCase().includes(needle));

  const setDeprecated = async (a: Attribute, deprecated: boolean) => {
    await call(attributeApi.api.admin.attributes({ id: a.id }).patch({ deprecated }));
    await reload();
    setError(null);
    setMessage(deprecated ? `Deprecated ${a.name}: gate rules naming it now come with a warning` : `Restored ${a.name}`);
  };

  return (
    <>
      <div class="page-head">
        <h1>Attributes</h1>
        {writable && (
          <button type="button" onClick={() => setDialog({ editing: null })}>
            Declare attribute
          </button>
        )}
      </div>
      <p class="muted">
        The context attributes <Link href="/gates">gates</Link> target: declared here (manual), or recorded when an evaluation context carries them (auto).
      </p>
      <SearchBox label="Search attributes" value={q} onInput={setQ} />
      <ErrorMessage error={loadError ?? error} />
      <Status message={message} />
      {!data ? (
        !loadError && <Loading />
      ) : shown!.length === 0 ? (
        <p class="muted">{data.length === 0 ? "No attributes yet: declare one, or evaluate a gate with a context." : `No attribute matches “${q}”.`}</p>
      ) : (
        <table>
          <caption class="visually-hidden">Attributes of this project with their type, values, source, when last seen and whether deprecated</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Enum values</th>
              <th scope="col">Source</th>
              <th scope="col">Last seen</th>
              <th scope="col">Deprecated</th>
              {writable && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {shown!.map((a) => (
              <tr key={a.id}>
                <th scope="row">
                  <span class="mono">{a.name}</span>
                  {a.required === 1 && <span class="muted small"> · required</span>}
                  {a.description && <div class="muted small">{a.description}</div>}
                  {a.sdkPath && <div class="muted small">SDK path: <code>{a.sdkPath}</code></div>}
                </th>
                <td>{a.type}</td>
                <td>{a.enumValues?.length ? a.enumValues.join(", ") : <span class="muted">none</span>}</td>
                <td>{a.source}</td>
                <td>
                  <When iso={a.lastSeenAt} />
                </td>
                <td>{a.deprecated === 1 ? "deprecated" : <span class="muted">no</span>}</td>
                {writable && (
                  <td>
                    <div class="row">
                      <button type="button" class="secondary small" aria-label={`Edit attribute ${a.name}`} onClick={() => setDialog({ editing: a })}>
                        Edit
                      </button>
                      {a.deprecated === 1 ? (
                        <button
                          type="button"
                          class="secondary small"
                          aria-label={`Restore attribute ${a.name}`}
                          onClick={() => setDeprecated(a, false).catch((err) => setError(describeError(err)))}
                        >
                          Restore
                        </button>
                      ) : (
                        <button type="button" class="danger secondary small" aria-label={`Deprecate attribute ${a.name}`} onClick={() => setDeprecating(a)}>
                          Deprecate
                        </button>
                      )}
                    </div>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
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
    </>
  );
}

function AttributesCard() {
  const session = useSession();
  const { data } = useLoad(() => call(attributeApi.api.admin.attributes.get({ query: {} })), [session.project.id]);
  if (!data) return <Loading />;
  return (
    <>
      <Link href="/attributes">
        <strong>{data.length}</strong> attributes
      </Link>
      <span class="muted"> · {data.filter((a) => a.source === "auto").length} seen but not declared</span>
    </>
  );
}

export const attributesDashboard: DashboardModule = {
  pages: [{ path: "/attributes", title: "Attributes", nav: { label: "Attributes", order: 35 }, view: AttributeList }],
  overview: AttributesCard,
};
