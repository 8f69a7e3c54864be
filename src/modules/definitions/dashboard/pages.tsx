import { useId, useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { CheckField, SelectField, optionsOf } from "../../../web/dashboard/form-kit";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { CopyButton, ErrorMessage, Field } from "../../../web/dashboard/ui";
// Constants only (types.ts and importers/common.ts import nothing at run time).
import { TOOLS, TOOL_NAMES, type Tool } from "../importers/common";
import { SECTIONS, type Section } from "../types";
import { PlanApply, definitionsApi } from "./plan";

// Flags as code (issue 31) in the dashboard: what `svc export`, `svc plan`, `svc apply` and `svc import` do,
// over the same routes. YAML is written and read by the server (GET /export?format=yaml, apply's YAML body).

const ENV_CHOICES = ["all", "dev", "staging", "prod"] as const;
type EnvChoice = (typeof ENV_CHOICES)[number];
const FORMATS = ["yaml", "json"] as const;
type Format = (typeof FORMATS)[number];

/** Saves `text` as a file through a temporary link (no server round trip). */
function download(text: string, name: string, type: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The project's definitions as one document: chosen sections, one env or all, YAML or JSON; copy or download it. */
function ExportPanel() {
  const id = useId();
  const [sections, setSections] = useState<Set<Section>>(new Set(SECTIONS));
  const [env, setEnv] = useState<EnvChoice>("all");
  const [format, setFormat] = useState<Format>("yaml");
  const [text, setText] = useState<string | null>(null);
  const [sectionsError, setSectionsError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const toggle = (s: Section, on: boolean) => {
    const next = new Set(sections);
    if (on) next.add(s);
    else next.delete(s);
    setSections(next);
  };
  const run = async () => {
    setError(null);
    setSectionsError(null);
    if (sections.size === 0) {
      setSectionsError("Choose at least one section.");
      return;
    }
    setBusy(true);
    try {
      const query = { env: env === "all" ? undefined : env, only: sections.size === SECTIONS.length ? undefined : [...sections].join(","), format: format === "yaml" ? ("yaml" as const) : undefined };
      const data = await call(definitionsApi.api.admin.export.get({ query }));
      // With format=yaml the answer is the text `svc export` writes (application/yaml), which the client reads as a string.
      setText(typeof data === "string" ? data : `${JSON.stringify(data, null, 2)}\n`);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Export</h2>
      <fieldset aria-describedby={sectionsError ? `${id}-sections-error` : undefined}>
        <legend>Sections</legend>
        <div class="row">
          {SECTIONS.map((s) => (
            <CheckField key={s} checked={sections.has(s)} onChange={(on) => toggle(s, on)}>
              {s}
            </CheckField>
          ))}
        </div>
        {sectionsError && (
          <p class="error" id={`${id}-sections-error`} role="alert">
            {sectionsError}
          </p>
        )}
      </fieldset>
      <div class="row">
        <SelectField label="Env" value={env} onChange={setEnv} options={optionsOf(ENV_CHOICES, { all: "All envs", dev: "dev", staging: "staging", prod: "prod" })} />
        <SelectField label="Format" value={format} onChange={(f: Format) => (setFormat(f), setText(null))} options={optionsOf(FORMATS, { yaml: "YAML", json: "JSON" })} />
      </div>
      <div class="actions start">
        <button type="button" disabled={busy} onClick={run}>
          {busy ? "Exporting…" : "Export"}
        </button>
      </div>
      <ErrorMessage error={error} />
      {text !== null && (
        <>
          <Field label="Exported document">{(attrs) => <textarea {...attrs} class="editor mono" readOnly rows={16} spellcheck={false} value={text} />}</Field>
          <div class="actions start">
            <CopyButton text={text} label="Copy the exported document" />
            <button type="button" class="secondary small" onClick={() => download(text, format === "yaml" ? "svc.yaml" : "svc.json", format === "yaml" ? "application/yaml" : "application/json")}>
              Download {format === "yaml" ? "svc.yaml" : "svc.json"}
            </button>
          </div>
        </>
      )}
    </section>
  );
}

type Converted = { unmapped: { source: string; construct: string; reason: string }[]; rebucketed: { flag: string; env: string; percentage: number; split?: number[] }[]; counts: string };

/** Another tool's export converted by the server (nothing changes); the document goes to Plan and apply. */
function ImportPanel({ onDocument }: { onDocument: (text: string) => void }) {
  const id = useId();
  const [tool, setTool] = useState<Tool>("unleash");
  const [fileError, setFileError] = useState<string | null>(null);
  const [converted, setConverted] = useState<Converted | null>(null);
  const [busy, setBusy] = useState(false);
  const convert = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    setFileError(null);
    setConverted(null);
    if (!file) return;
    setBusy(true);
    try {
      let raw: unknown;
      try {
        raw = JSON.parse(await file.text());
      } catch (err) {
        throw new Error(`${file.name} is not JSON (${(err as Error).message}): choose ${TOOL_NAMES[tool]}'s export file`);
      }
      const res = await call(definitionsApi.api.admin.import({ tool }).post(raw as never));
      const counts = (["killswitches", "gates", "configs", "segments"] as const)
        .map((s) => [s, res.document[s]?.length ?? 0] as const)
        .filter(([, n]) => n > 0)
        .map(([s, n]) => `${n} ${s}`)
        .join(", ");
      setConverted({ unmapped: res.unmapped, rebucketed: res.rebucketed, counts });
      onDocument(`${JSON.stringify(res.document, null, 2)}\n`);
    } catch (err) {
      setFileError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Import from another tool</h2>
      <p class="muted small">
        The tool's export (Unleash's feature export, GrowthBook's features payload or API export, LaunchDarkly's flags list, Flagsmith's environment document) becomes a document in Plan and apply below, as{" "}
        <code>svc import</code> makes it. Nothing changes until you apply.
      </p>
      <div class="row">
        <SelectField label="Tool" value={tool} onChange={(t: Tool) => (setTool(t), setConverted(null))} options={optionsOf(TOOLS, TOOL_NAMES)} />
        <Field label="Export file (JSON)" error={fileError}>
          {(attrs) => <input {...attrs} type="file" accept=".json,application/json" disabled={busy} onChange={(e) => void convert(e.currentTarget)} />}
        </Field>
      </div>
      {converted && (
        <div aria-live="polite">
          <p>
            Converted: {converted.counts || "nothing"}. The document is in Plan and apply below.
          </p>
          {converted.unmapped.length > 0 && (
            <>
              <h3>Not mapped ({converted.unmapped.length})</h3>
              <ul class="small" aria-label="Not mapped">
                {converted.unmapped.map((u) => (
                  <li>
                    <span class="mono">{u.source}</span> ({u.construct}): {u.reason}
                  </li>
                ))}
              </ul>
            </>
          )}
          {converted.rebucketed.length > 0 && (
            <>
              <h3>Re-bucketed ({converted.rebucketed.length})</h3>
              <p class="small muted">These percentages keep their size, but svc hashes units differently from {TOOL_NAMES[tool]}, so a different set of units gets them.</p>
              <ul class="small" aria-label="Re-bucketed">
                {converted.rebucketed.map((r) => (
                  <li>
                    <span class="mono">{r.flag}</span> ({r.env}): {r.split ? `split ${r.split.join("/")}` : `${r.percentage}%`}
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
    </section>
  );
}

function DefinitionsPage() {
  const session = useSession();
  const [text, setText] = useState("");
  return (
    <>
      <div class="page-head">
        <h1>Flags as code</h1>
      </div>
      <p class="muted">
        The project's definitions as one document you can keep in Git: export it, edit it, plan and apply it here or with <code>svc plan</code> / <code>svc apply</code> in CI; or move in from another tool.
      </p>
      <div class="stack">
        <ExportPanel />
        <ImportPanel onDocument={setText} />
        <PlanApply key={session.project.id} text={text} onText={setText} writable={can(session, "write")} />
      </div>
    </>
  );
}

export const definitionsDashboard: DashboardModule = {
  pages: [{ path: "/definitions", title: "Flags as code", nav: { label: "Flags as code", order: 75, group: "project" }, view: DefinitionsPage }],
};
