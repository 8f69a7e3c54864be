import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";

/** Debian's Chromium, which .ci/run installs. */
export const CHROMIUM_PATH = "/usr/bin/chromium";
export const chromiumAvailable = existsSync(CHROMIUM_PATH);
if (!chromiumAvailable) {
  // CI installs it (.ci/run); there a missing browser is a failure, not a skip.
  if (process.env.CI) throw new Error(`${CHROMIUM_PATH} is missing: .ci/run must install Debian's chromium`);
  console.warn(`skipping the headless-Chromium tests (dashboard, device page, CORS, /openapi, intake): ${CHROMIUM_PATH} is missing (apt-get install -y chromium)`);
}

let shared: Promise<Browser> | undefined;

/**
 * One headless Chromium for every browser test file of the run (bun test runs them in one process): each file
 * opens a fresh context of it (its own cookies, storage and cache), which costs about a quarter second where
 * launching a browser per file cost about a second. One that died is launched again. test/setup.ts closes it
 * after the last file, rather than leaving it to be killed when the process exits.
 */
export function sharedBrowser(): Promise<Browser> {
  const current = shared;
  if (current) {
    return current.then((browser) => {
      if (browser.isConnected()) return browser;
      if (shared === current) shared = undefined;
      return sharedBrowser();
    });
  }
  const launched = import("playwright-core").then(({ chromium }) =>
    chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    }),
  );
  shared = launched;
  launched.catch(() => {
    if (shared === launched) shared = undefined;
  });
  return launched;
}

/** Closes the run's browser, if one was launched. */
export async function closeSharedBrowser(): Promise<void> {
  const current = shared;
  shared = undefined;
  if (!current) return;
  try {
    await (await current).close();
  } catch {
    // It never launched, or it is gone already.
  }
}
