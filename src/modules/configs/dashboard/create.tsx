import { useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { JsonEditor } from "../../../web/dashboard/json-editor";
import { Dialog, Field, FormActions } from "../../../web/dashboard/ui";
import { configApi } from "./client";

const STARTER_SCHEMA = `{
  "type": "object",
  "properties": {
    "enabled": { "type": "boolean" }
  },
  "required": ["enabled"],
  "additionalProperties": false
}`;

function parse(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}

/** New config: name, description, its JSON Schema and the value every env starts with (the server checks both). */
export function CreateConfigDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (name: string) => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [schema, setSchema] = useState(STARTER_SCHEMA);
  const [value, setValue] = useState(`{ "enabled": false }`);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const created = await call(
        configApi.api.admin.configs.post({ name: name.trim(), description: description.trim() || undefined, schema: parse(schema, "The schema") as never, value: parse(value, "The value") }),
      );
      setName("");
      setDescription("");
      setError(null);
      onCreated(created.name);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open={open} title="New config" onClose={onClose} wide>
      <form onSubmit={submit} noValidate>
        <Field label="Name" hint="Up to 128 characters, without “/”. SDKs read the config by this name.">
          {(attrs) => <input {...attrs} required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} autoComplete="off" />}
        </Field>
        <Field label="Description">{(attrs) => <input {...attrs} value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />}</Field>
        <p class="field-label">JSON Schema</p>
        <JsonEditor value={schema} label="JSON Schema of the new config" onChange={setSchema} />
        <p class="field-label">Value on every env at first</p>
        <JsonEditor value={value} label="First value of the new config (JSON)" onChange={setValue} />
        <FormActions error={error} onCancel={onClose} submitLabel="Create config" disabled={busy} />
      </form>
    </Dialog>
  );
}
