import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { NameFields, useNameForm } from "../../../web/dashboard/create-form";
import { JsonEditor } from "../../../web/dashboard/json-editor";
import { Dialog, FormActions } from "../../../web/dashboard/ui";
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
  const [schema, setSchema] = useState(STARTER_SCHEMA);
  const [value, setValue] = useState(`{ "enabled": false }`);
  // The schema and value stay as typed after a create: the next config often starts from them.
  const form = useNameForm({ create: (input) => call(configApi.api.admin.configs.post({ ...input, schema: parse(schema, "The schema") as never, value: parse(value, "The value") })), onCreated });
  return (
    <Dialog open={open} title="New config" onClose={onClose} wide>
      <form onSubmit={form.submit} noValidate>
        <NameFields form={form} hint="Up to 128 characters, without “/”. SDKs read the config by this name." />
        <p class="field-label">JSON Schema</p>
        <JsonEditor value={schema} label="JSON Schema of the new config" onChange={setSchema} />
        <p class="field-label">Value on every env at first</p>
        <JsonEditor value={value} label="First value of the new config (JSON)" onChange={setValue} />
        <FormActions error={form.error} onCancel={onClose} submitLabel="Create config" disabled={form.busy} />
      </form>
    </Dialog>
  );
}
