// Drives skinview's web page (web/dist, built by scripts/build-web.sh) in Debian's Chromium on
// both backends and writes what it saw to OUT/results.json and PNGs beside it; the Rust test
// tests/web/main.rs judges them (and the goldens), and puts OUT/broken.glb there first (the
// bad file the page is given). Usage: node tests/web/run.mjs OUT
//
// Chromium runs with a window, under Xvfb (xvfb-run), not --headless: Chromium 156's headless
// mode aborts every WebGPU buffer map once a WebGPU canvas has presented ("A valid external
// Instance reference no longer exists"; a 20-line page without skinview shows it), so no page
// could read anything back there. With a window and --ignore-gpu-blocklist, WebGPU is the same
// SwiftShader adapter and WebGL2 is ANGLE on Mesa's llvmpipe: both software, on the CPU.
import fs from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import { root, serve, sharedDir } from "./serve.mjs";

const out = process.argv[2];
if (!out) {
  console.error("usage: node tests/web/run.mjs OUT_DIR");
  process.exit(2);
}
fs.mkdirSync(out, { recursive: true });

const BROWSER = process.env.SKINVIEW_CHROMIUM ?? "/usr/bin/chromium";
// Chromium's own messages about its software rendering, not the page's: ignored by name. (Not
// "READ-usage buffer was written, then fenced, but written again": the page's readback gives
// every capture buffers of its own, so that warning counts as the page's.)
const CHROMIUM_NOISE = [
  /GPU stall due to ReadPixels/,
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
// The view each model's live comparison runs in: the heatmap, and CPU | GPU side by side.
const VIEWS = { CesiumMan: "diff", Fox: "split", rig_8_influences: "diff" };

// The tests' own files under /out/: CesiumMan as a .gltf beside its .bin and texture, and a
// .gltf whose buffer URI leaves its folder the way a browser reads URLs (`\` as `/`).
fs.mkdirSync(path.join(out, "site/split"), { recursive: true });
fs.mkdirSync(path.join(out, "site/escape"), { recursive: true });
for (const [name, bytes] of cesiumInThreeFiles()) fs.writeFileSync(path.join(out, "site/split", name), bytes);
const escaping = JSON.parse(fs.readFileSync(path.join(out, "site/split/CesiumMan.gltf"), "utf8"));
escaping.buffers[0].uri = "a\\..\\..\\split\\CesiumMan.bin";
fs.writeFileSync(path.join(out, "site/escape/escape.gltf"), JSON.stringify(escaping));
const server = await serve(0, [["/out/", path.join(out, "site")]]);
const base = `http://127.0.0.1:${server.address().port}/`;
// Two other sites (other ports are other origins): one lets other pages read its models, one
// does not.
const open_site = await serve(0, [], { cors: true });
const closed_site = await serve(0);
const at = (s, p) => `http://127.0.0.1:${s.address().port}${p}`;
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

/// Drop `files` ([name, bytes] pairs) on the canvas, as a person dragging them from a folder.
async function drop(page, files) {
  const encoded = files.map(([name, bytes]) => [name, Buffer.from(bytes).toString("base64")]);
  const transfer = await page.evaluateHandle((files) => {
    const dt = new DataTransfer();
    for (const [name, b64] of files) {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      dt.items.add(new File([bytes], name));
    }
    return dt;
  }, encoded);
  await page.dispatchEvent("#skinview", "drop", { dataTransfer: transfer });
}

/// Scroll the left panel until the Motion panel's "download map" button shows, click it and
/// return the downloaded file's text (or what went wrong).
async function downloadMap(page, out) {
  const box = await page.locator("#skinview").boundingBox();
  for (let attempt = 0; attempt < 30; attempt++) {
    const r = await report(page);
    const at = r?.motion?.download_at;
    if (at) {
      const [d] = await Promise.all([
        page.waitForEvent("download", { timeout: 15000 }),
        page.mouse.click(box.x + at[0], box.y + at[1]),
      ]);
      const file = path.join(out, "bone-map.toml");
      await d.saveAs(file);
      return { text: fs.readFileSync(file, "utf8"), suggested: d.suggestedFilename() };
    }
    await page.mouse.move(box.x + 80, box.y + 300);
    await page.mouse.wheel(0, 150);
    await page.waitForTimeout(600);
  }
  return { missing: "the download map button never showed" };
}

/// A file dropped while a model is open asks what to do: click its "Open it" (0), "Compare
/// with it" (1) or "Play its motion here" (2) button where the report puts it.
async function answerDrop(page, which) {
  const box = await page.locator("#skinview").boundingBox();
  // The prompt settles over its first frames (slow ones on WebGL2): press where the last
  // report puts the button, a few times if a press lands before the layout does.
  for (let attempt = 0; attempt < 5; attempt++) {
    const r = await until(page, (r) => r.prompt !== null && r.prompt !== undefined, 30000);
    if (r.timed_out) return;
    await page.waitForTimeout(400);
    const [x, y] = (await report(page))?.prompt?.[which] ?? r.prompt[which];
    await page.mouse.move((box?.x ?? 0) + x, (box?.y ?? 0) + y);
    await page.waitForTimeout(150);
    await page.mouse.down();
    await page.waitForTimeout(150);
    await page.mouse.up();
    const after = await until(page, (r) => r.prompt === null, 4000);
    if (!after.timed_out) return;
  }
}

/// CesiumMan as a .gltf, its buffer and its texture: three files, as an exporter writes them.
function cesiumInThreeFiles() {
  const glb = fs.readFileSync(path.join(sharedDir(), "models/CesiumMan/CesiumMan.glb"));
  const jsonLength = glb.readUInt32LE(12);
  const json = JSON.parse(glb.subarray(20, 20 + jsonLength).toString("utf8"));
  const binStart = 20 + jsonLength + 8;
  const bin = glb.subarray(binStart, binStart + glb.readUInt32LE(20 + jsonLength));
  const view = json.bufferViews[json.images[0].bufferView];
  const png = bin.subarray(view.byteOffset ?? 0, (view.byteOffset ?? 0) + view.byteLength);
  json.buffers[0].uri = "CesiumMan.bin";
  json.images[0] = { uri: "CesiumMan_img0.png" };
  return [
    ["CesiumMan.gltf", Buffer.from(JSON.stringify(json))],
    ["CesiumMan.bin", bin],
    ["CesiumMan_img0.png", png],
  ];
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
    // The loading line shows until the first frame, then goes; the file bar sits below the
    // canvas, never over it.
    // Whether the line is still up here races the first frame (the module may be cached), so
    // the page as served is what shows it: present and not hidden.
    const html = await (await fetch(base)).text();
    b.loading_at_start = /<div id="skinview-loading">/.test(html);
    const first = await until(page, (r) => r.frames >= 2);
    b.loading_after_frames = await page.isVisible("#skinview-loading");
    b.bar_box = await page.locator("#bar").boundingBox();
    b.canvas_box = await page.locator("#skinview").boundingBox();
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

    // A broken file dropped on the canvas: its error, and the humanoid stays.
    await drop(page, [["broken.glb", fs.readFileSync(path.join(out, "broken.glb"))]]);
    b.broken = await until(page, (r) => (r.error ?? "").includes("broken.glb"), 20000);
    // The humanoid's clips from a file (OUT/humanoid.glb), played on it through the
    // retargeting: "Play its motion here".
    await drop(page, [["humanoid.glb", fs.readFileSync(path.join(out, "humanoid.glb"))]]);
    await answerDrop(page, 2);
    b.motion = await until(page, (r) => r.motion && r.motion.clips === 3 && r.frames >= 1, 30000);
    // Its bone map downloaded from the Motion panel (scrolled to its button).
    b.map_download = await downloadMap(page, out);
    // The map edited (the left hand's line taken out) and dropped back: 17 joints mapped.
    if (b.map_download.text) {
      const edited = b.map_download.text
        .split("\n")
        .filter((l) => !l.startsWith('"l_hand"'))
        .join("\n");
      await drop(page, [["bone-map.toml", Buffer.from(edited)]]);
      b.map_dropped = await until(page, (r) => r.motion && r.motion.mapped === 17, 30000);
    }
    // A .gltf with its .bin and texture dropped together.
    await drop(page, cesiumInThreeFiles());
    await answerDrop(page, 0);
    b.dropped = await until(page, (r) => r.model === "CesiumMan.gltf" && r.frames >= 1, 30000);
    // The file button reads the same way.
    await page.setInputFiles("#skinview-open", {
      name: "Fox.glb",
      mimeType: "model/gltf-binary",
      buffer: fs.readFileSync(path.join(sharedDir(), "models/Fox/Fox.glb")),
    });
    b.picked = await until(page, (r) => r.model === "Fox.glb", 30000);
    // What `skinview optimize --quantize-mesh --compress` writes opens (meshopt decoders and
    // integer attributes in the page).
    await drop(page, [["CesiumMan.opt.glb", fs.readFileSync(path.join(out, "CesiumMan.opt.glb"))]]);
    await answerDrop(page, 0);
    b.optimized = await until(page, (r) => r.model === "CesiumMan.opt.glb" && r.frames >= 1, 30000);
    // An FBX dropped on the page opens (ufbx built into the page).
    const fbx = path.join(root, "tests/data/fbx/CesiumMan.fbx");
    if (fs.existsSync(fbx)) {
      await drop(page, [["CesiumMan.fbx", fs.readFileSync(fbx)]]);
      await answerDrop(page, 0);
      b.fbx = await until(page, (r) => r.model === "CesiumMan.fbx" && r.frames >= 1, 30000);
      // The glTF it came from, dropped and compared: its curves drawn over the FBX's.
      const glb = fs.readFileSync(path.join(sharedDir(), "models/CesiumMan/CesiumMan.glb"));
      await drop(page, [["CesiumMan.glb", glb]]);
      await answerDrop(page, 1);
      b.curves_compared = await until(page, (r) => r.curves_file === "CesiumMan.glb", 30000);
    } else {
      b.fbx = { missing: fbx };
    }
    await page.close();
  }

  // A small window (800×600): the side panels leave the viewport most of the width.
  {
    const { page } = await open(`?backend=${backend}&size=800x600`, b.messages);
    b.small = await until(page, (r) => r.frames >= 3);
    await page.close();
  }

  // The live comparison on each model, in the diff view (the page's own |GPU - CPU|).
  b.live = {};
  for (const [name, url] of Object.entries(MODELS)) {
    const { page } = await open(`${q}&view=${VIEWS[name]}&model=${encodeURIComponent(url)}`, b.messages);
    await until(page, (r) => r.live !== null);
    // Several comparisons after the first (the report keeps the last).
    const f = (await report(page))?.frames ?? 0;
    b.live[name] = await until(page, (r) => r.frames >= f + 10 && r.live !== null);
    // A click on the model in the middle of the viewport picks a vertex (GPU positions read
    // back on both backends).
    if (name === "CesiumMan") {
      await page.mouse.click(470, 300);
      b.picked_vertex = await until(page, (r) => r.picked !== null, 20000);
    }
    await page.close();
  }

  // ?model= a .gltf: the page fetches its .bin and texture beside it, and nothing outside.
  {
    const { page } = await open(`${q}&view=diff&model=/out/split/CesiumMan.gltf`, b.messages);
    b.fetched_gltf = await until(page, (r) => r.live !== null && r.frames >= 5);
    await page.close();
    // A model that cannot be had starts the page on the humanoid, with the error shown.
    const escape = await open(`${q}&model=/out/escape/escape.gltf`, []);
    b.fetched_escape = await until(escape.page, (r) => r.frames >= 2 && r.error !== null, 30000);
    await escape.page.close();
    const missing = await open(`${q}&model=/models/no-such-model.glb`, []);
    b.fetched_missing = await until(missing.page, (r) => r.frames >= 2 && r.error !== null, 30000);
    // Then the URL field opens a good one (and shows its name).
    const box = await missing.page.locator("#skinview").boundingBox();
    const [fx, fy] = b.fetched_missing.url_field ?? [0, 0];
    await missing.page.mouse.click((box?.x ?? 0) + fx, (box?.y ?? 0) + fy);
    await missing.page.waitForTimeout(500);
    // Clear the field as a person would (End, then Backspace), then type the URL. Delete too:
    // on a slow frame the click's focus can land after End, leaving the cursor mid-text (one
    // run typed the URL before the "oid" of "builtin:humanoid").
    await missing.page.keyboard.press("End");
    for (let i = 0; i < 40; i++) await missing.page.keyboard.press("Backspace", { delay: 10 });
    for (let i = 0; i < 40; i++) await missing.page.keyboard.press("Delete", { delay: 10 });
    await missing.page.keyboard.type(MODELS.Fox, { delay: 30 });
    await missing.page.keyboard.press("Enter");
    b.url_field_opened = await until(missing.page, (r) => r.model === "Fox.glb" && r.frames >= 1, 30000);
    await missing.page.close();
    // Another site's model: read where its server allows it, an error naming CORS where not.
    const other = await open(`${q}&model=${encodeURIComponent(at(open_site, MODELS.Fox))}`, b.messages);
    b.cross_origin = await until(other.page, (r) => r.model === "Fox.glb" && r.frames >= 2, 30000);
    await other.page.close();
    const closed = await open(`${q}&model=${encodeURIComponent(at(closed_site, MODELS.Fox))}`, []);
    b.cross_origin_refused = await until(closed.page, (r) => r.frames >= 2 && r.error !== null, 30000);
    await closed.page.close();
  }

  // ?crowd=N: a field of Foxes, culled, uploaded in one write a frame; `]` doubles it.
  {
    const fox = encodeURIComponent(MODELS.Fox);
    const { page } = await open(`${q}&model=${fox}&crowd=20`, b.messages);
    b.crowd = await until(page, (r) => r.crowd !== null && r.frames >= 3);
    await page.locator("#skinview").focus();
    await page.keyboard.press("]");
    b.crowd_doubled = await until(page, (r) => r.crowd?.characters === 40 && r.frames >= 3);
    b.crowd_shot = await canvasShot(page, `${backend}-crowd.png`);
    await page.close();
  }

  // ?curves=1: the curves panel's dope sheet lists the Fox's animated bones; a click on its
  // first row selects that bone and draws its curves; C closes the panel.
  {
    const fox = encodeURIComponent(MODELS.Fox);
    const { page } = await open(`${q}&model=${fox}&curves=1`, b.messages);
    b.curves = await until(page, (r) => r.curves?.rows > 0 && r.curves?.row0 !== null && r.frames >= 3);
    // The panel settles over its first frames (slow ones on WebGL2): click where the last
    // report puts row 0, a few times if a click lands before the layout does.
    const box = await page.locator("#skinview").boundingBox();
    for (let attempt = 0; attempt < 4; attempt++) {
      const [x, y] = (await report(page))?.curves?.row0 ?? [0, 0];
      await page.mouse.click((box?.x ?? 0) + x, (box?.y ?? 0) + y);
      b.curves_selected = await until(page, (r) => r.curves?.bone !== null && r.curves?.channels > 0, 8000);
      if (!b.curves_selected.timed_out) break;
    }
    await page.locator("#skinview").focus();
    await page.keyboard.press("c");
    b.curves_closed = await until(page, (r) => r.curves?.open === false);
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
open_site.close();
closed_site.close();
console.log(`web: results in ${path.join(out, "results.json")}`);
