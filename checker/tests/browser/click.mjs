// Opens an HTML report of mcp-once in headless Chromium, clicks the verdict link of one trace,
// and prints, as one JSON line, what a reader then sees: whether the trace was hidden before the
// click and shown after it, the link's text, the steps drawn in its diagram, the files it links
// and, for `confirm`, each replay's SDK, verdict and evidence links.
// Usage: node click.mjs REPORT.html ANCHOR SCREENSHOT.png
import { chromium } from "playwright-core";
import { pathToFileURL } from "node:url";

const [report, anchor, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  timeout: 60_000,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  await page.goto(pathToFileURL(report).href, { timeout: 60_000 });
  const section = page.locator(`section[id="${anchor}"]`);
  const hiddenBefore = !(await section.isVisible());
  const link = page.locator(`td a[href="#${anchor}"]`).first();
  const linkText = (await link.textContent()).trim();
  await link.click({ timeout: 30_000 });
  await section.waitFor({ state: "visible", timeout: 30_000 });
  const steps = await section.locator("svg g.step").count();
  const files = await section.locator("a.file").evaluateAll((as) => as.map((a) => a.href));
  const replays = await section.locator("li.replay").evaluateAll((lis) =>
    lis.map((li) => ({
      sdk: li.dataset.sdk,
      verdict: li.dataset.verdict,
      files: [...li.querySelectorAll("a.file")].map((a) => a.href),
    })),
  );
  await section.screenshot({ path: screenshot, timeout: 30_000 });
  console.log(JSON.stringify({ hiddenBefore, visibleAfter: true, linkText, steps, files, replays }));
} finally {
  await browser.close();
}
