// Drives skinview's web page (web/dist, built by scripts/build-web.sh) in Debian's Chromium on
// both backends and writes what it saw to OUT/results.json and PNGs beside it; the Rust test
// tests/web/main.rs judges them (and the goldens). Usage: node tests/web/run.mjs OUT
//
// Chromium runs with a window, under Xvfb (xvfb-run), not --headless: Chromium 156's headless
// mode aborts every WebGPU buffer map once a WebGPU canvas has presented ("A valid external
// Instance reference no longer exists"; a 20-line page without skinview shows it), so no page
// could read anything back there. With a window and --ignore-gpu-blocklist, WebGPU is the same
// SwiftShader adapter and WebGL2 is ANGLE on Mesa's llvmpipe: both software, on the CPU.
import fs from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import { serve } from "./serve.mjs";

const out = process.argv[2];
if (!out) {
  console.error("usage: node tests/web/run.mjs OUT_DIR");
  process.exit(2);
}
fs.mkdirSync(out, { recursive: true });

const BROWSER = process.env.SKINVIEW_CHROMIUM ?? "/usr/bin/chromium";
// Chromium's own messages about its software rendering, not the page's: ignored by name.
const CHROMIUM_NOISE = [
  /GPU stall due to ReadPixels/,
  /READ-usage buffer was written, then fenced/,
  /Automatic fallback to software WebGL has been deprecated/,
  /WebGL: too many errors/,
  /GL_CLOSE_PATH_NV/,
];
const SIZE = "960x600";
const MODELS = {
  CesiumMan: "/models/CesiumMan/CesiumMan.glb",
  Fox: "/models/Fox/Fox.glb",
  rig_8_influences: "/rigs/rig_seed4_8inf_morph_ubyte.glb",
};

const server = await serve(0);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({
  executablePath: BROWSER,
  headless: false,
  args: [
    "--no-sandbox",
    "--enable-unsafe-webgpu",
    "--ignore-gpu-blocklist",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
  ],
});
const results = { browser: browser.version(), backends: {} };

/// A page with the console and uncaught errors recorded (Chromium's own noise left out).
async function open(query, messages) {
  const page = await browser.newPage({ viewport: { width: 1100, height: 700 }, acceptDownloads: true });
  page.on("console", (m) => {
    if ((m.type() === "error" || m.type() === "warning") && !CHROMIUM_NOISE.some((r) => r.test(m.text()))) {
      messages.push(`${m.type()}: ${m.text()}`);
    }
  });
  page.on("pageerror", (e) => messages.push(`uncaught: ${e.message}`));
  const started = Date.now();
  await page.goto(base + query);
  return { page, started };
}

/// The page's report (#skinview-report), parsed; null before the first frame.
async function report(page) {
  const text = await page.textContent("#skinview-report");
  return text ? JSON.parse(text) : null;
}

/// Wait until the report satisfies `test` (at most `ms`); the last report either way.
async function until(page, test, ms = 60000) {
  const end = Date.now() + ms;
  let r = null;
  while (Date.now() < end) {
    r = await report(page);
    const fatal = await page.textContent("#skinview-error");
    if (fatal) return { ...(r ?? {}), fatal };
    if (r && test(r)) return r;
    await page.waitForTimeout(100);
  }
  return { ...(r ?? {}), timed_out: true };
}

async function canvasShot(page, file) {
  await page.locator("#skinview").screenshot({ path: path.join(out, file) });
  return file;
}

for (const backend of ["webgpu", "webgl2"]) {
  const b = { messages: [] };
  results.backends[backend] = b;
  const q = `?backend=${backend}&size=${SIZE}`;

  // The built-in humanoid: it loads, draws and animates; P downloads a PNG; a broken file
  // shows its error and the model stays.
  {
    const { page, started } = await open(q, b.messages);
    const first = await until(page, (r) => r.frames >= 2);
    b.first_frame_ms = Date.now() - started;
    const r = await until(page, (r) => r.frames >= 30);
    b.humanoid = r;
    b.humanoid_shots = [await canvasShot(page, `${backend}-humanoid-a.png`)];
    await page.waitForTimeout(700);
    b.humanoid_shots.push(await canvasShot(page, `${backend}-humanoid-b.png`));
    // Frames per second over 5 s of the humanoid (GPU view).
    const f0 = (await report(page)).frames;
    const t0 = Date.now();
    await page.waitForTimeout(5000);
    b.humanoid_fps = (((await report(page)).frames - f0) * 1000) / (Date.now() - t0);
    b.first_report = first;

    const download = page.waitForEvent("download", { timeout: 30000 }).catch((e) => e);
    await page.locator("#skinview").focus();
    await page.keyboard.press("p");
    const d = await download;
    if (d instanceof Error) {
      b.download = { error: d.message };
    } else {
      const file = `${backend}-download.png`;
      await d.saveAs(path.join(out, file));
      b.download = { file, suggested: d.suggestedFilename() };
    }

    await page.setInputFiles("#skinview-open", {
      name: "broken.glb",
      mimeType: "model/gltf-binary",
      buffer: Buffer.from("glTF\x02\x00\x00\x00this is not a model"),
    });
    b.broken = await until(page, (r) => (r.error ?? "").includes("broken.glb"), 20000);
    await page.close();
  }

  // The live comparison on each model, in the diff view (the page's own |GPU - CPU|).
  b.live = {};
  for (const [name, url] of Object.entries(MODELS)) {
    const { page } = await open(`${q}&view=diff&model=${encodeURIComponent(url)}`, b.messages);
    await until(page, (r) => r.live !== null);
    // Several comparisons after the first (the report keeps the last).
    const f = (await report(page))?.frames ?? 0;
    b.live[name] = await until(page, (r) => r.frames >= f + 10 && r.live !== null);
    await page.close();
  }

  // A fixed frame for the golden image.
  {
    const { page, started } = await open(
      `${q}&model=${encodeURIComponent(MODELS.CesiumMan)}&time=1&paused=1`,
      b.messages,
    );
    await until(page, (r) => r.frames >= 1);
    b.cesium_first_frame_ms = Date.now() - started;
    b.golden = await until(page, (r) => r.frames >= 10);
    b.golden_shot = await canvasShot(page, `${backend}-golden.png`);
    await page.close();
  }
}

fs.writeFileSync(path.join(out, "results.json"), JSON.stringify(results, null, 2));
await browser.close();
server.close();
console.log(`web: results in ${path.join(out, "results.json")}`);
