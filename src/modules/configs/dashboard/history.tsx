import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { DataTable } from "../../../web/dashboard/data-table";
import { prettyJson } from "../../../web/dashboard/json-editor";
import { ConfirmDialog, ErrorMessage, Status, When, useLoad } from "../../../web/dashboard/ui";
import { type Env, configApi } from "./client";
import { versionDiff } from "./history-diff";

/**
 * One env's published versions, newest first, each earlier one with a
 * rollback: its value published again as the env's next version (as gates
 * and killswitches roll back), asked first on every env since SDKs see it at once.
 */
export function ConfigHistory(props: { name: string; env: Env; current: number; writable: boolean; onChanged: () => Promise<void> }) {
  const api = configApi.api.admin.configs({ id: props.name });
  const { data, error, reload } = useLoad(() => call(api.history.get({ query: { env: props.env, limit: "20" } })), [props.name, props.env, props.current]);
  const [target, setTarget] = useState<{ version: number; value: unknown; rules: unknown[] } | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  return (
    <section aria-labelledby={`history-${props.env}`}>
      <h2 id={`history-${props.env}`}>History on {props.env}</h2>
      <ErrorMessage error={error} />
      <Status message={message} />
      {data && (
        <DataTable
          caption={`Published versions of ${props.name} on ${props.env}, newest first`}
          rows={data}
          rowKey={(h) => String(h.version)}
          columns={[
            { header: "Version", cell: (h) => `v${h.version}${h.version === props.current ? " (live)" : ""}` },
            { header: "Value", class: "mono small", cell: (h) => JSON.stringify(h.value) },
            { header: "Rules", cell: (h) => String(h.rules.length) },
            { header: "Changes", class: "small", cell: (h) => versionDiff(data[data.indexOf(h) + 1], h) },
            { header: "Who", cell: (h) => h.actorEmail },
            { header: "When", cell: (h) => <When iso={h.createdAt} /> },
          ]}
          actions={
            props.writable &&
            ((h) =>
              h.version !== props.current && (
                <button type="button" class="secondary small" aria-label={`Roll back ${props.env} to version ${h.version}`} onClick={() => setTarget({ version: h.version, value: h.value, rules: h.rules })}>
                  Roll back
                </button>
              ))
          }
        />
      )}
      <ConfirmDialog
        open={target !== null}
        title={target ? `Roll ${props.name} on ${props.env} back to version ${target.version}?` : ""}
        message={
          <>
            <p>This publishes the value and rules of that version as a new version{props.env === "prod" ? ", on prod, at once" : ""}. Drafts stay as they are.</p>
            <pre class="value">{target ? prettyJson(target.value) : ""}</pre>
            {target && target.rules.length > 0 && <p>With its {target.rules.length} rule{target.rules.length === 1 ? "" : "s"} (each split keeps the buckets it had then).</p>}
          </>
        }
        confirmLabel={`Roll back ${props.env}`}
        danger={props.env === "prod"}
        onConfirm={async () => {
          const done = await call(api.rollback.post({ env: props.env, version: target!.version }));
          setMessage(`Rolled ${props.name} on ${props.env} back to version ${target!.version} (now version ${done.version})`);
          await props.onChanged();
          await reload();
        }}
        onClose={() => setTarget(null)}
      />
    </section>
  );
}
