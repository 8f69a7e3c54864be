import { useEffect, useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { ErrorMessage, Field, Status } from "../../../web/dashboard/ui";
import { ENVS, type Env, gateApi } from "./client";

type Explanation = Awaited<ReturnType<typeof explainCall>>;
const explainCall = (name: string, env: Env, context: Record<string, unknown>) => call(gateApi.api.admin.gates({ id: name }).explain.post({ env, context }));

const EXAMPLE = '{\n  "user_id": "user-42",\n  "email": "ana@example.com",\n  "country": "de"\n}';

/** "rule 2 (beta testers)" */
const ruleLabel = (index: number, name?: string) => `rule ${index + 1}${name ? ` (${name})` : ""}`;

/**
 * Explain: what the gate answers for a context on an env (the server's
 * evaluator, the same as SDKs and OFREP), which rule decided, the bucket
 * when a percentage did, and why every earlier rule did not hold.
 */
export function ExplainPanel({ name, env: tabEnv }: { name: string; env: Env }) {
  const [text, setText] = useState(EXAMPLE);
  const [env, setEnv] = useState<Env>(tabEnv);
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<Explanation | null>(null);
  const [busy, setBusy] = useState(false);
  // The env follows the tab the person is looking at; it can still be changed here.
  useEffect(() => setEnv(tabEnv), [tabEnv]);

  const submit = async (e: Event) => {
    e.preventDefault();
    // A context that cannot be sent: said on the field, and the last answer goes (it was for another context).
    const refuse = (why: string) => {
      setJsonError(why);
      setResult(null);
      setError(null);
    };
    let context: unknown;
    try {
      context = JSON.parse(text);
    } catch (err) {
      return refuse(`Not valid JSON: ${(err as Error).message}`);
    }
    if (typeof context !== "object" || context === null || Array.isArray(context)) return refuse('The context is a JSON object, e.g. {"user_id": "user-42"}');
    setJsonError(null);
    setBusy(true);
    try {
      setResult(await explainCall(name, env, context as Record<string, unknown>));
      setError(null);
    } catch (err) {
      setResult(null);
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const decided = result && result.ruleIndex !== null ? result.rules.find((r) => r.index === result.ruleIndex) : undefined;
  return (
    <section class="panel" aria-labelledby="explain-heading">
      <h2 id="explain-heading">Explain</h2>
      <p class="muted small">What {name} answers for one context, and why. Nothing is stored.</p>
      <form onSubmit={submit} noValidate>
        <Field label="Context (JSON)" error={jsonError} hint="user_id (or the rule's unit) and any attributes the conditions name.">
          {(attrs) => <textarea {...attrs} class="editor mono" rows={6} spellcheck={false} value={text} onInput={(e) => setText(e.currentTarget.value)} />}
        </Field>
        <div class="row">
          <label>
            Env<span class="visually-hidden"> to explain on</span>{" "}
            <select value={env} onChange={(e) => setEnv(e.currentTarget.value as Env)}>
              {ENVS.map((e) => (
                <option key={e} value={e}>
                  {e}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={busy}>
            Explain
          </button>
        </div>
      </form>
      <ErrorMessage error={error} />
      <Status message={result ? `${result.gate} is ${result.value ? "on" : "off"} for this context on ${result.env} (version ${result.version})` : null} />
      {result && (
        <div>
          <h3>
            Result: <strong>{result.value ? "on" : "off"}</strong>
          </h3>
          <p>
            {decided ? (
              <>
                Decided by {ruleLabel(decided.index, decided.name)}
                {result.reason === "SPLIT"
                  ? result.bucket === null
                    ? ": a percentage rule, but the context has no unit to bucket, so it stays out."
                    : `: a percentage rule; this unit's bucket is ${result.bucket.toFixed(4)}, so it ${result.value ? "passes" : "does not pass"}.`
                  : result.value
                    ? ": its conditions hold and it passes everyone (100%)."
                    : ": its conditions hold and it passes no one (0%)."}
              </>
            ) : (
              "No rule held: off (the default)."
            )}{" "}
            <span class="muted small">
              {result.env}, version {result.version}, reason {result.reason}
            </span>
          </p>
          {result.rules.length > 0 && (
            <ol>
              {result.rules.map((r) => (
                <li key={r.index}>
                  {ruleLabel(r.index, r.name)}: {r.holds ? "holds" : "does not hold"}
                  {r.conditions.length === 0 ? (
                    <span class="muted"> (no conditions)</span>
                  ) : (
                    <ul>
                      {r.conditions.map((c, j) => (
                        <li key={j}>
                          condition {j + 1}, <code>{`${c.attr} ${c.op}`}</code>: <strong>{c.holds ? "holds" : "fails"}</strong>, {c.why}
                        </li>
                      ))}
                    </ul>
                  )}
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </section>
  );
}
