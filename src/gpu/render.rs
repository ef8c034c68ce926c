//! The render pipelines: the skinning vertex shader (shaders/render.wgsl entry points
//! `vs_skin4` / `vs_skin8`, both calling the shared `skin()`) with a lit fragment shader and
//! colour modes, for any [`Target`] (a window surface, an offscreen texture, an egui
//! viewport). The CPU-skinned view runs the very same entry points with the pipeline constant
//! `CPU_SKINNED` (skinned positions and normals come from the upload buffer, `skin()` is
//! skipped), and the wireframe draws each triangle list's unique edges through them too.
//! [`Renderer::draw`] records into a render pass the caller owns; `target.rs` has the
//! offscreen target and its readback.

use super::camera::Camera;
use super::context::GpuContext;
use super::context::check_source;
use super::influence_packing::InfluencePacking;
use super::palette_source::PaletteSource;
use super::scene::GpuScene;
use super::scene_buffers::{GpuDraw, PreSkinned};
use super::shader_types::CPU_VERTEX_STRIDE;
use super::shaders::{RENDER_WGSL, module_with_skin};
use super::skinning::Skinning;
use super::variants::{SkinVariant, Variants};
use crate::error::Result;
use crate::scene::Topology;

/// What a renderer draws into: colour format, MSAA sample count and depth format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// Colour attachment format (e.g. a surface's `Bgra8UnormSrgb`).
    pub format: wgpu::TextureFormat,
    /// MSAA samples (1 or 4: 4 is supported by every WebGPU adapter for these formats).
    pub samples: u32,
    /// Depth attachment format, when the pass has one.
    pub depth: Option<wgpu::TextureFormat>,
}

impl Target {
    /// What `skinview render` and the golden images use: sRGB RGBA8, 4× MSAA, 32-bit depth.
    pub const OFFSCREEN: Target = Target {
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        samples: 4,
        depth: Some(wgpu::TextureFormat::Depth32Float),
    };
}

/// One vertex buffer slot: its stride and attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct VertexSlot {
    /// Bytes from one vertex to the next.
    pub stride: u64,
    /// Attributes read from this buffer.
    pub attributes: Vec<wgpu::VertexAttribute>,
}

/// The vertex fetch of a draw pipeline: slot `i` is vertex buffer `i` (`None`: no buffer
/// there). The draw and the draw-path capture build their pipelines from the same
/// description, so reading the capture back tests the draw's layout too (tests plant faults in
/// a copy of it).
#[derive(Clone, Debug, PartialEq)]
pub struct VertexLayout {
    /// Vertex buffer slots, in binding order.
    pub slots: Vec<Option<VertexSlot>>,
}

fn attribute(
    format: wgpu::VertexFormat,
    offset: u64,
    shader_location: u32,
) -> wgpu::VertexAttribute {
    wgpu::VertexAttribute {
        format,
        offset,
        shader_location,
    }
}

fn slot(stride: u64, attributes: Vec<wgpu::VertexAttribute>) -> Option<VertexSlot> {
    Some(VertexSlot { stride, attributes })
}

impl VertexLayout {
    /// GPU skinning with `sets` influence sets (1: 4 influences, 2: 8) stored as `packing`
    /// says: positions (location 0), normals (1), tangents (2) in their own buffers, the joint
    /// sets (3, 5) in one buffer, the weight sets (4, 6) in another, TEXCOORD_0 (7) and
    /// COLOR_0 (8). Matches `VsIn4` / `VsIn8` in render.wgsl and the buffers of `GpuDraw`.
    pub fn skinned(sets: u32, packing: InfluencePacking) -> VertexLayout {
        use wgpu::VertexFormat as F;
        let (joint_format, weight_format) = packing.vertex_formats();
        let (joint_bytes, weight_bytes) = packing.set_bytes();
        let sets_of = |format, bytes: u64, first_location: u32| {
            let attributes = (0..sets)
                .map(|s| attribute(format, bytes * u64::from(s), first_location + 2 * s))
                .collect();
            slot(bytes * u64::from(sets), attributes)
        };
        VertexLayout {
            slots: vec![
                slot(12, vec![attribute(F::Float32x3, 0, 0)]),
                slot(12, vec![attribute(F::Float32x3, 0, 1)]),
                slot(16, vec![attribute(F::Float32x4, 0, 2)]),
                sets_of(joint_format, joint_bytes, 3),
                sets_of(weight_format, weight_bytes, 4),
                slot(8, vec![attribute(F::Float32x2, 0, 7)]),
                slot(16, vec![attribute(F::Float32x4, 0, 8)]),
            ],
        }
    }

    /// CPU-skinned vertices: as [`VertexLayout::skinned`], but position (location 0) and
    /// normal (1) come interleaved from the scene's upload buffer in slot 0, slot 1 is empty,
    /// and the tangent (unused without `skin()`) still comes from slot 2.
    pub fn cpu_skinned(sets: u32, packing: InfluencePacking) -> VertexLayout {
        use wgpu::VertexFormat as F;
        let mut l = VertexLayout::skinned(sets, packing);
        l.slots[0] = slot(
            CPU_VERTEX_STRIDE,
            vec![
                attribute(F::Float32x3, 0, 0),
                attribute(F::Float32x3, 12, 1),
            ],
        );
        l.slots[1] = None;
        l
    }

    /// The layouts wgpu takes.
    pub fn buffers(&self) -> Vec<Option<wgpu::VertexBufferLayout<'_>>> {
        self.slots
            .iter()
            .map(|s| {
                s.as_ref().map(|s| wgpu::VertexBufferLayout {
                    array_stride: s.stride,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &s.attributes,
                })
            })
            .collect()
    }
}

/// The vertex entry point of GPU skinning with `sets` influence sets.
pub fn skinned_entry_point(sets: u32) -> &'static str {
    if sets >= 2 { "vs_skin8" } else { "vs_skin4" }
}

/// Bind a draw's vertex buffers in [`VertexLayout::skinned`]'s slot order.
pub fn set_skinned_vertex_buffers(pass: &mut wgpu::RenderPass<'_>, d: &GpuDraw) {
    pass.set_vertex_buffer(0, d.positions.slice(..));
    pass.set_vertex_buffer(1, d.normals.slice(..));
    set_shared_vertex_buffers(pass, d);
}

/// Bind a draw's vertex buffers in [`VertexLayout::cpu_skinned`]'s slot order: skinned
/// positions and normals from `skinned` (a scene-wide buffer, [`CPU_VERTEX_STRIDE`] bytes a
/// vertex) starting at vertex `first`, the rest from the draw.
pub fn set_pre_skinned_vertex_buffers(
    pass: &mut wgpu::RenderPass<'_>,
    d: &GpuDraw,
    skinned: &wgpu::Buffer,
    first: u64,
) {
    let start = first * CPU_VERTEX_STRIDE;
    let end = start + d.vertex_count as u64 * CPU_VERTEX_STRIDE;
    pass.set_vertex_buffer(0, skinned.slice(start..end));
    set_shared_vertex_buffers(pass, d);
}

/// The slots GPU-skinned and CPU-skinned draws share (2 to 6).
fn set_shared_vertex_buffers(pass: &mut wgpu::RenderPass<'_>, d: &GpuDraw) {
    pass.set_vertex_buffer(2, d.tangents.slice(..));
    pass.set_vertex_buffer(3, d.joints.slice(..));
    pass.set_vertex_buffer(4, d.weights.slice(..));
    pass.set_vertex_buffer(5, d.uvs.slice(..));
    pass.set_vertex_buffer(6, d.colors.slice(..));
}

/// What a pipeline draws: the primitive's own topology, or the wireframe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Triangles,
    Lines,
    Points,
    Wire,
}

impl Kind {
    fn of(t: Topology) -> Kind {
        match t {
            Topology::Triangles => Kind::Triangles,
            Topology::Lines => Kind::Lines,
            Topology::Points => Kind::Points,
        }
    }
}

/// Clip-space depth the wireframe is pulled towards the eye by (fraction of w): enough to win
/// the depth test against its own faces at 24–32-bit depth, small enough not to show through
/// nearby surfaces.
const WIRE_DEPTH_PULL: f64 = 2e-4;

/// Options of one draw call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawOptions {
    /// GPU (vertex shader or compute pass) or CPU skinning.
    pub skinning: Skinning,
    /// Draw the triangle edges over the faces.
    pub wireframe: bool,
    /// Characters of a crowd to draw ([`GpuScene::crowd`]; at most the upload's, and one
    /// for the CPU upload): instanced draws on the vertex-shader path, one draw per instance
    /// of its skinned copy on the compute path.
    pub instances: u32,
}

impl Default for DrawOptions {
    fn default() -> Self {
        DrawOptions {
            skinning: Skinning::VertexShader,
            wireframe: false,
            instances: 1,
        }
    }
}

/// Everything that varies between the pipelines built on the draw's vertex stage (the draw
/// itself, its wireframe, the CPU-skinned view, the draw-path capture): one builder for all,
/// so they share vertex layout, entry points and constants.
pub(crate) struct SkinnedPipeline<'a> {
    pub label: &'a str,
    pub skinning: Skinning,
    /// Influence sets and blend (the blend does not matter for pre-skinned vertices).
    pub skin: SkinVariant,
    /// The colour mode compiled in ([`super::camera::ColorMode::code`]).
    pub color_mode: u32,
    pub vertex: &'a VertexLayout,
    pub topology: wgpu::PrimitiveTopology,
    pub depth_pull: f64,
    pub fragment_entry: &'a str,
    /// The draw-path capture's texels per row (its pipelines place each vertex on a texel:
    /// render.wgsl `CAPTURE`); 0 for a drawing pipeline.
    pub capture_width: u32,
    pub targets: &'a [Option<wgpu::ColorTargetState>],
    pub depth_stencil: Option<wgpu::DepthStencilState>,
    pub samples: u32,
}

/// The layout of every pipeline on the draw's vertex stage: frame, draw (of `source`), view.
pub(crate) fn skinned_pipeline_layout(
    ctx: &GpuContext,
    source: PaletteSource,
) -> Result<wgpu::PipelineLayout> {
    let groups = ctx.layouts.of(source)?;
    Ok(ctx
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("render"),
            bind_group_layouts: &[
                Some(&groups.frame),
                Some(&groups.draw),
                Some(&ctx.layouts.view),
            ],
            immediate_size: 0,
        }))
}

/// Whether shaders drawing into `format` write sRGB-encoded values themselves: the 8- and
/// 10-bit displayable formats that store what they are given (their sRGB twins encode in
/// hardware). Clear colours into them are encoded too ([`super::target::OffscreenTarget`]).
pub fn stores_encoded_srgb(format: wgpu::TextureFormat) -> bool {
    use wgpu::TextureFormat as F;
    matches!(format, F::Rgba8Unorm | F::Bgra8Unorm | F::Rgb10a2Unorm)
}

/// Build one pipeline on render.wgsl's vertex stage (see [`SkinnedPipeline`]).
pub(crate) fn skinned_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    layout: &wgpu::PipelineLayout,
    p: &SkinnedPipeline,
) -> wgpu::RenderPipeline {
    let encode_srgb = p
        .targets
        .first()
        .and_then(|t| t.as_ref())
        .is_some_and(|t| stores_encoded_srgb(t.format));
    let constants: Vec<(&str, f64)> = (p.skin.constants().into_iter())
        .chain([
            ("COLOR_MODE", f64::from(p.color_mode)),
            ("CAPTURE", f64::from(u8::from(p.capture_width > 0))),
            ("CAPTURE_WIDTH", f64::from(p.capture_width.max(1))),
            ("CPU_SKINNED", f64::from(u8::from(p.skinning.pre_skinned()))),
            ("DEPTH_PULL", p.depth_pull),
            ("ENCODE_SRGB", f64::from(u8::from(encode_srgb))),
        ])
        .collect();
    let options = wgpu::PipelineCompilationOptions {
        constants: &constants,
        zero_initialize_workgroup_memory: false,
    };
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(p.label),
        layout: Some(layout),
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(skinned_entry_point(p.skin.sets)),
            compilation_options: options.clone(),
            buffers: &p.vertex.buffers(),
        },
        primitive: wgpu::PrimitiveState {
            topology: p.topology,
            // Two-sided: mirrored (negative-determinant) nodes flip the winding and skinned
            // draws can mirror per vertex; the fragment shader faces normals towards the
            // viewer instead of culling.
            cull_mode: None,
            ..Default::default()
        },
        depth_stencil: p.depth_stencil.clone(),
        multisample: wgpu::MultisampleState {
            count: p.samples,
            ..Default::default()
        },
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some(p.fragment_entry),
            compilation_options: options,
            targets: p.targets,
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// What one draw pipeline of a palette source is made for (see [`Variants`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DrawKey {
    /// Pre-skinned vertices (compute pass or CPU upload) rather than the vertex shader's.
    pre_skinned: bool,
    kind: Kind,
    /// Influence sets and blend (blend 0 for pre-skinned vertices, which `skin()` skips).
    skin: SkinVariant,
    /// [`super::camera::ColorMode::code`].
    color_mode: u32,
}

/// The shader module and layout of one palette source, and the pipelines made on them.
struct SourcePipelines {
    source: PaletteSource,
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    made: Variants<DrawKey, wgpu::RenderPipeline>,
}

/// Draws scenes into passes of one [`Target`] kind. Per palette source it keeps the shader
/// (the storage path's from the start where the adapter has it; others on
/// [`Renderer::prepare`]) and makes a pipeline for each specialisation a draw needs the first
/// time one does (topology, influence sets, blend, colour mode, pre-skinned or not).
pub struct Renderer {
    target: Target,
    device: wgpu::Device,
    sets: Vec<SourcePipelines>,
}

impl Renderer {
    /// A renderer for `target` on `ctx`'s device (the storage palette path's shader, where
    /// the adapter can read storage buffers in the vertex stage).
    pub fn new(ctx: &GpuContext, target: Target) -> Result<Renderer> {
        let mut r = Renderer {
            target,
            device: ctx.device.clone(),
            sets: Vec::new(),
        };
        if ctx.storage_palette() {
            r.prepare(ctx, PaletteSource::Storage)?;
        }
        Ok(r)
    }

    /// Build the shader of `source` unless it exists: a [`GpuScene`] uploaded for it can
    /// then be drawn.
    pub fn prepare(&mut self, ctx: &GpuContext, source: PaletteSource) -> Result<()> {
        if self.sets.iter().any(|s| s.source == source) {
            return Ok(());
        }
        check_source(ctx, source)?;
        let module = module_with_skin(&ctx.device, "render.wgsl", RENDER_WGSL, source);
        let layout = skinned_pipeline_layout(ctx, source)?;
        ctx.check()?;
        // One uniform set at a time (a K slider would otherwise keep one per K tried).
        self.sets.retain(|s| {
            !(matches!(s.source, PaletteSource::Uniform { .. }) && source != PaletteSource::Storage)
        });
        self.sets.push(SourcePipelines {
            source,
            module,
            layout,
            made: Variants::new(),
        });
        Ok(())
    }

    /// The pipeline of `key` on `set`, made on first use.
    fn pipeline(&self, set: &SourcePipelines, key: DrawKey) -> wgpu::RenderPipeline {
        set.made.get(key, |key| {
            let target = self.target;
            let targets = [Some(wgpu::ColorTargetState {
                format: target.format,
                blend: None,
                write_mask: wgpu::ColorWrites::ALL,
            })];
            let (skinning, vertex) = match key.pre_skinned {
                false => (
                    Skinning::VertexShader,
                    VertexLayout::skinned(key.skin.sets, key.skin.packing),
                ),
                true => (
                    Skinning::Cpu,
                    VertexLayout::cpu_skinned(key.skin.sets, key.skin.packing),
                ),
            };
            let wire = key.kind == Kind::Wire;
            skinned_pipeline(
                &self.device,
                &set.module,
                &set.layout,
                &SkinnedPipeline {
                    label: "render",
                    skinning,
                    skin: key.skin,
                    color_mode: key.color_mode,
                    vertex: &vertex,
                    topology: match key.kind {
                        Kind::Triangles => wgpu::PrimitiveTopology::TriangleList,
                        Kind::Lines | Kind::Wire => wgpu::PrimitiveTopology::LineList,
                        Kind::Points => wgpu::PrimitiveTopology::PointList,
                    },
                    depth_pull: if wire { WIRE_DEPTH_PULL } else { 0.0 },
                    fragment_entry: if wire { "fs_wire" } else { "fs_main" },
                    capture_width: 0,
                    targets: &targets,
                    depth_stencil: target.depth.map(|format| wgpu::DepthStencilState {
                        format,
                        depth_write_enabled: Some(!wire),
                        depth_compare: Some(wgpu::CompareFunction::LessEqual),
                        stencil: Default::default(),
                        bias: Default::default(),
                    }),
                    samples: target.samples,
                },
            )
        })
    }

    /// The target kind the pipelines were built for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Record every draw of `scene`, skinned on the GPU from the palette last written by
    /// [`GpuScene::update`], seen through `camera`.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>, camera: &Camera, scene: &GpuScene) {
        self.draw_with(pass, camera, scene, DrawOptions::default());
    }

    /// Record every draw of `scene` with `options`. [`Skinning::Cpu`] draws what
    /// [`crate::gpu::SceneBuffers::upload_skinned`] uploaded last (nothing before the first upload),
    /// [`Skinning::ComputePass`] what the compute pass skinned (nothing before
    /// [`GpuScene::enable_compute_skinning`]). Nothing is drawn before [`Renderer::prepare`] for
    /// the scene's palette source.
    pub fn draw_with(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        camera: &Camera,
        scene: &GpuScene,
        options: DrawOptions,
    ) {
        let Some(set) = self.sets.iter().find(|s| s.source == scene.source) else {
            return; // not prepared for this palette source: nothing to draw with
        };
        // The pre-skinned buffer and the instances it holds.
        let (skinned, instances) = match options.skinning {
            Skinning::VertexShader => (None, scene.instances()),
            Skinning::ComputePass => match scene.compute_skinning() {
                Some(c) => (Some(c.pre_skinned()), c.instances()),
                None => return,
            },
            Skinning::Cpu => match scene.cpu_vertices() {
                Some(b) => (Some(PreSkinned::single(b, scene.vertex_total() as u64)), 1),
                None => return,
            },
        };
        let color_mode = camera.color_mode();
        let instances = options.instances.min(instances);
        if instances == 0 {
            return; // every character culled
        }
        pass.set_bind_group(0, &scene.frame_bind_group, &[]);
        pass.set_bind_group(2, camera.bind_group(), &[]);
        let kinds: &[bool] = if options.wireframe {
            &[false, true]
        } else {
            &[false]
        };
        // The pipeline bound last: set again only when a draw needs another.
        let mut bound: Option<(DrawKey, wgpu::RenderPipeline)> = None;
        for &wire in kinds {
            for d in &scene.draws {
                let (kind, count) = if wire {
                    (Kind::Wire, d.edge_index_count)
                } else {
                    (Kind::of(d.topology), d.index_count)
                };
                if count == 0 || d.vertex_count == 0 {
                    continue;
                }
                let key = DrawKey {
                    pre_skinned: skinned.is_some(),
                    kind,
                    skin: SkinVariant::drawn(d, skinned.is_some()),
                    color_mode,
                };
                if bound.as_ref().is_none_or(|(k, _)| *k != key) {
                    let p = self.pipeline(set, key);
                    pass.set_pipeline(&p);
                    bound = Some((key, p));
                }
                d.set_bind_group(pass, 0);
                let indices = if wire { &d.edges } else { &d.indices };
                pass.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint32);
                match skinned {
                    None if d.bones_offset.is_none() => {
                        set_skinned_vertex_buffers(pass, d);
                        pass.draw_indexed(0..count, 0, 0..instances);
                    }
                    // The uniform palette: one draw per instance, each binding its block.
                    None => {
                        set_skinned_vertex_buffers(pass, d);
                        for i in 0..instances {
                            d.set_bind_group(pass, i);
                            pass.draw_indexed(0..count, 0, i..i + 1);
                        }
                    }
                    // One draw per instance's copy (its instance index places the draw-path
                    // capture's texels; the plain vertex shader reads no palette).
                    Some(pre) => {
                        for i in 0..instances {
                            let Some((buffer, first)) = pre.locate(i, d) else {
                                continue;
                            };
                            set_pre_skinned_vertex_buffers(pass, d, buffer, first);
                            pass.draw_indexed(0..count, 0, i..i + 1);
                        }
                    }
                }
            }
        }
    }
}
