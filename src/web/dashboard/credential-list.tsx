import type { ComponentChildren, JSX } from "preact";
import { useState } from "preact/hooks";
import { can, useSession } from "./registry";
import { type Column, ResourceList } from "./resource-list";
import { ConfirmDialog, useLoad } from "./ui";

/** What a page's mint dialog takes (form-kit's MintSecretDialog inside). */
export type MintDialogProps = { open: boolean; onClose: () => void; onMinted: () => Promise<void> };

/**
 * The list page of a project's secrets (SDK keys, API tokens): the live
 * ones with a masked tail, "New …" and Revoke (asked first) for those who
 * manage the project, and the page's own mint dialog.
 */
export function CredentialList<T extends { id: string }>(props: {
  title: string;
  /** "SDK key": the New button, the empty line. */
  noun: string;
  intro: string;
  caption: string;
  load: () => Promise<T[]>;
  name: (item: T) => ComponentChildren;
  columns: readonly Column<T>[];
  revoke: { label: (item: T) => string; name: (item: T) => string; message: ComponentChildren; confirmLabel: string; run: (id: string) => Promise<unknown> };
  mintDialog: (props: MintDialogProps) => JSX.Element;
}) {
  const session = useSession();
  const manage = can(session, "manage");
  const { data, error, reload } = useLoad(props.load, [session.project.id]);
  const [minting, setMinting] = useState(false);
  const [revoking, setRevoking] = useState<{ id: string; name: string } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const { revoke } = props;
  return (
    <ResourceList
      title={props.title}
      noun={props.noun}
      intro={props.intro}
      items={data}
      error={error}
      message={message}
      create={manage && { label: `New ${props.noun}`, onClick: () => setMinting(true) }}
      caption={props.caption}
      rowKey={(item) => item.id}
      name={props.name}
      columns={props.columns}
      actions={
        manage &&
        ((item) => (
          <button type="button" class="danger secondary small" aria-label={revoke.label(item)} onClick={() => setRevoking({ id: item.id, name: revoke.name(item) })}>
            Revoke
          </button>
        ))
      }
    >
      <props.mintDialog open={minting} onClose={() => setMinting(false)} onMinted={reload} />
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke ${revoking?.name ?? ""}?`}
        message={revoke.message}
        confirmLabel={revoke.confirmLabel}
        danger
        onConfirm={async () => {
          await revoke.run(revoking!.id);
          setMessage(`Revoked ${revoking!.name}`);
          await reload();
        }}
        onClose={() => setRevoking(null)}
      />
    </ResourceList>
  );
}
