import type { ComponentChildren } from "preact";
import { useId, useMemo, useState } from "preact/hooks";
import { ApiFailure, call, describeError } from "../../../web/dashboard/api";
import { can, useSession } from "../../../web/dashboard/registry";
import { DetailFrame, EnvPanel, VersionHistory, WarningMessage, deleteZone, notLoaded } from "../../../web/dashboard/detail-frame";
import { ConfirmDialog, ErrorMessage, Loading, Status, useLiveReload, useLoad, When } from "../../../web/dashboard/ui";
import { type DraftRule, ENVS, type Env, type FieldRef, type GateRule, describeField, fieldOfDetail, fromDraft, gateApi, ruleSummary, rulesCount, toDraft } from "./client";
import { ExplainPanel } from "./explain";
import { RulesEditor } from "./rules-editor";
import { FlagUsagePanel } from "../../usage/dashboard/usage-panel";
import { CodeReferences } from "../../refs/dashboard/references";

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** JSON with sorted keys: two rule lists are the same when this is. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));
}

/** A rule list in words, one line a rule in order; `empty` when there is none. */
function RulesList({ rules, empty, class: cls }: { rules: readonly GateRule[]; empty: ComponentChildren; class?: string }) {
  if (rules.length === 0) return <>{empty}</>;
  return (
    <ol class={cls}>
      {rules.map((r, i) => (
        <li key={i}>{ruleSummary(r)}</li>
      ))}
    </ol>
  );
}

const BACK = { href: "/gates", label: "Gates" };

/** One gate: per env its rule list in an editor and published as a new version, that env's history with rollback, explain, delete. */
export function GateDetail({ name }: { name: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const api = gateApi.api.admin.gates({ id: name });
  const [env, setEnv] = useState<Env>("dev");
  const gateLoad = useLoad(() => call(api.get()), [session.project.id, name]);
  const historyLoad = useLoad(() => call(api.history.get({ query: { env, limit: "50" } })), [session.project.id, name, env]);
  const reload = async () => {
    await Promise.all([gateLoad.reload(), historyLoad.reload()]);
  };
  useLiveReload(gateLoad.reload);
  // Unpublished edits, per env: switching tabs keeps them.
  const [drafts, setDrafts] = useState<Partial<Record<Env, DraftRule[]>>>({});
  const [publishError, setPublishError] = useState<string | null>(null);
  const [fieldError, setFieldError] = useState<FieldRef | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  // What the last publish went through with (attributes nobody declared or saw, deprecated ones).
  const [warnings, setWarnings] = useState<string[]>([]);
  const [confirming, setConfirming] = useState(false);
  const [rollback, setRollback] = useState<{ env: Env; version: number } | null>(null);
  const tabsId = useId();

  const gate = gateLoad.data;
  const published: GateRule[] = gate ? (gate.envs[env].rules as GateRule[]) : [];
  const publishedKey = canonical(published);
  // The editor's rows for what is published; made once per published list (stable keys keep focus while typing).
  const publishedDraft = useMemo(() => toDraft(published), [env, publishedKey]);

  if (!gate) return notLoaded(gateLoad);

  const draft = drafts[env] ?? publishedDraft;
  const changed = (e: Env) => drafts[e] !== undefined && canonical(fromDraft(drafts[e]!)) !== canonical(gate.envs[e].rules);
  const unsaved = changed(env);

  /** Says what a change did (or nothing), forgetting the last publish's refusal and warnings. */
  const said = (text: string | null) => {
    setMessage(text);
    setPublishError(null);
    setFieldError(null);
    setWarnings([]);
  };
  const selectEnv = (next: Env) => {
    setEnv(next);
    said(null);
  };
  const edit = (next: DraftRule[], text?: string) => {
    setDrafts({ ...drafts, [env]: next });
    // What the server refused was about the list before this change.
    said(text ?? null);
  };

  const publish = async () => {
    const rules = fromDraft(draft);
    try {
      const done = await call(api.rules.put({ env, rules }));
      await reload();
      setDrafts((d) => ({ ...d, [env]: undefined }));
      said(`Published ${rulesCount(done.rules.length)} to ${env}: version ${done.version}`);
      // Attributes nobody declared or saw, or deprecated ones: published anyway, and said as a warning.
      setWarnings(done.warnings ?? []);
    } catch (err) {
      // Nothing was published; a VALIDATION names the rule and field, which the editor marks.
      const ref = err instanceof ApiFailure && err.code === "VALIDATION" ? fieldOfDetail(err.detail) : null;
      said(null);
      setFieldError(ref);
      setPublishError(`Nothing was published to ${env}. ${ref ? `${capitalised(describeField(ref))} (${ref.path}): ${ref.message}` : describeError(err)}`);
      // The control it names takes the focus, so the fix starts there.
      if (ref) setTimeout(() => document.querySelector<HTMLElement>(`[id="${tabsId}-panel"] [aria-invalid="true"]`)?.focus(), 0);
    }
  };
  const requestPublish = () => {
    if (env === "prod") setConfirming(true);
    else void publish();
  };
  const rollBack = async (target: { env: Env; version: number }) => {
    const done = await call(api.rollback.post(target));
    await reload();
    said(`Rolled ${gate.name} on ${target.env} back to version ${target.version} (now version ${done.version})`);
  };
  const requestRollback = (target: { env: Env; version: number }) => {
    if (target.env === "prod") setRollback(target);
    else rollBack(target).catch((err) => setPublishError(describeError(err)));
  };

  const state = gate.envs[env];
  const what = "It leaves every env and the SDK snapshot, and its history goes with it. SDKs get their defaults; gates that name it as a prerequisite see it as off.";
  return (
    <DetailFrame back={BACK} title={gate.name} description={gate.description} writable={writable} danger={deleteZone("gate", gate.name, what, () => call(api.delete()))}>
      <EnvPanel
        envs={ENVS}
        current={env}
        idBase={tabsId}
        onSelect={selectEnv}
        label={(e) => (
          <>
            {e} · v{gate.envs[e].version} · {rulesCount(gate.envs[e].rules.length)}
            {changed(e) ? " · unpublished changes" : ""}
          </>
        )}
      >
        <p class="muted small">
          Version {state.version}, published <When iso={state.updatedAt} /> by {state.updatedBy}. Rules apply in order: the first whose conditions all hold decides; none holding means off.
        </p>
        <RulesEditor draft={draft} onChange={edit} readOnly={!writable} fieldError={fieldError} env={env} />
        <ErrorMessage error={publishError} />
        <Status message={message} />
        <WarningMessage title="Published with warnings:" warnings={warnings} />
        {writable && (
          <div class="actions start">
            <button type="button" disabled={!unsaved} onClick={requestPublish}>
              Publish rules to {env}
            </button>
            {drafts[env] !== undefined && (
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  setDrafts((d) => ({ ...d, [env]: undefined }));
                  said(`Undid the changes to ${env}: the editor shows version ${state.version}`);
                }}
              >
                Undo changes
              </button>
            )}
          </div>
        )}
        <h2>History on {env}</h2>
        <ErrorMessage error={historyLoad.error} />
        {!historyLoad.data ? (
          !historyLoad.error && <Loading />
        ) : (
          <VersionHistory
            caption={`Published versions of ${gate.name} on ${env}, newest first`}
            rows={historyLoad.data}
            prefix="gate."
            columns={[{ header: "Rules", class: "small", cell: (h) => <RulesList rules={h.rules as GateRule[]} empty={<span class="muted">none (off)</span>} /> }]}
            current={(h) => gate.envs[h.env].version}
            onRollback={writable && ((h) => requestRollback({ env: h.env, version: h.version }))}
          />
        )}
      </EnvPanel>
      <ExplainPanel name={gate.name} env={env} />
      <ConfirmDialog
        open={confirming}
        title={`Publish ${rulesCount(draft.length)} of ${gate.name} to prod?`}
        message={
          <>
            <p>This publishes version {state.version + 1} on prod at once: every SDK polling prod sees it within seconds.</p>
            <RulesList rules={fromDraft(draft)} class="small" empty={<p>No rules: the gate is off for everyone on prod.</p>} />
          </>
        }
        confirmLabel="Publish to prod"
        danger
        onConfirm={publish}
        onClose={() => setConfirming(false)}
      />
      <ConfirmDialog
        open={rollback !== null}
        title={rollback ? `Roll ${gate.name} on ${rollback.env} back to version ${rollback.version}?` : ""}
        message={<p>This publishes the rules of that version as a new version on prod, at once.</p>}
        confirmLabel="Roll back"
        danger
        onConfirm={() => rollBack(rollback!)}
        onClose={() => setRollback(null)}
      />
      <FlagUsagePanel name={name} />
      <CodeReferences name={gate.name} />
    </DetailFrame>
  );
}
