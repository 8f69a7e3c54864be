import { useEffect, useId, useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { JsonEditor, prettyJson } from "../../../web/dashboard/json-editor";
import { ErrorMessage, Status } from "../../../web/dashboard/ui";
import { configApi } from "./client";

/**
 * A config's JSON Schema: shown folded, and editable by writers. Saving
 * sends it to the server, the one validator (PATCH `schema`): a schema that a
 * published value or draft breaks is refused naming the env and path, and
 * nothing changes. Saving publishes nothing.
 */
export function SchemaEditor(props: { name: string; schema: unknown; writable: boolean; onSaved: () => Promise<void> }) {
  const stored = prettyJson(props.schema);
  const [text, setText] = useState(stored);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const errorId = useId();
  // A reload that brought another schema starts the editor from it.
  useEffect(() => setText(stored), [stored]);

  let parsed: { ok: true; value: unknown } | { ok: false; problem: string };
  try {
    parsed = { ok: true, value: JSON.parse(text) };
  } catch (err) {
    parsed = { ok: false, problem: `Not valid JSON: ${(err as Error).message}` };
  }
  const changed = text !== stored;
  const shownError = changed && !parsed.ok ? parsed.problem : error;

  const save = async () => {
    if (!parsed.ok) return;
    setBusy(true);
    try {
      await call(configApi.api.admin.configs({ id: props.name }).patch({ schema: parsed.value }));
      setError(null);
      setMessage("Saved the JSON Schema; every published value and draft fits it. Nothing was published.");
      await props.onSaved();
    } catch (err) {
      setMessage(null);
      setError(`The schema was not saved. ${describeError(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <details>
      <summary>JSON Schema</summary>
      {props.writable ? (
        <>
          <p class="muted small">Every value and draft of every env must match it; a schema one of them breaks is refused.</p>
          <JsonEditor
            value={text}
            label={`JSON Schema of ${props.name}`}
            onChange={(next) => {
              setText(next);
              setError(null);
              setMessage(null);
            }}
            invalid={Boolean(shownError)}
            describedBy={shownError ? errorId : undefined}
          />
          <div id={errorId}>
            <ErrorMessage error={shownError} />
          </div>
          <Status message={message} />
          <div class="actions start">
            <button type="button" disabled={!changed || !parsed.ok || busy} onClick={save}>
              Save schema
            </button>
            {changed && (
              <button type="button" class="secondary" onClick={() => setText(stored)}>
                Undo schema changes
              </button>
            )}
          </div>
        </>
      ) : (
        <pre class="value">{stored}</pre>
      )}
    </details>
  );
}
