import { useEffect, useId, useMemo, useRef, useState } from "preact/hooks";
import type { DashboardModule, DashboardPage, PaletteItem } from "./registry";
import { Dialog } from "./ui";

/**
 * Jump to any page, killswitch or config by typing part of its name
 * (Ctrl+K). An ARIA combobox: the input keeps focus, arrows move the
 * active option, Enter goes there.
 */
export function CommandPalette(props: { open: boolean; onClose: () => void; modules: DashboardModule[]; pages: DashboardPage[]; onGo: (href: string) => void }) {
  const [query, setQuery] = useState("");
  const [items, setItems] = useState<PaletteItem[]>([]);
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const listId = useId();

  useEffect(() => {
    // Cleared on closing, not on opening: this effect runs after the dialog shows, and what someone typed at once
    // (Ctrl+K, then the name) would be wiped.
    if (!props.open) {
      setQuery("");
      setActive(0);
      return;
    }
    const pages: PaletteItem[] = props.pages.map((p) => ({ label: p.nav!.label, kind: "page", href: p.path }));
    setItems(pages);
    Promise.all(props.modules.map((m) => (m.palette ? m.palette().catch(() => []) : Promise.resolve([])))).then((lists) => setItems([...pages, ...lists.flat()]));
    setTimeout(() => input.current?.focus(), 0);
  }, [props.open]);

  const matches = useMemo(() => {
    const q = query.trim().toLowerCase();
    const found = q ? items.filter((i) => i.label.toLowerCase().includes(q)) : items;
    // Names that start with the query first.
    return found.sort((a, b) => Number(b.label.toLowerCase().startsWith(q)) - Number(a.label.toLowerCase().startsWith(q))).slice(0, 50);
  }, [items, query]);
  const current = Math.min(active, Math.max(0, matches.length - 1));

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown") {
      e.preventDefault();
      setActive((current + 1) % Math.max(1, matches.length));
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      setActive((current - 1 + matches.length) % Math.max(1, matches.length));
    } else if (e.key === "Enter" && matches[current]) {
      e.preventDefault();
      props.onGo(matches[current]!.href);
    }
  };

  return (
    <Dialog open={props.open} title="Go to" onClose={props.onClose}>
      <input
        ref={input}
        type="text"
        role="combobox"
        aria-label="Search pages, killswitches, gates and configs"
        aria-expanded="true"
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={matches[current] ? `${listId}-${current}` : undefined}
        value={query}
        onInput={(e) => {
          setQuery((e.target as HTMLInputElement).value);
          setActive(0);
        }}
        onKeyDown={onKeyDown}
      />
      <ul id={listId} role="listbox" aria-label="Results" class="palette-list">
        {matches.map((item, i) => (
          <li
            key={`${item.kind}:${item.href}`}
            id={`${listId}-${i}`}
            role="option"
            aria-selected={i === current}
            class={i === current ? "active" : undefined}
            onMouseDown={(e) => {
              e.preventDefault();
              props.onGo(item.href);
            }}
          >
            <span>{item.label}</span> <span class="muted">{item.kind}</span>
          </li>
        ))}
        {matches.length === 0 && (
          <li role="option" aria-disabled="true" aria-selected="false" class="muted">
            Nothing matches “{query}”
          </li>
        )}
      </ul>
    </Dialog>
  );
}
