import { useEffect, useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { FactsTable } from "../../../web/dashboard/data-table";
import { ErrorMessage, Field } from "../../../web/dashboard/ui";
import { type Env, configApi } from "./client";

type Explanation = Awaited<ReturnType<typeof explain>>;
const explain = (name: string, env: Env, context: Record<string, unknown>, draft: boolean) => call(configApi.api.admin.configs({ id: name }).explain.post({ env, context, draft }));

const EXAMPLE = '{\n  "user_id": "u-1",\n  "email": "ada@example.com"\n}';
/** Waits for a pause in typing before asking the server. */
const DEBOUNCE_MS = 300;

const ruleLabel = (index: number, name?: string) => `rule ${index + 1}${name ? ` (${name})` : ""}`;

/**
 * "Who gets what": what a typed context is served on the env, by the server's own evaluator (explain),
 * from the saved draft when there is one, else from what is published. It asks again as the context is
 * typed (after a pause) and whenever the stored draft or version changes (`revision`).
 */
export function RulesPreview({ name, env, draft, revision, unsaved }: { name: string; env: Env; draft: boolean; revision: string; unsaved: boolean }) {
  const [text, setText] = useState(EXAMPLE);
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<Explanation | null>(null);

  useEffect(() => {
    let context: unknown;
    try {
      context = JSON.parse(text);
    } catch (err) {
      setJsonError(`Not valid JSON: ${(err as Error).message}`);
      return;
    }
    if (typeof context !== "object" || context === null || Array.isArray(context)) {
      setJsonError('The context is a JSON object, e.g. {"user_id": "u-1"}');
      return;
    }
    setJsonError(null);
    let cancelled = false;
    const timer = setTimeout(async () => {
      try {
        const answer = await explain(name, env, context as Record<string, unknown>, draft);
        if (cancelled) return;
        setResult(answer);
        setError(null);
      } catch (err) {
        if (cancelled) return;
        setResult(null);
        setError(describeError(err));
      }
    }, DEBOUNCE_MS);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [name, env, draft, revision, text]);

  const decided = result && result.ruleIndex !== null ? result.rules.find((r) => r.index === result.ruleIndex) : undefined;
  const passedOver = result ? result.rules.filter((r) => r.index !== result.ruleIndex) : [];
  return (
    <section class="panel" aria-labelledby={`preview-heading-${env}`}>
      <h3 id={`preview-heading-${env}`}>Who gets what on {env}</h3>
      <p class="muted small">
        {draft ? `Previews the saved ${env} draft` : `Previews what is published on ${env} (there is no draft)`}
        {unsaved ? "; save your rule changes to preview them." : "."} Nothing is stored.
      </p>
      <Field label={`Context for the preview on ${env} (JSON)`} error={jsonError} hint="user_id (or a split's unit) and any attributes the conditions name.">
        {(attrs) => <textarea {...attrs} class="editor mono" rows={5} spellcheck={false} value={text} onInput={(e) => setText(e.currentTarget.value)} />}
      </Field>
      <ErrorMessage error={error} />
      <div aria-live="polite">
        {result && !jsonError && (
          <>
            <FactsTable
              caption={`What this context is served on ${env}`}
              rows={[
                ["Value", <code key="v">{JSON.stringify(result.value)}</code>, "mono"],
                ["Variant", result.variant],
                ["Reason", result.reason],
                ["Deciding rule", decided ? ruleLabel(decided.index, decided.name) : "none: the default value"],
                result.bucket !== null && ["Bucket", result.bucket.toFixed(4)],
              ]}
            />
            {passedOver.length > 0 && (
              <details>
                <summary>Why not the earlier rules</summary>
                <ul>
                  {passedOver.map((r) => (
                    <li key={r.index}>
                      {ruleLabel(r.index, r.name)}:{" "}
                      {r.holds ? "its conditions hold, but the context has no unit for its split" : r.conditions.filter((c) => !c.holds).map((c) => `${c.attr} ${c.op}: ${c.why}`).join("; ")}
                    </li>
                  ))}
                </ul>
              </details>
            )}
          </>
        )}
      </div>
    </section>
  );
}
