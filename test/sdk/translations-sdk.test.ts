import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Client, type SvcError, type Translations, createClient, interpolate, localeChain, translate } from "../../src/sdk";
import { startTestServer, type TestServer } from "../helpers";

const section: Translations = {
  en: { "checkout.pay": "Pay now", "checkout.greeting": "Hello {name}!", "only.en": "English only" },
  de: { "checkout.pay": "Jetzt bezahlen", "checkout.greeting": "Hallo {name}!", "only.de": "Nur Deutsch" },
  "de-CH": { "checkout.greeting": "Grüezi {name}!" },
  "zh-Hant-TW": { "checkout.pay": "立即付款" },
};

describe("translate (src/sdk/translations.ts)", () => {
  test("the locale, then its parents, then the fallback and its parents; the key itself when nobody has it", () => {
    expect(translate(section, "checkout.greeting", { locale: "de-CH" })).toBe("Grüezi {name}!");
    // de-CH lacks it: its parent de has it.
    expect(translate(section, "checkout.pay", { locale: "de-CH" })).toBe("Jetzt bezahlen");
    // Neither de-CH nor de: the fallback (default en).
    expect(translate(section, "only.en", { locale: "de-CH" })).toBe("English only");
    expect(translate(section, "only.de", { locale: "fr", fallbackLocale: "de-AT" })).toBe("Nur Deutsch");
    expect(translate(section, "missing.key", { locale: "de-CH" })).toBe("missing.key");
    expect(translate(section, "checkout.pay")).toBe("Pay now");
    expect(translate(section, "checkout.pay", { locale: "ja" })).toBe("Pay now");
    expect(translate({}, "checkout.pay", { locale: "de" })).toBe("checkout.pay");
    expect(translate(null, "checkout.pay")).toBe("checkout.pay");
    expect(translate(section, "only.de", { fallbackLocale: "fr" })).toBe("only.de");
  });

  test("tags match however they are spelled: case, and _ for -", () => {
    expect(translate(section, "checkout.greeting", { locale: "de_ch" })).toBe("Grüezi {name}!");
    expect(translate(section, "checkout.pay", { locale: "ZH-hant-tw" })).toBe("立即付款");
    expect(translate(section, "checkout.pay", { locale: "zh-Hant-TW-u-ca-roc" })).toBe("立即付款");
    expect(localeChain("de-CH-1996", "en-GB")).toEqual(["de-ch-1996", "de-ch", "de", "en-gb", "en"]);
    expect(localeChain("en-US-x-twain", "en")).toEqual(["en-us-x-twain", "en-us", "en"]);
    expect(localeChain(undefined, "en")).toEqual(["en"]);
  });

  test("{name} placeholders are filled from vars (own properties only); others stay as written", () => {
    expect(translate(section, "checkout.greeting", { locale: "de", vars: { name: "Ada" } })).toBe("Hallo Ada!");
    expect(interpolate("{count} items for {name}, {missing}", { count: 3, name: "Ada" })).toBe("3 items for Ada, {missing}");
    expect(interpolate("{toString} {a}", { a: true })).toBe("{toString} true");
    expect(interpolate("{ name } {na-me}", { name: "x" })).toBe("{ name } {na-me}");
    expect(interpolate("{name}", undefined)).toBe("{name}");
    // A missing key is answered as given, placeholders and all.
    expect(translate(section, "no.such", { vars: { name: "x" } })).toBe("no.such");
  });

  test("keys that are Object.prototype's names are plain entries, never inherited", () => {
    const tricky = JSON.parse('{"en":{"__proto__":"proto","constructor":"c"}}') as Translations;
    expect(translate(tricky, "__proto__")).toBe("proto");
    expect(translate(tricky, "constructor")).toBe("c");
    expect(translate(section, "toString")).toBe("toString");
    expect(translate(section, "hasOwnProperty", { locale: "de" })).toBe("hasOwnProperty");
  });
});

describe("client.t against a real server", () => {
  let s: TestServer;
  const clients: Client[] = [];
  const client = (options: Partial<Parameters<typeof createClient>[0]> = {}) => {
    const errors: SvcError[] = [];
    const c = createClient({ baseUrl: s.url, sdkKey: s.serverKey, env: "prod", onError: (e) => errors.push(e), ...options });
    clients.push(c);
    return Object.assign(c, { errors });
  };
  const waitFor = async (check: () => boolean, timeoutMs: number, what: string) => {
    const start = performance.now();
    while (!check()) {
      if (performance.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await Bun.sleep(5);
    }
  };

  beforeAll(async () => {
    s = await startTestServer({ streamHeartbeatMs: 200 });
    for (const [name, locale] of [["english", "en"], ["german", "de"], ["swiss", "de-ch"]]) {
      expect((await s.api("/api/admin/i18n/profiles", { body: { name, locale } })).status).toBe(201);
    }
    const push = async (profile_id: string, pairs: Record<string, string>) =>
      expect((await s.api("/api/admin/i18n/keys", { body: { profile_id, keys: Object.entries(pairs).map(([key, value]) => ({ key, value })) } })).status).toBe(200);
    await push("english", { "checkout.pay": "Pay now", "checkout.greeting": "Hello {name}!" });
    await push("german", { "checkout.pay": "Jetzt bezahlen", "checkout.greeting": "Hallo {name}!" });
    await push("swiss", { "checkout.greeting": "Grüezi {name}!" });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await s.stop();
  });

  test("before the first snapshot t answers the key; then the client's locale, a call's locale, the fallback, vars", async () => {
    const c = client({ locale: "de-CH" });
    expect(c.t("checkout.pay")).toBe("checkout.pay");
    await c.ready();
    expect(c.snapshot()!.translations["de-CH"]).toEqual({ "checkout.greeting": "Grüezi {name}!" });
    expect(c.t("checkout.greeting", { vars: { name: "Ada" } })).toBe("Grüezi Ada!");
    expect(c.t("checkout.pay")).toBe("Jetzt bezahlen");
    expect(c.t("checkout.pay", { locale: "en-GB" })).toBe("Pay now");
    expect(c.t("checkout.missing")).toBe("checkout.missing");
    const plain = client({ stream: false });
    await plain.ready();
    expect(plain.t("checkout.pay")).toBe("Pay now");
    expect(plain.t("checkout.pay", { locale: "fr", fallbackLocale: "de" })).toBe("Jetzt bezahlen");
    const french = client({ stream: false, locale: "fr", fallbackLocale: "de" });
    await french.ready();
    expect(french.t("checkout.greeting", { vars: { name: "Léa" } })).toBe("Hallo Léa!");
    expect([c.errors, plain.errors, french.errors]).toEqual([[], [], []]);
  });

  test("a key pushed or changed reaches a following client without a restart", async () => {
    const c = client({ locale: "de" });
    await c.ready();
    await waitFor(() => s.server.ctx.services.snapshots.listenerCount() > 0, 2000, "stream connected");
    expect(c.t("checkout.total")).toBe("checkout.total");
    expect((await s.api("/api/admin/i18n/keys", { body: { profile_id: "german", keys: [{ key: "checkout.total", value: "Summe" }] } })).status).toBe(200);
    await waitFor(() => c.t("checkout.total") === "Summe", 2000, "pushed key seen");
    expect((await s.api("/api/admin/i18n/keys/checkout.pay?profile_id=german", { method: "PATCH", body: { value: "Zahlen" } })).status).toBe(200);
    await waitFor(() => c.t("checkout.pay") === "Zahlen", 2000, "changed key seen");
    expect((await s.api("/api/admin/i18n/keys/checkout.pay?profile_id=german", { method: "DELETE" })).status).toBe(204);
    // Gone from de: the fallback answers.
    await waitFor(() => c.t("checkout.pay") === "Pay now", 2000, "deleted key falls back");
  });
});
