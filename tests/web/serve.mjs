// A static server for skinview's web page: web/dist/ at /, and the shared sample models and
// rigs at /models/ and /rigs/ (from $SKINVIEW_SHARED, else ../shared beside the checkout, else
// tests/data). Used by the web tests (run.mjs) and by scripts/serve-web.sh.
// Only files under those folders are served (no `..`, no hidden files); GET and HEAD only.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, "../..");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".gltf": "model/gltf+json",
  ".glb": "model/gltf-binary",
  ".bin": "application/octet-stream",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
};

/// The test data folder (models/, rigs/), as the Rust tests find it.
export function sharedDir() {
  const env = process.env.SKINVIEW_SHARED;
  if (env) return path.resolve(env);
  const shared = path.resolve(root, "../shared");
  if (fs.existsSync(path.join(shared, "models"))) return shared;
  return path.join(root, "tests/data");
}

/// Start serving on 127.0.0.1:`port` (0: any free port), with `extra` [prefix, folder] mounts
/// first (the tests' own files); `cors`: let pages of any site read the files
/// (Access-Control-Allow-Origin: *). Resolves to the server.
export function serve(port = 0, extra = [], { cors = false } = {}) {
  const mounts = [
    ...extra,
    ["/models/", path.join(sharedDir(), "models")],
    ["/rigs/", path.join(sharedDir(), "rigs")],
    ["/", path.join(root, "web/dist")],
  ];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    let rel;
    try {
      rel = decodeURIComponent(url.pathname);
    } catch {
      rel = "";
    }
    const mount = mounts.find(([prefix]) => rel.startsWith(prefix));
    const parts = mount ? rel.slice(mount[0].length).split("/").filter((p) => p !== "") : [];
    const bad = !mount || parts.some((p) => p === ".." || p.startsWith("."));
    let file = bad ? null : path.join(mount[1], ...parts);
    if (file && fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "index.html");
    if (!file || (req.method !== "GET" && req.method !== "HEAD") || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found\n");
      return;
    }
    const size = fs.statSync(file).size;
    res.writeHead(200, {
      "content-type": TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream",
      "content-length": size,
      "cache-control": "no-store",
      ...(cors ? { "access-control-allow-origin": "*" } : {}),
    });
    if (req.method === "HEAD") return res.end();
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

// `node serve.mjs [PORT]`: serve until interrupted.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] ?? 8080);
  const server = await serve(port);
  const at = `http://127.0.0.1:${server.address().port}/`;
  console.log(`skinview web page: ${at}  (models: ${at}?model=/models/CesiumMan/CesiumMan.glb)`);
}
