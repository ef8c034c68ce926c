//! Draw-path capture: reads back what the *draw's* vertex stage outputs. The pipeline is made
//! by the draw's own pipeline builder (`render.rs`): the same vertex entry points (`vs_skin4` /
//! `vs_skin8` in shaders/render.wgsl), [`VertexLayout`], constants and vertex-buffer binding
//! ([`set_skinned_vertex_buffers`]); it draws every vertex once as a point (not indexed: a
//! vertex no triangle uses is still read back; index buffers are covered by the golden renders): with the view's
//! `capture_size` set, the vertex stage places vertex `i` on texel `(i % W, i / W)` of two
//! `Rgba32Uint` targets, and `fs_capture` writes the skinned world position and normal the
//! vertex stage output. Compared with the capture shader (which loads vertices from storage
//! buffers) and the CPU reference, this tests vertex fetch, attribute layout and entry points
//! of the real draw: a wrong layout passes the capture shader but fails here. The same
//! capture reads back the plain vertex shader drawing pre-skinned vertices (the compute
//! skinning's buffer, [`set_pre_skinned_vertex_buffers`]) and a crowd's instances (instance
//! `k`'s vertices follow instance `k - 1`'s on the targets).
//!
//! Cost: one pass and two texture copies per draw; the textures are `W × rows` for the largest
//! draw (16 bytes per vertex and target). Limits: `W × max_texture_dimension_2d` vertices per
//! draw (8 M on common adapters).

use glam::Vec3;

use super::camera::Camera;
use super::context::{GpuContext, MapsInFlight, check_source};
use super::influence_packing::InfluencePacking;
use super::palette_source::PaletteSource;
use super::render::{
    SkinnedPipeline, VertexLayout, set_pre_skinned_vertex_buffers, set_skinned_vertex_buffers,
    skinned_pipeline, skinned_pipeline_layout,
};
use super::scene::GpuScene;
use super::scene_buffers::{GpuDraw, PreSkinned};
use super::shader_types::{ColorMode, ViewUniform};
use super::shaders::{RENDER_WGSL, module_with_skin};
use super::skinning::Skinning;
use super::variants::{SkinVariant, Variants};
use crate::error::{Error, Result};
use crate::skin::SkinnedVertices;

/// Texels per row of the capture targets: a multiple of 16 so a row of `Rgba32Uint` texels
/// (16 bytes each) meets wgpu's 256-byte row alignment for texture copies.
pub const CAPTURE_WIDTH: u32 = 1024;
/// The vertex stage's floats are written as their bits: integer targets are colour-renderable
/// on every backend (float ones are not on GL) and keep every bit.
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba32Uint;
const TEXEL_BYTES: u32 = 16;

/// The draw-path capture: per palette source its shader (made when a scene of that source is
/// first read back), and the pipelines made on them per specialisation a draw needs.
pub struct DrawCapture {
    layout_of: LayoutOf,
    /// Shader module and pipeline layout per palette source (one uniform source at a time).
    shaders: Vec<(PaletteSource, wgpu::ShaderModule, wgpu::PipelineLayout)>,
    /// Per palette source, pre-skinned vertices (the plain vertex shader, `CPU_SKINNED`:
    /// compute-skinned or CPU-uploaded vertices, storage path) or not, influence sets and
    /// blend.
    pipelines: Variants<CaptureKey, wgpu::RenderPipeline>,
    camera: Camera,
    /// The two render targets and their views, kept between runs while the size holds (one
    /// set of textures per frame made a long comparison grow without bound on lavapipe).
    targets: Option<(wgpu::Extent3d, [wgpu::Texture; 2], [wgpu::TextureView; 2])>,
    /// Staging buffers (positions, normals) per draw slot, kept while their size holds.
    staging: Vec<(u64, [wgpu::Buffer; 2])>,
    /// The submission that fills the staging buffers ([`DrawCapture::submit_with`]).
    submitted: Option<wgpu::SubmissionIndex>,
    /// Draws made with the current pipelines (see [`CPU_ADAPTER_PIPELINE_DRAWS`]).
    draws_made: u64,
}

/// On a software adapter (lavapipe, Mesa 22.3), memory grows by about 1.1 MB per draw made
/// with a pipeline until that pipeline is destroyed, whatever the vertex count (measured: a
/// 1,200-vertex and a 38,400-vertex draw capture both grew 1.1 MB a frame, linearly, and
/// stopped growing when the pipelines were made again): there the capture pipelines are made
/// again after this many draws, which keeps a long comparison's memory within ~35 MB of
/// flat, for about 0.1 s per renewal on 2 cores. Hardware adapters keep their pipelines.
const CPU_ADAPTER_PIPELINE_DRAWS: u64 = 32;

/// The vertex layout of a draw with these influence sets and packing.
pub type LayoutOf = fn(u32, InfluencePacking) -> VertexLayout;

/// What a draw-capture pipeline is made for: palette source, pre-skinned vertices or not,
/// influence sets and blend.
type CaptureKey = (PaletteSource, bool, SkinVariant);

impl DrawCapture {
    /// Pipelines with the draw's own vertex layouts ([`VertexLayout::skinned`]).
    pub fn new(ctx: &GpuContext) -> Result<DrawCapture> {
        Self::with_layouts(ctx, VertexLayout::skinned)
    }

    /// Pipelines with the vertex layouts `layout_of` gives for a draw's influence sets and
    /// packing (tests plant faults in copies of the draw's layouts to show the comparison
    /// catches them).
    pub fn with_layouts(ctx: &GpuContext, layout_of: LayoutOf) -> Result<DrawCapture> {
        let mut c = DrawCapture {
            layout_of,
            shaders: Vec::new(),
            pipelines: Variants::new(),
            camera: Camera::new(ctx),
            targets: None,
            staging: Vec::new(),
            submitted: None,
            draws_made: 0,
        };
        if ctx.storage_palette() {
            c.prepare(ctx, PaletteSource::Storage)?;
        }
        ctx.check()?;
        Ok(c)
    }

    /// Build the shader of `source` unless it exists.
    pub fn prepare(&mut self, ctx: &GpuContext, source: PaletteSource) -> Result<()> {
        if self.shaders.iter().any(|(s, _, _)| *s == source) {
            return Ok(());
        }
        check_source(ctx, source)?;
        let module = module_with_skin(
            &ctx.device,
            "render.wgsl (draw capture)",
            RENDER_WGSL,
            source,
        );
        let layout = skinned_pipeline_layout(ctx, source)?;
        ctx.check()?;
        // One uniform set at a time (as the renderer keeps them); a dropped shader's
        // pipelines go with it (the others are made again when needed).
        let before = self.shaders.len();
        self.shaders.retain(|(s, _, _)| {
            !(matches!(s, PaletteSource::Uniform { .. }) && source != PaletteSource::Storage)
        });
        if self.shaders.len() != before {
            self.pipelines.clear();
        }
        self.shaders.push((source, module, layout));
        Ok(())
    }

    /// The capture pipeline of `key`, made on first use (its source prepared).
    fn pipeline(&self, ctx: &GpuContext, key: CaptureKey) -> Result<wgpu::RenderPipeline> {
        let (source, pre_skinned, skin) = key;
        let Some((_, module, layout)) = self.shaders.iter().find(|(s, _, _)| *s == source) else {
            return Err(Error::Gpu("draw capture pipelines missing".into()));
        };
        let target = Some(wgpu::ColorTargetState {
            format: FORMAT,
            blend: None,
            write_mask: wgpu::ColorWrites::ALL,
        });
        let targets = [target.clone(), target];
        Ok(self.pipelines.get(key, |_| {
            let (skinning, vertex) = if pre_skinned {
                let plain = VertexLayout::cpu_skinned(skin.sets, skin.packing);
                (Skinning::Cpu, plain)
            } else {
                let drawn = (self.layout_of)(skin.sets, skin.packing);
                (Skinning::VertexShader, drawn)
            };
            skinned_pipeline(
                &ctx.device,
                module,
                layout,
                &SkinnedPipeline {
                    label: "draw capture",
                    skinning,
                    skin,
                    color_mode: ColorMode::Material.code(),
                    vertex: &vertex,
                    topology: wgpu::PrimitiveTopology::PointList,
                    depth_pull: 0.0,
                    fragment_entry: "fs_capture",
                    capture_width: capture_width(ctx),
                    targets: &targets,
                    depth_stencil: None,
                    samples: 1,
                },
            )
        }))
    }

    /// Draw `draws` (indices into the scene's draw list) as points with the palette and morph
    /// weights last written by [`GpuScene::update`] and read back the vertex stage's world
    /// positions and normals (`tangents` are not an output of the draw: `None`).
    pub fn run(
        &mut self,
        ctx: &GpuContext,
        gpu: &GpuScene,
        draws: &[usize],
    ) -> Result<Vec<SkinnedVertices>> {
        let mut out = self.run_with(ctx, gpu, draws, Skinning::VertexShader, 1)?;
        Ok(out.pop().unwrap_or_default())
    }

    /// [`DrawCapture::run`] for the first `instances` characters of a crowd (one at most for
    /// the CPU upload) drawn with `skinning`: the vertex shader ([`Skinning::VertexShader`], instanced),
    /// or the plain vertex shader over the compute-skinned buffer ([`Skinning::ComputePass`]:
    /// compute skinning must be on and have run) or the CPU upload ([`Skinning::Cpu`]).
    /// Returned as `[instance][k]` for `draws[k]`.
    pub fn run_with(
        &mut self,
        ctx: &GpuContext,
        gpu: &GpuScene,
        draws: &[usize],
        skinning: Skinning,
        instances: u32,
    ) -> Result<Vec<Vec<SkinnedVertices>>> {
        self.submit_with(ctx, gpu, draws, skinning, instances)?;
        self.collect(ctx, gpu, draws, instances)
    }

    /// The first half of [`DrawCapture::run_with`]: record and submit the passes and the
    /// copies into the staging buffers, without waiting, so a caller can submit other work
    /// before [`DrawCapture::collect`] waits for this.
    pub fn submit_with(
        &mut self,
        ctx: &GpuContext,
        gpu: &GpuScene,
        draws: &[usize],
        skinning: Skinning,
        instances: u32,
    ) -> Result<()> {
        self.renew_pipelines_on_cpu_adapter(ctx);
        let (skinned, held) = vertex_source(gpu, skinning)?;
        if instances == 0 || instances > held {
            return Err(Error::Gpu(format!(
                "draw capture of {}; the upload holds {held}",
                crate::info::count(instances as usize, "instance", "instances")
            )));
        }
        let source = match skinning.pre_skinned() {
            true => PaletteSource::Storage,
            false => gpu.source,
        };
        self.prepare(ctx, source)?;
        // Each draw's pipeline, made before the pass (pre-skinned vertices skip `skin()`).
        let pipelines = draws
            .iter()
            .map(|&i| {
                let d = gpu.draws.get(i).ok_or_else(|| {
                    Error::Gpu(format!(
                        "draw {i} is not in the scene ({})",
                        gpu.draws.len()
                    ))
                })?;
                let pre_skinned = skinning.pre_skinned();
                let skin = SkinVariant::drawn(d, pre_skinned);
                self.pipeline(ctx, (source, pre_skinned, skin))
            })
            .collect::<Result<Vec<_>>>()?;
        let (width, rows) = capture_extent(ctx, gpu, draws, instances)?;
        let mut view = ViewUniform::new(glam::Mat4::IDENTITY, Vec3::ZERO);
        view.capture_size = [width, rows];
        self.camera.set(ctx, &view);
        let size = wgpu::Extent3d {
            width,
            height: rows,
            depth_or_array_layers: 1,
        };
        let (targets, views) = capture_targets(&mut self.targets, ctx, size);
        let pass = CapturePass {
            gpu,
            skinned,
            camera: self.camera.bind_group(),
            views,
            instances,
        };
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("draw capture"),
            });
        for (slot, &i) in draws.iter().enumerate() {
            let d = &gpu.draws[i];
            // At most `rows` (checked by `capture_extent`), so the u32 holds it.
            let draw_rows = (d.vertex_count as u64 * instances as u64)
                .div_ceil(width as u64)
                .max(1) as u32;
            if pass.record(&mut enc, d, &pipelines[slot]) {
                self.draws_made += 1;
            }
            let staging = staging_pair(&mut self.staging, ctx, slot, width, draw_rows);
            copy_targets(&mut enc, targets, staging, width, draw_rows);
        }
        self.submitted = Some(ctx.queue.submit([enc.finish()]));
        ctx.check()
    }

    /// The second half of [`DrawCapture::run_with`]: wait for the submitted capture of the
    /// same `draws` and `instances` and read it back.
    pub fn collect(
        &self,
        ctx: &GpuContext,
        gpu: &GpuScene,
        draws: &[usize],
        instances: u32,
    ) -> Result<Vec<Vec<SkinnedVertices>>> {
        if self.staging.len() < draws.len() {
            return Err(Error::Gpu(
                "draw capture collected before it was submitted".into(),
            ));
        }
        read_back(ctx, gpu, draws, instances, (&self.staging, &self.submitted))
    }

    /// On a software adapter, drop the pipelines once they have made
    /// [`CPU_ADAPTER_PIPELINE_DRAWS`] draws (they are made again when next needed).
    fn renew_pipelines_on_cpu_adapter(&mut self, ctx: &GpuContext) {
        if ctx.info.device_type == wgpu::DeviceType::Cpu
            && self.draws_made >= CPU_ADAPTER_PIPELINE_DRAWS
        {
            self.pipelines.clear();
            self.draws_made = 0;
        }
    }
}

/// Where a capture with `skinning` reads its vertices: `None` for the vertex shader, else
/// the pre-skinned buffers (compute-skinned or the CPU upload); and how many instances they
/// hold. An error when that store has not been made.
fn vertex_source(gpu: &GpuScene, skinning: Skinning) -> Result<(Option<PreSkinned<'_>>, u32)> {
    Ok(match skinning {
        Skinning::VertexShader => (None, gpu.instances()),
        Skinning::ComputePass => {
            let c = gpu.compute_skinning().ok_or_else(|| {
                Error::Gpu("draw capture of compute skinning before it was enabled".into())
            })?;
            (Some(c.pre_skinned()), c.instances())
        }
        Skinning::Cpu => (
            Some(PreSkinned::single(
                gpu.cpu_vertices().ok_or_else(|| {
                    Error::Gpu("draw capture of the CPU upload before one was made".into())
                })?,
                gpu.vertex_total() as u64,
            )),
            1,
        ),
    })
}

/// Texels per row of the capture targets on `ctx`'s adapter: [`CAPTURE_WIDTH`], or the
/// adapter's largest texture if smaller. A pipeline constant (render.wgsl `CAPTURE_WIDTH`):
/// a division by a uniform is a division per vertex on a software rasteriser, by a power of
/// two known when the pipeline is made a shift.
fn capture_width(ctx: &GpuContext) -> u32 {
    CAPTURE_WIDTH.min(ctx.device.limits().max_texture_dimension_2d)
}

/// Texels a row and rows of the capture targets for `draws` of `instances` instances each
/// (rows for the largest); an error for a draw not in the scene or one too large for the
/// adapter's textures.
fn capture_extent(
    ctx: &GpuContext,
    gpu: &GpuScene,
    draws: &[usize],
    instances: u32,
) -> Result<(u32, u32)> {
    let max_dim = ctx.device.limits().max_texture_dimension_2d;
    let width = capture_width(ctx);
    let mut rows = 1u64;
    for &i in draws {
        let d = gpu.draws.get(i).ok_or_else(|| {
            Error::Gpu(format!(
                "draw {i} is not in the scene ({})",
                gpu.draws.len()
            ))
        })?;
        rows = rows.max((d.vertex_count as u64 * instances as u64).div_ceil(width as u64));
    }
    if rows > max_dim as u64 {
        return Err(Error::Gpu(format!(
            "a draw's vertices (times {}) exceed {}, the draw-path capture's limit on this \
             adapter",
            crate::info::count(instances as usize, "instance", "instances"),
            width as u64 * max_dim as u64
        )));
    }
    Ok((width, rows as u32))
}

/// The render targets (positions, normals) of `size` and their views: the kept ones when
/// their size holds, else new ones kept in `kept`.
fn capture_targets<'k>(
    kept: &'k mut Option<(wgpu::Extent3d, [wgpu::Texture; 2], [wgpu::TextureView; 2])>,
    ctx: &GpuContext,
    size: wgpu::Extent3d,
) -> (&'k [wgpu::Texture; 2], &'k [wgpu::TextureView; 2]) {
    if kept.as_ref().is_some_and(|(s, _, _)| *s != size) {
        *kept = None;
    }
    let (_, targets, views) = kept.get_or_insert_with(|| {
        let texture = |label| {
            ctx.device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size,
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: FORMAT,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
                view_formats: &[],
            })
        };
        let targets = [texture("capture positions"), texture("capture normals")];
        let views = targets
            .each_ref()
            .map(|t| t.create_view(&Default::default()));
        (size, targets, views)
    });
    (targets, views)
}

/// What each draw's capture pass binds and draws.
struct CapturePass<'a> {
    gpu: &'a GpuScene,
    /// `None`: the vertex shader skins; else the pre-skinned vertices drawn.
    skinned: Option<PreSkinned<'a>>,
    /// The capture view (group 2).
    camera: &'a wgpu::BindGroup,
    /// The targets' views (positions, normals).
    views: &'a [wgpu::TextureView; 2],
    /// Instances drawn, each its own run of texels.
    instances: u32,
}

impl CapturePass<'_> {
    /// Record the pass that clears the targets and draws `d`'s vertices (every instance's)
    /// as points; whether it drew (a draw without vertices only clears).
    fn record(
        &self,
        enc: &mut wgpu::CommandEncoder,
        d: &GpuDraw,
        pipeline: &wgpu::RenderPipeline,
    ) -> bool {
        let attachment = |view| {
            Some(wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                    store: wgpu::StoreOp::Store,
                },
            })
        };
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("draw capture"),
            color_attachments: &[attachment(&self.views[0]), attachment(&self.views[1])],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        if d.vertex_count == 0 {
            return false;
        }
        let instances = self.instances;
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &self.gpu.frame_bind_group, &[]);
        d.set_bind_group(&mut pass, 0);
        pass.set_bind_group(2, self.camera, &[]);
        match self.skinned {
            None => {
                set_skinned_vertex_buffers(&mut pass, d);
                if d.bones_offset.is_none() {
                    pass.draw(0..d.vertex_count, 0..instances);
                } else {
                    for k in 0..instances {
                        d.set_bind_group(&mut pass, k);
                        pass.draw(0..d.vertex_count, k..k + 1);
                    }
                }
            }
            Some(pre) => {
                for k in 0..instances {
                    let Some((buffer, first)) = pre.locate(k, d) else {
                        continue;
                    };
                    set_pre_skinned_vertex_buffers(&mut pass, d, buffer, first);
                    pass.draw(0..d.vertex_count, k..k + 1);
                }
            }
        }
        true
    }
}

/// The staging buffers (positions, normals) of draw slot `slot` for `draw_rows` rows of
/// `width` texels: the kept pair when its size holds, else a new one kept in `staging`.
fn staging_pair<'s>(
    staging: &'s mut Vec<(u64, [wgpu::Buffer; 2])>,
    ctx: &GpuContext,
    slot: usize,
    width: u32,
    draw_rows: u32,
) -> &'s [wgpu::Buffer; 2] {
    let bytes = (width * TEXEL_BYTES) as u64 * draw_rows as u64;
    if staging.get(slot).is_none_or(|(b, _)| *b != bytes) {
        let buffer = || {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("draw capture staging"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let pair = (bytes, [buffer(), buffer()]);
        if slot < staging.len() {
            staging[slot] = pair;
        } else {
            staging.push(pair);
        }
    }
    &staging[slot].1
}

/// Copy the first `draw_rows` rows (`width` texels each) of each target into its staging
/// buffer.
fn copy_targets(
    enc: &mut wgpu::CommandEncoder,
    targets: &[wgpu::Texture; 2],
    staging: &[wgpu::Buffer; 2],
    width: u32,
    draw_rows: u32,
) {
    for (t, s) in targets.iter().zip(staging) {
        enc.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: t,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: s,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(width * TEXEL_BYTES),
                    rows_per_image: Some(draw_rows),
                },
            },
            wgpu::Extent3d {
                width,
                height: draw_rows,
                depth_or_array_layers: 1,
            },
        );
    }
}

/// Map the staging buffers of `draws` (slot k holds `draws[k]`) and split their texels
/// into `[instance][k]` positions and normals.
fn read_back(
    ctx: &GpuContext,
    gpu: &GpuScene,
    draws: &[usize],
    instances: u32,
    (staging, submitted): (&[(u64, [wgpu::Buffer; 2])], &Option<wgpu::SubmissionIndex>),
) -> Result<Vec<Vec<SkinnedVertices>>> {
    let mut out: Vec<Vec<SkinnedVertices>> = (0..instances)
        .map(|_| Vec::with_capacity(draws.len()))
        .collect();
    for ((_, pair), &i) in staging.iter().zip(draws) {
        let n = gpu.draws[i].vertex_count as usize;
        // Each instance's texels straight from the mapping.
        let texels = |b: &wgpu::Buffer| -> Result<Vec<Vec<Vec3>>> {
            ctx.map_read_after(b, submitted.clone(), |bytes| {
                (0..instances as usize)
                    .map(|k| (k * n..(k + 1) * n).map(|t| texel(bytes, t)).collect())
                    .collect()
            })
        };
        let (positions, normals) = (texels(&pair[0])?, texels(&pair[1])?);
        for ((per_instance, p), nrm) in out.iter_mut().zip(positions).zip(normals) {
            per_instance.push(SkinnedVertices {
                positions: p,
                normals: Some(nrm),
                tangents: None,
            });
        }
    }
    Ok(out)
}

/// Texel `t` of a mapped capture target (the bits of the vertex stage's xyz; w unused); zero
/// past the mapping.
fn texel(bytes: &[u8], t: usize) -> Vec3 {
    let f = |c: usize| {
        let o = (t * 4 + c) * 4;
        bytes
            .get(o..o + 4)
            .map_or(0.0, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    Vec3::new(f(0), f(1), f(2))
}

/// The draw-path capture of every draw read back asynchronously (the viewer's live comparison
/// and picking where there is no capture shader: the uniform palette, WebGL2):
/// [`AsyncDrawCapture::submit`] draws the capture and asks for its staging buffers to be
/// mapped, [`AsyncDrawCapture::poll`] returns the vertices once they are (usually a frame or
/// two later), without waiting. The result vectors are reused.
pub struct AsyncDrawCapture {
    capture: DrawCapture,
    draws: Vec<usize>,
    /// The staging buffers' maps on their way.
    maps: MapsInFlight,
    results: Vec<SkinnedVertices>,
    /// New staging buffers for every capture (GL): see [`GL_FRESH_STAGING`].
    fresh_staging: bool,
}

/// On GL (WebGL2 above all) each capture reads back into staging buffers of its own, deleted
/// once read. Chromium 156 keeps a shadow copy of every READ-usage buffer written before a
/// fence, and logs "READ-usage buffer was written, then fenced, but written again before
/// being read back" each time such a buffer is written again, even when it was read in
/// between (measured: a 1,024×64 texel read into one buffer, fenced, waited for and read back,
/// 40 times, warns 39 times, with one buffer or a ring of three; a new buffer each time warns
/// never, and its `getBufferSubData` takes the same 0.4 ms). Elsewhere the buffers are kept.
const GL_FRESH_STAGING: wgpu::Backend = wgpu::Backend::Gl;

impl AsyncDrawCapture {
    /// A capture of every draw of `gpu`, its pipelines made for `gpu`'s palette source.
    pub fn new(ctx: &GpuContext, gpu: &GpuScene) -> Result<AsyncDrawCapture> {
        let mut capture = DrawCapture::new(ctx)?;
        capture.prepare(ctx, gpu.source)?;
        Ok(AsyncDrawCapture {
            capture,
            draws: (0..gpu.draws.len()).collect(),
            maps: MapsInFlight::default(),
            results: vec![SkinnedVertices::default(); gpu.draws.len()],
            fresh_staging: ctx.info.backend == GL_FRESH_STAGING,
        })
    }

    /// A capture is on its way.
    pub fn in_flight(&self) -> bool {
        self.maps.in_flight()
    }

    /// Draw the capture of every draw with the palette last written to `gpu` (the vertex
    /// shader skinning) and ask for it to be mapped, unless one is still on its way (then
    /// nothing happens and `false` is returned).
    pub fn submit(&mut self, ctx: &GpuContext, gpu: &GpuScene) -> Result<bool> {
        if self.maps.in_flight() || self.draws.is_empty() {
            return Ok(false);
        }
        self.capture
            .submit_with(ctx, gpu, &self.draws, Skinning::VertexShader, 1)?;
        let buffers = &self.capture.staging[..self.draws.len()];
        self.maps.map_all(buffers.iter().flat_map(|(_, pair)| pair));
        Ok(true)
    }

    /// The captured vertices (one per draw: positions and normals) once every buffer is
    /// mapped; `None` while the capture is on its way or when none was submitted. Never
    /// waits.
    pub fn poll(&mut self, ctx: &GpuContext, gpu: &GpuScene) -> Result<Option<&[SkinnedVertices]>> {
        match self.maps.landed(ctx, "a draw-path capture readback") {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => {
                // A buffer whose map failed is not mapped again: the next capture makes new
                // ones.
                self.capture.staging.clear();
                return Err(e);
            }
        }
        for (((_, pair), out), &i) in self
            .capture
            .staging
            .iter()
            .zip(&mut self.results)
            .zip(&self.draws)
        {
            let n = gpu.draws.get(i).map_or(0, |d| d.vertex_count as usize);
            for (k, b) in pair.iter().enumerate() {
                {
                    let bytes = b
                        .get_mapped_range(..)
                        .map_err(|e| Error::Gpu(format!("get_mapped_range: {e}")))?;
                    let dst = match k {
                        0 => &mut out.positions,
                        _ => out.normals.get_or_insert_with(Vec::new),
                    };
                    dst.clear();
                    dst.extend((0..n).map(|t| texel(&bytes, t)));
                }
                b.unmap();
            }
            out.tangents = None;
        }
        if self.fresh_staging {
            for (_, pair) in self.capture.staging.drain(..) {
                pair.iter().for_each(wgpu::Buffer::destroy);
            }
        }
        Ok(Some(&self.results))
    }
}
