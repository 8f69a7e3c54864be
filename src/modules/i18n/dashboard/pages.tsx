import { useState } from "preact/hooks";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { Count, OverviewCard } from "../../../web/dashboard/overview-card";
import { navigate } from "../../../web/dashboard/router";
import { NameCell, ResourceList, useLiveList, useRowDialogs } from "../../../web/dashboard/resource-list";
import { ErrorMessage, Link, Loading, RowEditDelete, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { type Profile, type TranslationKey, loadKeys, loadProfile, loadProfiles, loadPublishing } from "./client";
import { DeleteKeyDialog, DeleteProfileDialog, KeyDialog, ProfileDialog } from "./form";

/** Rows drawn at most: a profile may hold 10,000 keys; searching narrows. */
const SHOWN_MAX = 500;

const profileHref = (p: { name: string }) => `/i18n/${encodeURIComponent(p.name)}`;

/** Says so when the project does not publish its translations (Settings → Translations). */
function PublishingNotice() {
  const session = useSession();
  const { data } = useLoad(loadPublishing, [session.project.id]);
  if (data !== false) return null;
  return (
    <p class="error" role="note">
      Translations are not published: SDKs get an empty <span class="mono">translations</span> section until the Translations module is turned on in <Link href="/settings">Settings</Link>.
    </p>
  );
}

/** The project's translation profiles: one per locale, with how many keys each holds; create, edit, delete. */
function ProfileList() {
  const session = useSession();
  const writable = can(session, "write");
  const { data, error, reload } = useLiveList(loadProfiles, [session.project.id]);
  const rows = useRowDialogs<Profile>(reload);
  return (
    <ResourceList
      title="Translations"
      noun="profile"
      intro={
        <>
          A profile holds one locale's keys. SDKs read them from the snapshot with <span class="mono">t(key)</span>, falling back to another locale (English by default) for keys a locale lacks. Every
          change reaches SDKs with the next snapshot (see the <Link href="/audit">audit trail</Link> for who changed what).
        </>
      }
      notice={<PublishingNotice />}
      items={data}
      error={error}
      message={rows.message}
      create={writable && { label: "New profile", onClick: rows.create }}
      searchText={(p) => [p.name, p.locale]}
      empty="No translation profiles yet."
      caption="Translation profiles with their locale, how many keys they hold and when they changed"
      rowKey={(p) => p.id}
      name={(p) => <NameCell href={profileHref(p)} name={p.name} />}
      columns={[
        { header: "Locale", cell: (p) => p.locale, class: "mono" },
        { header: "Keys", cell: (p) => p.keyCount.toLocaleString("en") },
        { header: "Updated", cell: (p) => <When iso={p.updatedAt} /> },
      ]}
      actions={writable && ((p) => <RowEditDelete noun="profile" name={p.name} onEdit={() => rows.edit(p)} onDelete={() => rows.remove(p)} />)}
    >
      <ProfileDialog
        {...rows.dialog}
        onSaved={(saved) => rows.done(rows.closeDialog() ? `Saved profile ${saved.name}` : `Created profile ${saved.name} (${saved.locale})`)}
      />
      <DeleteProfileDialog profile={rows.deleting} onClose={rows.closeDelete} onDeleted={(x) => rows.done(`Deleted profile ${x.name}`)} />
    </ResourceList>
  );
}

/** One profile's keys: search over key and value, add, edit, delete. */
function ProfileKeys({ name }: { name: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const [dialog, setDialog] = useState<{ editing: TranslationKey | null } | null>(null);
  const [deleting, setDeleting] = useState<TranslationKey | null>(null);
  const [renaming, setRenaming] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const profile = useLoad(() => loadProfile(name), [session.project.id, name]);
  const p = profile.data;
  const keys = useLoad(async () => (p ? await loadKeys(p.id) : undefined), [session.project.id, p?.id]);
  const reload = async () => {
    await Promise.all([profile.reload(), keys.reload()]);
  };
  useLiveReload(reload);

  if (profile.error && !p) {
    return (
      <>
        <p class="crumbs">
          <Link href="/i18n">Translations</Link> /
        </p>
        <ErrorMessage error={profile.error} />
      </>
    );
  }
  if (!p) return <Loading />;
  return (
    <ResourceList
      crumbs={
        <>
          <Link href="/i18n">Translations</Link> /
        </>
      }
      title={
        <>
          {p.name} <span class="mono muted">{p.locale}</span>
        </>
      }
      noun="key"
      headActions={
        writable && (
          <div class="row">
            <button type="button" onClick={() => setDialog({ editing: null })}>
              Add key
            </button>
            <button type="button" class="secondary" onClick={() => setRenaming(true)}>
              Edit profile
            </button>
          </div>
        )
      }
      intro={
        <>
          {p.keyCount.toLocaleString("en")} {p.keyCount === 1 ? "key" : "keys"} in <span class="mono">{p.locale}</span>. Push many at once with{" "}
          <span class="mono">svc i18n keys push {p.name} FILE.json</span> (keys already here are left as they are).
        </>
      }
      notice={<PublishingNotice />}
      items={keys.data}
      error={keys.error}
      message={message}
      searchText={(k) => [k.key, k.value]}
      limit={SHOWN_MAX}
      caption={`Keys of ${p.name} with their value and when they changed`}
      rowKey={(k) => k.key}
      nameHeader="Key"
      nameClass="mono"
      name={(k) => k.key}
      columns={[
        { header: "Value", cell: (k) => k.value, style: { whiteSpace: "pre-wrap", overflowWrap: "anywhere" } },
        { header: "Updated", cell: (k) => <When iso={k.updatedAt} /> },
      ]}
      actions={writable && ((k) => <RowEditDelete noun="key" name={k.key} onEdit={() => setDialog({ editing: k })} onDelete={() => setDeleting(k)} />)}
    >
      <KeyDialog
        open={dialog !== null}
        profile={p}
        editing={dialog?.editing ?? null}
        onClose={() => setDialog(null)}
        onSaved={async (key, added) => {
          setDialog(null);
          await reload();
          setMessage(added ? `Added key ${key}` : `Saved key ${key}`);
        }}
      />
      <DeleteKeyDialog
        profile={p}
        translation={deleting}
        onClose={() => setDeleting(null)}
        onDeleted={async (k) => {
          await reload();
          setMessage(`Deleted key ${k.key}`);
        }}
      />
      <ProfileDialog
        open={renaming}
        editing={p}
        onClose={() => setRenaming(false)}
        onSaved={async (saved) => {
          setRenaming(false);
          if (saved.name !== p.name) navigate(profileHref(saved), { replace: true });
          else await reload();
          setMessage(`Saved profile ${saved.name}`);
        }}
      />
    </ResourceList>
  );
}

function TranslationsCard() {
  const keys = (data: Profile[]) => data.reduce((sum, p) => sum + p.keyCount, 0);
  return (
    <OverviewCard
      load={loadProfiles}
      href="/i18n"
      main={(data) => <Count n={data.length} one="translation profile" many="translation profiles" />}
      more={(data) => `${keys(data).toLocaleString("en")} ${keys(data) === 1 ? "key" : "keys"}`}
    />
  );
}

export const i18nDashboard: DashboardModule = {
  pages: [
    { path: "/i18n", title: "Translations", nav: { label: "Translations", order: 58, group: "work" }, empty: { about: "Translation profiles hold one locale's strings; your code reads them with svc.t(\"checkout.title\").", command: "svc i18n profiles create web-de --locale de" }, view: ProfileList },
    { path: "/i18n/:profile", title: (params) => `Translations: ${params.profile}`, view: ({ params }) => <ProfileKeys name={params.profile!} /> },
  ],
  overview: TranslationsCard,
  palette: async () => (await loadProfiles()).map((p) => ({ label: `${p.name} (${p.locale})`, kind: "translations", href: profileHref(p) })),
};
