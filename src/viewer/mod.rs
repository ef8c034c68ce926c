//! The desktop viewer (feature `viewer`): winit + egui + egui-wgpu on the same wgpu device and
//! the same renderer as `skinview render`. Panels on the left and right, the viewport in the
//! middle, a status bar with the live CPU-vs-GPU comparison. See `state.rs` (what it shows and
//! edits), `playback.rs` (its clock), `framing.rs` (its camera), `panels.rs` (the egui panels),
//! `viewport.rs` (the 3D view, picking, readback).
//!
//! Frame: take egui input → advance the character (animation stage; CPU skinning only when the
//! view needs it) → lay out panels and viewport → upload the palette, poll finished readbacks,
//! render the viewport into its offscreen target → render egui into the surface → present. The
//! animation stage, the uploads and the readbacks reuse their buffers (the stage is tested to
//! allocate nothing once warm); egui's layout and tessellation allocate as egui does. Errors
//! after start-up (a scene the GPU refuses, a failed screenshot) are shown in the window, which
//! stays open.
//! A scripted run ([`ViewerOptions::frames`] with [`ViewerOptions::screenshot`]) renders N frames
//! in the real window, saves the last (the whole window when the surface can be copied, else the
//! viewport) and exits.

pub mod crowd;
pub mod curves;
pub mod framing;
pub mod keys;
pub mod motion;
pub mod page;
pub mod panels;
pub mod playback;
pub mod plot_axes;
pub mod state;
pub mod trail;
pub mod viewport;
#[cfg(all(feature = "web", target_arch = "wasm32"))]
pub mod web;

#[cfg(all(target_arch = "wasm32", not(feature = "web")))]
compile_error!("the viewer on wasm32 is the web page: build it with feature `web`");

use std::path::PathBuf;
use std::sync::Arc;
use web_time::Instant;

use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
#[cfg(not(target_arch = "wasm32"))]
use winit::event_loop::EventLoop;
use winit::event_loop::{ActiveEventLoop, ControlFlow};
use winit::window::{Window, WindowId};

use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::io::Model;
use state::ViewerState;
use viewport::Viewport;

/// How to start the viewer.
#[derive(Clone, Debug)]
pub struct ViewerOptions {
    /// Window size in logical pixels.
    pub size: (u32, u32),
    /// Run the built-in humanoid's demo set-up (layers, cross-fade, IK, links).
    pub demo: bool,
    /// Start in this view mode.
    pub mode: state::ViewMode,
    /// How the GPU skins: the vertex shader ([`crate::gpu::Skinning::VertexShader`]) or the compute
    /// pass ([`crate::gpu::Skinning::ComputePass`]).
    pub gpu_skinning: crate::gpu::Skinning,
    /// Stop after this many frames.
    pub frames: Option<u64>,
    /// Save the last frame here (with `frames`) and on the screenshot key.
    pub screenshot: Option<PathBuf>,
    /// Present without waiting for vertical sync (frame-time measurements).
    pub no_vsync: bool,
    /// Start with the mesh split into submeshes (glTF models).
    pub split: Option<crate::character::SplitSpec>,
    /// Start with this bone selected (a joint name, `node N` or a node index).
    pub bone: Option<String>,
    /// Start in this colour mode.
    pub color_mode: crate::gpu::ColorMode,
    /// Start with the skeleton drawn, in this style.
    pub skeleton: Option<crate::view::skeleton::BoneStyle>,
    /// Start with the bones that move no vertex hidden.
    pub hide_unweighted_bones: bool,
    /// Start with the rest pose's ghost skeleton drawn.
    pub rest_pose: bool,
    /// Start with the bind pose's ghost skeleton drawn.
    pub bind_pose: bool,
    /// Start with the selected bone's motion trail drawn.
    pub motion_trail: bool,
    /// Start with the joint limits and IK chains drawn.
    pub limits: bool,
    /// Start at this clip time (s) instead of 0.
    pub time_s: Option<f32>,
    /// Start paused.
    pub paused: bool,
    /// Start comparing with this file (a path or `builtin:` name): the model and it side by
    /// side, coloured by the distance between them.
    pub compare_with: Option<String>,
    /// Start in the crowd view with this many copies of the model (1..=
    /// [`crate::gpu::MAX_INSTANCES`]).
    pub crowd: Option<u32>,
    /// Start with the curves panel open.
    pub curves: bool,
    /// Start on this clip (`Some(None)`: the rest pose); `None`: the first clip.
    pub anim: Option<Option<usize>>,
    /// Play another character's clips on the model (a path or `builtin:` name), retargeted.
    pub motion: Option<String>,
    /// The bone map for `motion` (TOML; default: made from the names).
    pub motion_map: Option<PathBuf>,
}

impl Default for ViewerOptions {
    fn default() -> Self {
        ViewerOptions {
            size: (1280, 800),
            demo: false,
            mode: state::ViewMode::Gpu,
            gpu_skinning: crate::gpu::Skinning::VertexShader,
            frames: None,
            screenshot: None,
            no_vsync: false,
            split: None,
            bone: None,
            color_mode: crate::gpu::ColorMode::Material,
            skeleton: None,
            hide_unweighted_bones: false,
            rest_pose: false,
            bind_pose: false,
            motion_trail: false,
            limits: false,
            time_s: None,
            paused: false,
            compare_with: None,
            crowd: None,
            curves: false,
            anim: None,
            motion: None,
            motion_map: None,
        }
    }
}

/// The exit report's comparison with another file (model units).
#[derive(Clone, Debug, Default)]
pub struct AgainstReport {
    /// The file's label.
    pub label: String,
    /// The last frame's largest distance.
    pub now: f64,
    /// The largest since its clip or set-up last changed.
    pub largest: f64,
    /// The diagonal the distances are relative to.
    pub diagonal: f64,
    /// When no vertex paired: the model's and the file's vertices left unmatched.
    pub unpaired: Option<(usize, usize)>,
}

/// What a viewer session did (printed by `skinview view` when it exits).
#[derive(Clone, Debug, Default)]
pub struct ViewerReport {
    /// Frames drawn.
    pub frames: u64,
    /// Animation time at the end.
    pub time_s: f32,
    /// Screenshots written.
    pub screenshots: Vec<PathBuf>,
    /// The adapter.
    pub adapter: String,
    /// Mean times per frame (ms): animation stage (incl. CPU skinning when shown), the
    /// CPU skinning part of it, viewport upload + render submission, egui + present, readback
    /// handling.
    pub mean_ms: FrameSplit,
    /// Window size in physical pixels at the end.
    pub size_px: (u32, u32),
    /// The last live CPU-vs-GPU comparison (side by side and diff views).
    pub live: Option<state::LiveErrors>,
    /// The comparison with another file.
    pub against: Option<AgainstReport>,
    /// The crowd view's last frame.
    pub crowd: Option<crate::view::crowd_field::FieldStats>,
    /// The crowd's GPU passes from timestamps.
    pub crowd_gpu_ms: Option<crowd::CrowdGpuMs>,
}

/// Where a frame's time goes (ms, means over the run).
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameSplit {
    /// Whole frame (wall clock between redraws).
    pub frame: f64,
    /// The animation stage (sampling to palette, CPU skinning when shown).
    pub animation: f64,
    /// Of which CPU skinning and normals.
    pub cpu_skin: f64,
    /// Viewport: uploads and render submission.
    pub gpu_submit: f64,
    /// egui layout, tessellation, its render pass and present.
    pub ui_present: f64,
    /// Handling finished readbacks (comparison, picking).
    pub readback: f64,
}

/// The viewer's state on `model` as `options` ask for it (start-up options checked before a
/// window opens).
pub fn start_state(model: Model, options: &ViewerOptions) -> Result<ViewerState> {
    let mut state = ViewerState::new(model, options.demo)?;
    if options.split != state.setup.split {
        state.setup.split = options.split;
        state.rebuild()?;
    }
    // The motion's clips first: the start clip and time may be among them.
    if let Some(source) = &options.motion {
        let scene = crate::io::ModelSource::parse(source)?.load()?.scene;
        state.use_motion(source, scene)?;
        #[cfg(not(target_arch = "wasm32"))]
        if let (Some(path), Some(m)) = (&options.motion_map, &mut state.motion) {
            m.map_path = path.display().to_string();
            state.load_motion_map()?;
        }
    }
    if let Some(anim) = options.anim {
        state.set_anim(anim);
    }
    if let Some(bone) = &options.bone {
        let node = state.character.scene.find_node(bone)?;
        state.select(Some(node));
    }
    state.view.color_mode = options.color_mode;
    state.view.skeleton = options.skeleton.is_some();
    state.view.bone_style = options.skeleton.unwrap_or_default();
    state.view.hide_unweighted_bones = options.hide_unweighted_bones;
    state.view.rest_pose = options.rest_pose;
    state.view.bind_pose = options.bind_pose;
    state.trail.shown = options.motion_trail;
    state.show_limits = options.limits;
    if let Some(t) = options.time_s {
        state.scrub(t);
    }
    state.playback.playing = !options.paused;
    state.curves.open = options.curves;
    if let Some(other) = &options.compare_with {
        state.compare_with(other)?;
    }
    if let Some(n) = options.crowd {
        if !(1..=crate::gpu::MAX_INSTANCES).contains(&n) {
            return Err(Error::Gpu(format!(
                "a crowd of {n} characters: 1..={}",
                crate::gpu::MAX_INSTANCES
            )));
        }
        state.crowd = Some(n);
    }
    Ok(state)
}

impl App {
    fn new(options: ViewerOptions, state: ViewerState) -> App {
        App {
            options,
            state: Some(state),
            gfx: None,
            starting: false,
            error: None,
            report: ViewerReport::default(),
            last: None,
            sums: FrameSplit::default(),
            #[cfg(all(feature = "web", target_arch = "wasm32"))]
            page: None,
        }
    }
}

/// Open the viewer on `model` and run until the window closes (or `frames` are drawn).
#[cfg(not(target_arch = "wasm32"))]
pub fn run(model: Model, options: ViewerOptions) -> Result<ViewerReport> {
    let state = start_state(model, &options)?;
    // The window last: a bad start-up option is reported without one.
    let event_loop = EventLoop::new().map_err(|e| Error::NoWindow(window_error(&e.to_string())))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App::new(options, state);
    event_loop
        .run_app(&mut app)
        .map_err(|e| Error::Gpu(format!("event loop: {e}")))?;
    if let Some(e) = app.error {
        return Err(e);
    }
    let n = app.report.frames.max(1) as f64;
    let s = app.sums;
    app.report.mean_ms = FrameSplit {
        frame: s.frame / n,
        animation: s.animation / n,
        cpu_skin: s.cpu_skin / n,
        gpu_submit: s.gpu_submit / n,
        ui_present: s.ui_present / n,
        readback: s.readback / n,
    };
    Ok(app.report)
}

struct App {
    options: ViewerOptions,
    state: Option<ViewerState>,
    gfx: Option<Gfx>,
    /// The window is made and its device is on its way (the web page's asynchronous start).
    starting: bool,
    error: Option<Error>,
    report: ViewerReport,
    last: Option<Instant>,
    sums: FrameSplit,
    /// The web page around the canvas: its files, URL, downloads and report.
    #[cfg(all(feature = "web", target_arch = "wasm32"))]
    page: Option<web::Page>,
}

struct Gfx {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    ctx: GpuContext,
    egui_ctx: egui::Context,
    egui_state: egui_winit::State,
    egui_renderer: egui_wgpu::Renderer,
    viewport: Viewport,
    /// The surface can be copied from (whole-window screenshots).
    copy_src: bool,
    /// Viewport size in physical pixels asked for by the last layout.
    viewport_px: (u32, u32),
    /// The adapter, for the status bar.
    adapter: String,
    /// The window has no area (minimised): nothing is drawn.
    minimized: bool,
    /// Frames in a row the surface gave no texture (a scripted run gives up after many).
    acquire_failures: u32,
}

/// Frames in a row without a surface texture after which a scripted run stops with an error
/// (ten seconds at 60 Hz: the display is gone, not busy).
const MAX_ACQUIRE_FAILURES: u32 = 600;

impl App {
    fn fail(&mut self, event_loop: &ActiveEventLoop, e: Error) {
        // The page has no exit status to report it by: it shows it.
        #[cfg(all(feature = "web", target_arch = "wasm32"))]
        web::show_fatal(&e);
        self.error = Some(e);
        event_loop.exit();
    }

    /// The window: the desktop's, or the web page's canvas.
    fn create_window(&self, event_loop: &ActiveEventLoop) -> Result<Arc<Window>> {
        let title = self.state.as_ref().map_or("skinview".into(), |s| {
            format!("skinview — {}", s.character.scene.name)
        });
        let attributes = Window::default_attributes().with_title(title);
        #[cfg(all(feature = "web", target_arch = "wasm32"))]
        let attributes = match &self.page {
            Some(page) => page.window_attributes(attributes)?,
            None => attributes,
        };
        #[cfg(not(target_arch = "wasm32"))]
        let attributes = attributes.with_inner_size(winit::dpi::LogicalSize::new(
            self.options.size.0,
            self.options.size.1,
        ));
        let window = event_loop
            .create_window(attributes)
            .map_err(|e| Error::Gpu(format!("create window: {e}")))?;
        Ok(Arc::new(window))
    }

    /// The desktop's start: window, device and everything drawn with it, before the first
    /// frame.
    #[cfg(not(target_arch = "wasm32"))]
    fn init(&mut self, event_loop: &ActiveEventLoop) -> Result<()> {
        let window = self.create_window(event_loop)?;
        // GL presents only with the display handle; Vulkan takes it too.
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(
                Box::new(event_loop.owned_display_handle()),
            ));
        let limits = GpuContext::limits_from_env()?;
        let gfx = pollster::block_on(connect(window, instance, self.options.no_vsync, limits))?;
        self.adopt(gfx)
    }

    /// Take a connected window: the state adapts to the adapter (the uniform palette where
    /// the vertex stage has no storage buffers).
    fn adopt(&mut self, gfx: Gfx) -> Result<()> {
        self.report.adapter = gfx.adapter.clone();
        if let Some(s) = self.state.as_mut() {
            // A comparison asked for at start shows first, whatever the start mode.
            if s.mode != state::ViewMode::AgainstFile {
                s.mode = self.options.mode;
            }
            s.gpu_skinning = self.options.gpu_skinning;
            if !gfx.ctx.storage_palette() {
                s.use_uniform_palette_only(crate::gpu::max_uniform_bones(&gfx.ctx) as usize)?;
                if let Some(o) = s.other.as_ref() {
                    let label = o.label.clone();
                    s.stop_comparing();
                    s.error = Some(format!(
                        "{label}: cannot compare: this adapter has no storage buffers in the \
                         vertex stage, which the other file is drawn with"
                    ));
                }
            }
        }
        gfx.window.request_redraw();
        self.gfx = Some(gfx);
        Ok(())
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> Result<()> {
        let (Some(gfx), Some(state)) = (self.gfx.as_mut(), self.state.as_mut()) else {
            return Ok(());
        };
        let now = Instant::now();
        let dt = self.last.map_or(0.0, |l| (now - l).as_secs_f32());
        self.last = Some(now);
        state.stats.frame(dt);
        self.sums.frame += f64::from(dt) * 1000.0;
        // 1. The animation stage.
        let t0 = Instant::now();
        if let Err(e) = state.tick(dt) {
            state.error = Some(e.to_string());
            state.playback.playing = false;
        }
        if let Some(t) = state.stats.history.back() {
            self.sums.cpu_skin += (t.skin + t.normals) / 1000.0;
        }
        self.sums.animation += t0.elapsed().as_secs_f64() * 1000.0;
        // 2. Viewport: uploads, readbacks, render into its target. Errors (a scene the GPU
        // refuses, a failed readback) are shown in the window, which stays open.
        let t1 = Instant::now();
        let viewport_error = gfx.viewport.frame(&gfx.ctx, state, gfx.viewport_px).err();
        // The GPU's own report first (a failed readback often follows from it).
        match (gfx.ctx.check().err(), viewport_error) {
            (Some(gpu), Some(e)) => state.error = Some(format!("{gpu}; then: {e}")),
            (Some(e), None) | (None, Some(e)) => state.error = Some(e.to_string()),
            (None, None) => {}
        }
        let t_viewport = t1.elapsed().as_secs_f64() * 1000.0;
        self.sums.readback += f64::from(state.stats.readback_ms);
        self.sums.gpu_submit += t_viewport - f64::from(state.stats.readback_ms);
        state.stats.submit_ms = t_viewport as f32;
        // 3. egui: panels and the viewport image.
        let t2 = Instant::now();
        let texture = gfx.viewport.texture(&gfx.ctx, &mut gfx.egui_renderer);
        let raw = gfx.egui_state.take_egui_input(&gfx.window);
        let adapter = &gfx.adapter;
        let viewport = &mut gfx.viewport;
        let mut viewport_points = egui::vec2(640.0, 480.0);
        let output = gfx.egui_ctx.run_ui(raw, |ui| {
            layout(ui, state, viewport, texture, adapter, &mut viewport_points);
        });
        let ppp = output.pixels_per_point;
        gfx.viewport_px = (
            (viewport_points.x * ppp).round().max(1.0) as u32,
            (viewport_points.y * ppp).round().max(1.0) as u32,
        );
        gfx.egui_state
            .handle_platform_output(&gfx.window, output.platform_output);
        let primitives = gfx.egui_ctx.tessellate(output.shapes, ppp);
        let mut textures_delta = output.textures_delta;
        for (id, deltas) in &textures_delta.set {
            for delta in deltas {
                gfx.egui_renderer
                    .update_texture(&gfx.ctx.device, &gfx.ctx.queue, *id, delta);
            }
        }
        let Some(frame) = gfx.acquire_frame(self.options.frames.is_some(), &mut textures_delta)?
        else {
            return Ok(());
        };
        let (enc, user) = gfx.record_egui(&frame, &primitives, ppp);
        // The last frame of a scripted run, or the screenshot key: copy before presenting.
        self.report.frames += 1;
        let last = self.options.frames.is_some_and(|n| self.report.frames >= n);
        let shot_path = if state.screenshot_requested || (last && self.options.screenshot.is_some())
        {
            state.screenshot_requested = false;
            Some(self.options.screenshot.clone().unwrap_or_else(|| {
                PathBuf::from(format!("skinview-{:05}.png", self.report.frames))
            }))
        } else {
            None
        };
        // The page cannot wait for a copy: the browser encodes the canvas (below).
        #[cfg(all(feature = "web", target_arch = "wasm32"))]
        let (shot_path, download) = (None::<PathBuf>, shot_path);
        let (commands, pending) = match (&shot_path, gfx.copy_src) {
            (Some(_), true) => {
                let (c, p) = crate::gpu::target::copy_texture_rgba8(&gfx.ctx, enc, &frame.texture)?;
                (c, Some(p))
            }
            _ => (enc.finish(), None),
        };
        gfx.ctx.queue.submit(user.into_iter().chain([commands]));
        gfx.window.pre_present_notify();
        gfx.ctx.queue.present(frame);
        for id in &textures_delta.free {
            gfx.egui_renderer.free_texture(id);
        }
        textures_delta.clear();
        self.sums.ui_present += t2.elapsed().as_secs_f64() * 1000.0;
        if let Some(path) = shot_path {
            let written = gfx.save_screenshot(state, &path, pending, self.report.frames);
            match written {
                Ok(()) => self.report.screenshots.push(path),
                // A scripted run must say it failed; an interactive one shows it.
                Err(e) if last => return Err(e),
                Err(e) => state.error = Some(format!("screenshot: {e}")),
            }
        }
        #[cfg(all(feature = "web", target_arch = "wasm32"))]
        if let Some(page) = self.page.as_mut() {
            page.after_frame(gfx, state, download.as_deref());
        }
        self.report.time_s = state.playback.time_s;
        self.report.live = state.live;
        self.report.against = state.other.as_ref().map(|o| AgainstReport {
            label: o.label.clone(),
            now: o.now.max,
            largest: o.largest,
            diagonal: o.diagonal(),
            unpaired: o.unpaired(),
        });
        self.report.size_px = (gfx.config.width, gfx.config.height);
        self.report.crowd = state.crowd.and(state.crowd_stats);
        self.report.crowd_gpu_ms = state.crowd.and(state.crowd_gpu_ms);
        if last {
            event_loop.exit();
        }
        Ok(())
    }
}

/// Connect `window` to a device of `instance` (the adapter that can present to it; `limits`
/// instead of the adapter's own when given): the surface, egui and the viewport.
async fn connect(
    window: Arc<Window>,
    instance: wgpu::Instance,
    no_vsync: bool,
    limits: Option<wgpu::Limits>,
) -> Result<Gfx> {
    let surface = instance
        .create_surface(window.clone())
        .map_err(|e| Error::Gpu(format!("create surface: {e}")))?;
    let adapter = instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: Some(&surface),
            apply_limit_buckets: false,
        })
        .await
        .map_err(|e| Error::NoAdapter(format!("{e}; {}", crate::gpu::context::NO_ADAPTER_HINT)))?;
    let ctx = GpuContext::from_adapter_with_limits(instance, adapter, limits).await?;
    let caps = surface.get_capabilities(&ctx.adapter);
    let format = caps
        .formats
        .iter()
        .copied()
        .find(|f| f.is_srgb())
        .or_else(|| caps.formats.first().copied())
        .ok_or_else(|| Error::Gpu("the surface offers no format".into()))?;
    let copy_src = caps.usages.contains(wgpu::TextureUsages::COPY_SRC)
        && matches!(
            format,
            wgpu::TextureFormat::Bgra8UnormSrgb
                | wgpu::TextureFormat::Rgba8UnormSrgb
                | wgpu::TextureFormat::Bgra8Unorm
                | wgpu::TextureFormat::Rgba8Unorm
        );
    let size = window.inner_size();
    let config = wgpu::SurfaceConfiguration {
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT
            | if copy_src {
                wgpu::TextureUsages::COPY_SRC
            } else {
                wgpu::TextureUsages::empty()
            },
        format,
        width: size.width.max(1),
        height: size.height.max(1),
        present_mode: if no_vsync {
            wgpu::PresentMode::AutoNoVsync
        } else {
            wgpu::PresentMode::AutoVsync
        },
        desired_maximum_frame_latency: 2,
        alpha_mode: caps
            .alpha_modes
            .first()
            .copied()
            .unwrap_or(wgpu::CompositeAlphaMode::Auto),
        view_formats: vec![],
        color_space: wgpu::SurfaceColorSpace::Auto,
    };
    surface.configure(&ctx.device, &config);
    let egui_ctx = egui::Context::default();
    let egui_state = egui_winit::State::new(
        egui_ctx.clone(),
        egui::ViewportId::ROOT,
        &window,
        Some(window.scale_factor() as f32),
        None,
        Some(ctx.device.limits().max_texture_dimension_2d as usize),
    );
    let egui_renderer =
        egui_wgpu::Renderer::new(&ctx.device, format, egui_wgpu::RendererOptions::default());
    let viewport = Viewport::new(&ctx)?;
    let adapter = ctx.describe();
    Ok(Gfx {
        window,
        surface,
        config,
        ctx,
        egui_ctx,
        egui_state,
        egui_renderer,
        viewport,
        copy_src,
        viewport_px: (640, 480),
        adapter,
        minimized: false,
        acquire_failures: 0,
    })
}

impl Gfx {
    /// The surface's next frame, or `None` for a frame to skip (the surface outdated or lost
    /// is reconfigured; the egui textures of this frame are freed). A scripted run (`scripted`)
    /// fails after [`MAX_ACQUIRE_FAILURES`] misses in a row.
    fn acquire_frame(
        &mut self,
        scripted: bool,
        textures_delta: &mut egui::TexturesDelta,
    ) -> Result<Option<wgpu::SurfaceTexture>> {
        let other = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(f)
            | wgpu::CurrentSurfaceTexture::Suboptimal(f) => {
                self.acquire_failures = 0;
                return Ok(Some(f));
            }
            other => other,
        };
        self.acquire_failures += 1;
        if scripted && self.acquire_failures > MAX_ACQUIRE_FAILURES {
            textures_delta.clear();
            return Err(Error::Gpu(format!(
                "the window's surface gave no frame {MAX_ACQUIRE_FAILURES} times in a row"
            )));
        }
        if matches!(
            other,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost
        ) {
            self.surface.configure(&self.ctx.device, &self.config);
        }
        for id in &textures_delta.free {
            self.egui_renderer.free_texture(id);
        }
        textures_delta.clear();
        Ok(None)
    }

    /// Record egui's pass into `frame`: the encoder, and egui's own command buffers to submit
    /// before it.
    fn record_egui(
        &mut self,
        frame: &wgpu::SurfaceTexture,
        primitives: &[egui::ClippedPrimitive],
        pixels_per_point: f32,
    ) -> (wgpu::CommandEncoder, Vec<wgpu::CommandBuffer>) {
        let view = frame.texture.create_view(&Default::default());
        let size_px = [self.config.width, self.config.height];
        record_egui_pass(
            &self.ctx,
            &mut self.egui_renderer,
            &view,
            size_px,
            primitives,
            pixels_per_point,
        )
    }

    /// Write the screenshot of frame `frames` to `path`: the window's copy when the surface
    /// could be copied (`pending`), else the viewport alone; tagged with the adapter, frame,
    /// time and skinning path. Never over a file the open model was read from.
    fn save_screenshot(
        &self,
        state: &ViewerState,
        path: &std::path::Path,
        pending: Option<crate::gpu::target::PendingImage>,
        frames: u64,
    ) -> Result<()> {
        let image = match pending {
            Some(p) => p.read(&self.ctx),
            // The surface cannot be copied: save the viewport alone.
            None => {
                let enc = self.ctx.device.create_command_encoder(&Default::default());
                self.viewport.target().read_rgba8(&self.ctx, enc)
            }
        }?;
        let frames = frames.to_string();
        let time = format!("{:.4}", state.playback.time_s);
        // What the view draws: the CPU reference, or the GPU skinning path.
        let skinning = state.view_options().skinning.describe();
        state.model.refuse_as_output(path)?;
        crate::io::png::write_tagged(
            &image,
            path,
            &[
                ("Adapter", &self.adapter),
                ("Frames", &frames),
                ("Time", &time),
                ("Skinning", skinning),
            ],
        )
    }
}

/// Record egui's pass over `view` (cleared to black): the encoder, and egui's own command
/// buffers to submit before it. The window's frames and the tests' panel images draw this way.
pub fn record_egui_pass(
    ctx: &GpuContext,
    renderer: &mut egui_wgpu::Renderer,
    view: &wgpu::TextureView,
    size_in_pixels: [u32; 2],
    primitives: &[egui::ClippedPrimitive],
    pixels_per_point: f32,
) -> (wgpu::CommandEncoder, Vec<wgpu::CommandBuffer>) {
    let screen = egui_wgpu::ScreenDescriptor {
        size_in_pixels,
        pixels_per_point,
    };
    let mut enc = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("egui"),
        });
    let user = renderer.update_buffers(&ctx.device, &ctx.queue, &mut enc, primitives, &screen);
    {
        let mut pass = enc
            .begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("egui"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            })
            .forget_lifetime();
        renderer.render(&mut pass, primitives, &screen);
    }
    (enc, user)
}

/// Each side panel's width at most, as a share of the window's: the viewport keeps the other
/// three fifths at any window size (the panels' contents wrap or scroll).
const SIDE_PANEL_MAX_SHARE: f32 = 0.2;
/// A side panel's row beside a slider: its value box, a short name and the spacing (points).
const SLIDER_ROOM_PX: f32 = 130.0;
/// A side panel's narrowest width when the window allows (points): dragged below it, it shuts.
const SIDE_PANEL_MIN_PX: f32 = 120.0;
/// A side panel's width for a slider row (slider, value box and a two-word name) where a fifth
/// of the window is less (points).
const SIDE_PANEL_USABLE_PX: f32 = 180.0;
/// The share of the window a side panel may take to reach `SIDE_PANEL_USABLE_PX`: with both
/// open the viewport keeps half.
const SIDE_PANEL_MID_SHARE: f32 = 0.25;
/// A side panel opened by hand on a window too narrow for both beside the viewport (under
/// `SIDE_PANEL_MIN_PX / SIDE_PANEL_MAX_SHARE`, 600 points) takes this share of the width at
/// most: under half, so the viewport stays beside one panel.
const SIDE_PANEL_NARROW_SHARE: f32 = 0.45;

/// A side panel's contents, scrolled both ways (a wide hierarchy or matrix scrolls sideways
/// rather than widening the panel), with labels that do not take drags for text selection (a
/// drag near the panel's edge resizes it).
pub fn side_scroll(ui: &mut egui::Ui, id: &str, contents: impl FnOnce(&mut egui::Ui)) {
    ui.style_mut().interaction.selectable_labels = false;
    // Rows wrap at the panel's width; only what cannot wrap (a deep tree, a matrix) scrolls.
    // A slider, its value and a short name fit the width on a row of their own.
    let width = ui.available_width();
    ui.spacing_mut().slider_width = (width - SLIDER_ROOM_PX).clamp(40.0, 160.0);
    egui::ScrollArea::both()
        .id_salt(id)
        .auto_shrink([false, false])
        .show(ui, |ui| {
            ui.set_max_width(width);
            contents(ui);
        });
}

/// The window's layout: model, animation, layers and hierarchy on the left; the selected bone,
/// crowd, deformation, weights, morph targets, IK and performance on the right; the status bar
/// below; the viewport in the middle.
fn layout(
    ui: &mut egui::Ui,
    state: &mut ViewerState,
    viewport: &mut Viewport,
    texture: egui::TextureId,
    adapter: &str,
    viewport_points: &mut egui::Vec2,
) {
    let before = state.setup.clone();
    egui::Panel::bottom("status").show(ui, |ui| panels::status(ui, state, adapter));
    if state.curves.open {
        // Two fifths of the window at most when it opens, so the viewport keeps the rest.
        let height = ui.available_height();
        egui::Panel::bottom("curves")
            .resizable(true)
            .default_size((height * 0.4).min(340.0))
            .max_size(height * 0.75)
            .show(ui, |ui| curves::panel(ui, state));
    }
    // Each side panel takes a fifth of the window, or where that is less than a slider row
    // needs, up to a quarter, so the viewport keeps half the window or more; what does not fit
    // the panel's width scrolls. Where a fifth is narrower than a panel can be used, the
    // panels hide (and come back when the window widens); one opened by hand there takes its
    // narrowest width, or a share of the window.
    let width = ui.available_width();
    let narrow = width * SIDE_PANEL_MAX_SHARE < SIDE_PANEL_MIN_PX;
    state.fit_side_panels(narrow);
    let side_px = if narrow {
        SIDE_PANEL_MIN_PX.min(width * SIDE_PANEL_NARROW_SHARE)
    } else {
        (width * SIDE_PANEL_MAX_SHARE).max(SIDE_PANEL_USABLE_PX.min(width * SIDE_PANEL_MID_SHARE))
    };
    let side = |panel: egui::Panel| {
        panel
            .resizable(true)
            .default_size(side_px)
            .size_range(SIDE_PANEL_MIN_PX.min(side_px)..=side_px)
    };
    let [mut left, mut right] = state.side_panels;
    side(egui::Panel::left("left")).show_collapsible(ui, &mut left, |ui| {
        side_scroll(ui, "left scroll", |ui| {
            panels::model(ui, state);
            ui.separator();
            panels::animation(ui, state);
            ui.separator();
            if state.motion.is_some() {
                ui.heading("Motion");
                motion::panel(ui, state);
                ui.separator();
            }
            panels::layers(ui, state);
            ui.separator();
            panels::hierarchy(ui, state);
        });
    });
    side(egui::Panel::right("right")).show_collapsible(ui, &mut right, |ui| {
        side_scroll(ui, "right scroll", |ui| {
            // The selected bone first, so its inverse bind matrix shows at any height.
            panels::bone_inspector(ui, state);
            ui.separator();
            panels::crowd(ui, state);
            ui.separator();
            panels::deformation(ui, state);
            ui.separator();
            panels::weights(ui, state);
            ui.separator();
            panels::morph_targets(ui, state);
            ui.separator();
            panels::ik(ui, state);
            ui.separator();
            panels::performance(ui, state);
        });
    });
    // Dragged shut (or open again) by an edge or a double click on it.
    state.side_panels = [left, right];
    egui::CentralPanel::no_frame().show(ui, |ui| {
        *viewport_points = viewport.ui(ui, state, texture);
    });
    if state.help {
        keys::help_window(ui.ctx(), state);
    }
    if state.dropped.is_some() || state.dropped_model.is_some() {
        panels::drop_prompt(ui.ctx(), state);
    }
    // Settings edited this frame rebuild the character once.
    state.apply_pending(Some(before));
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gfx.is_some() || self.starting {
            return;
        }
        self.starting = true;
        #[cfg(not(target_arch = "wasm32"))]
        let started = self.init(event_loop);
        #[cfg(all(feature = "web", target_arch = "wasm32"))]
        let started = self
            .create_window(event_loop)
            .and_then(|w| web::connect(self, w));
        if let Err(e) = started {
            self.fail(event_loop, e);
        }
    }

    /// Something arrived from outside the loop (the web page's device, files, or a model).
    fn user_event(&mut self, _event_loop: &ActiveEventLoop, _wake: ()) {
        #[cfg(all(feature = "web", target_arch = "wasm32"))]
        if let Err(e) = web::take_inbox(self) {
            self.fail(_event_loop, e);
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(gfx) = self.gfx.as_mut() else {
            return;
        };
        let response = gfx.egui_state.on_window_event(&gfx.window, &event);
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                gfx.minimized = size.width == 0 || size.height == 0;
                if !gfx.minimized {
                    gfx.config.width = size.width;
                    gfx.config.height = size.height;
                    gfx.surface.configure(&gfx.ctx.device, &gfx.config);
                }
            }
            WindowEvent::DroppedFile(path) => {
                // Asked what to do with it (open, or compare with it) on the next frame.
                if let Some(s) = self.state.as_mut() {
                    s.dropped = Some(path.display().to_string());
                }
            }
            WindowEvent::RedrawRequested if gfx.minimized => {}
            WindowEvent::RedrawRequested => {
                if let Err(e) = self.redraw(event_loop) {
                    self.fail(event_loop, e);
                }
            }
            _ => {
                if response.repaint {
                    gfx.window.request_redraw();
                }
            }
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        // The page's loop runs at the browser's animation frames (each redraw asked for).
        #[cfg(target_arch = "wasm32")]
        if let Some(g) = &self.gfx {
            event_loop.set_control_flow(ControlFlow::Wait);
            g.window.request_redraw();
            return;
        }
        if let Some(g) = &self.gfx {
            // Minimised: wait for events instead of spinning.
            event_loop.set_control_flow(if g.minimized {
                ControlFlow::Wait
            } else {
                ControlFlow::Poll
            });
            if !g.minimized {
                g.window.request_redraw();
            }
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
/// What stopped the window, for a person: no display at all (the common case on servers),
/// or the windowing system's own words without the source location winit adds.
fn window_error(raw: &str) -> String {
    let no_display = ["DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET"]
        .iter()
        .all(|v| std::env::var_os(v).is_none_or(|x| x.is_empty()));
    if no_display {
        return "no display (neither DISPLAY nor WAYLAND_DISPLAY is set); run it under a \
                virtual X server (`xvfb-run -a skinview view ...`) or draw headless with \
                `skinview render`"
            .into();
    }
    // "os error at /path/to/winit/src/file.rs:765: message" -> "message".
    let message = raw
        .split_once(".rs:")
        .and_then(|(_, rest)| rest.split_once(": "))
        .map_or(raw, |(_, m)| m);
    message.to_string()
}
