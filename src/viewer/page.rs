//! The web page's choices that need no browser, so native tests can check them: the URL's
//! parameters ([`PageParams`]), which of the files given is the model ([`model_among`], with
//! the message when none is), and which files a `.gltf` names ([`external_uris`]).
//! `web.rs` (wasm32 only) does the rest.

use super::state::ViewMode;
use crate::error::{Error, Result};

/// Most files read from one drop or pick (a glTF with its buffers and textures is a handful;
/// a folder of thousands is a mistake, refused before any is read).
pub const MAX_PAGE_FILES: usize = 256;

/// Most bytes read from one drop, pick or `?model=` fetch together: 1 GiB, a quarter of
/// wasm32's 4 GiB address space (an import holds the file and the scene made from it).
pub const MAX_PAGE_BYTES: u64 = 1 << 30;

/// The model a page opens with no `?model=` (or when that model cannot be had).
pub const DEFAULT_MODEL: &str = "builtin:humanoid";

/// The graphics API the page asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// WebGPU where the browser has it, else WebGL2.
    Auto,
    /// WebGPU only.
    WebGpu,
    /// WebGL2 only (no storage buffers in the vertex stage: the uniform palette draws).
    WebGl2,
}

/// The URL parameters the page reads, in the order its error lists them.
pub const PAGE_PARAMETERS: [&str; 8] = [
    "model", "backend", "view", "time", "paused", "size", "crowd", "curves",
];

/// What the page's URL asks for.
#[derive(Clone, Debug)]
pub struct PageParams {
    /// `?model=`: a `builtin:` name or a URL (this site's, or another's that allows
    /// cross-origin reads).
    pub model: String,
    /// `?backend=`.
    pub backend: Backend,
    /// `?view=`.
    pub mode: ViewMode,
    /// `?time=` (s).
    pub time_s: Option<f32>,
    /// `?paused=1`.
    pub paused: bool,
    /// `?size=WxH` in CSS pixels.
    pub size: Option<(u32, u32)>,
    /// `?crowd=N`: the crowd view of N copies of the model.
    pub crowd: Option<u32>,
    /// `?curves=1`: the curves panel open.
    pub curves: bool,
}

impl PageParams {
    /// Parse a URL's query string (`?a=b&c=d`); an unknown value is an error naming the
    /// parameter and what it takes.
    pub fn parse(query: &str) -> Result<PageParams> {
        let mut p = PageParams {
            model: DEFAULT_MODEL.into(),
            backend: Backend::Auto,
            mode: ViewMode::Gpu,
            time_s: None,
            paused: false,
            size: None,
            crowd: None,
            curves: false,
        };
        let bad = |k: &str, v: &str, takes: &str| {
            Error::Page(format!("the page's URL: {k}={v}: expected {takes}"))
        };
        // A value not among `names`, with the nearest of them.
        let not_one_of = |k: &str, v: &str, names: &[&str], takes: &str| {
            let guess =
                crate::error::did_you_mean(&crate::error::closest_names(v, names.iter().copied()));
            bad(k, v, &format!("{takes}{guess}"))
        };
        for pair in query.trim_start_matches('?').split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = percent_decode(v);
            match k {
                "" => {}
                "model" => p.model = v,
                "backend" => {
                    p.backend = match v.as_str() {
                        "webgpu" => Backend::WebGpu,
                        "webgl2" => Backend::WebGl2,
                        "" | "auto" => Backend::Auto,
                        _ => {
                            let names = ["webgpu", "webgl2", "auto"];
                            return Err(not_one_of(k, &v, &names, "webgpu, webgl2 or auto"));
                        }
                    }
                }
                "view" => {
                    p.mode = match v.as_str() {
                        "gpu" => ViewMode::Gpu,
                        "cpu" => ViewMode::Cpu,
                        "split" => ViewMode::SideBySide,
                        "diff" => ViewMode::Diff,
                        _ => {
                            let names = ["gpu", "cpu", "split", "diff"];
                            return Err(not_one_of(k, &v, &names, "gpu, cpu, split or diff"));
                        }
                    }
                }
                "time" => {
                    let t: f32 = v.parse().map_err(|_| bad(k, &v, "a time in seconds"))?;
                    if !t.is_finite() || t < 0.0 {
                        return Err(bad(k, &v, "a time in seconds, 0 or more"));
                    }
                    p.time_s = Some(t);
                }
                "paused" => p.paused = matches!(v.as_str(), "1" | "true" | ""),
                "curves" => p.curves = matches!(v.as_str(), "1" | "true" | ""),
                "size" => {
                    let takes = "WIDTHxHEIGHT in pixels, each 16 to 8192";
                    let (w, h) = v.split_once('x').ok_or_else(|| bad(k, &v, takes))?;
                    let dim = |s: &str| s.parse::<u32>().ok().filter(|d| (16..=8192).contains(d));
                    match (dim(w), dim(h)) {
                        (Some(w), Some(h)) => p.size = Some((w, h)),
                        _ => return Err(bad(k, &v, takes)),
                    }
                }
                "crowd" => {
                    let max = crate::gpu::MAX_INSTANCES;
                    let n = v.parse::<u32>().ok().filter(|n| (1..=max).contains(n));
                    let takes = format!("a number of characters, 1 to {max}");
                    p.crowd = Some(n.ok_or_else(|| bad(k, &v, &takes))?);
                }
                _ => {
                    let close = crate::error::closest_names(k, PAGE_PARAMETERS);
                    return Err(Error::Page(format!(
                        "the page's URL: unknown parameter `{k}` ({}){}",
                        PAGE_PARAMETERS.join(", "),
                        crate::error::did_you_mean(&close)
                    )));
                }
            }
        }
        Ok(p)
    }
}

/// A URL query value decoded: `+` is a space, then `%XX` escapes as in URIs
/// ([`crate::io::files::percent_decode`]).
pub fn percent_decode(v: &str) -> String {
    crate::io::files::percent_decode(&v.replace('+', " "))
}

/// The external (not `data:`) URIs a `.gltf` names, each once, with the first field naming
/// it (`buffers[0].uri`), checked as the importer checks them (relative, inside the model's
/// folder, no hidden file: [`crate::io::files::relative_uri`]) so the page fetches nothing
/// else. An unreadable file names none (the importer then reports what is wrong with it); more
/// than [`MAX_PAGE_FILES`] is an error.
pub fn external_uris(file: &str, gltf: &[u8]) -> Result<Vec<(String, String)>> {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(gltf) else {
        return Ok(Vec::new());
    };
    let mut uris: Vec<(String, String)> = Vec::new();
    for key in ["buffers", "images"] {
        let items = json.get(key).and_then(|v| v.as_array());
        for (i, item) in items.into_iter().flatten().enumerate() {
            let Some(uri) = item.get("uri").and_then(|u| u.as_str()) else {
                continue;
            };
            if uri.starts_with("data:") || uris.iter().any(|(_, u)| u == uri) {
                continue;
            }
            let field = format!("{key}[{i}].uri");
            crate::io::files::relative_uri(uri, false, false)
                .map_err(|m| Error::invalid(file, &field, m))?;
            // The model is one of the page's files.
            if uris.len() == MAX_PAGE_FILES - 1 {
                return Err(Error::invalid(
                    file,
                    &field,
                    format!(
                        "more than {} external files: not fetched",
                        MAX_PAGE_FILES - 1
                    ),
                ));
            }
            uris.push((field, uri.to_string()));
        }
    }
    Ok(uris)
}

/// Whether the URL path `fetched` (what the browser resolved an external URI of the model at
/// URL path `model` to, with its `search` and `hash`) is inside the model's folder and names
/// no hidden file: the browser reads a URI by URL rules (`\` as `/`, `%2e%2e` as `..`, tabs
/// and newlines dropped), so the page checks what it will fetch, not only what the file says.
pub fn fetched_inside(model: &str, fetched: &str, search: &str, hash: &str) -> bool {
    let folder = &model[..model.rfind('/').map_or(0, |i| i + 1)];
    let Some(rest) = fetched.strip_prefix(folder) else {
        return false;
    };
    let hidden = rest.split('/').any(|part| {
        let part = part.to_ascii_lowercase();
        part.is_empty() || part.starts_with('.') || part.starts_with("%2e")
    });
    !folder.is_empty() && !hidden && search.is_empty() && hash.is_empty()
}

/// Bytes a page has read for one drop, pick or `?model=` fetch, against the limits.
#[derive(Clone, Copy, Debug, Default)]
pub struct PageBudget {
    spent: u64,
}

impl PageBudget {
    /// Whether a file `name` of `len` bytes may be read next: at most
    /// [`crate::io::files::MAX_FILE_BYTES`], and [`MAX_PAGE_BYTES`] with those read before.
    pub fn check(&self, name: &str, len: u64) -> Result<()> {
        crate::io::FileSet::check_size(name, len)?;
        if self.spent.saturating_add(len) > MAX_PAGE_BYTES {
            return Err(Error::invalid(
                name,
                "files together",
                format!("more than the {MAX_PAGE_BYTES} bytes the page reads at once"),
            ));
        }
        Ok(())
    }

    /// Count a file `name` of `len` bytes that was read ([`PageBudget::check`] first).
    pub fn spend(&mut self, name: &str, len: u64) -> Result<()> {
        self.check(name, len)?;
        self.spent += len;
        Ok(())
    }
}

/// Check files given together (names and sizes) before any is read: at most
/// [`MAX_PAGE_FILES`], each and all together within [`PageBudget`]'s limits.
pub fn check_given(files: &[(String, u64)]) -> Result<()> {
    if files.len() > MAX_PAGE_FILES {
        return Err(Error::Page(format!(
            "{} files given at once; the page reads at most {MAX_PAGE_FILES}",
            files.len()
        )));
    }
    let mut budget = PageBudget::default();
    for (name, len) in files {
        budget.spend(name, *len)?;
    }
    Ok(())
}

/// The model among dropped files: a `.glb`, a `.gltf`, an `.fbx`, or a native `.json` rig (in
/// that order of preference).
pub fn model_among(names: &[String]) -> Option<String> {
    let has = |n: &String, ext: &str| n.to_ascii_lowercase().ends_with(ext);
    [".glb", ".gltf", ".fbx", ".json"]
        .iter()
        .find_map(|ext| names.iter().find(|n| has(n, ext)))
        .cloned()
}

/// The error when none of `names` is a model this build reads (naming a known format that is
/// not read, when one was given).
pub fn no_model(names: &[String]) -> Error {
    let known = [".obj", ".dae", ".blend", ".usd", ".usdz"];
    let hint = match names
        .iter()
        .find(|n| known.iter().any(|k| n.to_ascii_lowercase().ends_with(k)))
    {
        Some(n) => format!(" ({n}: this format is not read; export glTF or FBX from your tool)"),
        None => String::new(),
    };
    Error::Page(format!(
        "no model among the files given ({}): give a .glb, a .gltf with its .bin and images, \
         an .fbx, or a native .rig.json{hint}",
        names.join(", ")
    ))
}
