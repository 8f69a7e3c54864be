/**
 * `X-Svc-Relay: id=<id>; name=<name>; version=<version>`: how an edge relay (src/modules/relays/edge) names itself
 * on every call it makes to its upstream, which records it (this module). Parsed strictly: exactly these three
 * fields in this order, each bounded and printable; anything else is ignored whole (a client can send any
 * header, so nothing here is trusted beyond being shown as text).
 */
export const RELAY_HEADER = "x-svc-relay";

export type RelayHello = { id: string; name: string; version: string };

/** Printable ASCII without space, `;`, `=`, `,` and quotes: what can sit in the header unescaped. */
const TOKEN = /^[\x21-\x7e]{1,64}$/;
const SEPARATORS = /[;=,"\\]/;
const VERSION = /^[0-9A-Za-z.+-]{1,32}$/;
const HEADER = /^id=([^;]*); name=([^;]*); version=([^;]*)$/;

const isToken = (value: string) => TOKEN.test(value) && !SEPARATORS.test(value);

/** The header's value, or undefined when it is absent or not exactly of the form above. */
export function parseRelayHeader(value: string | null | undefined): RelayHello | undefined {
  if (!value || value.length > 200) return undefined;
  const m = HEADER.exec(value);
  if (!m) return undefined;
  const [, id, name, version] = m as unknown as [string, string, string, string];
  if (!isToken(id) || !isToken(name) || !VERSION.test(version)) return undefined;
  return { id, name, version };
}

/** A name made fit for the header (a host name always is): other characters become `-`, at most 64. */
export function headerName(name: string): string {
  const cleaned = [...name].map((c) => (isToken(c) ? c : "-")).join("").slice(0, 64);
  return cleaned === "" ? "relay" : cleaned;
}

export function formatRelayHeader(hello: RelayHello): string {
  return `id=${hello.id}; name=${headerName(hello.name)}; version=${hello.version}`;
}
