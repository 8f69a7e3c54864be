import type { ComponentChildren } from "preact";
import type { identityRoutes } from "../../modules/identity/routes";
import type { keyRoutes } from "../../modules/keys/routes";
import type { killswitchRoutes } from "../../modules/killswitches/routes";
import { apiOf, call } from "./api";
import type { DashboardModule } from "./registry";
import { useSession } from "./registry";
import { CopyButton, Link, useLiveReload, useLoad } from "./ui";

const killswitchApi = apiOf<ReturnType<typeof killswitchRoutes>>();
const keyApi = apiOf<ReturnType<typeof keyRoutes>>();
const identityApi = apiOf<ReturnType<typeof identityRoutes>>();

/** A count that could not be read (no permission, a failure) leaves its step unticked, never breaks the overview. */
const orNull = <T,>(p: Promise<T>) => p.catch(() => null);

/** What the checklist reads: the project's real state, so each step ticks itself off. */
async function loadProgress() {
  const [killswitches, keys, members] = await Promise.all([
    orNull(call(killswitchApi.api.admin.killswitches.get({ query: {} }))),
    orNull(call(keyApi.api.admin.keys.get({ query: {} }))),
    orNull(call(identityApi.api.admin.members.get({ query: {} }))),
  ]);
  return {
    firstKillswitch: killswitches?.[0]?.name ?? null,
    killswitches: killswitches?.length ?? 0,
    serverKey: keys?.find((k) => k.type === "server") ?? null,
    // An SDK key's first use is the first read of the snapshot by the project's code.
    sdkRead: (keys ?? []).some((k) => k.type !== "admin" && k.lastUsedAt !== null),
    people: members?.length ?? 0,
  };
}

function Step(props: { id: string; done: boolean; title: string; children: ComponentChildren }) {
  return (
    <li data-step={props.id} data-done={String(props.done)}>
      <span class="tick" aria-hidden="true">
        {props.done ? "✓" : ""}
      </span>
      <div>
        <strong>{props.title}</strong> <span class="visually-hidden">{props.done ? "(done)" : "(to do)"}</span>
        {props.children}
      </div>
    </li>
  );
}

/**
 * Getting started: the four steps of a new project's first hour, ticked off
 * from what the project really holds (a killswitch, an SDK read, a second
 * person). Open until all are done, then folded into one line.
 */
function GettingStarted() {
  const session = useSession();
  const { data, reload } = useLoad(loadProgress, [session.project.id]);
  useLiveReload(reload, 5000);
  if (!data) return null;
  const origin = location.origin;
  const install = `npm install ${origin}/sdk/svc-sdk.tgz`;
  const flag = data.firstKillswitch ?? "checkout";
  const code = `import { createClient } from "svc-sdk";

const svc = createClient({
  baseUrl: "${origin}",
  sdkKey: process.env.SVC_SERVER_KEY!,
});
await svc.ready();
if (svc.isKilled(${JSON.stringify(flag)})) {
  // the feature is switched off: skip it
}`;
  const steps = [data.killswitches > 0, data.sdkRead, data.sdkRead, data.people > 1];
  const done = steps.filter(Boolean).length;
  return (
    <section class="getting-started" aria-labelledby="getting-started">
      <details open={done < steps.length}>
        <summary>
          <h2 id="getting-started">
            Getting started
          </h2>{" "}
          <span class="muted">
            · {done} of {steps.length} done
          </span>
        </summary>
        <ol class="checklist">
          <Step id="killswitch" done={steps[0]!} title="Create a killswitch">
            <p class="hint">
              A switch your code checks before a risky feature, to turn it off in seconds. <Link href="/killswitches">Create one on Killswitches</Link>.
            </p>
          </Step>
          <Step id="sdk" done={steps[1]!} title="Install the SDK">
            <p class="hint">In your service's folder (the package comes from this server):</p>
            <div class="secret">
              <code class="secret-value">{install}</code>
              <CopyButton text={install} label="Copy the install command" />
            </div>
            <p class="hint">
              It reads with a server key
              {data.serverKey ? (
                <>
                  {" "}
                  (this project has <code>{data.serverKey.maskedKey}</code>, “{data.serverKey.name}”; its secret was shown once)
                </>
              ) : null}
              : put it in <code>SVC_SERVER_KEY</code>, or make a new one on <Link href="/keys">SDK keys</Link>.
            </p>
          </Step>
          <Step id="read" done={steps[2]!} title="Read a flag">
            <pre class="command">
              <code>{code}</code>
            </pre>
            <p class="hint">Ticks itself off when your code first reads this project with an SDK key.</p>
          </Step>
          <Step id="invite" done={steps[3]!} title="Invite a teammate">
            <p class="hint">
              Someone else who can flip a switch at 3 a.m. <Link href="/members">Invite them on Members</Link>.
            </p>
          </Step>
        </ol>
      </details>
    </section>
  );
}

/** The overview shows every module's card; `modules` comes from pages.ts, which lists this module too (so it is passed, not imported). */
function overviewOf(modules: () => DashboardModule[]) {
  return function Overview() {
    const session = useSession();
    return (
      <>
        <h1>{session.project.name}</h1>
        <p class="muted">
          Signed in as {session.email}
          {session.role ? ` (${session.role})` : ""}. Press <kbd>Ctrl K</kbd> to jump to any flag or config.
        </p>
        <GettingStarted />
        <ul class="cards">
          {modules().filter((m) => m.overview).map((m, i) => {
            const Card = m.overview!;
            return (
              <li key={i}>
                <Card />
              </li>
            );
          })}
        </ul>
      </>
    );
  };
}

export function homeModuleOf(modules: () => DashboardModule[]): DashboardModule {
  return { pages: [{ path: "/", title: "Overview", nav: { label: "Overview", order: 0 }, view: overviewOf(modules) }] };
}
