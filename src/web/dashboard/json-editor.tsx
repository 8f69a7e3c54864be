/**
 * The JSON editor: a plain <textarea>, on purpose. It is what screen readers
 * and browser automation handle best (a real form control: label, value,
 * aria-invalid and aria-describedby work as specified), it weighs nothing,
 * and it cannot fall out of step with the value. Syntax and schema errors
 * are reported beside it as you type (see the configs page).
 * CodeMirror 6 was tried first: its contenteditable froze headless Chromium
 * 156 under typed input in our tests (the page stopped answering), so the
 * browser tests could not prove the editor; see the README.
 */
export function JsonEditor(props: {
  value: string;
  label: string;
  onChange: (text: string) => void;
  invalid?: boolean;
  describedBy?: string;
  readOnly?: boolean;
}) {
  return (
    <textarea
      class="editor mono"
      aria-label={props.label}
      aria-invalid={props.invalid ? "true" : undefined}
      aria-describedby={props.describedBy}
      readOnly={props.readOnly}
      spellcheck={false}
      rows={Math.min(24, Math.max(6, props.value.split("\n").length + 1))}
      value={props.value}
      onInput={(e) => props.onChange((e.target as HTMLTextAreaElement).value)}
    />
  );
}

/** Pretty JSON as the editor shows it. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "null";
}

export type DiffLine = { kind: "same" | "added" | "removed"; text: string };

/** A line diff (longest common subsequence) of two texts: enough for config values of a few thousand lines. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length * b.length > 4_000_000) {
    return [...a.map((text) => ({ kind: "removed" as const, text })), ...b.map((text) => ({ kind: "added" as const, text }))];
  }
  const lcs: Uint32Array[] = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: "same", text: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ kind: "removed", text: a[i++]! });
    else out.push({ kind: "added", text: b[j++]! });
  }
  while (i < a.length) out.push({ kind: "removed", text: a[i++]! });
  while (j < b.length) out.push({ kind: "added", text: b[j++]! });
  return out;
}

/** The diff as a list a screen reader can follow: each changed line says "added" or "removed". */
export function DiffView({ before, after, label }: { before: string; after: string; label: string }) {
  const lines = lineDiff(before, after);
  const changed = lines.some((l) => l.kind !== "same");
  return (
    <figure class="diff-view">
      <figcaption>{label}</figcaption>
      {!changed ? (
        <p class="muted">No difference.</p>
      ) : (
        <pre>
          {lines.map((l, i) => (
            <div key={i} class={`diff-${l.kind}`}>
              {l.kind === "added" ? <span class="visually-hidden">added: </span> : l.kind === "removed" ? <span class="visually-hidden">removed: </span> : null}
              <span aria-hidden="true">{l.kind === "added" ? "+ " : l.kind === "removed" ? "- " : "  "}</span>
              {l.text}
            </div>
          ))}
        </pre>
      )}
    </figure>
  );
}
