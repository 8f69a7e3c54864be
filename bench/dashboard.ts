/**
 * The dashboard (issue 11): first paint and "content ready" (the page's own
 * heading rendered from live data) of /killswitches in headless Chromium,
 * against a bare Bun.serve answering a static page in the same run, and the
 * bundle's size as the browser received it (gzip).
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { type Row, type Settings, initProject, latencyRow, startBare, startSvc, stop } from "./lib";

const CHROMIUM = "/usr/bin/chromium";
const BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export async function runDashboard(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  if (!existsSync(CHROMIUM)) {
    console.log(`dashboard: SKIPPED, ${CHROMIUM} is missing (apt-get install -y chromium)`);
    return { rows: [], figures: {} };
  }
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-dash-"));
  const keys = initProject(settings, dataDir) as ReturnType<typeof initProject> & { ownerEmail: string };
  const svc = await startSvc(settings, dataDir);
  const bare = await startBare('<!doctype html><html lang="en"><head><title>bare</title></head><body><h1>Killswitches</h1></body></html>', { type: "text/html; charset=utf-8" });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: BROWSER_ARGS });
  try {
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${svc.url}/api/admin/killswitches`, { method: "POST", headers: { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" }, body: JSON.stringify({ name: `flag-${i}` }) });
      if (r.status !== 201) throw new Error(`create answered ${r.status}`);
    }
    const context = await browser.newContext();
    const page = await context.newPage();
    // Sign in once through the real pages; the link comes from the outbox (no SMTP here).
    await page.goto(`${svc.url}/signin`);
    await page.getByLabel("Email").fill(keys.ownerEmail);
    await page.getByRole("button", { name: "Send sign-in link" }).click();
    await page.waitForLoadState();
    const outbox = readFileSync(join(dataDir, "outbox.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    await page.goto(outbox.findLast((l) => l.to === keys.ownerEmail).link);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/");

    const samples = Math.min(settings.samples, 30);
    const measure = async (url: string, heading: string) => {
      const paint: number[] = [];
      const ready: number[] = [];
      for (let i = 0; i < samples; i++) {
        await page.goto(url, { waitUntil: "commit" });
        await page.getByRole("heading", { level: 1, name: heading }).waitFor();
        const t = await page.evaluate(() => ({
          paint: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? Number.NaN,
          ready: performance.now(),
        }));
        paint.push(t.paint);
        ready.push(t.ready);
      }
      return { paint, ready };
    };
    const ours = await measure(`${svc.url}/killswitches`, "Killswitches");
    const assets = await page.evaluate(() =>
      performance
        .getEntriesByType("resource")
        .filter((e) => new URL(e.name).pathname.startsWith("/assets/"))
        .map((e) => (e as PerformanceResourceTiming).encodedBodySize),
    );
    const baseline = await measure(`${bare.url}/`, "Killswitches");
    await context.close();
    const rows = [
      latencyRow("dashboard /killswitches: first contentful paint", ours.paint),
      latencyRow("dashboard /killswitches: heading rendered from live data", ours.ready),
      latencyRow("bare Bun.serve static page: first contentful paint", baseline.paint),
    ];
    const bundleGzipKb = assets.reduce((a, b) => a + b, 0) / 1024;
    return { rows, figures: { "dashboard bundle, gzip KB (as received)": bundleGzipKb, "dashboard first paint p50 ms": rows[0]!.p50Ms, "dashboard content ready p50 ms": rows[1]!.p50Ms } };
  } finally {
    await browser.close();
    await stop([svc, bare]);
  }
}
