import type { ComponentChildren } from "preact";
import { useSession } from "./registry";
import { Link, Loading, useLoad } from "./ui";

/**
 * A feature's card on the project's overview: its headline figure as a link
 * to its page, then one muted fact ("3 metrics · 1 of them ratios").
 */
export function OverviewCard<T>({ load, href, main, more }: { load: () => Promise<T>; href: string; main: (data: T) => ComponentChildren; more: (data: T) => ComponentChildren }) {
  const session = useSession();
  const { data } = useLoad(load, [session.project.id]);
  if (!data) return <Loading />;
  return (
    <>
      <Link href={href}>{main(data)}</Link>
      <span class="muted"> · {more(data)}</span>
    </>
  );
}

/** "<strong>3</strong> metrics", "<strong>1</strong> metric". */
export function Count({ n, one, many }: { n: number; one: string; many: string }) {
  return (
    <>
      <strong>{n}</strong> {n === 1 ? one : many}
    </>
  );
}
