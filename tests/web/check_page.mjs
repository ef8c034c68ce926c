// Opens a `skinview check --html DIR` page (DIR/index.html, from file://) in Debian's
// Chromium, headless (the page draws nothing itself: no WebGPU or WebGL needed), and writes
// what it saw to OUT: console errors, each image's load state, the rows, the order of the
// rows after a click on the "file" header and a second click (reversed), and at a phone's
// width the order after a click on "verdict" and how far the page reaches sideways. The Rust test
// (tests/web/main.rs) judges it. Usage: node tests/web/check_page.mjs DIR OUT
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [dir, out] = process.argv.slice(2);
if (!dir || !out) {
  console.error("usage: node tests/web/check_page.mjs DIR OUT");
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath: process.env.SKINVIEW_CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
});
const messages = [];
const page = await browser.newPage();
page.on("console", (m) => {
  if (m.type() === "error" || m.type() === "warning") messages.push(`${m.type()}: ${m.text()}`);
});
page.on("pageerror", (e) => messages.push(`uncaught: ${e.message}`));
page.on("requestfailed", (r) => messages.push(`failed to load: ${r.url()}`));
await page.goto(pathToFileURL(path.join(dir, "index.html")).href, { waitUntil: "load" });
const images = await page.$$eval("img", (imgs) =>
  imgs.map((i) => ({ src: i.getAttribute("src"), complete: i.complete, width: i.naturalWidth, height: i.naturalHeight })),
);
const files = () => page.$$eval("#models tbody tr", (rows) => rows.map((r) => r.cells[1].textContent));
const before = await files();
await page.click("th:has-text('file')");
const sorted = await files();
await page.click("th:has-text('file')");
const reversed = await files();
// A phone's width: the rows become blocks; the headers still sort, and nothing reaches past
// the page's right edge (no sideways scrolling).
await page.setViewportSize({ width: 400, height: 800 });
await page.click("th:has-text('verdict')");
const verdicts = await page.$$eval("#models tbody tr", (rows) => rows.map((r) => Number(r.cells[2].dataset.sort)));
const narrow = await page.evaluate(() => ({
  width: window.innerWidth,
  scrollWidth: document.documentElement.scrollWidth,
  right: Math.max(...Array.from(document.querySelectorAll("#models td, #models li")).map((e) => e.getBoundingClientRect().right)),
}));
await browser.close();
fs.writeFileSync(out, JSON.stringify({ messages, images, before, sorted, reversed, verdicts, narrow }, null, 1));
