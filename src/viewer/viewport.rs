//! The 3D viewport inside the window: the GPU scene of the current character, an offscreen
//! target (4× MSAA, depth) shown as an egui image, the view renderer shared with
//! `skinview render`, mouse and keyboard camera controls, bone and vertex picking, IK target
//! dragging, and the per-frame CPU-vs-GPU comparison read back asynchronously.
//!
//! Picking a vertex uses GPU-skinned positions read back from the capture shader (the same
//! `skin()` the draw runs; with compute skinning, the compute pass's output buffer itself,
//! which is what is drawn; on the uniform palette, which has no capture shader, the draw's own
//! vertex stage through the draw-path capture), not a CPU guess: the vertex whose projection
//! is nearest the click within [`PICK_RADIUS_PX`], the closest to the eye among those. The
//! live comparison reads the same.

use glam::{Mat4, Vec3, Vec4Swizzles};

use super::state::{LiveErrors, Picked, ViewerState};
use crate::error::Result;
use crate::gpu::{
    AsyncCapture, AsyncDrawCapture, Capture, CapturePath, GpuContext, GpuScene, OffscreenTarget,
    PaletteSource,
};
use crate::skin::SkinnedVertices;
use crate::skin::VertexErrors;
use crate::skin::weights::reduce_influences;
use crate::view::legend::{Legend, LegendKind, legend, linear_to_srgb8};
use crate::view::{BACKGROUND, ViewRenderer, upload_influences, view_aspect};

/// Pixels around the click a vertex or the IK target may be picked within.
pub const PICK_RADIUS_PX: f32 = 10.0;
/// Pixels from a bone's segment that still select it.
pub const BONE_PICK_PX: f32 = 6.0;
/// Orbit speed: radians per pixel of drag.
const ORBIT_RAD_PER_PX: f32 = 0.008;
/// Zoom factor per wheel notch (egui reports ~50 points a notch).
const ZOOM_PER_POINT: f32 = 0.0025;

/// The viewport's GPU side.
pub struct Viewport {
    view: ViewRenderer,
    target: OffscreenTarget,
    texture: Option<egui::TextureId>,
    scene: Option<SceneGpu>,
    generation: u64,
    /// CPU outputs of the frame whose capture is in flight (compared when it lands).
    cpu_snapshot: Vec<SkinnedVertices>,
    snapshot_frame: u64,
    errors: Vec<f32>,
    /// The snapshot holds this frame's CPU result (CPU skinning ran): comparable.
    snapshot_valid: bool,
    /// A click waiting for GPU positions: (pixel position in the viewport, camera, size).
    pending_pick: Option<(egui::Pos2, Mat4, egui::Vec2)>,
    /// The IK target is being dragged, in this half of a split view (false: left or single).
    dragging_target: Option<bool>,
    /// The target generation egui's texture points at.
    texture_generation: u64,
    /// The character generation whose GPU scene failed (not retried until it changes).
    failed_generation: Option<u64>,
    /// Readbacks whose map failed and were submitted again (a failure twice in a row is an
    /// error: a browser may abort a map, and a new one succeeds).
    pub readback_retries: u64,
    /// The colour legend and what it was made for (made again when that changes, not each
    /// frame: the bone swatches sum every weight).
    legend: Option<(LegendKey, Option<Legend>)>,
    /// The other file's GPU scene (compare with…), and the file's id it was made for.
    other: Option<(u64, GpuScene)>,
    /// Scratch: the other file's distances scaled for its heatmap.
    scaled: Vec<f32>,
    /// The crowd view's field ([`ViewerState::crowd`]).
    crowd: Option<super::crowd::CrowdGpu>,
}

/// What a legend depends on: the character generation, the view mode, the colour mode, the
/// selected bone, whether errors are mode against mode, whether submeshes are coloured.
type LegendKey = (
    u64,
    super::state::ViewMode,
    crate::gpu::ColorMode,
    Option<usize>,
    bool,
    bool,
);

struct SceneGpu {
    gpu: GpuScene,
    /// The asynchronous readback behind the live comparison and picking.
    readback: Readback,
    /// The skinning options last written to the draws (`None`: not yet).
    skin: Option<crate::skin::SkinOptions>,
    /// The last readback that landed failed (the next failure is shown).
    readback_failed: bool,
}

/// Where the live comparison and picking read the GPU's vertices.
enum Readback {
    /// The capture shader (storage palette), or the compute pass's own output buffer when
    /// it skins.
    Shader(Box<(Capture, AsyncCapture)>),
    /// The draw's own vertex stage, through the draw-path capture (the uniform palette, and
    /// adapters without compute shaders).
    Draw(Box<AsyncDrawCapture>),
}

impl Readback {
    /// A readback on the way.
    fn in_flight(&self) -> bool {
        match self {
            Readback::Shader(c) => c.1.in_flight(),
            Readback::Draw(r) => r.in_flight(),
        }
    }

    /// What the last submitted readback holds.
    fn source(&self) -> CapturePath {
        match self {
            Readback::Shader(c) => c.1.source(),
            Readback::Draw(_) => CapturePath::Draw,
        }
    }

    /// The vertices of the readback that landed, if one did (never waits).
    fn poll(&mut self, ctx: &GpuContext, gpu: &GpuScene) -> Result<Option<&[SkinnedVertices]>> {
        match self {
            Readback::Shader(c) => c.1.poll(ctx, gpu),
            Readback::Draw(r) => r.poll(ctx, gpu),
        }
    }

    /// Start the next readback of what `gpu` draws with `skinning` (unless one is on its way).
    fn submit(
        &mut self,
        ctx: &GpuContext,
        gpu: &GpuScene,
        skinning: crate::gpu::Skinning,
    ) -> Result<()> {
        match self {
            Readback::Shader(c) => {
                let (capture, r) = &mut **c;
                // The compute path is compared as drawn: its own output buffer, not a capture.
                let compute = skinning == crate::gpu::Skinning::ComputePass
                    && r.submit_compute_skinned(ctx, gpu);
                if !compute {
                    r.submit(ctx, capture, gpu);
                }
            }
            Readback::Draw(r) => {
                r.submit(ctx, gpu)?;
            }
        }
        Ok(())
    }
}

/// The other file's GPU scene (made when the file is new), with this frame's CPU-skinned
/// vertices and its distances to the model (times `scale`, as the model's; `scaled` is
/// scratch). It is drawn as the CPU skinned it, on the storage palette's scene layout
/// ([`ViewerState::compare_with`] refuses adapters without it).
fn upload_other(
    ctx: &GpuContext,
    slot: &mut Option<(u64, GpuScene)>,
    other: &crate::diff::against::OtherFile,
    scale: f32,
    scaled: &mut Vec<f32>,
) -> Result<()> {
    let b = &other.character;
    if slot.as_ref().is_none_or(|(id, _)| *id != other.id) {
        let gpu = GpuScene::with_palette(
            ctx,
            &b.scene,
            &b.frame,
            upload_influences(b, true),
            PaletteSource::Storage,
        )?;
        *slot = Some((other.id, gpu));
    }
    if let Some((_, gpu)) = slot.as_mut() {
        gpu.update(ctx, &b.scene, &b.frame);
        gpu.upload_skinned(ctx, &b.outputs)?;
        scaled.clear();
        scaled.extend(other.distances_b.iter().map(|d| d * scale));
        gpu.upload_vertex_errors(ctx, scaled);
    }
    Ok(())
}

/// Largest viewport side in pixels (and never more than the device's texture limit): beyond
/// any display.
const MAX_VIEWPORT_PX: u32 = 8192;

impl Viewport {
    /// A viewport on `ctx` (its target grows to the panel's size on the first frame).
    pub fn new(ctx: &GpuContext) -> Result<Viewport> {
        let target = crate::gpu::target::display_target(ctx);
        Ok(Viewport {
            view: ViewRenderer::new(ctx, target)?,
            target: OffscreenTarget::new(ctx, target, 16, 16)?,
            texture: None,
            scene: None,
            generation: u64::MAX,
            cpu_snapshot: Vec::new(),
            snapshot_frame: 0,
            errors: Vec::new(),
            snapshot_valid: false,
            pending_pick: None,
            legend: None,
            other: None,
            scaled: Vec::new(),
            dragging_target: None,
            texture_generation: 0,
            failed_generation: None,
            readback_retries: 0,
            crowd: None,
        })
    }

    /// The image egui shows (registered on the first call, re-pointed after a resize).
    pub fn texture(
        &mut self,
        ctx: &GpuContext,
        egui_renderer: &mut egui_wgpu::Renderer,
    ) -> egui::TextureId {
        let view = self.target.display_view();
        match self.texture {
            Some(id) if self.texture_generation == self.target.generation() => id,
            Some(id) => {
                egui_renderer.update_egui_texture_from_wgpu_texture(
                    &ctx.device,
                    view,
                    wgpu::FilterMode::Linear,
                    id,
                );
                self.texture_generation = self.target.generation();
                id
            }
            None => {
                let id = egui_renderer.register_native_texture(
                    &ctx.device,
                    view,
                    wgpu::FilterMode::Linear,
                );
                self.texture = Some(id);
                id
            }
        }
    }

    /// The offscreen target (screenshots of the viewport alone).
    pub fn target(&self) -> &OffscreenTarget {
        &self.target
    }

    /// Make the GPU scene again when the character was rebuilt. A rig the GPU cannot skin
    /// (more than 8 influences) is shown from its CPU reference, with a note.
    fn ensure_scene(&mut self, ctx: &GpuContext, state: &mut ViewerState) -> Result<()> {
        if self.generation == state.generation && self.scene.is_some() {
            return Ok(());
        }
        if !crate::view::gpu_can_skin(&state.character) && !state.mode.cpu_drawn() {
            state.mode = super::state::ViewMode::Cpu;
            state.error = Some(format!(
                "{}: vertices have {} influences, more than the GPU path's {}: showing the CPU \
                 reference (set an influence limit to compare with the GPU)",
                state.character.scene.name,
                state.character.scene.max_influences(),
                crate::gpu::GPU_MAX_INFLUENCES
            ));
        }
        let c = &state.character;
        let cpu_only = state.mode.cpu_drawn();
        let source = state.palette_source();
        self.view.prepare_palette(ctx, source)?;
        let gpu = GpuScene::with_palette(
            ctx,
            &c.scene,
            &c.frame,
            upload_influences(c, cpu_only),
            source,
        )?;
        let readback = match source {
            PaletteSource::Storage if ctx.compute_capture() => {
                let capture = Capture::new(ctx, &gpu)?;
                Readback::Shader(Box::new((capture, AsyncCapture::new(ctx, &gpu))))
            }
            _ => Readback::Draw(Box::new(AsyncDrawCapture::new(ctx, &gpu)?)),
        };
        self.scene = Some(SceneGpu {
            gpu,
            readback,
            skin: None,
            readback_failed: false,
        });
        self.view.set_skeleton(c, state.poses.clone());
        self.generation = state.generation;
        self.pending_pick = None;
        self.snapshot_valid = false;
        Ok(())
    }

    /// Upload this frame (palette, CPU result when shown), hand finished readbacks to the
    /// state (live errors, picks), start the next comparison capture, and render into the
    /// target at `size_px`.
    pub fn frame(
        &mut self,
        ctx: &GpuContext,
        state: &mut ViewerState,
        size_px: (u32, u32),
    ) -> Result<()> {
        if state.crowd.is_some() {
            self.resize(ctx, size_px)?;
            let result =
                super::crowd::frame(ctx, &mut self.crowd, &mut self.view, &self.target, state);
            if result.is_err() {
                // Back to the one character, framed again; the error is shown.
                state.crowd = None;
                self.crowd = None;
                self.generation = u64::MAX;
                state.framing.request(false);
            }
            return result;
        }
        if self.crowd.take().is_some() {
            // The one character again: its palette source prepared afresh.
            self.generation = u64::MAX;
            state.framing.reframe = true;
        }
        let Some(size) = self.sync(ctx, state, size_px)? else {
            return Ok(());
        };
        let other = self.upload(ctx, state)?;
        let t0 = web_time::Instant::now();
        self.poll(ctx, state)?;
        self.submit(ctx, state)?;
        state.stats.readback(t0.elapsed().as_secs_f32() * 1000.0);
        let against = match other {
            Some(Err(message)) => {
                state.stop_comparing();
                state.error = Some(message);
                false
            }
            Some(Ok(())) => true,
            None => false,
        };
        self.draw(ctx, state, size, against)
    }

    /// The target at `size_px`, clamped to the device; the size it has.
    fn resize(&mut self, ctx: &GpuContext, size_px: (u32, u32)) -> Result<(u32, u32)> {
        let max = ctx
            .device
            .limits()
            .max_texture_dimension_2d
            .min(MAX_VIEWPORT_PX);
        let (w, h) = (size_px.0.clamp(1, max), size_px.1.clamp(1, max));
        self.target.resize(ctx, w, h)?;
        Ok((w, h))
    }

    /// Bring the GPU side in step with the state: the target at `size_px` (clamped to the
    /// device), the GPU scenes made again when the character, its influences or the palette
    /// source changed, the draws' skinning options, compute skinning when asked for. The
    /// target's size, or None when there is no scene to draw (its making failed for this
    /// generation: not retried until it changes).
    fn sync(
        &mut self,
        ctx: &GpuContext,
        state: &mut ViewerState,
        size_px: (u32, u32),
    ) -> Result<Option<(u32, u32)>> {
        let (w, h) = self.resize(ctx, size_px)?;
        // A mode switch to CPU-only on a rig the GPU cannot skin needs other uploads.
        let cpu_only = state.mode.cpu_drawn();
        // The other file's GPU scene lives as long as its comparison.
        if self.other.as_ref().map(|(id, _)| *id) != state.other.as_ref().map(|o| o.id) {
            self.other = None;
        }
        if let Some(s) = &self.scene
            && (s.gpu.max_influences != upload_influences(&state.character, cpu_only)
                || s.gpu.source != state.palette_source())
        {
            self.scene = None;
        }
        if self.failed_generation == Some(state.generation) {
            return Ok(None);
        }
        if let Err(e) = self.ensure_scene(ctx, state) {
            self.scene = None;
            self.failed_generation = Some(state.generation);
            return Err(e);
        }
        let Some(s) = self.scene.as_mut() else {
            return Ok(None);
        };
        let c = &state.character;
        // The GPU draws the character's skinning options (a panel may have changed them).
        if s.skin != Some(state.setup.skin) {
            for d in 0..c.scene.draws.len() {
                s.gpu.set_skin_options(ctx, d, c.skin_options(d));
            }
            s.skin = Some(state.setup.skin);
        }
        if state.gpu_skinning == crate::gpu::Skinning::ComputePass
            && s.gpu.compute_skinning().is_none()
            && let Err(e) = s.gpu.enable_compute_skinning(ctx)
        {
            state.gpu_skinning = crate::gpu::Skinning::VertexShader;
            state.error = Some(format!("{e}: skinning in the vertex shader"));
        }
        Ok(Some((w, h)))
    }

    /// Upload this frame: the palette, the CPU result where it is drawn, and beside another
    /// file the distances of both and the other file's scene. That upload's outcome (None:
    /// no other file; an error, once, stops the comparison).
    fn upload(
        &mut self,
        ctx: &GpuContext,
        state: &ViewerState,
    ) -> Result<Option<std::result::Result<(), String>>> {
        let Some(s) = self.scene.as_mut() else {
            return Ok(None);
        };
        let c = &state.character;
        s.gpu.update(ctx, &c.scene, &c.frame);
        // The CPU result is drawn in the CPU and side-by-side views (the heatmap draws the GPU
        // mesh; its errors come from the comparison), and beside another file.
        if matches!(
            state.mode,
            super::state::ViewMode::Cpu
                | super::state::ViewMode::SideBySide
                | super::state::ViewMode::AgainstFile
        ) {
            s.gpu.upload_skinned(ctx, &c.outputs)?;
        }
        let (super::state::ViewMode::AgainstFile, Some(o)) = (state.mode, state.other.as_ref())
        else {
            return Ok(None);
        };
        // The heatmap divides by the opening bounds' diagonal: scale the distances so they
        // read against the pairing's (the rest pose's), as `diff` reports.
        let view_diagonal = (state.bounds.1 - state.bounds.0).length() as f64;
        let scale = (view_diagonal / o.diagonal().max(f64::MIN_POSITIVE)) as f32;
        self.errors.clear();
        self.errors.extend(o.distances_a.iter().map(|d| d * scale));
        s.gpu.upload_vertex_errors(ctx, &self.errors);
        Ok(Some(
            upload_other(ctx, &mut self.other, o, scale, &mut self.scaled)
                .map_err(|e| format!("{}: {e}", o.label)),
        ))
    }

    /// Hand a readback that landed to the state: the live CPU-vs-GPU errors (when the view
    /// compares and the CPU result of its frame was kept), a pending pick, the picked vertex's
    /// new position. A failed readback is retried once before it is an error.
    fn poll(&mut self, ctx: &GpuContext, state: &mut ViewerState) -> Result<()> {
        let Some(s) = self.scene.as_mut() else {
            return Ok(());
        };
        let source = s.readback.source();
        let polled = match s.readback.poll(ctx, &s.gpu) {
            Ok(p) => {
                s.readback_failed &= p.is_none();
                p
            }
            // Once: the capture is submitted again ([`Viewport::submit`]).
            Err(_) if !s.readback_failed => {
                s.readback_failed = true;
                self.readback_retries += 1;
                None
            }
            Err(e) => return Err(e),
        };
        let Some(gpu_vertices) = polled else {
            return Ok(());
        };
        if state.mode.compares()
            && self.snapshot_valid
            && self.cpu_snapshot.len() == gpu_vertices.len()
        {
            crate::skin::vertex_distances(&self.cpu_snapshot, gpu_vertices, &mut self.errors);
            s.gpu.upload_vertex_errors(ctx, &self.errors);
            state.live = Some(LiveErrors {
                source,
                ..live_errors(
                    &self.errors,
                    &self.cpu_snapshot,
                    state.bounds,
                    state.stats.frames.saturating_sub(self.snapshot_frame),
                )
            });
        }
        let c = &state.character;
        if let Some((pos, clip_from_world, size)) = self.pending_pick.take() {
            state.picked = pick_vertex(
                gpu_vertices,
                &c.scene,
                c.max_influences(),
                pos,
                clip_from_world,
                size,
            );
        }
        // The picked vertex follows the animation.
        if let Some(p) = state.picked.as_mut()
            && let Some(&q) = gpu_vertices
                .get(p.draw)
                .and_then(|v| v.positions.get(p.vertex))
        {
            p.position = q;
        }
        Ok(())
    }

    /// Start the next readback, with a copy of this frame's CPU result to compare it with:
    /// every frame while comparing or while a vertex is picked, or once for a new pick (never
    /// while one is on its way).
    fn submit(&mut self, ctx: &GpuContext, state: &ViewerState) -> Result<()> {
        let Some(s) = self.scene.as_mut() else {
            return Ok(());
        };
        let wanted = state.mode.compares() || self.pending_pick.is_some() || state.picked.is_some();
        if s.readback.in_flight() || !wanted {
            return Ok(());
        }
        let c = &state.character;
        self.snapshot_valid = c.cpu_skinning;
        if self.snapshot_valid {
            self.cpu_snapshot
                .resize_with(c.outputs.len(), Default::default);
            for (dst, src) in self.cpu_snapshot.iter_mut().zip(&c.outputs) {
                dst.clone_from(src);
            }
        }
        self.snapshot_frame = state.stats.frames;
        s.readback.submit(ctx, &s.gpu, state.gpu_skinning)
    }

    /// Frame the view when asked (or when the model left it), build the overlay and record
    /// the view into the target: one view, CPU | GPU, or the model | the other file
    /// (`against`, its GPU scene uploaded).
    fn draw(
        &mut self,
        ctx: &GpuContext,
        state: &mut ViewerState,
        (w, h): (u32, u32),
        against: bool,
    ) -> Result<()> {
        let options = state.view_options();
        let aspect = view_aspect((w, h), options.split);
        if state.framing.due(&state.character, aspect) {
            state.frame_view(aspect);
        }
        let Some(s) = self.scene.as_ref() else {
            return Ok(());
        };
        let c = &state.character;
        self.view
            .set_error_floor(against.then_some(crate::gpu::MODE_ERROR_LOG10_MIN));
        self.view.prepare(
            ctx,
            c,
            &state.framing.camera,
            aspect,
            state.bounds,
            &options,
        );
        add_extras(self.view.geometry_mut(), state);
        self.view.upload_overlay(ctx);
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("viewport"),
            });
        {
            let mut pass = self.target.begin_pass(&mut enc, BACKGROUND);
            match self.other.as_ref().filter(|_| against) {
                // The model on the left, the other file on the right, one camera.
                Some((_, b)) => {
                    let half = (w / 2).max(1) as f32;
                    for (x, scene) in [(0.0, &s.gpu), (half, b)] {
                        pass.set_viewport(x, 0.0, half, h as f32, 0.0, 1.0);
                        self.view
                            .record(&mut pass, scene, crate::gpu::Skinning::Cpu, &options);
                    }
                }
                None => self.view.record_views(&mut pass, &s.gpu, &options, (w, h)),
            }
        }
        ctx.queue.submit([enc.finish()]);
        Ok(())
    }

    /// Lay out the viewport in `ui`: the colour legend in a strip of its own (so it never
    /// covers the model), then the image, camera controls, picking, IK dragging, hover names.
    /// Call with the texture from [`Viewport::texture`]; returns the image's size in points
    /// (the size to render the next frame at).
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        state: &mut ViewerState,
        texture: egui::TextureId,
    ) -> egui::Vec2 {
        let legend = self.update_legend(state);
        let whole = ui.available_rect_before_wrap();
        let (rect, strip) = match legend {
            Some(l) => legend_strip(ui.painter(), whole, l),
            None => (whole, None),
        };
        let response = ui.allocate_rect(rect, egui::Sense::click_and_drag());
        ui.painter().image(
            texture,
            rect,
            egui::Rect::from_min_max(egui::pos2(0.0, 0.0), egui::pos2(1.0, 1.0)),
            egui::Color32::WHITE,
        );
        paint_half_labels(ui.painter(), rect, state);
        if state.show_limits {
            paint_chain_weights(ui.painter(), rect, state);
        }
        if let (Some(l), Some(strip)) = (legend, strip) {
            ui.painter().rect_filled(strip, 0.0, LEGEND_BACKGROUND);
            paint_legend(ui.painter(), strip, l);
        }
        let views = Views {
            rect,
            split: state.split_view(),
        };
        let clip_from_world = state.framing.camera.clip_from_world(views.aspect());
        let target_held = self.drag_target(ui, &response, views, clip_from_world, state);
        camera_controls(ui, &response, rect.height(), state, target_held);
        self.click_and_hover(&response, views, clip_from_world, state);
        super::keys::keyboard(ui, state);
        rect.size()
    }

    /// The colour legend of what the view shows, made again when that changed.
    fn update_legend(&mut self, state: &ViewerState) -> Option<&Legend> {
        let submeshes = state.setup.split.is_some_and(|s| s.color_submeshes);
        let options = state.view_options();
        let key = (
            state.generation,
            state.mode,
            options.color_mode,
            options.selected_node,
            options.error_against.is_some(),
            submeshes,
        );
        if self.legend.as_ref().is_none_or(|(k, _)| *k != key) {
            let l = match state.mode {
                super::state::ViewMode::AgainstFile => {
                    Some(crate::view::legend::distance_legend("|A − B| / diagonal"))
                }
                _ => legend(&state.character, &options, submeshes),
            };
            self.legend = Some((key, l));
        }
        self.legend.as_ref().and_then(|(_, l)| l.as_ref())
    }

    /// The IK target dragged in the view plane by the primary button (a drag that starts on
    /// it, in the half it started in; never in the other file's half). Whether a drag of the
    /// target was under way (the camera then does not orbit).
    fn drag_target(
        &mut self,
        ui: &egui::Ui,
        response: &egui::Response,
        views: Views,
        clip_from_world: Mat4,
        state: &mut ViewerState,
    ) -> bool {
        let target = state.ik_target();
        // Clicks and drags in the other file's half do not act on the model.
        let against = state.mode == super::state::ViewMode::AgainstFile;
        if response.drag_started_by(egui::PointerButton::Primary)
            && let (Some(t), Some(p)) = (target, ui.input(|i| i.pointer.press_origin()))
        {
            let (local, vsize) = views.local(p, None);
            let right = views.in_right(p);
            let hit = project(clip_from_world, t, vsize)
                .is_some_and(|(s, _)| s.distance(local) <= PICK_RADIUS_PX * 1.5);
            // The other file's half shows B: the model's target is not dragged there.
            self.dragging_target = hit.then_some(right).filter(|&r| !(against && r));
        }
        let held = self.dragging_target;
        if let Some(right) = held
            && response.dragged_by(egui::PointerButton::Primary)
            && let (Some(t), Some(p)) = (target, response.interact_pointer_pos())
        {
            let (local, vsize) = views.local(p, Some(right));
            if let Some(new) = move_in_view_plane(clip_from_world, t, local, vsize) {
                state.set_ik_target(new);
            }
        }
        if response.drag_stopped() {
            self.dragging_target = None;
        }
        held.is_some()
    }

    /// A click selects the bone under the pointer, else picks the vertex there (when its
    /// positions are read back); hovering a bone names it. Not in the other file's half.
    fn click_and_hover(
        &mut self,
        response: &egui::Response,
        views: Views,
        clip_from_world: Mat4,
        state: &mut ViewerState,
    ) {
        let against = state.mode == super::state::ViewMode::AgainstFile;
        if response.clicked()
            && let Some(p) = response.interact_pointer_pos()
            && !(against && views.in_right(p))
        {
            let (local, vsize) = views.local(p, None);
            // Bones are picked only where they are drawn.
            let bone = state
                .view
                .skeleton
                .then(|| self.bone_at(clip_from_world, local, vsize));
            match bone.flatten() {
                Some(node) => state.select(Some(node)),
                None => {
                    let px = egui::pos2(local.x, local.y);
                    self.pending_pick = Some((px, clip_from_world, vsize));
                }
            }
        }
        if let Some(p) = response.hover_pos()
            && state.view.skeleton
        {
            let (local, vsize) = views.local(p, None);
            if let Some(node) = self.bone_at(clip_from_world, local, vsize) {
                let name = state.node_label(node);
                response.clone().on_hover_text_at_pointer(name);
            }
        }
    }

    fn bone_at(&self, clip_from_world: Mat4, p: egui::Pos2, size: egui::Vec2) -> Option<usize> {
        let mut best: Option<(f32, usize)> = None;
        for b in self.view.bones() {
            let (Some((a, _)), Some((c, _))) = (
                project(clip_from_world, b.head, size),
                project(clip_from_world, b.tail, size),
            ) else {
                continue;
            };
            let d = segment_distance(p, a, c);
            if d <= BONE_PICK_PX && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, b.node));
            }
        }
        best.map(|(_, n)| n)
    }
}

/// The viewport's rectangle as its views share it: one view, or two halves side by side
/// (CPU | GPU, A | B), each with its own projection.
#[derive(Clone, Copy)]
struct Views {
    rect: egui::Rect,
    split: bool,
}

impl Views {
    /// Width of one half.
    fn half(self) -> f32 {
        self.rect.width() / 2.0
    }

    /// `p` is in the right half of a split view.
    fn in_right(self, p: egui::Pos2) -> bool {
        self.split && p.x - self.rect.min.x >= self.half()
    }

    /// `p` in the view under it (or in the half `right` forces: a drag stays in the half it
    /// started in), and that view's size.
    fn local(self, p: egui::Pos2, right: Option<bool>) -> (egui::Pos2, egui::Vec2) {
        let local = p - self.rect.min;
        if self.split {
            let right = right.unwrap_or(local.x >= self.half());
            let x = if right {
                local.x - self.half()
            } else {
                local.x
            };
            (
                egui::pos2(x, local.y),
                egui::vec2(self.half(), self.rect.height()),
            )
        } else {
            (egui::pos2(local.x, local.y), self.rect.size())
        }
    }

    /// One view's width / height.
    fn aspect(self) -> f32 {
        let w = if self.split {
            self.half()
        } else {
            self.rect.width()
        };
        w / self.rect.height().max(1.0)
    }
}

/// The names of the two halves of a split view, at their top left.
fn paint_half_labels(painter: &egui::Painter, rect: egui::Rect, state: &ViewerState) {
    let (left, right) = match (state.mode, &state.other) {
        (super::state::ViewMode::SideBySide, _) => (
            "CPU reference".to_string(),
            state.view_options().gpu_skinning().describe().to_string(),
        ),
        (super::state::ViewMode::AgainstFile, Some(o)) => (
            format!(
                "A: {}",
                crate::io::file_label(std::path::Path::new(&state.model.source.label()))
            ),
            format!(
                "B: {}",
                crate::io::file_label(std::path::Path::new(&o.label))
            ),
        ),
        _ => return,
    };
    let font = egui::FontId::proportional(14.0);
    for (at, text) in [(rect.left_top(), left), (rect.center_top(), right)] {
        painter.text(
            at + egui::vec2(10.0, 8.0),
            egui::Align2::LEFT_TOP,
            text,
            font.clone(),
            egui::Color32::LIGHT_GRAY,
        );
    }
}

/// The mouse's camera controls: primary drag orbits (unless it holds the IK target:
/// `target_held`), secondary or middle drag pans (by the view's `height`), the wheel over the
/// view zooms.
fn camera_controls(
    ui: &egui::Ui,
    response: &egui::Response,
    height: f32,
    state: &mut ViewerState,
    target_held: bool,
) {
    if !target_held && response.dragged_by(egui::PointerButton::Primary) {
        let d = response.drag_delta();
        state
            .framing
            .orbit(-d.x * ORBIT_RAD_PER_PX, d.y * ORBIT_RAD_PER_PX);
    }
    if response.dragged_by(egui::PointerButton::Secondary)
        || response.dragged_by(egui::PointerButton::Middle)
    {
        let d = response.drag_delta();
        state
            .framing
            .pan(-d.x / height.max(1.0), d.y / height.max(1.0));
    }
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            state.framing.zoom((-scroll * ZOOM_PER_POINT).exp());
        }
    }
}

/// Overlay extras of the window: the IK target and the lines from the picked vertex to its
/// bones (thicker colour for heavier weights).
fn add_extras(g: &mut crate::gpu::OverlayGeometry, state: &mut ViewerState) {
    let size = (state.bounds.1 - state.bounds.0).length().max(1e-3) * 0.02;
    if state.show_limits {
        use crate::view::limits;
        limits::draw_chains(&state.character, g);
        // Arcs half a bone long (a glTF joint, with no length: a share of the model's size).
        let radius = |node: usize| match state.bone_length_m(node) {
            l if l > 0.0 => l * 0.5,
            _ => size * 2.0,
        };
        let joints = limits::limited_joints(&state.character, state.view.selected_node, &radius);
        limits::draw_limits(&joints, g);
    }
    if let (true, Some(node), Some(anim)) = (
        state.trail.shown,
        state.view.selected_node,
        state.playback.anim,
    ) {
        let path = state
            .trail
            .path(&state.character.scene, state.generation, node, anim);
        super::trail::draw(path, size * 0.25, g);
    }
    super::motion::draw_source(state, g);
    if let Some(t) = state.ik_target() {
        let yellow = [1.0, 0.85, 0.1, 1.0];
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            g.line(t - axis * size, t + axis * size, yellow, true);
        }
        let ring = [Vec3::X, Vec3::Z, -Vec3::X, -Vec3::Z].map(|d| t + d * size * 0.7);
        for k in 0..4 {
            for apex in [t + Vec3::Y * size * 0.7, t - Vec3::Y * size * 0.7] {
                g.triangle(
                    [apex, ring[k], ring[(k + 1) % 4]],
                    [1.0, 0.85, 0.1, 0.5],
                    true,
                );
            }
        }
    }
    if let Some(p) = &state.picked {
        let m = &state.character.frame.model_from_node;
        for &(node, w) in &p.influences {
            if let Some(joint) = m.get(node) {
                let j = joint.w_axis.xyz();
                g.line(p.position, j, [1.0, 1.0 - w, 1.0 - w, 0.6 + 0.4 * w], true);
            }
        }
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            g.line(
                p.position - axis * size * 0.5,
                p.position + axis * size * 0.5,
                [1.0, 1.0, 1.0, 1.0],
                true,
            );
        }
    }
}

/// Screen position (pixels from the view's top-left) and clip depth of `p`, when in front.
pub fn project(clip_from_world: Mat4, p: Vec3, size: egui::Vec2) -> Option<(egui::Pos2, f32)> {
    let c = clip_from_world * p.extend(1.0);
    if c.w <= 1e-6 {
        return None;
    }
    let ndc = c.xyz() / c.w;
    Some((
        egui::pos2((ndc.x * 0.5 + 0.5) * size.x, (0.5 - ndc.y * 0.5) * size.y),
        ndc.z,
    ))
}

/// Move `p` to stay under the pointer at `screen`, in the plane through `p` facing the eye.
pub fn move_in_view_plane(
    clip_from_world: Mat4,
    p: Vec3,
    screen: egui::Pos2,
    size: egui::Vec2,
) -> Option<Vec3> {
    let (_, depth) = project(clip_from_world, p, size)?;
    let ndc = Vec3::new(
        screen.x / size.x.max(1.0) * 2.0 - 1.0,
        1.0 - screen.y / size.y.max(1.0) * 2.0,
        depth,
    );
    let world = clip_from_world.inverse() * ndc.extend(1.0);
    (world.w.abs() > 1e-12).then(|| world.xyz() / world.w)
}

fn segment_distance(p: egui::Pos2, a: egui::Pos2, b: egui::Pos2) -> f32 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_sq().max(1e-6)).clamp(0.0, 1.0);
    p.distance(a + ab * t)
}

/// The vertex under `click`: among GPU-skinned vertices projecting within
/// [`PICK_RADIUS_PX`], the nearest to the eye; its influences from the scene's weights, reduced
/// to `max_influences` as the skinning was.
pub fn pick_vertex(
    gpu_vertices: &[SkinnedVertices],
    scene: &crate::scene::Scene,
    max_influences: Option<usize>,
    click: egui::Pos2,
    clip_from_world: Mat4,
    size: egui::Vec2,
) -> Option<Picked> {
    let mut best: Option<(f32, usize, usize, Vec3)> = None;
    for (draw, v) in gpu_vertices.iter().enumerate() {
        for (i, &p) in v.positions.iter().enumerate() {
            let Some((s, depth)) = project(clip_from_world, p, size) else {
                continue;
            };
            if s.distance(click) <= PICK_RADIUS_PX && best.is_none_or(|(d, ..)| depth < d) {
                best = Some((depth, draw, i, p));
            }
        }
    }
    let (_, draw, vertex, position) = best?;
    let d = scene.draws.get(draw)?;
    let prim = scene.primitive(d);
    let mut influences = Vec::new();
    match (d.skin, prim.skin_weights.as_ref()) {
        (Some(s), Some(w)) => {
            let joints = &scene.skins.get(s)?.joints;
            // What the skinning used: the K largest, renormalised, when limited.
            let reduced = max_influences.map(|k| reduce_influences(w, k).0);
            let w = reduced.as_ref().unwrap_or(w);
            if (vertex + 1) * w.width > w.weights.len() {
                return None;
            }
            for k in 0..w.width {
                let (j, wt) = (
                    w.joints[vertex * w.width + k],
                    w.weights[vertex * w.width + k],
                );
                if wt > 0.0
                    && let Some(&node) = joints.get(j as usize)
                {
                    influences.push((node, wt));
                }
            }
        }
        _ => influences.push((d.node, 1.0)),
    }
    influences.sort_by(|a, b| b.1.total_cmp(&a.1));
    Some(Picked {
        draw,
        vertex,
        position,
        influences,
    })
}

/// The live comparison from this frame's vertex distances, read against the model's size.
fn live_errors(
    errors: &[f32],
    cpu: &[SkinnedVertices],
    bounds: (Vec3, Vec3),
    latency_frames: u64,
) -> LiveErrors {
    LiveErrors {
        errors: VertexErrors::of_distances(errors, cpu, (bounds.1 - bounds.0).length()),
        latency_frames,
        ..Default::default()
    }
}

/// Behind the legend's strip: the egui dark theme's panel fill, so the strip reads as a panel
/// beside the picture, not part of it.
const LEGEND_BACKGROUND: egui::Color32 = egui::Color32::from_gray(27);
/// A legend's row height and font size (points).
const LEGEND_ROW_PX: f32 = 16.0;
const LEGEND_FONT_PX: f32 = 12.0;
/// Width of a ramp legend's colour bar (points).
const LEGEND_BAR_PX: f32 = 220.0;
/// Room around a legend's rows (points).
const LEGEND_PAD_PX: f32 = 12.0;
/// The most of the viewport's width a swatch column takes (longer labels are cut), and of its
/// height a ramp strip.
const LEGEND_MAX_SHARE: f32 = 0.3;

/// Split `whole` into the picture and `legend`'s strip: a ramp under the picture, full width;
/// swatches in a column on its left, as wide as their longest label. A viewport too small
/// for the strip shows no legend (the picture keeps it all).
fn legend_strip(
    painter: &egui::Painter,
    whole: egui::Rect,
    legend: &Legend,
) -> (egui::Rect, Option<egui::Rect>) {
    let font = egui::FontId::proportional(LEGEND_FONT_PX);
    let text_w = |t: &str| {
        painter
            .layout_no_wrap(t.to_string(), font.clone(), egui::Color32::WHITE)
            .size()
            .x
    };
    match &legend.kind {
        LegendKind::Ramp(_) => {
            let h = 3.5 * LEGEND_ROW_PX + LEGEND_PAD_PX;
            if h > whole.height() * LEGEND_MAX_SHARE {
                return (whole, None);
            }
            let (picture, strip) = whole.split_top_bottom_at_y(whole.bottom() - h);
            (picture, Some(strip))
        }
        LegendKind::Swatches { entries, .. } => {
            let widest = entries
                .iter()
                .map(|(_, label)| 18.0 + text_w(label))
                .fold(text_w(&legend.title), f32::max);
            let w = (widest + 2.0 * LEGEND_PAD_PX).min(whole.width() * LEGEND_MAX_SHARE);
            if w < 80.0 {
                return (whole, None);
            }
            let (strip, picture) = whole.split_left_right_at_x(whole.left() + w);
            (picture, Some(strip))
        }
    }
}

/// Each IK effector's end bone and weight beside its tip (with the chains drawn).
fn paint_chain_weights(painter: &egui::Painter, rect: egui::Rect, state: &ViewerState) {
    let Some(ik) = &state.character.ik else {
        return;
    };
    let views = Views {
        rect,
        split: state.split_view(),
    };
    let clip_from_world = state.framing.camera.clip_from_world(views.aspect());
    let model = &state.character.frame.model_from_node;
    for e in &ik.effectors {
        let Some(tip) = model
            .get(e.end_node)
            .map(|m| m.transform_point3(e.tip_local))
        else {
            continue;
        };
        // The (left, in a split) view's size: both halves show the same pose.
        let (_, size) = views.local(rect.min, Some(false));
        let Some((at, _)) = project(clip_from_world, tip, size) else {
            continue;
        };
        painter.text(
            rect.min + at.to_vec2() + egui::vec2(8.0, -8.0),
            egui::Align2::LEFT_BOTTOM,
            format!("{} · weight {:.2}", state.node_label(e.end_node), e.weight),
            egui::FontId::proportional(12.0),
            egui::Color32::from_rgb(255, 220, 40),
        );
    }
}

/// Paint `legend` in its strip `rect` (from [`legend_strip`]): its title, then a colour bar
/// with its ticks, or a column of swatches (as many as the strip's height holds, the rest
/// counted). Labels wider than the strip are cut by it.
fn paint_legend(painter: &egui::Painter, rect: egui::Rect, legend: &Legend) {
    let painter = painter.with_clip_rect(rect);
    let color = |c: [f32; 3]| {
        egui::Color32::from_rgb(
            linear_to_srgb8(c[0]),
            linear_to_srgb8(c[1]),
            linear_to_srgb8(c[2]),
        )
    };
    let font = egui::FontId::proportional(LEGEND_FONT_PX);
    let ink = egui::Color32::LIGHT_GRAY;
    let mut at = rect.left_top() + egui::vec2(LEGEND_PAD_PX, LEGEND_PAD_PX * 0.5);
    painter.text(at, egui::Align2::LEFT_TOP, &legend.title, font.clone(), ink);
    at.y += LEGEND_ROW_PX;
    match &legend.kind {
        LegendKind::Ramp(ticks) => {
            const STEPS: usize = 44;
            let bar_w = LEGEND_BAR_PX.min(rect.width() - 2.0 * LEGEND_PAD_PX);
            let step = bar_w / STEPS as f32;
            for i in 0..STEPS {
                let t = (i as f32 + 0.5) / STEPS as f32;
                let r = egui::Rect::from_min_size(
                    at + egui::vec2(i as f32 * step, 0.0),
                    egui::vec2(step + 0.5, 12.0),
                );
                painter.rect_filled(r, 0.0, color(crate::view::legend::heat(t)));
            }
            for (t, label) in ticks {
                let x = at.x + t * bar_w;
                painter.line_segment(
                    [egui::pos2(x, at.y + 12.0), egui::pos2(x, at.y + 15.0)],
                    egui::Stroke::new(1.0, ink),
                );
                painter.text(
                    egui::pos2(x, at.y + 15.0),
                    egui::Align2::CENTER_TOP,
                    label,
                    font.clone(),
                    ink,
                );
            }
        }
        LegendKind::Swatches { entries, more } => {
            // Rows the strip holds under its title, one kept for the count.
            let fit = (((rect.bottom() - at.y) / LEGEND_ROW_PX).floor() as usize).max(2) - 1;
            let shown = if entries.len() + usize::from(*more > 0) <= fit + 1 {
                entries.len()
            } else {
                fit.min(entries.len())
            };
            for (c, label) in &entries[..shown] {
                let r = egui::Rect::from_min_size(at, egui::vec2(12.0, 12.0));
                painter.rect_filled(r, 0.0, color(*c));
                painter.text(
                    at + egui::vec2(18.0, 0.0),
                    egui::Align2::LEFT_TOP,
                    label,
                    font.clone(),
                    ink,
                );
                at.y += LEGEND_ROW_PX;
            }
            let hidden = more + entries.len() - shown;
            if hidden > 0 {
                painter.text(
                    at,
                    egui::Align2::LEFT_TOP,
                    format!("+{hidden} more"),
                    font,
                    ink,
                );
            }
        }
    }
}
