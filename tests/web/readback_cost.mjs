// What reading the GPU's vertices back (the live comparison's and picking's readback) costs the
// web page's frame: each model at 1280x800 in the GPU view, first with nothing read back, then
// with a vertex picked (read back every frame, as the comparison views do), on each backend;
// prints the median frame time of each, the page's own readback handling time (wall time in
// the frame, waiting included), and the Chromium warnings seen. A benchmark
// (BENCHMARKS.md "Web page: what the live comparison costs"), not a test.
// Usage: xvfb-run -a -s "-screen 0 1400x900x24" node tests/web/readback_cost.mjs [SECONDS]
// (web/dist built by scripts/build-web.sh; Chromium with a window, as tests/web/run.mjs says).
import { chromium } from "playwright-core";
import { serve } from "./serve.mjs";

const SECONDS = Number(process.argv[2] ?? 8);
const MODELS = { CesiumMan: "/models/CesiumMan/CesiumMan.glb", "dense humanoid": "builtin:dense-humanoid" };
const server = await serve(0, []);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({
  executablePath: process.env.SKINVIEW_CHROMIUM ?? "/usr/bin/chromium",
  headless: false,
  args: ["--no-sandbox", "--enable-unsafe-webgpu", "--ignore-gpu-blocklist", "--no-first-run"],
});
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/// Median frame and readback ms of `page` over SECONDS.
async function sample(page) {
  const frame = [], readback = [];
  for (let t = 0; t < SECONDS * 4; t++) {
    const r = JSON.parse((await page.textContent("#skinview-report")) || "null");
    frame.push(r.frame_ms);
    readback.push(r.readback_ms);
    await page.waitForTimeout(250);
  }
  return { frame: median(frame), readback: median(readback) };
}

/// One model in the GPU view: measured as it is (nothing read back), then with a vertex picked
/// (the pick keeps the draw's vertices read back every frame they land: the same readback the
/// comparison views run, with the same view drawn), and the page's warnings.
async function measure(backend, model) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const warnings = [];
  page.on("console", (m) => (m.type() === "warning" || m.type() === "error") && warnings.push(m.text()));
  await page.goto(`${base}?backend=${backend}&size=1280x800&view=gpu&model=${encodeURIComponent(model)}`);
  const report = async () => JSON.parse((await page.textContent("#skinview-report")) || "null");
  for (let i = 0; i < 1200 && !((await report())?.frames >= 10); i++) await page.waitForTimeout(100);
  await page.waitForTimeout(2000);
  const plain = await sample(page);
  // Click along the canvas's middle row until a vertex is picked.
  const box = await page.locator("#skinview").boundingBox();
  let picked = false;
  for (const dx of [0, 30, -30, 60, -60, 90, -90, 120, -120]) {
    await page.mouse.click(box.x + box.width / 2 + dx, box.y + box.height * 0.45);
    for (let i = 0; i < 100 && !picked; i++) {
      picked = (await report())?.picked != null;
      if (!picked) await page.waitForTimeout(100);
    }
    if (picked) break;
  }
  await page.waitForTimeout(2000);
  const reading = picked ? await sample(page) : null;
  await page.close();
  return { plain, reading, warnings: warnings.length };
}

console.log(`Chromium ${browser.version()}, 1280x800, medians over ${SECONDS} s`);
console.log("| backend | model | frame ms, nothing read back | frame ms, read back every frame | added by the readback | readback handling ms | warnings |");
console.log("|---|---|---:|---:|---:|---:|---:|");
for (const backend of ["webgl2", "webgpu"]) {
  for (const [name, model] of Object.entries(MODELS)) {
    const m = await measure(backend, model);
    if (!m.reading) {
      console.log(`| ${backend} | ${name} | ${m.plain.frame.toFixed(1)} | no vertex picked | | | ${m.warnings} |`);
      continue;
    }
    const added = m.reading.frame - m.plain.frame;
    console.log(
      `| ${backend} | ${name} | ${m.plain.frame.toFixed(1)} | ${m.reading.frame.toFixed(1)} | ` +
        `${added.toFixed(1)} (${((100 * added) / m.plain.frame).toFixed(0)} %) | ${m.reading.readback.toFixed(1)} | ${m.warnings} |`,
    );
  }
}
await browser.close();
server.close();
