/**
 * "Did you mean …": for the CLI's mistyped nouns, subcommands and flags (and
 * the singular of every plural noun, `svc killswitch list`), and for the
 * server's NOT_FOUND of a killswitch, gate or config name. No dependency of
 * ours does edit distance, and the words are short: a plain edit distance is
 * enough. Here, not in src/cli, because the server uses it too.
 */

/** Edit distance: insertions, deletions, substitutions and swaps of two neighbours (`lsit` is one edit from `list`). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate closest to `typed`, when it is close enough to be a typo:
 * at most 1 edit for words up to 4 letters, 2 up to 8, else 3. A candidate
 * that starts with what was typed (`kill` for killswitches) also counts.
 */
export function closest(typed: string, candidates: Iterable<string>): string | undefined {
  const word = typed.toLowerCase();
  // Long input is no typo of a name, and keeps the work of a miss small.
  if (word.length === 0 || word.length > MAX_TYPED) return undefined;
  const limit = typoLimit(word);
  let best: string | undefined;
  let bestDistance = Infinity;
  let looked = 0;
  for (const candidate of candidates) {
    if (++looked > MAX_CANDIDATES) break;
    const other = candidate.toLowerCase();
    if (other === word) return candidate;
    const prefix = word.length >= 3 && other.startsWith(word);
    if (!prefix && Math.abs(other.length - word.length) > limit) continue;
    const distance = prefix ? 1 : editDistance(word, other);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

const MAX_TYPED = 64;
const MAX_CANDIDATES = 10_000;

/** How many edits still make a typo of a word this long. */
export const typoLimit = (word: string) => (word.length <= 4 ? 1 : word.length <= 8 ? 2 : 3);

/** `message. Did you mean "x"?`, or the message alone when no candidate is close. */
export function withSuggestion(message: string, typed: string, candidates: Iterable<string>, show: (c: string) => string = (c) => `"${c}"`): string {
  const match = closest(typed, candidates);
  return match === undefined ? message : `${message}. Did you mean ${show(match)}?`;
}

/** The singular a person types for a plural noun: killswitches → killswitch, deliveries → delivery, gates → gate. */
export function singular(word: string): string | undefined {
  if (/ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/(ch|sh|x|ss)es$/.test(word)) return word.slice(0, -2);
  if (/[^s]s$/.test(word)) return word.slice(0, -1);
  return undefined;
}
