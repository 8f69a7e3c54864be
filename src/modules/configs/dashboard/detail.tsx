import { useEffect, useId, useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { DiffView, JsonEditor, prettyJson } from "../../../web/dashboard/json-editor";
import { can, useSession } from "../../../web/dashboard/registry";
import { DataTable } from "../../../web/dashboard/data-table";
import { DetailFrame, EnvPanel, deleteZone, notLoaded } from "../../../web/dashboard/detail-frame";
import { Actor, ConfirmDialog, ErrorMessage, Status, When, useLoad } from "../../../web/dashboard/ui";
import { ENVS, type Env, configApi } from "./client";
import { ConfigHistory } from "./history";
import { ConfigRules } from "./rules-editor";
import { SchemaEditor } from "./schema-editor";
import { useValueCheck } from "./value-check";
import { FlagUsagePanel } from "../../usage/dashboard/usage-panel";
import { CodeReferences } from "../../refs/dashboard/references";

/** One config: per env its published value and draft, an editor that validates as you type, diff, publish, and the activity. */
export function ConfigDetail({ name }: { name: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const api = configApi.api.admin.configs({ id: name });
  const load = useLoad(async () => {
    const [config, activity] = await Promise.all([call(api.get()), call(api.activity.get({ query: { limit: "30" } }))]);
    return { config, activity };
  }, [session.project.id, name]);
  const { data, reload } = load;
  const [env, setEnv] = useState<Env>("dev");
  const [text, setText] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [publishing, setPublishing] = useState(false);
  const problemsId = useId();
  const tabsId = useId();

  const config = data?.config;
  const published = config ? prettyJson(config.envs[env].value) : "";
  const draft = config?.drafts[env];
  const draftText = draft ? prettyJson(draft.value) : null;
  const editorText = text ?? draftText ?? published;
  const check = useValueCheck(name, editorText);

  // Switching env (or a reload that changed the stored draft) starts from what is stored.
  useEffect(() => setText(null), [env, draftText]);

  if (!data || !config) return notLoaded(load);

  const unsaved = editorText !== (draftText ?? published);
  const invalid = check.state === "invalid";
  const canPublish = Boolean(draft) && !unsaved && check.state === "valid";

  const act = async (what: () => Promise<string>) => {
    try {
      const said = await what();
      await reload();
      setMessage(said);
      setActionError(null);
    } catch (err) {
      setActionError(describeError(err));
    }
  };
  const saveDraft = () =>
    act(async () => {
      // The draft's rules (saved by the rules editor below) stay with it: a value-only draft would publish the env's rules as they are.
      const saved = await call(api.drafts.put({ env, value: JSON.parse(editorText), ...(draft?.rules ? { rules: draft.rules } : {}) }));
      // The stored draft is now what the editor shows (formatted as stored).
      setText(null);
      return `Saved the ${env} draft (from version ${saved.baseVersion}); nothing is published yet`;
    });
  const discardDraft = () =>
    act(async () => {
      await call(api.drafts({ env }).delete());
      setText(null);
      return `Discarded the ${env} draft`;
    });
  const publish = async () => {
    const done = await call(api.publish.post({ env }));
    await reload();
    setMessage(`Published ${config.name} on ${env}: version ${done.version}`);
    setActionError(null);
  };

  const danger = deleteZone("config", config.name, "It leaves every env and the SDK snapshot; SDKs fall back to their defaults. Its activity stays readable by id.", () => call(api.delete()));
  return (
    <DetailFrame back={{ href: "/configs", label: "Configs" }} title={config.name} description={config.description} writable={writable} danger={danger}>
      <EnvPanel
        envs={ENVS}
        current={env}
        idBase={tabsId}
        onSelect={setEnv}
        label={(e) => (
          <>
            {e} · v{config.envs[e].version}
            {config.drafts[e] ? " · draft" : ""}
          </>
        )}
      >
        <p class="muted small">
          Published version {config.envs[env].version}, <When iso={config.envs[env].updatedAt} />.{" "}
          {draft ? (
            <>
              Draft saved <When iso={draft.updatedAt} />, from version {draft.baseVersion}
              {draft.baseVersion !== config.envs[env].version ? " (published again since: check the diff)" : ""}.
            </>
          ) : (
            "No draft."
          )}
        </p>
        <JsonEditor
          value={editorText}
          label={`Value of ${config.name} on ${env} (JSON)`}
          onChange={setText}
          invalid={invalid}
          describedBy={invalid ? problemsId : undefined}
          readOnly={!writable}
        />
        <div id={problemsId} aria-live="polite">
          {check.state === "invalid" && (
            <div role="alert">
              <p class="error">This value does not match the schema, so it cannot be saved or published:</p>
              <ul class="problems">
                {check.problems.map((p) => (
                  <li key={p}>{p}</li>
                ))}
              </ul>
            </div>
          )}
          {check.state === "valid" && unsaved && <p class="muted small">Matches the schema.</p>}
        </div>
        <ErrorMessage error={actionError} />
        <Status message={message} />
        {writable && (
          <div class="actions start">
            <button type="button" disabled={!unsaved || check.state !== "valid"} onClick={saveDraft}>
              Save draft
            </button>
            <button
              type="button"
              disabled={!canPublish}
              onClick={async () => {
                // The confirmation shows the draft as stored now, not as this page last read it.
                await reload();
                setPublishing(true);
              }}
            >
              Publish draft to {env}
            </button>
            {draft && (
              <button type="button" class="secondary" onClick={discardDraft}>
                Discard draft
              </button>
            )}
            {unsaved && (
              <button type="button" class="secondary" onClick={() => setText(null)}>
                Undo changes
              </button>
            )}
          </div>
        )}
        {(draft || unsaved) && <DiffView before={published} after={editorText} label={`Published version ${config.envs[env].version} → ${unsaved ? "your changes" : "draft"}`} />}
        <ConfigRules config={config} env={env} writable={writable} onChanged={reload} />
      </EnvPanel>
      <SchemaEditor name={config.name} schema={config.schema} writable={writable} onSaved={reload} />
      <ConfigHistory name={config.name} env={env} current={config.envs[env].version} writable={writable} onChanged={reload} />
      <h2>Activity</h2>
      <DataTable
        caption={`Recent activity on ${config.name}, newest first`}
        rows={data.activity}
        rowKey={(a) => a.id}
        columns={[
          { header: "What", cell: (a) => a.action.replace(/^config\./, "") },
          { header: "Details", class: "small", cell: (a) => Object.entries(a.payload).map(([k, v]) => `${k} ${typeof v === "object" ? JSON.stringify(v) : String(v)}`).join(", ") },
          { header: "Who", cell: (a) => <Actor email={a.actorEmail} name={a.actorName} /> },
          { header: "When", cell: (a) => <When iso={a.createdAt} /> },
        ]}
      />
      <ConfirmDialog
        open={publishing}
        title={`Publish ${config.name} on ${env}?`}
        message={
          <>
            <p>{env === "prod" ? "Every SDK polling prod gets this value within seconds." : `SDKs on ${env} get this value within seconds.`}</p>
            <DiffView before={published} after={draftText ?? published} label={`Version ${config.envs[env].version} → draft`} />
          </>
        }
        confirmLabel={`Publish to ${env}`}
        danger={env === "prod"}
        onConfirm={publish}
        onClose={() => setPublishing(false)}
      />
      <FlagUsagePanel name={name} />
      <CodeReferences name={config.name} />
    </DetailFrame>
  );
}
