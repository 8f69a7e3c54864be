/** Unknown names a client warns about, at most (then it says it stops): names built at run time cannot fill memory or the log. */
export const UNKNOWN_NAMES_WARNED = 100;

export type NameKind = "killswitch" | "gate" | "config" | "experiment";

const WHAT: Record<NameKind, (name: string, env: string) => string> = {
  killswitch: (name, env) => `unknown killswitch ${name}: not in the ${env} snapshot, so isKilled answers false`,
  gate: (name, env) => `unknown gate ${name}: not in the ${env} snapshot, so isEnabled answers false`,
  config: (name, env) => `unknown config ${name}: not in the ${env} snapshot, so getConfig answers the default`,
  experiment: (name, env) => `no running experiment ${name} in the ${env} snapshot, so getVariant answers not_found`,
};

/**
 * Warns once per kind and name that the loaded snapshot lacks it (see
 * ClientOptions.onWarning): a mistyped name otherwise answers the default
 * without a word. Only for a loaded snapshot: before it every name answers
 * the default by design.
 */
export function unknownNameWarner(warn: (message: string) => void) {
  const warned = new Set<string>();
  return (kind: NameKind, name: string, env: string) => {
    if (warned.size > UNKNOWN_NAMES_WARNED) return;
    const key = `${kind}\u0000${name}`;
    if (warned.has(key)) return;
    warned.add(key);
    if (warned.size > UNKNOWN_NAMES_WARNED) {
      warn(`[svc] more than ${UNKNOWN_NAMES_WARNED} unknown names asked for; this client reports no more`);
      return;
    }
    warn(`[svc] ${WHAT[kind](JSON.stringify(name), env)} (check the name, or create it; said once per name)`);
  };
}
