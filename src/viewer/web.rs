//! The viewer as a web page (feature `web`, `wasm32-unknown-unknown`): the same [`super::App`],
//! panels, keys and renderer as the desktop viewer, on the page's canvas. What differs lives
//! here, behind small seams:
//! - **start**: the device is asked for asynchronously (a page cannot block), on WebGPU or,
//!   where the browser has none (or `?backend=webgl2`), WebGL2; the window takes it when it
//!   arrives ([`connect`], [`take_inbox`]);
//! - **files**: dropped on the page or picked with its button, read as a [`FileSet`] with
//!   the native importer's limits (sizes checked before a byte is read), or fetched with
//!   `?model=URL` or the model panel's URL field (this site, or another that allows
//!   cross-origin reads; a model that cannot be had leaves the default model and its error);
//! - **screenshots**: `P` downloads a PNG of the canvas, encoded by the browser;
//! - **the report**: `<pre id="skinview-report">` holds what the page shows (model, backend,
//!   palette path and K, the live |GPU − CPU|, errors) as JSON, for tests and scripts.
//!
//! URL parameters: `model` (a `builtin:` name or a URL), `backend`
//! (`webgpu` | `webgl2`), `view` (`gpu` | `cpu` | `split` | `diff`), `time` (s), `paused=1`,
//! `size=WxH` (canvas size in CSS pixels; else the whole page), `crowd=N`, `curves=1` (the
//! curves panel open).

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use winit::event_loop::{EventLoop, EventLoopProxy};
use winit::platform::web::{EventLoopExtWebSys, WindowAttributesExtWebSys};
use winit::window::WindowAttributes;

use super::page::{
    Backend, DEFAULT_MODEL, PageBudget, PageParams, check_given, external_uris, fetched_inside,
    model_among, no_model,
};
use super::state::ViewerState;
use super::{App, Gfx, ViewerOptions};
use crate::error::{Error, Result};
use crate::io::{FileSet, Model, ModelSource};

/// What arrives from outside the event loop: the device, and models read from the page.
#[derive(Default)]
struct Inbox {
    gfx: Option<Result<Gfx>>,
    /// Models read from the page: label, model, and whether it was dropped (it then asks what
    /// to do when a model is open; picked files and URLs open).
    opened: Vec<(String, Result<Model>, bool)>,
    /// Bone maps (`.toml`) given to the page: name and bytes (the Motion panel's map).
    maps: Vec<(String, Result<Vec<u8>>)>,
}

/// The page around the canvas.
pub struct Page {
    params: PageParams,
    inbox: Rc<RefCell<Inbox>>,
    proxy: EventLoopProxy<()>,
    report: Option<web_sys::Element>,
    /// The backend the device came from (`webgpu` or `webgl2`).
    backend: &'static str,
    /// Every error the window showed, in order (at most [`MAX_ERRORS_KEPT`]).
    errors: Vec<String>,
    /// When the report was last written.
    reported: Option<web_time::Instant>,
}

/// Errors kept for the report (the first ones explain the rest).
const MAX_ERRORS_KEPT: usize = 32;

/// Time between two writes of the report (its JSON and the DOM write are not per-frame work;
/// scripts poll it at about this rate).
const REPORT_INTERVAL_S: f32 = 0.05;

/// The page's document (every page has one).
fn document() -> Result<web_sys::Document> {
    web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| Error::Page("no document: skinview runs in a web page".into()))
}

fn js_error(what: &str, e: JsValue) -> Error {
    let text = e
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"));
    Error::Page(format!("{what}: {text}"))
}

/// The page's program: read the URL, load the model, open the viewer on the canvas.
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let text = format!("skinview panicked: {info}");
        web_sys::console::error_1(&text.clone().into());
        show_text(&text);
    }));
    spawn_local(async {
        if let Err(e) = open_page().await {
            show_fatal(&e);
        }
    });
}

async fn open_page() -> Result<()> {
    let search = web_sys::window()
        .map(|w| w.location().search().unwrap_or_default())
        .unwrap_or_default();
    let params = PageParams::parse(&search)?;
    // A model that cannot be had starts the page on the default one, with the error shown
    // (as a dropped bad file keeps the model shown).
    let (model, failed) = match load_param_model(&params.model).await {
        Ok(m) => (m, None),
        Err(e) if params.model != DEFAULT_MODEL => (
            load_param_model(DEFAULT_MODEL).await?,
            Some(format!("?model={}: {e}", params.model)),
        ),
        Err(e) => return Err(e),
    };
    let options = ViewerOptions {
        mode: params.mode,
        time_s: params.time_s,
        paused: params.paused,
        crowd: params.crowd,
        curves: params.curves,
        ..ViewerOptions::default()
    };
    let mut state = super::start_state(model, &options)?;
    // The URL field shows the URL of the model shown, for the next one to be typed over it.
    if failed.is_none() {
        state.open_path.clone_from(&params.model);
    }
    state.error = failed;
    let event_loop = EventLoop::new().map_err(|e| Error::Gpu(format!("event loop: {e}")))?;
    let page = Page {
        params,
        inbox: Rc::default(),
        proxy: event_loop.create_proxy(),
        report: document()?.get_element_by_id("skinview-report"),
        backend: "",
        errors: Vec::new(),
        reported: None,
    };
    listen_for_files(&page)?;
    let mut app = App::new(options, state);
    app.page = Some(page);
    event_loop.spawn_app(app);
    Ok(())
}

impl Page {
    /// The canvas (`<canvas id="skinview">`), at `?size=` or the page's size.
    pub(super) fn window_attributes(
        &self,
        attributes: WindowAttributes,
    ) -> Result<WindowAttributes> {
        let canvas = document()?
            .get_element_by_id("skinview")
            .and_then(|e| e.dyn_into::<web_sys::HtmlCanvasElement>().ok())
            .ok_or_else(|| Error::Page("the page has no <canvas id=\"skinview\">".into()))?;
        let attributes = attributes.with_canvas(Some(canvas));
        Ok(match self.params.size {
            Some((w, h)) => attributes.with_inner_size(winit::dpi::LogicalSize::new(w, h)),
            None => attributes,
        })
    }

    /// After each frame: fetch a URL the model panel asked for, download the canvas when
    /// asked for (`P`), and write the report.
    pub(super) fn after_frame(
        &mut self,
        gfx: &Gfx,
        state: &mut ViewerState,
        download: Option<&Path>,
    ) {
        if let Some(url) = state.url_requested.take() {
            self.fetch_for_window(url);
        }
        if self.reported.is_none() {
            // The first frame is up: the loading line goes.
            hide_loading();
        }
        if let Some(path) = download {
            use winit::platform::web::WindowExtWebSys;
            let result = gfx
                .window
                .canvas()
                .ok_or_else(|| Error::Page("the window has no canvas".into()))
                .and_then(|canvas| download_canvas(&canvas, path));
            if let Err(e) = result {
                state.error = Some(format!("screenshot: {e}"));
            }
        }
        if let Some(text) = state.motion.as_mut().and_then(|m| m.download.take()) {
            let parts = js_sys::Array::of1(&text.into());
            let result = web_sys::Blob::new_with_str_sequence(&parts)
                .map_err(|e| js_error("map blob", e))
                .and_then(|blob| download_blob(&blob, "bone-map.toml"));
            if let Err(e) = result {
                state.error = Some(format!("bone map: {e}"));
            }
        }
        let mut changed = false;
        if let Some(e) = &state.error
            && self.errors.last() != Some(e)
            && self.errors.len() < MAX_ERRORS_KEPT
        {
            self.errors.push(e.clone());
            changed = true;
        }
        let due = self
            .reported
            .is_none_or(|t| t.elapsed().as_secs_f32() >= REPORT_INTERVAL_S);
        if due || changed {
            self.write_report(gfx, state);
            self.reported = Some(web_time::Instant::now());
        }
    }

    /// Fetch the model at `url` and hand it (or its error) to the window through the inbox.
    fn fetch_for_window(&self, url: String) {
        let (inbox, proxy) = (self.inbox.clone(), self.proxy.clone());
        spawn_local(async move {
            let model = load_param_model(&url).await;
            inbox.borrow_mut().opened.push((url, model, false));
            let _ = proxy.send_event(());
        });
    }

    /// The report: what the page shows, as JSON in `#skinview-report`.
    fn write_report(&self, gfx: &Gfx, state: &ViewerState) {
        let Some(element) = &self.report else {
            return;
        };
        let (palette, bones) = match state.palette_source() {
            crate::gpu::PaletteSource::Storage => ("storage", None),
            crate::gpu::PaletteSource::Uniform { bones } => ("uniform", Some(bones)),
        };
        let split = state.character.split.as_ref().map(|s| {
            serde_json::json!({
                "submeshes": s.submeshes,
                "lower_bound": s.lower_bound,
                "vertices_in": s.vertices_in,
                "vertices_out": s.vertices_out,
            })
        });
        let live = state.live.map(|l| {
            serde_json::json!({
                "max": l.errors.max,
                "mean": l.errors.mean,
                "diagonal": l.errors.diagonal,
                "relative": l.errors.max / l.errors.diagonal,
                "source": l.source,
                "latency_frames": l.latency_frames,
            })
        });
        let picked = state.picked.as_ref().map(|p| {
            serde_json::json!({
                "draw": p.draw,
                "vertex": p.vertex,
                "position": p.position.to_array(),
                "influences": p.influences.len(),
            })
        });
        let crowd = state.crowd.and(state.crowd_stats).map(|c| {
            serde_json::json!({
                "characters": c.characters,
                "visible": c.visible,
                "threads": c.threads,
                "animated": c.animated,
                "stage_ms": c.stage_ms,
                "cull_ms": c.cull_ms,
                "upload_bytes": c.upload_bytes,
                "upload_ms": c.upload_ms,
                "palette_writes": c.palette_writes,
                "gpu_draw_ms": state.crowd_gpu_ms.and_then(|g| g.draw),
                "gpu_skinning_pass_ms": state.crowd_gpu_ms.and_then(|g| g.skinning_pass),
            })
        });
        let curves = &state.curves;
        // Row 0 of the dope sheet at 40 % of its time axis, in the canvas's points (a test
        // clicks there to select that row's bone).
        let row0 = curves.dope.plot.map(|t| {
            let [x0, _] = t.bounds().min();
            let [x1, _] = t.bounds().max();
            let p = t.position_from_point(&egui_plot::PlotPoint::new(x0 + 0.4 * (x1 - x0), 0.0));
            [p.x, p.y]
        });
        let points: usize = curves
            .drawn
            .iter()
            .flat_map(|d| d.curves.lines.iter().map(Vec::len))
            .sum();
        let curves = serde_json::json!({
            "open": curves.open,
            "rows": curves.dope.rows.len(),
            "row0": row0,
            "channels": curves.drawn.len(),
            "keys": curves.drawn.iter().map(|d| d.curves.keys.len()).sum::<usize>(),
            "points": points,
            "bone": state.view.selected_node.map(|n| state.node_label(n)),
        });
        let report = serde_json::json!({
            "model": state.model.source.label(),
            "frames": state.stats.frames,
            "time_s": state.playback.time_s,
            "playing": state.playback.playing,
            "view": state.mode.label(),
            "backend": self.backend,
            "adapter": gfx.adapter,
            "palette": palette,
            "uniform_bones": bones,
            "split": split,
            "live": live,
            "picked": picked,
            "crowd": crowd,
            "curves": curves,
            "fps": state.stats.fps,
            "frame_ms": state.stats.frame_ms,
            "readback_ms": state.stats.readback_smoothed_ms,
            "canvas": [gfx.config.width, gfx.config.height],
            "viewport_px": [gfx.viewport_px.0, gfx.viewport_px.1],
            "error": state.error,
            "errors": self.errors,
            "readback_retries": gfx.viewport.readback_retries,
            "url_field": state.url_field_at,
            "prompt": state.prompt_buttons_at.filter(|_| state.dropped_model.is_some()),
            "curves_file": state.curves_file.as_ref().map(|f| f.label.clone()),
            "motion": state.motion.as_ref().map(|m| serde_json::json!({
                "label": m.label,
                "clips": m.clips.len(),
                "mapped": m.map.pairs().count(),
                "download_at": m.download_at,
            })),
            "open_path": state.open_path,
        });
        element.set_text_content(Some(&report.to_string()));
    }
}

/// Hide the page's loading line (`#skinview-loading`), once a frame or an error shows.
fn hide_loading() {
    if let Some(e) = document()
        .ok()
        .and_then(|d| d.get_element_by_id("skinview-loading"))
    {
        let _ = e.set_attribute("hidden", "");
    }
}

/// The WebGPU adapter as the browser names it (`GPUAdapter.info`: vendor, architecture, device,
/// description; what it leaves empty left out), which wgpu's adapter info leaves empty.
async fn browser_adapter_name() -> Option<String> {
    let navigator = web_sys::window()?.navigator();
    let gpu = js_sys::Reflect::get(&navigator, &"gpu".into()).ok()?;
    let request: js_sys::Function = js_sys::Reflect::get(&gpu, &"requestAdapter".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let promise: js_sys::Promise = request.call0(&gpu).ok()?.dyn_into().ok()?;
    let adapter = JsFuture::from(promise).await.ok()?;
    let info = js_sys::Reflect::get(&adapter, &"info".into()).ok()?;
    let parts: Vec<String> = ["vendor", "architecture", "device", "description"]
        .iter()
        .filter_map(|k| js_sys::Reflect::get(&info, &(*k).into()).ok()?.as_string())
        .filter(|s| !s.trim().is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// Start the device for `window` on the page's backend; the window takes it when it arrives.
pub(super) fn connect(app: &mut App, window: Arc<winit::window::Window>) -> Result<()> {
    let page = app
        .page
        .as_mut()
        .ok_or_else(|| Error::Page("no page".into()))?;
    let (inbox, proxy, backend) = (page.inbox.clone(), page.proxy.clone(), page.params.backend);
    spawn_local(async move {
        let gfx = connect_backend(window, backend).await;
        inbox.borrow_mut().gfx = Some(gfx);
        let _ = proxy.send_event(());
    });
    Ok(())
}

async fn connect_backend(window: Arc<winit::window::Window>, backend: Backend) -> Result<Gfx> {
    let instance = |backends| {
        wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        })
    };
    // WebGPU where asked for or present; WebGL2 when the browser has no `navigator.gpu` or
    // gives no WebGPU adapter.
    let has_webgpu = web_sys::window()
        .map(|w| js_sys::Reflect::has(&w.navigator(), &"gpu".into()).unwrap_or(false))
        .unwrap_or(false);
    if backend == Backend::WebGl2 || (backend == Backend::Auto && !has_webgpu) {
        return super::connect(window, instance(wgpu::Backends::GL), false, None).await;
    }
    let webgpu = instance(wgpu::Backends::BROWSER_WEBGPU);
    match super::connect(window.clone(), webgpu, false, None).await {
        Ok(mut gfx) => {
            if gfx.ctx.info.name.is_empty() {
                let name = browser_adapter_name()
                    .await
                    .unwrap_or_else(|| "WebGPU adapter (the browser names none)".into());
                gfx.adapter = format!("{name}{}", gfx.adapter);
            }
            Ok(gfx)
        }
        Err(Error::NoAdapter(_)) if backend == Backend::Auto => {
            super::connect(window, instance(wgpu::Backends::GL), false, None).await
        }
        Err(Error::NoAdapter(e)) => Err(Error::NoAdapter(format!(
            "{e}; this browser gives no WebGPU adapter: open the page with ?backend=webgl2, or \
             in a browser with WebGPU"
        ))),
        other => other,
    }
}

/// Hand what arrived to the viewer: the device (the first frame follows), and models read
/// from the page (shown, or their error with the current model kept).
pub(super) fn take_inbox(app: &mut App) -> Result<()> {
    let Some(page) = app.page.as_mut() else {
        return Ok(());
    };
    let (gfx, opened, maps) = {
        let mut inbox = page.inbox.borrow_mut();
        let maps = std::mem::take(&mut inbox.maps);
        (inbox.gfx.take(), std::mem::take(&mut inbox.opened), maps)
    };
    if let Some(gfx) = gfx {
        let gfx = gfx?;
        page.backend = match gfx.ctx.info.backend {
            wgpu::Backend::BrowserWebGpu => "webgpu",
            _ => "webgl2",
        };
        app.adopt(gfx)?;
    }
    if let Some(state) = app.state.as_mut() {
        for (name, bytes) in maps {
            if let Err(e) = bytes.and_then(|b| state.set_motion_map_file(&b, &name)) {
                state.error = Some(e.to_string());
            }
        }
        for (label, model, dropped) in opened {
            match model {
                // A dropped model asks what to do with it (open it, or compare its curves).
                Ok(m) if dropped => state.dropped_model = Some((label, m)),
                // The error is shown in the window; the model (and its name in the field)
                // stays.
                model => {
                    if state.open_loaded(model, &label).is_ok() {
                        state.open_path = label;
                    }
                }
            }
        }
    }
    Ok(())
}

/// A model named by `?model=`: a built-in, or a file on the same site.
async fn load_param_model(text: &str) -> Result<Model> {
    if let Some(source) = crate::builtin::Builtin::parse(text)? {
        return ModelSource::Builtin(source).load();
    }
    let (main, set) = fetch_model(text).await?;
    ModelSource::Memory {
        main,
        set: Arc::new(set),
    }
    .load()
}

/// Fetch a model file from the same site, and for a `.gltf` the buffers and images it names
/// (relative URIs beside it); sizes checked as each response arrives.
async fn fetch_model(url: &str) -> Result<(String, FileSet)> {
    let window = web_sys::window().ok_or_else(|| Error::Page("no window".into()))?;
    let origin = window
        .location()
        .origin()
        .map_err(|e| js_error("origin", e))?;
    let href = window.location().href().map_err(|e| js_error("href", e))?;
    let full = web_sys::Url::new_with_base(url, &href).map_err(|e| js_error(url, e))?;
    if !["http:", "https:"].contains(&full.protocol().as_str()) {
        return Err(Error::Page(format!(
            "{url}: only http and https URLs are fetched"
        )));
    }
    // Another site's model is read when its server allows it (CORS); its files too, from
    // its own folder there.
    let cross_origin = full.origin() != origin;
    let main = full
        .pathname()
        .rsplit('/')
        .next()
        .map(crate::io::files::percent_decode)
        .unwrap_or_default();
    let mut set = FileSet::new();
    let mut budget = PageBudget::default();
    let bytes = fetch_bytes(&full.href(), &main, &mut budget, cross_origin).await?;
    let external = if main.to_ascii_lowercase().ends_with(".gltf") {
        external_uris(&main, &bytes)?
    } else {
        Vec::new()
    };
    set.add(&main, bytes)?;
    for (field, uri) in external {
        // Stored as the importer looks it up (`./` dropped).
        let name = crate::io::files::percent_decode(&uri)
            .trim_start_matches("./")
            .to_string();
        let at = web_sys::Url::new_with_base(&uri, &full.href()).map_err(|e| js_error(&uri, e))?;
        let inside = fetched_inside(&full.pathname(), &at.pathname(), &at.search(), &at.hash());
        if at.origin() != full.origin() || !inside {
            return Err(Error::invalid(
                &main,
                &field,
                format!(
                    "\"{uri}\" resolves to {}, outside the model's folder on its site: not \
                     fetched",
                    at.href()
                ),
            ));
        }
        let bytes = fetch_bytes(&at.href(), &name, &mut budget, cross_origin).await?;
        set.add(&name, bytes)?;
    }
    Ok((main, set))
}

/// GET `url` (no cookies, no redirects followed; `cross_origin`: from another site, which must
/// allow it), counted into `budget`: a declared length over the limits is refused before the
/// body is read, and the body's own length is what counts.
async fn fetch_bytes(
    url: &str,
    name: &str,
    budget: &mut PageBudget,
    cross_origin: bool,
) -> Result<Vec<u8>> {
    let window = web_sys::window().ok_or_else(|| Error::Page("no window".into()))?;
    let init = web_sys::RequestInit::new();
    init.set_credentials(web_sys::RequestCredentials::Omit);
    init.set_redirect(web_sys::RequestRedirect::Error);
    init.set_mode(web_sys::RequestMode::Cors);
    let response: web_sys::Response = JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .map_err(|e| match cross_origin {
            // The browser says only "Failed to fetch" when the other site does not allow it.
            true => Error::Page(format!(
                "{url}: not read: the server is unreachable or does not allow pages of other \
                 sites to read it (it must answer with Access-Control-Allow-Origin)"
            )),
            false => js_error(url, e),
        })?
        .dyn_into()
        .map_err(|e| js_error(url, e))?;
    if !response.ok() {
        return Err(Error::Page(format!(
            "{url}: the server answered {} {}",
            response.status(),
            response.status_text()
        )));
    }
    // Content-Length is the size on the wire (compressed, perhaps): a check, not the count.
    let declared = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(len) = declared {
        budget.check(name, len)?;
    }
    let buffer = JsFuture::from(response.array_buffer().map_err(|e| js_error(url, e))?)
        .await
        .map_err(|e| js_error(url, e))?;
    // byteLength as a number: a body past u32 is refused, not wrapped.
    let len = js_sys::Reflect::get(&buffer, &"byteLength".into())
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(f64::MAX);
    budget.spend(name, len as u64)?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// Drops on the page and the file button (`<input id="skinview-open" type="file">`) read the
/// files given into the inbox.
fn listen_for_files(page: &Page) -> Result<()> {
    let document = document()?;
    let over = Closure::<dyn FnMut(web_sys::DragEvent)>::new(|e: web_sys::DragEvent| {
        e.prevent_default();
    });
    document
        .add_event_listener_with_callback("dragover", over.as_ref().unchecked_ref())
        .map_err(|e| js_error("dragover", e))?;
    over.forget();
    let (inbox, proxy) = (page.inbox.clone(), page.proxy.clone());
    let drop = Closure::<dyn FnMut(web_sys::DragEvent)>::new(move |e: web_sys::DragEvent| {
        e.prevent_default();
        if let Some(files) = e.data_transfer().and_then(|d| d.files()) {
            read_given(files, true, inbox.clone(), proxy.clone());
        }
    });
    document
        .add_event_listener_with_callback("drop", drop.as_ref().unchecked_ref())
        .map_err(|e| js_error("drop", e))?;
    drop.forget();
    if let Some(input) = document
        .get_element_by_id("skinview-open")
        .and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok())
    {
        let (inbox, proxy) = (page.inbox.clone(), page.proxy.clone());
        let target = input.clone();
        let change = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            if let Some(files) = target.files() {
                read_given(files, false, inbox.clone(), proxy.clone());
            }
            // The same file picked again is a change too.
            target.set_value("");
        });
        input
            .add_event_listener_with_callback("change", change.as_ref().unchecked_ref())
            .map_err(|e| js_error("change", e))?;
        change.forget();
    }
    Ok(())
}

/// Read `files` (sizes checked before reading), pick the model among them and load it; the
/// result goes to the inbox under the model's name (`dropped`: on the page, not picked).
fn read_given(
    files: web_sys::FileList,
    dropped: bool,
    inbox: Rc<RefCell<Inbox>>,
    proxy: EventLoopProxy<()>,
) {
    let list: Vec<web_sys::File> = (0..files.length()).filter_map(|i| files.get(i)).collect();
    spawn_local(async move {
        let names: Vec<String> = list.iter().map(|f| f.name()).collect();
        // A bone map alone: the Motion panel's.
        if let [name] = names.as_slice()
            && name.to_ascii_lowercase().ends_with(".toml")
        {
            let bytes = read_files(&list)
                .await
                .and_then(|set| set.file(name).map(<[u8]>::to_vec));
            inbox.borrow_mut().maps.push((name.clone(), bytes));
            let _ = proxy.send_event(());
            return;
        }
        let main = model_among(&names);
        let label = main.clone().unwrap_or_else(|| names.join(", "));
        let loaded = read_files(&list).await.and_then(|set| {
            let main = main.ok_or_else(|| no_model(&names))?;
            ModelSource::Memory {
                main,
                set: Arc::new(set),
            }
            .load()
        });
        inbox.borrow_mut().opened.push((label, loaded, dropped));
        let _ = proxy.send_event(());
    });
}

async fn read_files(list: &[web_sys::File]) -> Result<FileSet> {
    // Every size checked before any file is read.
    let sizes: Vec<(String, u64)> = list.iter().map(|f| (f.name(), f.size() as u64)).collect();
    check_given(&sizes)?;
    let mut set = FileSet::new();
    for f in list {
        let buffer = JsFuture::from(f.array_buffer())
            .await
            .map_err(|e| js_error(&f.name(), e))?;
        set.add(&f.name(), js_sys::Uint8Array::new(&buffer).to_vec())?;
    }
    Ok(set)
}

/// Download the canvas as a PNG named as `path`'s file name: the browser encodes what this
/// frame drew (asked in the frame's own task, before the page composites it, as the canvas
/// holds it then on both WebGPU and WebGL2).
fn download_canvas(canvas: &web_sys::HtmlCanvasElement, path: &Path) -> Result<()> {
    let name = crate::io::file_label(path);
    let save = Closure::once_into_js(move |blob: Option<web_sys::Blob>| {
        let Some(blob) = blob else {
            show_text("skinview: the browser gave no image of the canvas");
            return;
        };
        if let Err(e) = download_blob(&blob, &name) {
            show_fatal(&e);
        }
    });
    canvas
        .to_blob_with_type(save.unchecked_ref(), "image/png")
        .map_err(|e| js_error("canvas.toBlob", e))
}

/// Hand `blob` to the browser as a download named `name`.
fn download_blob(blob: &web_sys::Blob, name: &str) -> Result<()> {
    let url = web_sys::Url::create_object_url_with_blob(blob).map_err(|e| js_error("url", e))?;
    let a: web_sys::HtmlAnchorElement = document()?
        .create_element("a")
        .map_err(|e| js_error("anchor", e))?
        .dyn_into()
        .map_err(|_| Error::Page("an <a> that is not an anchor".into()))?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

/// Show an error that stopped the viewer in the page (`#skinview-error`), and in the console.
pub fn show_fatal(e: &Error) {
    hide_loading();
    let text = format!("skinview: {e}");
    web_sys::console::error_1(&text.clone().into());
    show_text(&text);
}

fn show_text(text: &str) {
    if let Some(el) = document()
        .ok()
        .and_then(|d| d.get_element_by_id("skinview-error"))
    {
        el.set_text_content(Some(text));
    }
}
