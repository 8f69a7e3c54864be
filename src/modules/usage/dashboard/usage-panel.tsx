import { call } from "../../../web/dashboard/api";
import { useSession } from "../../../web/dashboard/registry";
import { ErrorMessage, When, useLoad } from "../../../web/dashboard/ui";
import { ENVS, usageApi } from "./client";

const NUMBER = new Intl.NumberFormat("en");
const WIDTH = 240;
const HEIGHT = 40;

/**
 * Daily counts as a small line (an SVG, `role="img"`), its text alternative in its accessible name: the
 * total, the busiest day and the last day, so a screen reader hears what the line shows.
 */
export function Sparkline({ days, label }: { days: readonly { day: string; count: number }[]; label: string }) {
  const max = Math.max(1, ...days.map((d) => d.count));
  const total = days.reduce((sum, d) => sum + d.count, 0);
  const busiest = days.reduce((best, d) => (d.count > best.count ? d : best), days[0] ?? { day: "", count: 0 });
  const step = days.length > 1 ? WIDTH / (days.length - 1) : WIDTH;
  const points = days.map((d, i) => `${(i * step).toFixed(1)},${(HEIGHT - 2 - (d.count / max) * (HEIGHT - 4)).toFixed(1)}`).join(" ");
  const last = days[days.length - 1];
  const text =
    total === 0
      ? `${label}: no evaluations in the last ${days.length} days`
      : `${label}: ${NUMBER.format(total)} evaluations in the last ${days.length} days; most on ${busiest.day} (${NUMBER.format(busiest.count)}); ${NUMBER.format(last?.count ?? 0)} today`;
  return (
    <svg class="sparkline" role="img" aria-label={text} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width={WIDTH} height={HEIGHT} preserveAspectRatio="none">
      <title>{text}</title>
      <line x1="0" y1={HEIGHT - 1} x2={WIDTH} y2={HEIGHT - 1} stroke="currentColor" stroke-opacity="0.3" />
      <polyline points={points} fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round" />
    </svg>
  );
}

/**
 * A flag's usage on its page (killswitch, gate, config): when each env last evaluated it, the last 30 days
 * as a sparkline (its code references are the refs module's section beside it).
 */
export function FlagUsagePanel({ name }: { name: string }) {
  const session = useSession();
  const load = useLoad(() => call(usageApi.api.admin.flags({ name }).usage.get({ query: {} })), [session.project.id, name]);
  const usage = load.data;
  return (
    <section class="panel flag-usage" aria-labelledby="flag-usage-title">
      <h2 id="flag-usage-title">Usage</h2>
      {load.error && <ErrorMessage error={load.error} />}
      {usage && (
        <>
          <Sparkline days={usage.days} label={`Evaluations of ${name} per day, every env`} />
          <dl class="usage-last">
            {ENVS.map((env) => (
              <div key={env}>
                <dt>Last evaluated on {env}</dt>
                <dd>{usage.lastEvaluatedAt[env] ? <When iso={usage.lastEvaluatedAt[env]} /> : "never"}</dd>
              </div>
            ))}
          </dl>
        </>
      )}
    </section>
  );
}
