import { useState } from "preact/hooks";
import { apiOf, call, describeError } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { ResourceList } from "../../../web/dashboard/resource-list";
import { ConfirmDialog, CopyButton, Field, When, useLoad } from "../../../web/dashboard/ui";
import type { identityRoutes } from "../routes";

const identityApi = apiOf<ReturnType<typeof identityRoutes>>();
type Role = "owner" | "editor" | "viewer";
const ROLES: { role: Role; help: string }[] = [
  { role: "viewer", help: "viewer: reads" },
  { role: "editor", help: "editor: reads and writes" },
  { role: "owner", help: "owner: also manages keys, settings and people" },
];

/** Where links go: by mail, or (no SMTP) only to the outbox file on the server, from GET /me. */
type Mail = { configured: boolean; outbox?: string };

/** The words for a link that went to the outbox, not to anyone's inbox (issue 27, item 12). */
const noMailServer = (mail: Mail) => `No mail server is set: the link is in ${mail.outbox ?? "<data>/outbox.log"} on the server`;

function InviteForm({ mail, onInvited }: { mail: Mail | null; onInvited: (email: string) => Promise<void> }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("editor");
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const invited = await call(identityApi.api.admin.invites.post({ email: email.trim(), role }));
      setEmail("");
      setError(null);
      await onInvited(invited.email);
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <form class="panel" onSubmit={submit} noValidate>
      <h2>Invite someone</h2>
      <p class="muted small">
        {mail && !mail.configured
          ? `${noMailServer(mail)}: pass it on yourself, or use "Copy link" in their row. It is valid 7 days; they join the whole organisation when they accept it, and have no access until then.`
          : "They get a link by mail, valid 7 days, and join the whole organisation when they accept it; until then they have no access."}
      </p>
      <Field label="Email" error={error}>
        {(attrs) => <input {...attrs} type="email" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} autoComplete="off" />}
      </Field>
      <Field label="Role">
        {(attrs) => (
          <select {...attrs} value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as Role)}>
            {ROLES.map((r) => (
              <option key={r.role} value={r.role}>
                {r.help}
              </option>
            ))}
          </select>
        )}
      </Field>
      <div class="actions start">
        <button type="submit" disabled={!email.trim()}>
          Send invitation
        </button>
      </div>
    </form>
  );
}

function MembersPage() {
  const session = useSession();
  const manage = can(session, "members");
  const { data, error, reload } = useLoad(() => call(identityApi.api.admin.members.get({ query: {} })), [session.project.id]);
  const [removing, setRemoving] = useState<{ email: string; invited: boolean } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const { data: me } = useLoad(() => call(identityApi.api.admin.me.get()), [session.project.id]);
  const mail: Mail | null = me?.mail ?? null;
  const [copied, setCopied] = useState<{ email: string; link: string } | null>(null);
  const copyLink = async (email: string) => {
    try {
      const made = await call(identityApi.api.admin.members({ email })["invite-link"].post());
      setCopied({ email: made.email, link: made.link });
      await navigator.clipboard?.writeText(made.link).catch(() => undefined);
      setMessage(`A new invitation link for ${made.email} is below; the one sent before no longer works`);
      setActionError(null);
    } catch (err) {
      setActionError(describeError(err));
      await reload();
    }
  };
  const setRole = async (email: string, role: Role) => {
    try {
      await call(identityApi.api.admin.members({ email }).patch({ role }));
      setMessage(`${email} is now ${role}`);
      setActionError(null);
      await reload();
    } catch (err) {
      setActionError(describeError(err));
      await reload();
    }
  };
  return (
    <ResourceList
      title="Members"
      noun="member"
      intro="People of this project's organisation and their role in every project of it."
      items={data}
      error={error ?? actionError}
      message={message}
      searchText={(m) => [m.email]}
      caption="Members and their roles"
      rowKey={(m) => m.email}
      nameHeader="Email"
      name={(m) => m.email}
      columns={[
        {
          header: "Role",
          cell: (m) =>
            manage ? (
              <select aria-label={`Role of ${m.email}`} value={m.role} onChange={(e) => setRole(m.email, (e.target as HTMLSelectElement).value as Role)}>
                {ROLES.map((r) => (
                  <option key={r.role} value={r.role}>
                    {r.role}
                  </option>
                ))}
              </select>
            ) : (
              m.role
            ),
        },
        {
          header: "Joined",
          cell: (m) =>
            m.status === "invited" ? (
              <span>
                Invited, not accepted yet <span class="muted small">(link valid until <When iso={m.expiresAt} />)</span>
              </span>
            ) : (
              <When iso={m.joinedAt} />
            ),
        },
      ]}
      actions={
        manage &&
        ((m) => (
          <>
            {m.status === "invited" && (
              <button type="button" class="secondary small" aria-label={`Copy link for ${m.email}`} onClick={() => copyLink(m.email)}>
                Copy link
              </button>
            )}
            <button
            type="button"
            class="danger secondary small"
            aria-label={m.status === "invited" ? `Withdraw the invitation of ${m.email}` : `Remove ${m.email}`}
            onClick={() => setRemoving({ email: m.email, invited: m.status === "invited" })}
          >
            {m.status === "invited" ? "Withdraw" : "Remove"}
            </button>
          </>
        ))
      }
    >
      {manage && copied && (
        <section class="panel" aria-label="Invitation link">
          <p>
            Send this link to <strong>{copied.email}</strong> yourself: it accepts their invitation once.
          </p>
          <div class="secret">
            <input class="mono secret-value" readOnly value={copied.link} aria-label={`Invitation link for ${copied.email}`} onFocus={(e) => (e.target as HTMLInputElement).select()} />
            <CopyButton text={copied.link} label={`Copy the invitation link for ${copied.email}`} />
          </div>
        </section>
      )}
      {manage && (
        <InviteForm
          mail={mail}
          onInvited={async (email) => {
            setCopied(null);
            setMessage(
              mail && !mail.configured
                ? `Invited ${email}. ${noMailServer(mail)}; or use "Copy link" in their row to pass one on`
                : `Invited ${email}; they become a member when they accept the link on its way to them`,
            );
            await reload();
          }}
        />
      )}
      <ConfirmDialog
        open={removing !== null}
        title={removing?.invited ? `Withdraw the invitation of ${removing.email}?` : `Remove ${removing?.email ?? ""}?`}
        message={removing?.invited ? <p>Their link will no longer let them join.</p> : <p>They lose every project of the organisation at once, and their CLI sign-ins end.</p>}
        confirmLabel={removing?.invited ? "Withdraw invitation" : "Remove member"}
        danger
        onConfirm={async () => {
          await call(identityApi.api.admin.members({ email: removing!.email }).delete());
          setMessage(removing!.invited ? `Withdrew the invitation of ${removing!.email}` : `Removed ${removing!.email}`);
          await reload();
        }}
        onClose={() => setRemoving(null)}
      />
    </ResourceList>
  );
}

function AccountPage() {
  const session = useSession();
  return (
    <>
      <h1>Account</h1>
      <p>
        Signed in as <strong>{session.email}</strong>
        {session.role ? `, ${session.role} in ${session.project.name}` : ""}.
      </p>
      <h2>Your projects</h2>
      <ul>
        {session.projects.map((p) => (
          <li key={p.id}>
            {p.name} <span class="muted">({p.organisationName})</span> <code class="small">{p.id}</code>
          </li>
        ))}
      </ul>
      <h2>Command line and AI tools</h2>
      <p>
        <code>svc login</code> signs the CLI and <code>svc mcp</code> in through this browser (device flow). The API reference is at <a href="/openapi">/openapi</a>.
      </p>
    </>
  );
}

export const identityDashboard: DashboardModule = {
  pages: [
    { path: "/members", title: "Members", nav: { label: "Members", order: 80, group: "project" }, view: MembersPage },
    { path: "/account", title: "Account", view: AccountPage },
  ],
};
