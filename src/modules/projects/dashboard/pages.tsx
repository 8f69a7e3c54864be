import { useEffect, useState } from "preact/hooks";
import { ENVS } from "../../../lib/envs";
import { apiOf, call, describeError } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { SelectField, plainOptions } from "../../../web/dashboard/form-kit";
import { ErrorMessage, Field, Loading, Status, useLoad } from "../../../web/dashboard/ui";
import type { projectRoutes } from "../routes";
import { AnalysisSettingsForm } from "./analysis-settings";

const projectApi = apiOf<ReturnType<typeof projectRoutes>>();
const MODULES = [
  ["moduleConfigs", "Dynamic configs"],
  ["moduleGates", "Gates"],
  ["moduleExperiments", "Experiments"],
  ["moduleFeedback", "Feedback and the public intake queue"],
  ["moduleTranslations", "Translations (i18n keys)"],
] as const;

type Form = {
  name: string;
  domain: string;
  /** One origin a line. */
  allowedOrigins: string;
  defaultEnv: (typeof ENVS)[number];
  timezone: string;
  publicTicketCreation: boolean;
  modules: Record<(typeof MODULES)[number][0], boolean>;
};

function SettingsPage() {
  const session = useSession();
  const manage = can(session, "manage");
  const { data, error, reload } = useLoad(() => call(projectApi.api.admin.projects.current.get()), [session.project.id]);
  const [form, setForm] = useState<Form | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [saveError, setSaveError] = useState<string | null>(null);
  useEffect(() => {
    if (!data) return;
    setForm({
      name: data.name,
      domain: data.domain,
      allowedOrigins: data.allowedOrigins.join("\n"),
      defaultEnv: data.defaultEnv,
      timezone: data.timezone,
      publicTicketCreation: data.publicTicketCreation,
      modules: Object.fromEntries(MODULES.map(([key]) => [key, data[key]])) as Form["modules"],
    });
  }, [data]);
  if (error && !data) return <ErrorMessage error={error} />;
  if (!data || !form) return <Loading />;

  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await call(
        projectApi.api.admin.projects({ id: "current" }).patch({
          name: form.name.trim(),
          domain: form.domain.trim(),
          allowedOrigins: form.allowedOrigins
            .split(/[\s,]+/)
            .map((o) => o.trim())
            .filter((o) => o !== ""),
          defaultEnv: form.defaultEnv,
          timezone: form.timezone.trim(),
          publicTicketCreation: form.publicTicketCreation,
          ...form.modules,
        }),
      );
      setMessage("Saved the project settings");
      setSaveError(null);
      await reload();
    } catch (err) {
      setSaveError(describeError(err));
    }
  };
  const text = (key: "name" | "domain" | "allowedOrigins" | "timezone") => (e: Event) => setForm({ ...form, [key]: (e.target as HTMLInputElement).value });
  return (
    <>
      <h1>Project settings</h1>
      <p class="muted">
        <code>{data.id}</code> · organisation owner {data.ownerEmail}
      </p>
      <form onSubmit={submit} noValidate class="narrow-form">
        <fieldset disabled={!manage}>
          <legend class="visually-hidden">Project</legend>
          <Field label="Name">{(attrs) => <input {...attrs} value={form.name} onInput={text("name")} />}</Field>
          <Field label="Domain" hint="Host or origin browsers call from; stamped into every live SDK key as its allowed origin. Empty allows any.">
            {(attrs) => <input {...attrs} value={form.domain} onInput={text("domain")} placeholder="https://app.example.com" />}
          </Field>
          <Field
            label="Allowed browser origins"
            hint="One origin a line (up to 20), besides the domain: e.g. a staging site or http://localhost:5173. Browser keys, and server keys called from a browser, answer these origins only."
          >
            {(attrs) => <textarea {...attrs} rows={3} value={form.allowedOrigins} onInput={text("allowedOrigins")} placeholder={"https://staging.example.com\nhttp://localhost:5173"} />}
          </Field>
          <SelectField label="Default env" value={form.defaultEnv} onChange={(v: Form["defaultEnv"]) => setForm({ ...form, defaultEnv: v })} options={plainOptions(ENVS)} />
          <Field label="Time zone" hint="IANA name, e.g. Europe/Berlin; used for daily figures.">
            {(attrs) => <input {...attrs} value={form.timezone} onInput={text("timezone")} />}
          </Field>
        </fieldset>
        <fieldset disabled={!manage}>
          <legend>Modules</legend>
          {MODULES.map(([key, label]) => (
            <label key={key} class="check">
              <input type="checkbox" checked={form.modules[key]} onChange={(e) => setForm({ ...form, modules: { ...form.modules, [key]: (e.target as HTMLInputElement).checked } })} /> {label}
            </label>
          ))}
          <label class="check">
            <input type="checkbox" checked={form.publicTicketCreation} onChange={(e) => setForm({ ...form, publicTicketCreation: (e.target as HTMLInputElement).checked })} /> Anyone with a client
            key may file tickets through the public intake
          </label>
        </fieldset>
        <ErrorMessage error={saveError} />
        <Status message={message} />
        {manage ? (
          <div class="actions start">
            <button type="submit">Save settings</button>
          </div>
        ) : (
          <p class="muted">Only an owner can change the settings.</p>
        )}
      </form>
      <AnalysisSettingsForm analysis={data.analysis} eventRetentionDays={data.eventRetentionDays} staleAfterDays={data.staleAfterDays} manage={manage} onSaved={reload} />
    </>
  );
}

export const projectsDashboard: DashboardModule = {
  pages: [{ path: "/settings", title: "Project settings", nav: { label: "Settings", order: 90, group: "project" }, view: SettingsPage }],
};
