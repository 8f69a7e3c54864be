/**
 * lib/outgoing.ts (issue 25, items 6 and 7): which addresses a user-given
 * target may not be, that a name is checked by what it resolves to and the
 * call goes to the checked address (DNS rebinding), no redirects, and at
 * most 64 KiB of any answer, compressed or not.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { brotliCompressSync, gzipSync } from "node:zlib";
import type { Server } from "bun";
import { ANSWER_LIMIT_BYTES, TargetRefused, checkTarget, outgoingFetch, refusedAddressClass } from "../../src/lib/outgoing";

let server: Server<unknown>;
const seen: { host: string | null; path: string }[] = [];

beforeAll(() => {
  const zeros = Buffer.alloc(32 * 1024 * 1024);
  const gz = gzipSync(zeros, { level: 9 });
  const br = brotliCompressSync(zeros);
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (request) => {
      const path = new URL(request.url).pathname;
      seen.push({ host: request.headers.get("host"), path });
      if (path === "/gzip") return new Response(gz as Uint8Array<ArrayBuffer>, { headers: { "content-encoding": "gzip" } });
      if (path === "/br") return new Response(br as Uint8Array<ArrayBuffer>, { headers: { "content-encoding": "br" } });
      if (path === "/small-gzip") return new Response(gzipSync('{"ok":true}') as Uint8Array<ArrayBuffer>, { headers: { "content-encoding": "gzip" } });
      if (path === "/redirect") return new Response(null, { status: 302, headers: { location: "/elsewhere" } });
      return new Response(`hello ${path}`);
    },
  });
});
afterAll(() => server.stop(true));

describe("address classes", () => {
  test("private, loopback, link-local, CGNAT, multicast, unspecified and reserved addresses, IPv4 inside IPv6 too", () => {
    const cases: [string, string | null][] = [
      ["127.0.0.1", "loopback"],
      ["10.1.2.3", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.1", null],
      ["192.168.0.1", "private"],
      ["169.254.169.254", "link-local"],
      ["100.64.0.1", "CGNAT"],
      ["100.128.0.1", null],
      ["0.0.0.0", "unspecified"],
      ["224.0.0.251", "multicast"],
      ["255.255.255.255", "reserved"],
      ["8.8.8.8", null],
      ["::", "unspecified"],
      ["::1", "loopback"],
      ["fd00::1", "private"],
      ["fc12:3456::1", "private"],
      ["fe80::1", "link-local"],
      ["ff02::1", "multicast"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:a9fe:a9fe", "link-local"],
      ["::ffff:8.8.8.8", null],
      ["64:ff9b::10.0.0.1", "private"],
      ["2002:7f00:1::", "loopback"],
      ["2606:4700:4700::1111", null],
    ];
    expect(cases.map(([a]) => [a, refusedAddressClass(a)])).toEqual(cases);
  });
});

describe("targets", () => {
  const refuse = { allowPrivate: false };
  test("a name is judged by every address it resolves to; metadata names are refused even when private targets are allowed", async () => {
    await expect(checkTarget("https://hooks.example/x", { ...refuse, resolve: async () => ["93.184.216.34", "10.0.0.7"] })).rejects.toThrow("resolves to 10.0.0.7");
    expect(await checkTarget("https://hooks.example/x", { ...refuse, resolve: async () => ["93.184.216.34"] })).toEqual(["93.184.216.34"]);
    await expect(checkTarget("http://metadata.google.internal/", { allowPrivate: true })).rejects.toBeInstanceOf(TargetRefused);
    await expect(checkTarget("http://169.254.169.254/", { allowPrivate: true })).rejects.toThrow("metadata");
    expect(await checkTarget("http://10.0.0.7/", { allowPrivate: true })).toEqual(["10.0.0.7"]);
  });

  test("the call goes to the address that was checked, with the URL's own Host (a rebinding name gets no second lookup)", async () => {
    let lookups = 0;
    const resolve = async () => (++lookups === 1 ? ["127.0.0.1"] : ["10.9.9.9"]);
    const res = await outgoingFetch(`http://hooks.rebind.test:${server.port}/pinned`, { method: "POST", body: "{}" }, { timeoutMs: 5000, target: { allowPrivate: true, resolve } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("hello /pinned");
    expect(lookups).toBe(1);
    expect(seen.at(-1)).toEqual({ host: `hooks.rebind.test:${server.port}`, path: "/pinned" });
    // Refused before any connection when the name resolves to a private address.
    const before = seen.length;
    await expect(outgoingFetch(`http://hooks.rebind.test:${server.port}/never`, {}, { timeoutMs: 5000, target: { allowPrivate: false, resolve: async () => ["127.0.0.1"] } })).rejects.toBeInstanceOf(TargetRefused);
    expect(seen.length).toBe(before);
  });
});

describe("answers", () => {
  test("a redirect is answered, not followed", async () => {
    const res = await outgoingFetch(`http://127.0.0.1:${server.port}/redirect`, {}, { timeoutMs: 5000 });
    expect(res.status).toBe(302);
    expect(seen.some((s) => s.path === "/elsewhere")).toBe(false);
  });

  test("gzip and brotli bombs are read to 64 KiB; a small compressed answer reads whole", async () => {
    for (const path of ["/gzip", "/br"]) {
      const res = await outgoingFetch(`http://127.0.0.1:${server.port}${path}`, {}, { timeoutMs: 5000 });
      const body = new Uint8Array(await res.arrayBuffer());
      expect([path, body.byteLength, res.headers.get("x-svc-answer-truncated"), res.headers.get("content-encoding")]).toEqual([path, ANSWER_LIMIT_BYTES, String(ANSWER_LIMIT_BYTES), null]);
    }
    const small = await outgoingFetch(`http://127.0.0.1:${server.port}/small-gzip`, {}, { timeoutMs: 5000 });
    expect(await small.json()).toEqual({ ok: true });
    expect(small.headers.get("x-svc-answer-truncated")).toBeNull();
  });
});
