/**
 * The npm package as a gzipped tar (what `npm pack` writes and `npm install
 * <url>` reads): POSIX ustar, every entry a regular file under `package/`,
 * mode 0644, owner 0, a fixed mtime, in the order given. No tar library is
 * in the tree and this needs only what npm reads, so it is written here
 * (about 40 lines); the same files give the same bytes.
 */

const BLOCK = 512;
/** 1985-10-26T08:15:00Z, the date npm pack itself stamps entries with: a fixed time keeps builds byte-identical. */
const MTIME = 499162500;

export type TarFile = { name: string; body: Uint8Array };

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function header(name: string, size: number): Uint8Array {
  const bytes = new TextEncoder().encode(name);
  if (bytes.length > 100) throw new Error(`tar: ${name} is longer than 100 bytes`);
  const h = new Uint8Array(BLOCK);
  const put = (text: string, at: number) => h.set(new TextEncoder().encode(text), at);
  h.set(bytes, 0);
  put(octal(0o644, 8), 100); // mode
  put(octal(0, 8), 108); // uid
  put(octal(0, 8), 116); // gid
  put(octal(size, 12), 124);
  put(octal(MTIME, 12), 136);
  put("        ", 148); // checksum field counts as spaces while summing
  put("0", 156); // regular file
  put("ustar\0" + "00", 257);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return h;
}

/** The tar of `files` (names relative to `package/`). */
export function tarOf(files: TarFile[]): Uint8Array<ArrayBuffer> {
  const parts: Uint8Array[] = [];
  for (const file of files) {
    parts.push(header(`package/${file.name}`, file.body.length), file.body);
    const pad = (BLOCK - (file.body.length % BLOCK)) % BLOCK;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(BLOCK * 2)); // two zero blocks end the archive
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The gzipped tar npm installs. */
export function tgzOf(files: TarFile[]): Uint8Array<ArrayBuffer> {
  return Bun.gzipSync(tarOf(files), { level: 9 }) as Uint8Array<ArrayBuffer>;
}

/** One file out of a tgz written by tgzOf (the compiled binary keeps only the tgz; svc.js is its index.js). */
export function fileInTgz(tgz: Uint8Array<ArrayBuffer>, name: string): Uint8Array<ArrayBuffer> | undefined {
  const tar = Bun.gunzipSync(tgz);
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const h = tar.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) return undefined;
    const entry = new TextDecoder().decode(h.subarray(0, 100)).replace(/\0.*$/s, "");
    const size = Number.parseInt(new TextDecoder().decode(h.subarray(124, 136)).replace(/\0.*$/s, "").trim(), 8);
    if (entry === `package/${name}`) return tar.slice(at + BLOCK, at + BLOCK + size) as Uint8Array<ArrayBuffer>;
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return undefined;
}
