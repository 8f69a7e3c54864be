import { useEffect, useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { ResourceList, useRowDialogs } from "../../../web/dashboard/resource-list";
import { useFieldSubmit } from "../../../web/dashboard/create-form";
import { RowButtons } from "../../../web/dashboard/data-table";
import { ConfirmDialog, Dialog, Field, FormActions, Link, useLoad } from "../../../web/dashboard/ui";
import { gateApi } from "./client";

export type GateTemplate = NonNullable<Awaited<ReturnType<typeof gateApi.api.admin.gates.templates.get>>["data"]>[number];
type Condition = GateTemplate["rules"][number];

/** The templates a gate can start from: built-ins first, then the project's. */
export const loadTemplates = () => call(gateApi.api.admin.gates.templates.get({ query: {} }));

/** `email ends_with "@acme.com" and country in ["us","ca"]`; no conditions is everyone. */
export function conditionsSummary(conditions: Condition[]): string {
  if (conditions.length === 0) return "everyone";
  return conditions.map((c) => (c.value === undefined ? `${c.attr} ${c.op}` : `${c.attr} ${c.op} ${JSON.stringify(c.value)}`)).join(" and ");
}


const EXAMPLE_CONDITIONS = '[\n  { "attr": "email", "op": "ends_with", "value": "@example.com" }\n]';
const TEMPLATE_FIELDS = ["name", "description", "category", "rules"] as const;

/** New template of the project: its conditions as JSON, checked by the server like a gate rule's. */
function CreateTemplateDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (name: string) => Promise<void> }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [category, setCategory] = useState("condition");
  const [conditions, setConditions] = useState(EXAMPLE_CONDITIONS);
  const form = useFieldSubmit(TEMPLATE_FIELDS);
  const { fieldErrors } = form;
  useEffect(() => {
    if (!open) return;
    setName("");
    setDescription("");
    setCategory("condition");
    setConditions(EXAMPLE_CONDITIONS);
    form.clear();
  }, [open]);

  const submit = (e: Event) => {
    e.preventDefault();
    let rules: unknown;
    try {
      rules = JSON.parse(conditions);
    } catch (err) {
      return form.refuse("rules", `Not valid JSON: ${(err as Error).message}`);
    }
    if (!Array.isArray(rules)) return form.refuse("rules", 'The conditions are a JSON list, e.g. [{"attr": "country", "op": "in", "value": ["de"]}]');
    void form.run(async () => {
      const created = await call(
        gateApi.api.admin.gates.templates.post({ name: name.trim(), description: description.trim() || undefined, category: category.trim() || undefined, rules: rules as Condition[] }),
      );
      await onCreated(created.name);
    });
  };
  return (
    <Dialog open={open} title="New template" onClose={onClose} wide>
      <form onSubmit={submit} noValidate>
        <Field label="Name" error={fieldErrors.name} hint="Unique in the project; not a built-in's name.">
          {(attrs) => <input {...attrs} required value={name} onInput={(e) => setName(e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <Field label="Description" error={fieldErrors.description}>
          {(attrs) => <input {...attrs} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />}
        </Field>
        <Field label="Category" error={fieldErrors.category} hint="Free text: the built-ins use condition and rollout.">
          {(attrs) => <input {...attrs} value={category} onInput={(e) => setCategory(e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <Field label="Conditions (JSON)" error={fieldErrors.rules} hint='A list of {"attr", "op", "value"}, all of which must hold; [] holds for everyone.'>
          {(attrs) => <textarea {...attrs} class="editor mono" rows={6} spellcheck={false} value={conditions} onInput={(e) => setConditions(e.currentTarget.value)} />}
        </Field>
        <FormActions error={form.error} onCancel={onClose} submitLabel="Create template" disabled={form.busy} />
      </form>
    </Dialog>
  );
}

const GATE_FIELDS = ["name", "passPercentage"] as const;

/** A gate made from a template: one rule of its conditions at the given pass percentage, on every env. */
function GateFromTemplateDialog({ template, onClose }: { template: GateTemplate | null; onClose: () => void }) {
  const [name, setName] = useState("");
  const [percentage, setPercentage] = useState("100");
  const form = useFieldSubmit(GATE_FIELDS);
  const { fieldErrors } = form;
  useEffect(() => {
    if (!template) return;
    setName("");
    setPercentage("100");
    form.clear();
  }, [template]);

  const submit = (e: Event) => {
    e.preventDefault();
    const pct = percentage.trim();
    void form.run(async () => {
      // Anything but a number goes as typed, for the server to refuse by name.
      const passPercentage = (pct !== "" && Number.isFinite(Number(pct)) ? Number(pct) : pct) as number;
      const created = await call(gateApi.api.admin.gates.post({ name: name.trim(), template: template!.id, passPercentage }));
      onClose();
      navigate(`/gates/${encodeURIComponent(created.name)}`);
    });
  };
  return (
    <Dialog open={template !== null} title={`New gate from ${template?.name ?? ""}`} onClose={onClose}>
      {template && (
        <form onSubmit={submit} noValidate>
          <p class="muted small">
            It starts with one rule on every env: <span class="mono">{conditionsSummary(template.rules)}</span> → the pass percentage.
          </p>
          <Field label="Gate name" error={fieldErrors.name} hint="Up to 128 characters, without “/”, not starting with gate_.">
            {(attrs) => <input {...attrs} required value={name} onInput={(e) => setName(e.currentTarget.value)} autoComplete="off" />}
          </Field>
          <Field label="Pass percentage" error={fieldErrors.passPercentage} hint="0 to 100: the share of matching units that pass.">
            {(attrs) => <input {...attrs} type="number" min={0} max={100} step="any" value={percentage} onInput={(e) => setPercentage(e.currentTarget.value)} />}
          </Field>
          <FormActions error={form.error} onCancel={onClose} submitLabel="Create gate" disabled={form.busy} />
        </form>
      )}
    </Dialog>
  );
}

/** Gate templates: the built-ins (read-only) and the project's own; create, delete, and start a gate from one. */
export function TemplateList() {
  const session = useSession();
  const writable = can(session, "write");
  const [startFrom, setStartFrom] = useState<GateTemplate | null>(null);
  const { data, error, reload } = useLoad(loadTemplates, [session.project.id]);
  // The create dialog, the template being deleted, and the status line said once the list has reloaded: the kit's.
  const rows = useRowDialogs<GateTemplate>(reload);
  return (
    <ResourceList
      crumbs={
        <>
          <Link href="/gates">Gates</Link> /
        </>
      }
      title="Gate templates"
      noun="template"
      create={writable && { label: "New template", onClick: rows.create }}
      intro="Ready-made conditions to start a gate from. Built-ins are the same in every project and read-only; a gate made from a template keeps its rule when the template changes or goes."
      searchText={(t) => [t.name, t.description, t.category]}
      caption="Gate templates: built-ins first, then this project's"
      items={data}
      rowKey={(t) => t.id}
      error={error}
      message={rows.message}
      name={(t) => (
        <>
          {t.name}
          {t.builtIn && <div class="muted small">built-in</div>}
        </>
      )}
      columns={[
        { header: "Category", cell: (t) => t.category },
        { header: "Conditions", cell: (t) => conditionsSummary(t.rules), class: "mono small" },
        { header: "Description", cell: (t) => t.description || <span class="muted">none</span> },
      ]}
      actions={
        writable &&
        ((t) => (
          <RowButtons
            buttons={[
              { text: "New\u00a0gate", label: `New gate from template ${t.name}`, onClick: () => setStartFrom(t) },
              !t.builtIn && { text: "Delete", label: `Delete template ${t.name}`, onClick: () => rows.remove(t), danger: true },
            ]}
          />
        ))
      }
    >
      <CreateTemplateDialog
        open={rows.dialog.open}
        onClose={rows.dialog.onClose}
        onCreated={(name) => {
          rows.closeDialog();
          return rows.done(`Created template ${name}`);
        }}
      />
      <GateFromTemplateDialog template={startFrom} onClose={() => setStartFrom(null)} />
      <ConfirmDialog
        open={rows.deleting !== null}
        title={`Delete template ${rows.deleting?.name ?? ""}?`}
        message={<p>Gates made from it keep their rules.</p>}
        confirmLabel="Delete template"
        danger
        onConfirm={async () => {
          const gone = rows.deleting!;
          await call(gateApi.api.admin.gates.templates({ id: gone.id }).delete());
          await rows.done(`Deleted template ${gone.name}`);
        }}
        onClose={rows.closeDelete}
      />
    </ResourceList>
  );
}
