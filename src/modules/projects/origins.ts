/** A project's browser origins: its domain's, and the allowed origins listed in Settings. */
import { validation } from "../../lib/errors";
import { MAX_ALLOWED_ORIGINS, type Project } from "./types";

/**
 * Normalises a project domain ("example.com", "https://app.example.com:8443")
 * and derives the browser origin SDK keys accept. Empty clears it.
 */
export function parseDomain(input: string): { domain: string; origin: string | null } {
  const trimmed = input.trim().toLowerCase();
  if (trimmed === "") return { domain: "", origin: null };
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//.test(trimmed);
  let url: URL;
  try {
    url = new URL(hasScheme ? trimmed : `https://${trimmed}`);
  } catch {
    throw validation("domain is not a valid host name", "domain: expected a host like example.com or an origin like https://app.example.com");
  }
  if (!["http:", "https:"].includes(url.protocol) || url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== "")) {
    throw validation("domain is not a valid host name", "domain: expected a host like example.com or an origin like https://app.example.com, without path or query");
  }
  if (!/^[a-z0-9.-]+$/.test(url.hostname) && !/^\[[0-9a-f:]+\]$/.test(url.hostname)) {
    throw validation("domain is not a valid host name", "domain: only letters, digits, dots and hyphens");
  }
  return { domain: hasScheme ? url.origin : url.host, origin: url.origin };
}

/**
 * A project's `allowedOrigins`: each a full browser origin (scheme, host, optional port; no path), normalised
 * as browsers send it (lower case, default port dropped), duplicates removed. VALIDATION names the item.
 */
export function parseAllowedOrigins(input: readonly string[]): string[] {
  if (input.length > MAX_ALLOWED_ORIGINS) throw validation(`At most ${MAX_ALLOWED_ORIGINS} allowed origins`, `allowedOrigins: ${input.length} given`);
  const out: string[] = [];
  input.forEach((raw, i) => {
    const field = `allowedOrigins[${i}]`;
    const trimmed = raw.trim().toLowerCase();
    const bad = () => validation("An allowed origin is not a browser origin", `${field}: expected an origin like https://app.example.com or http://localhost:5173 (scheme, host, optional port; no path)`);
    if (!/^https?:\/\//.test(trimmed) || trimmed.length > 253) throw bad();
    let url: URL;
    try {
      url = new URL(trimmed);
    } catch {
      throw bad();
    }
    if (url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== "")) throw bad();
    if (/[?#]$/.test(trimmed) || (!/^[a-z0-9.-]+$/.test(url.hostname) && !/^\[[0-9a-f:]+\]$/.test(url.hostname))) throw bad();
    if (!out.includes(url.origin)) out.push(url.origin);
  });
  return out;
}

/** What the keys of a project admit: the domain's origin and the allowed origins, or null (no restriction) when there are none. */
export function admittedOrigins(project: Pick<Project, "domain" | "allowedOrigins">): string[] | null {
  const own = parseDomain(project.domain).origin;
  const all = own ? [own, ...project.allowedOrigins.filter((o) => o !== own)] : [...project.allowedOrigins];
  return all.length > 0 ? all : null;
}
