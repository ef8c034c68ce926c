//! What a viewport shows, drawn headless: a [`Character`]'s current frame, skinned on the GPU
//! or taken from its CPU reference (or both side by side), in a colour mode, with the ground
//! grid, the skeleton and the wireframe, through an [`OrbitCamera`], into an offscreen target
//! read back as an image. `skinview render`, the golden-image tests, the viewer's screenshots
//! and the viewer's own viewport go through here, so what the window shows is tested without
//! one.

pub mod crowd;
pub mod crowd_field;
pub mod gpu_report;
pub mod grid;
pub mod legend;
pub mod limits;
pub mod pass_stamps;
pub mod skeleton;

use glam::{Mat4, Vec3};

use crate::camera::OrbitCamera;
use crate::character::Character;
use crate::error::{Error, Result};
use crate::gpu::shader_types::key_light;
use crate::gpu::{
    Camera, Capture, ColorMode, DrawCapture, DrawOptions, GPU_MAX_INFLUENCES, GpuContext, GpuScene,
    OffscreenTarget, Overlay, OverlayGeometry, PaletteSource, Renderer, Skinning, Target,
    ViewUniform,
};
use crate::image::Rgba8;
use crate::math::bounds_diagonal;
use crate::skin::bounds;

/// Background colour of every view (linear RGB): a dark blue-grey that neither hides dark
/// textures nor glares.
pub const BACKGROUND: [f64; 3] = [0.045, 0.05, 0.06];

/// What a view draws besides the skinned surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewOptions {
    /// Surface colour.
    pub color_mode: ColorMode,
    /// The selected bone (node): highlighted, and the one [`ColorMode::Weights`] shows.
    pub selected_node: Option<usize>,
    /// Draw the skeleton in front of the mesh.
    pub skeleton: bool,
    /// How the skeleton's bones are drawn.
    pub bone_style: skeleton::BoneStyle,
    /// Leave the bones that move no vertex (control and end bones) out of the skeleton, its
    /// picking included.
    pub hide_unweighted_bones: bool,
    /// Draw the rest pose (the nodes' own transforms) as a ghost skeleton with each joint's axes.
    pub rest_pose: bool,
    /// Draw the bind pose (from the inverse bind matrices) as a ghost skeleton with each
    /// joint's axes; joints whose bind and rest disagree are marked on both.
    pub bind_pose: bool,
    /// Draw the ground grid.
    pub grid: bool,
    /// Draw triangle edges over the faces.
    pub wireframe: bool,
    /// Which skinning a single view draws ([`Skinning::ComputePass`] needs the scene's compute
    /// skinning on: [`GpuScene::enable_compute_skinning`]).
    pub skinning: Skinning,
    /// Two views under one camera: CPU reference on the left, GPU skinning on the right (the
    /// compute pass's when `skinning` is [`Skinning::ComputePass`], else the vertex shader's).
    pub split: bool,
    /// [`ColorMode::Errors`]: compare the character's own CPU skinning with the same frame
    /// skinned in these options (mode against mode, on the CPU) instead of the GPU against the
    /// CPU; the heatmap then starts at [`crate::gpu::MODE_ERROR_LOG10_MIN`].
    pub error_against: Option<crate::skin::SkinOptions>,
}

impl ViewOptions {
    /// The GPU skinning shown: the compute pass's when chosen, else the vertex shader's.
    pub fn gpu_skinning(&self) -> Skinning {
        match self.skinning {
            Skinning::ComputePass => Skinning::ComputePass,
            _ => Skinning::VertexShader,
        }
    }

    /// The halves of a split view, left to right: CPU, then the GPU skinning shown.
    fn halves(&self) -> [Skinning; 2] {
        [Skinning::Cpu, self.gpu_skinning()]
    }
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            color_mode: ColorMode::Material,
            selected_node: None,
            skeleton: false,
            bone_style: skeleton::BoneStyle::Octahedral,
            hide_unweighted_bones: false,
            rest_pose: false,
            bind_pose: false,
            grid: false,
            wireframe: false,
            skinning: Skinning::VertexShader,
            split: false,
            error_against: None,
        }
    }
}

/// Renderer, overlay, camera uniform and per-frame scratch for one view kind.
pub struct ViewRenderer {
    renderer: Renderer,
    overlay: Overlay,
    camera: Camera,
    geometry: OverlayGeometry,
    bones: Vec<skeleton::Bone>,
    shape: skeleton::SkeletonShape,
    /// The character's rest and bind poses (None when they could not be evaluated).
    poses: Option<crate::poses::ReferencePoses>,
    /// The error heatmap's floor when set ([`ViewRenderer::set_error_floor`]).
    error_floor_log10: Option<f32>,
}

impl ViewRenderer {
    /// Pipelines for `target`.
    pub fn new(ctx: &GpuContext, target: Target) -> Result<ViewRenderer> {
        Ok(ViewRenderer {
            renderer: Renderer::new(ctx, target)?,
            overlay: Overlay::new(ctx, target)?,
            camera: Camera::new(ctx),
            geometry: OverlayGeometry::default(),
            bones: Vec::new(),
            shape: skeleton::SkeletonShape::default(),
            poses: None,
            error_floor_log10: None,
        })
    }

    /// Start the error heatmap (blue) at `log10_min` of the diagonal instead of the floor
    /// `ViewOptions` imply (None: theirs again). Set-up time.
    pub fn set_error_floor(&mut self, log10_min: Option<f32>) {
        self.error_floor_log10 = log10_min;
    }

    /// Start on a new character: where its bones end ([`skeleton::SkeletonShape`]), and its
    /// rest and bind poses for the ghosts (`None`: a model whose rest pose does not evaluate
    /// draws none; its error shows elsewhere). The caller builds the poses once and keeps its
    /// own copy (the viewer's panels read them too). Set-up time.
    pub fn set_skeleton(
        &mut self,
        character: &Character,
        poses: Option<crate::poses::ReferencePoses>,
    ) {
        self.shape = skeleton::SkeletonShape::new(&character.scene, &bone_tips(character));
        self.poses = poses;
    }

    /// Build the pipelines that draw a [`GpuScene`] uploaded for `source` (the storage path's
    /// exist from the start where the adapter has it). Set-up time.
    pub fn prepare_palette(&mut self, ctx: &GpuContext, source: PaletteSource) -> Result<()> {
        self.renderer.prepare(ctx, source)
    }

    /// The bones of the last [`ViewRenderer::prepare`] (for picking; made whether or not the
    /// skeleton is drawn).
    pub fn bones(&self) -> &[skeleton::Bone] {
        &self.bones
    }

    /// Overlay geometry of the last prepare, for callers that add their own (IK targets,
    /// lines to bones) before [`ViewRenderer::upload_overlay`].
    pub fn geometry_mut(&mut self) -> &mut OverlayGeometry {
        &mut self.geometry
    }

    /// Write the camera and build the overlay for this frame: `aspect` is one view's
    /// width / height (half the target for a split view), `bounds` the model's (grid).
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        &mut self,
        ctx: &GpuContext,
        character: &Character,
        camera: &OrbitCamera,
        aspect: f32,
        bounds: (Vec3, Vec3),
        options: &ViewOptions,
    ) {
        let diagonal = (bounds.1 - bounds.0).length().max(1e-12);
        let view = ViewUniform::from_camera(camera, aspect)
            .with_mode(options.color_mode, options.selected_node, 1.0 / diagonal)
            .with_error_floor(
                self.error_floor_log10
                    .unwrap_or(match options.error_against {
                        Some(_) => crate::gpu::MODE_ERROR_LOG10_MIN,
                        None => crate::gpu::CPU_GPU_ERROR_LOG10_MIN,
                    }),
            );
        self.camera.set(ctx, &view);
        self.geometry.clear();
        if options.grid {
            grid::draw(bounds.0, bounds.1, &mut self.geometry);
        }
        let m: &[Mat4] = &character.frame.model_from_node;
        self.shape
            .bones(m, options.hide_unweighted_bones, &mut self.bones);
        if options.skeleton {
            let heatmap = matches!(options.color_mode, ColorMode::Weights | ColorMode::Errors);
            let how = skeleton::BoneDraw {
                style: options.bone_style,
                color: match heatmap {
                    true => skeleton::HEATMAP_BONE_COLOR,
                    false => self.shape.color,
                },
                selected: options.selected_node,
                light: key_light(),
                diagonal_m: diagonal,
                hide_unweighted: options.hide_unweighted_bones,
            };
            skeleton::draw(&self.shape, &self.bones, m, &how, &mut self.geometry);
        }
        if let Some(poses) = self
            .poses
            .as_ref()
            .filter(|_| options.rest_pose || options.bind_pose)
        {
            let ghost = skeleton::Ghosts {
                rest: options.rest_pose,
                bind: options.bind_pose,
                hide_unweighted: options.hide_unweighted_bones,
                diagonal_m: diagonal,
            };
            skeleton::draw_ghosts(&self.shape, poses, &ghost, &mut self.geometry);
        }
    }

    /// Upload the overlay geometry built by [`ViewRenderer::prepare`] (and anything added).
    pub fn upload_overlay(&mut self, ctx: &GpuContext) {
        self.overlay.upload(ctx, &self.geometry);
    }

    /// Record the whole view into `pass` over a `width × height` target: one view with
    /// `options.skinning`, or CPU | GPU side by side in two viewports under one camera.
    pub fn record_views(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        scene: &GpuScene,
        options: &ViewOptions,
        (width, height): (u32, u32),
    ) {
        if options.split {
            let half = (width / 2).max(1) as f32;
            for (x, skinning) in [0.0, half].into_iter().zip(options.halves()) {
                pass.set_viewport(x, 0.0, half, height as f32, 0.0, 1.0);
                self.record(pass, scene, skinning, options);
            }
        } else {
            self.record(pass, scene, options.skinning, options);
        }
    }

    /// Record a crowd's drawn instances ([`crate::gpu::SceneBuffers::drawn_instances`]) with
    /// `skinning`, and the overlay, into `pass`.
    pub fn record_crowd(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        scene: &GpuScene,
        skinning: Skinning,
        options: &ViewOptions,
    ) {
        self.record_instances(pass, scene, skinning, options, scene.drawn_instances());
    }

    /// Record the surface (with `skinning`) and the overlay into `pass`, whose viewport the
    /// caller has set.
    pub fn record(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        scene: &GpuScene,
        skinning: Skinning,
        options: &ViewOptions,
    ) {
        self.record_instances(pass, scene, skinning, options, 1);
    }

    /// Record `instances` instances of the surface and the overlay into `pass`.
    fn record_instances(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        scene: &GpuScene,
        skinning: Skinning,
        options: &ViewOptions,
        instances: u32,
    ) {
        self.renderer.draw_with(
            pass,
            &self.camera,
            scene,
            DrawOptions {
                skinning,
                wireframe: options.wireframe,
                instances,
            },
        );
        self.overlay.draw(pass, &self.camera);
    }
}

/// A headless view: a [`ViewRenderer`] and an offscreen target, reused frame after frame.
pub struct HeadlessView {
    view: ViewRenderer,
    target: OffscreenTarget,
}

impl HeadlessView {
    /// A `width × height` view with 4× MSAA (checked against the adapter's limits first).
    pub fn new(ctx: &GpuContext, width: u32, height: u32) -> Result<HeadlessView> {
        let target = OffscreenTarget::new(ctx, Target::OFFSCREEN, width, height)?;
        Ok(HeadlessView {
            view: ViewRenderer::new(ctx, Target::OFFSCREEN)?,
            target,
        })
    }

    /// The view renderer (bone tips, overlay geometry, bones for picking).
    pub fn view_mut(&mut self) -> &mut ViewRenderer {
        &mut self.view
    }

    /// Aspect of one view: the whole image, or half of it when split.
    pub fn view_aspect(&self, split: bool) -> f32 {
        view_aspect(self.target.size(), split)
    }

    /// Draw `character`'s frame as uploaded in `scene` (palette, and the CPU upload for the
    /// CPU side) through `camera` with `options`, `marks` over it, and read the image back.
    #[allow(clippy::too_many_arguments)]
    pub fn render(
        &mut self,
        ctx: &GpuContext,
        character: &Character,
        scene: &GpuScene,
        camera: &OrbitCamera,
        bounds: (Vec3, Vec3),
        options: &ViewOptions,
        marks: Option<&OverlayGeometry>,
    ) -> Result<Rgba8> {
        let aspect = self.view_aspect(options.split);
        self.view
            .prepare(ctx, character, camera, aspect, bounds, options);
        if let Some(m) = marks {
            self.view.geometry_mut().append(m);
        }
        self.view.upload_overlay(ctx);
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("headless view"),
            });
        {
            let mut pass = self.target.begin_pass(&mut enc, BACKGROUND);
            let (w, h) = self.target.size();
            if options.split {
                let half = (w / 2) as f32;
                for (x, skinning) in [0.0, half].into_iter().zip(options.halves()) {
                    pass.set_viewport(x, 0.0, half, h as f32, 0.0, 1.0);
                    self.view.record(&mut pass, scene, skinning, options);
                }
            } else {
                self.view
                    .record(&mut pass, scene, options.skinning, options);
            }
        }
        let mut image = self.target.read_rgba8(ctx, enc)?;
        if options.split {
            draw_divider(&mut image);
        }
        Ok(image)
    }
}

/// Width / height of one view in a `(width, height)` target: the whole of it, or a half when
/// split.
pub fn view_aspect((width, height): (u32, u32), split: bool) -> f32 {
    let w = if split { (width / 2).max(1) } else { width };
    w as f32 / height.max(1) as f32
}

/// A 2-pixel light line between the halves of a split image.
fn draw_divider(image: &mut Rgba8) {
    let (w, h) = (image.width as usize, image.height as usize);
    for y in 0..h {
        for x in (w / 2).saturating_sub(1)..(w / 2 + 1).min(w) {
            let i = (y * w + x) * 4;
            image.pixels[i..i + 4].copy_from_slice(&[170, 170, 180, 255]);
        }
    }
}

/// Per node, the bone's tip in its own space when the rig says (native rigs: `(length, 0, 0)`
/// along the bone's +X, else empty); what the skeleton overlay ends leaf bones with.
pub fn bone_tips(character: &Character) -> Vec<Option<Vec3>> {
    match &character.bones {
        Some(b) => b
            .iter()
            .map(|m| (m.length_m > 0.0).then(|| Vec3::new(m.length_m, 0.0, 0.0)))
            .collect(),
        None => Vec::new(),
    }
}

/// Samples per second of [`clip_frame_points`] on a clip: a 30 fps frame's poses.
pub const CLIP_FRAME_HZ: f32 = 30.0;
/// At most this many samples of a clip (about 17 s at 30 fps; longer clips are sampled more
/// sparsely).
pub const CLIP_FRAME_MAX_SAMPLES: usize = 512;

/// Points to frame a span of `character`'s motion with (framing a clip in `render`): the
/// [`crate::camera::support_points`] of its CPU-skinned vertices over the span. A clip
/// (`stage` false) is sampled from 0 to `end_s` at [`CLIP_FRAME_HZ`] (at most
/// [`CLIP_FRAME_MAX_SAMPLES`] samples, the last at `end_s`); the animation stage is played
/// from 0 to `end_s` ([`Character::play_to`]) and every frame it plays counts. Either way the
/// character is left at `end_s`.
pub fn clip_frame_points(character: &mut Character, end_s: f32, stage: bool) -> Result<Vec<Vec3>> {
    let mut points = Vec::new();
    let mut frame = Vec::new();
    let mut collect = |c: &Character| {
        frame.clear();
        frame.extend(c.outputs.iter().flat_map(|o| o.positions.iter().copied()));
        crate::camera::support_points(&frame, &mut points);
    };
    if stage {
        character.play_to_with(end_s, &mut collect)?;
        return Ok(points);
    }
    let span = end_s.max(0.0);
    // `intervals + 1` samples, both ends included.
    let intervals = ((span * CLIP_FRAME_HZ).ceil() as usize).clamp(1, CLIP_FRAME_MAX_SAMPLES - 1);
    for i in 0..=intervals {
        character.update(span * i as f32 / intervals as f32, 0.0)?;
        collect(character);
    }
    Ok(points)
}

/// Whether the GPU path can skin `character`: every vertex within the GPU's influence limit
/// (after the character's own limit, if it has one).
pub fn gpu_can_skin(character: &Character) -> bool {
    let widest = character.scene.max_influences();
    character.max_influences().unwrap_or(widest).min(widest) <= GPU_MAX_INFLUENCES
}

/// The influence limit to upload a character's scene with: its own, or, when only the CPU
/// result is drawn and the GPU could not skin it, the GPU's (the GPU weights are then unused).
pub fn upload_influences(character: &Character, cpu_only: bool) -> Option<usize> {
    if cpu_only && !gpu_can_skin(character) {
        Some(GPU_MAX_INFLUENCES)
    } else {
        character.max_influences()
    }
}

/// Render `character`'s current frame (after [`Character::update`], with CPU skinning on: the
/// camera frames the CPU-skinned bounds) at `width × height` with `options`, on the storage
/// palette path. For [`ColorMode::Errors`] the GPU result is read back (the capture shader, or
/// the draw's own vertex stage where there is none) and compared with the CPU's per vertex.
pub fn render_character(
    ctx: &GpuContext,
    character: &Character,
    options: &ViewOptions,
    width: u32,
    height: u32,
) -> Result<Rgba8> {
    render_character_with(
        ctx,
        character,
        options,
        PaletteSource::Storage,
        None,
        (width, height),
    )
}

/// [`render_character`] on a given palette path (on the uniform path every draw of the
/// character's scene must use at most K joints: a [`crate::partition::PartitionedScene`]'s
/// scene), framing `frame_points` (e.g. [`clip_frame_points`]) instead of the current frame's
/// skinned vertices when given.
pub fn render_character_with(
    ctx: &GpuContext,
    character: &Character,
    options: &ViewOptions,
    palette: PaletteSource,
    frame_points: Option<&[Vec3]>,
    size: (u32, u32),
) -> Result<Rgba8> {
    let extra = Extra::default();
    render_inner(ctx, character, options, palette, frame_points, size, extra)
}

/// [`render_character`] with `marks` drawn over it under the same camera (lines and
/// triangles in model space: a check finding's marks), framing `frame_points` when given
/// (the skinned vertices and the marks, so both are in view).
pub fn render_marked(
    ctx: &GpuContext,
    character: &Character,
    options: &ViewOptions,
    marks: &OverlayGeometry,
    frame_points: Option<&[Vec3]>,
    size: (u32, u32),
) -> Result<Rgba8> {
    let extra = Extra {
        marks: Some(marks),
        ..Extra::default()
    };
    let storage = PaletteSource::Storage;
    render_inner(ctx, character, options, storage, frame_points, size, extra)
}

/// What a render adds to the character's own view.
#[derive(Clone, Copy, Default)]
struct Extra<'a> {
    /// Per-vertex distances the heatmap shows, and the diagonal they are relative to.
    distances: Option<(&'a [f32], f64)>,
    /// Overlay geometry drawn over the view.
    marks: Option<&'a OverlayGeometry>,
}

/// Render `character`'s current frame coloured by `distances` (one per vertex, draws in
/// order, model units) relative to `diagonal`, on the error heatmap from
/// [`crate::gpu::MODE_ERROR_LOG10_MIN`] (blue) to four decades up (red), with the overlays
/// and the skinning `options` ask for, framing `frame_points` when given: the pictures of
/// `diff` and of `render` comparing two files.
pub fn render_distances(
    ctx: &GpuContext,
    character: &Character,
    (distances, diagonal): (&[f32], f64),
    options: &ViewOptions,
    frame_points: Option<&[Vec3]>,
    size: (u32, u32),
) -> Result<Rgba8> {
    let options = ViewOptions {
        color_mode: ColorMode::Errors,
        split: false,
        error_against: None,
        ..*options
    };
    render_inner(
        ctx,
        character,
        &options,
        PaletteSource::Storage,
        frame_points,
        size,
        Extra {
            distances: Some((distances, diagonal)),
            ..Extra::default()
        },
    )
}

/// [`render_character_with`], the heatmap showing `extra`'s distances when given, its marks
/// over the view.
fn render_inner(
    ctx: &GpuContext,
    character: &Character,
    options: &ViewOptions,
    palette: PaletteSource,
    frame_points: Option<&[Vec3]>,
    (width, height): (u32, u32),
    extra: Extra<'_>,
) -> Result<Rgba8> {
    let mut view = HeadlessView::new(ctx, width, height)?;
    view.view_mut().prepare_palette(ctx, palette)?;
    let poses = crate::poses::ReferencePoses::new(&character.scene).ok();
    view.view_mut().set_skeleton(character, poses);
    let all: Vec<usize> = (0..character.scene.draws.len()).collect();
    crate::skin::check_finite(&character.scene, &all, None, &character.outputs)?;
    let (lo, hi) = bounds(&character.outputs).ok_or_else(|| Error::NothingToRender {
        model: character.scene.name.clone(),
    })?;
    let skinned: Vec<Vec3>;
    let points = match frame_points {
        Some(p) => p,
        None => {
            skinned = character
                .outputs
                .iter()
                .flat_map(|o| o.positions.iter().copied())
                .collect();
            &skinned
        }
    };
    let aspect = view.view_aspect(options.split);
    let camera = OrbitCamera::framing_points(points, aspect)
        .unwrap_or_else(|| OrbitCamera::framing(lo, hi, aspect));
    let cpu_only = !options.split && options.skinning == Skinning::Cpu;
    let scene = &character.scene;
    let mut gpu = GpuScene::with_palette(
        ctx,
        scene,
        &character.frame,
        upload_influences(character, cpu_only),
        palette,
    )?;
    for d in 0..scene.draws.len() {
        gpu.set_skin_options(ctx, d, character.skin_options(d));
    }
    if options.skinning == Skinning::ComputePass {
        gpu.enable_compute_skinning(ctx)?;
    }
    gpu.update(ctx, scene, &character.frame);
    if let Some((values, diagonal)) = extra.distances {
        // The shader divides by this frame's diagonal: scale to the one given.
        let scale = (f64::from(bounds_diagonal((lo, hi))) / diagonal.max(f64::MIN_POSITIVE)) as f32;
        let scaled: Vec<f32> = values.iter().map(|v| v * scale).collect();
        gpu.upload_vertex_errors(ctx, &scaled);
        view.view_mut()
            .set_error_floor(Some(crate::gpu::MODE_ERROR_LOG10_MIN));
    } else if options.color_mode == ColorMode::Errors
        && let Some(other) = options.error_against
    {
        let against = character.skin_current_with(other)?;
        let mut errors = Vec::new();
        crate::skin::vertex_distances(&character.outputs, &against, &mut errors);
        gpu.upload_vertex_errors(ctx, &errors);
    } else if options.color_mode == ColorMode::Errors {
        let draws: Vec<usize> = (0..scene.draws.len()).collect();
        // What the GPU half draws: the compute-skinned buffer as drawn; else the compute
        // capture where it runs (the storage path), else the draw's vertex stage.
        let gpu_vertices = if options.skinning == Skinning::ComputePass {
            let mut v =
                DrawCapture::new(ctx)?.run_with(ctx, &gpu, &draws, Skinning::ComputePass, 1)?;
            v.pop().unwrap_or_default()
        } else if palette == PaletteSource::Storage && ctx.compute_capture() {
            Capture::new(ctx, &gpu)?.run(ctx, &gpu, &draws)?
        } else {
            DrawCapture::new(ctx)?.run(ctx, &gpu, &draws)?
        };
        let mut errors = Vec::new();
        crate::skin::vertex_distances(&character.outputs, &gpu_vertices, &mut errors);
        gpu.upload_vertex_errors(ctx, &errors);
    }
    if options.split || options.skinning == Skinning::Cpu {
        gpu.upload_skinned(ctx, &character.outputs)?;
    }
    let bounds = (lo, hi);
    view.render(ctx, character, &gpu, &camera, bounds, options, extra.marks)
}
