// Open a replay report in headless Chromium (playwright-core) and say what rendered.
// usage: node render_check.cjs CHROMIUM FILE.html SCREENSHOT.png
const { chromium } = require("playwright-core");

async function main() {
  const [chromiumPath, file, screenshot] = process.argv.slice(2);
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const errors = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") errors.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => errors.push(`pageerror: ${e}`));
  page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()}`));
  page.on("request", (r) => {
    if (!r.url().startsWith("file://")) errors.push(`fetched: ${r.url()}`);
  });
  await page.goto("file://" + file, { waitUntil: "load" });
  await page.evaluate(() => document.querySelectorAll("details").forEach((d) => (d.open = true)));
  const info = await page.evaluate(() => {
    const box = (el) => (el ? el.getBoundingClientRect() : { width: 0, height: 0 });
    const charts = [...document.querySelectorAll("svg.chart")];
    return {
      title: document.title,
      charts: charts.length,
      drawn: charts.filter((c) => box(c).width > 300 && box(c).height > 100).length,
      raw: document.querySelectorAll("svg.chart polyline.raw").length,
      managed: document.querySelectorAll("svg.chart polyline.managed").length,
      cached: document.querySelectorAll("svg.chart polygon.cached").length,
      rewrites: document.querySelectorAll("svg.chart circle.rewrite").length,
      bars: document.querySelectorAll("svg.corpus g.run-bar").length,
      runRows: document.querySelectorAll("table.runs tr").length - 1,
    };
  });
  await page.screenshot({ path: screenshot });
  await browser.close();
  console.log(JSON.stringify({ ...info, errors }));
}

main().catch((e) => {
  console.error(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
