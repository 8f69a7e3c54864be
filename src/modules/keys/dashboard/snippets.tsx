import { CopyButton } from "../../../web/dashboard/ui";

/** One ready-to-paste snippet shown after a browser key is minted. */
export type Snippet = { id: string; title: string; about: string; text: string };

/**
 * Every snippet text for a browser key, in one place (names of packages and calls are here only): `origin` is
 * this server's (where the dashboard runs), `key` the new browser key, `env` the env it evaluates.
 */
export function browserKeySnippets({ origin, key, env }: { origin: string; key: string; env: string }): Snippet[] {
  const url = new URL(origin);
  return [
    {
      id: "openfeature",
      title: "OpenFeature web SDK",
      about: `npm install @openfeature/web-sdk @openfeature/ofrep-web-provider; it evaluates ${env} over OFREP and polls every 30 s.`,
      text: [
        'import { OpenFeature } from "@openfeature/web-sdk";',
        'import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";',
        "",
        "await OpenFeature.setProviderAndWait(",
        `  new OFREPWebProvider({ baseUrl: "${origin}", headers: [["X-SDK-Key", "${key}"]], pollInterval: 30000 }),`,
        '  { targetingKey: "user-123" },',
        ");",
        "const client = OpenFeature.getClient();",
        'client.getBooleanValue("new-checkout", false);',
      ].join("\n"),
    },
    {
      id: "svc",
      title: "svc's SDK, browser mode",
      about: "One ES module served by this server; evaluated flags only, kept fresh in the background.",
      text: [
        `import { createBrowserClient } from "${origin}/sdk/svc-browser.js";`,
        "",
        `const svc = createBrowserClient({ baseUrl: "${origin}", key: "${key}", context: { targetingKey: "user-123" } });`,
        "await svc.ready();",
        'svc.isEnabled("new-checkout");',
      ].join("\n"),
    },
    {
      id: "sentry",
      title: "Sentry DSN for @sentry/browser",
      about: "Errors from the page become tracked errors of this project.",
      text: `${url.protocol}//${key}@${url.host}/1`,
    },
  ];
}

/** The snippets, each with its copy button (named for it). `secret`: the new key (`key` is Preact's own prop). */
export function BrowserKeySnippets(props: { origin: string; secret: string; env: string }) {
  return (
    <section aria-labelledby="browser-snippets-title" class="snippets">
      <h3 id="browser-snippets-title">Use it in your app</h3>
      <p class="hint">
        A browser key is meant to ship in your page or app: it reads evaluated flags of {props.env} and sends events and errors, nothing else. Allow your site's origin in
        Settings (Domain, Allowed browser origins).
      </p>
      {browserKeySnippets({ origin: props.origin, key: props.secret, env: props.env }).map((s) => (
        <div key={s.id} class="snippet">
          <h4 id={`snippet-${s.id}`}>{s.title}</h4>
          <p class="hint">{s.about}</p>
          <div class="secret">
            <pre class="secret-value" aria-labelledby={`snippet-${s.id}`} tabIndex={0}>
              <code>{s.text}</code>
            </pre>
            <CopyButton text={s.text} label={`Copy the ${s.title} snippet`} />
          </div>
        </div>
      ))}
    </section>
  );
}
