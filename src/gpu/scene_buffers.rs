//! Scene upload: per-draw vertex, influence, morph, texture and parameter buffers (static),
//! the per-frame palette and morph weights, and two scene-wide per-vertex stores written when a
//! view needs them: CPU-skinned positions and normals (a view of the CPU reference) and
//! |GPU − CPU| errors (the error heatmap). Each is one upload per frame, from scratch space
//! allocated once.
//!
//! Per palette source ([`PaletteSource`]): the storage path keeps the frame palette, the morph
//! weights, the node of each palette entry and the errors in storage buffers, and each draw's
//! morph deltas in one; the uniform path gives each draw a `BonePalette` uniform block (its at
//! most K matrices, their nodes, its morph weights; rewritten every frame) and keeps morph
//! deltas and errors in float textures, so nothing in the vertex stage is a storage buffer.

use glam::{Mat4, Vec2, Vec3, Vec4};
use wgpu::util::DeviceExt;

use super::context::{GpuContext, check_source};
use super::influence_packing::InfluencePacking;
use super::layouts::PaletteLayouts;
use super::palette_source::PaletteSource;
use super::shader_types::{
    BonePaletteLayout, CaptureVertex, DrawParams, PALETTE_MATRIX_ROWS, UNIFORM_MORPH_SLOTS,
};
use crate::error::{Error, Result};
use crate::frame::FrameState;
use crate::scene::{Draw, Primitive, Scene, SkinWeights, Texture, Topology, Wrap};
use crate::skin::weights::reduce_influences;
use crate::skin::{MatrixRows, ReductionStats};

pub use crate::skin::weights::GPU_MAX_INFLUENCES;

/// Most instances of a crowd ([`super::GpuScene::crowd`]): a crowd bench's scale (a stadium) with
/// room; the palette and skinned-buffer sizes are checked against the adapter besides.
pub const MAX_INSTANCES: u32 = 65_536;

/// GPU buffers of one draw.
#[allow(missing_docs)] // buffer fields are named for what they hold
pub struct GpuDraw {
    pub vertex_count: u32,
    pub index_count: u32,
    pub topology: Topology,
    /// 1 (4 influences) or 2 (8 influences): selects the pipeline variant.
    pub influence_sets: u32,
    pub positions: wgpu::Buffer,
    pub normals: wgpu::Buffer,
    pub tangents: wgpu::Buffer,
    /// `influence_sets` sets of four joint indices and four weights per vertex, stored as
    /// `packing` says; also the capture and compute shaders' input.
    pub joints: wgpu::Buffer,
    pub weights: wgpu::Buffer,
    /// How `joints` and `weights` are stored: the narrowest form that holds them exactly.
    pub packing: InfluencePacking,
    /// TEXCOORD_0 (zeros without): `vec2<f32>` per vertex.
    pub uvs: wgpu::Buffer,
    /// COLOR_0 (white without): `vec4<f32>` per vertex.
    pub colors: wgpu::Buffer,
    pub indices: wgpu::Buffer,
    /// Unique triangle edges as a line list (the wireframe); empty for lines and points.
    pub edges: wgpu::Buffer,
    pub edge_index_count: u32,
    /// One [`CaptureVertex`] per vertex (the capture shader's input; storage path only).
    pub capture_input: Option<wgpu::Buffer>,
    /// Storage path: the morph deltas group 1 binds (copied into the compute-skinning pass's
    /// batch).
    pub morph_deltas: Option<wgpu::Buffer>,
    pub params: wgpu::Buffer,
    /// What `params` holds (rewritten when the skinning options change).
    pub params_data: DrawParams,
    /// Storage path: the draw's first entry among the frame's matrices (its DQS joints start
    /// `palette_entries` later).
    pub matrix_base: u32,
    /// Uniform path: where the draw's `BonePalette` block (matrices, nodes, morph weights)
    /// lies in instance 0's run of [`SceneBuffers::bones`] (each instance's run of blocks
    /// follows the previous one's; group 1 binds the block at a dynamic offset). `None` on the
    /// storage path.
    pub bones_offset: Option<u64>,
    /// Uniform path: bytes from one instance's run of blocks to the next.
    pub bones_instance_bytes: u64,
    /// Uniform path: the node of each of the draw's palette matrices (written into every
    /// block with the matrices).
    pub bone_nodes: Vec<u32>,
    /// The draw's first entry in the frame's palette (its skin's joints follow).
    pub frame_palette_base: u32,
    /// Palette entries the draw uses (its skin's joints, 1 for a rigid draw).
    pub palette_len: u32,
    pub bind_group: wgpu::BindGroup,
    pub reduction: Option<ReductionStats>,
    /// First vertex of this draw in the scene-wide per-vertex buffers.
    pub cpu_first_vertex: u64,
}

impl GpuDraw {
    /// Bind the draw's group 1 for `instance`: on the uniform path at the dynamic offset of
    /// that instance's block, on the storage path as it is (every instance reads its palette
    /// block by its instance index).
    pub fn set_bind_group(&self, pass: &mut wgpu::RenderPass<'_>, instance: u32) {
        match self.bones_offset {
            Some(_) => {
                let offset = instance as u64 * self.bones_instance_bytes;
                pass.set_bind_group(1, &self.bind_group, &[offset as u32]);
            }
            None => pass.set_bind_group(1, &self.bind_group, &[]),
        }
    }
}

/// Where pre-skinned vertices are drawn from (the compute-skinned copies of a crowd, or the
/// CPU upload): instance `i`'s copy lies in `buffers[i / instances_per_buffer]`, from vertex
/// `(i % instances_per_buffer) × instance_vertices`.
#[derive(Clone, Copy)]
pub struct PreSkinned<'a> {
    /// The buffers, [`super::shader_types::CPU_VERTEX_STRIDE`] bytes a vertex.
    pub buffers: &'a [wgpu::Buffer],
    /// Whole instances per buffer (at least 1).
    pub instances_per_buffer: u32,
    /// Vertices of one instance's copy (every draw's).
    pub instance_vertices: u64,
}

impl<'a> PreSkinned<'a> {
    /// One buffer holding one instance (the CPU upload).
    pub fn single(buffer: &'a wgpu::Buffer, vertices: u64) -> PreSkinned<'a> {
        PreSkinned {
            buffers: std::slice::from_ref(buffer),
            instances_per_buffer: 1,
            instance_vertices: vertices,
        }
    }

    /// The buffer holding `instance`'s copy and the vertex of that buffer where `draw`'s
    /// vertices of it start.
    pub fn locate(&self, instance: u32, draw: &GpuDraw) -> Option<(&'a wgpu::Buffer, u64)> {
        let per = self.instances_per_buffer.max(1);
        let buffer = self.buffers.get((instance / per) as usize)?;
        let first = (instance % per) as u64 * self.instance_vertices + draw.cpu_first_vertex;
        Some((buffer, first))
    }
}

/// Where the per-vertex errors of the heatmap live.
pub(super) enum ErrorStore {
    /// Storage path: one `f32` per vertex.
    Buffer(wgpu::Buffer),
    /// Uniform path: an R32Float texture filled row by row, `width` texels a row.
    Texture { texture: wgpu::Texture, width: u32 },
}

/// The queue writes a scene made since they were last taken ([`SceneBuffers::take_writes`]):
/// what a frame costs the upload, and what the crowd's "one palette write a frame" is checked
/// against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameWrites {
    /// Writes of palette data (matrices, DQS forms, uniform palette blocks).
    pub palette: u32,
    /// Bytes those writes carried.
    pub palette_bytes: u64,
    /// Every other write (morph weights, skinning options, CPU-skinned vertices, errors).
    pub other: u32,
}

/// A scene's buffers on the GPU: uploaded once here, written each frame by scene_frame.rs.
/// [`super::GpuScene`] holds them with the compute-skinning pass beside them.
pub struct SceneBuffers {
    /// Entries of the frame palette, one character's (the storage palette holds every
    /// instance's matrices, then all of them again in their DQS form).
    pub palette_entries: usize,
    /// Scratch: palette entries packed as DQS joints.
    pub(super) dq_scratch: Vec<Mat4>,
    /// Scratch: one instance's palette moved to where it stands.
    pub(super) moved: Vec<Mat4>,
    /// Scratch: palette entries as the storage palette's rows.
    pub(super) rows: Vec<MatrixRows>,
    /// Scratch: one instance's run of uniform blocks.
    pub(super) block_scratch: Vec<u8>,
    /// Queue writes since they were last taken.
    pub(super) writes: FrameWrites,
    /// The palette source the scene was uploaded for (pipelines must match it).
    pub source: PaletteSource,
    /// Storage path: the frame palette (`model_from_bind` per skin joint, one matrix per rigid
    /// draw).
    pub palette: Option<wgpu::Buffer>,
    /// Storage path: morph weights of every draw for the current frame.
    pub morph_weights: Option<wgpu::Buffer>,
    /// Uniform path: every draw's `BonePalette` block, draw after draw, for instance 0, then
    /// the same run for each further instance ([`GpuDraw::bones_offset`]): a crowd's frame is
    /// one write.
    pub bones: Option<wgpu::Buffer>,
    /// Group 0 (storage: palette, morph weights, node of each palette entry, per-vertex errors;
    /// uniform: per-vertex errors).
    pub frame_bind_group: wgpu::BindGroup,
    /// Per draw buffers, in scene draw order.
    pub draws: Vec<GpuDraw>,
    /// Storage path: every draw's [`DrawParams`] in draw order, as its uniform holds them
    /// (the compute-skinning pass reads a batch's draws from here).
    pub draw_params: Option<wgpu::Buffer>,
    /// The influence limit the skin weights were reduced to (None = all kept).
    pub max_influences: Option<usize>,
    /// Per draw: first morph weight in the frame's weight array.
    pub(super) morph_weight_base: Vec<u32>,
    pub(super) morph_weight_scratch: Vec<f32>,
    /// CPU-skinned positions and normals of every draw (created on the first upload).
    pub(super) cpu_vertices: Option<wgpu::Buffer>,
    /// Characters drawn from this upload, each with its own palette block (storage path).
    pub(super) instances: u32,
    /// Instances drawn and skinned: `instances` unless the last crowd upload culled some.
    pub(super) drawn: u32,
    pub(super) cpu_scratch: Vec<f32>,
    /// |GPU − CPU| per vertex of the scene (zeros until written).
    pub(super) vertex_errors: ErrorStore,
    pub(super) error_scratch: Vec<f32>,
    pub(super) cpu_vertex_total: u64,
    /// Textures stay alive as long as the bind groups that view them.
    _textures: Vec<wgpu::Texture>,
}

/// A float texture holding `texels` values of `channels` floats, row by row (rows of at most
/// the device's 2D dimension); an error when it cannot hold them.
fn float_texture(
    ctx: &GpuContext,
    label: &str,
    format: wgpu::TextureFormat,
    texels: usize,
) -> Result<(wgpu::Texture, u32)> {
    let max = ctx.device.limits().max_texture_dimension_2d.max(1);
    let width = (texels.max(1) as u64).min(max as u64) as u32;
    let rows = (texels.max(1) as u64).div_ceil(width as u64);
    if rows > max as u64 {
        return Err(Error::Gpu(format!(
            "{label}: {texels} texels exceed this adapter's {max} × {max} textures"
        )));
    }
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width,
            height: rows as u32,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    Ok((texture, width))
}

/// Write `values` (`channels` floats a texel, row by row) into `texture` of `width` texels a
/// row, the last row padded with zeros (through `scratch`).
pub(super) fn write_float_texture(
    ctx: &GpuContext,
    texture: &wgpu::Texture,
    width: u32,
    channels: u32,
    values: &[f32],
    scratch: &mut Vec<f32>,
) {
    let size = texture.size();
    let row_floats = (width * channels) as usize;
    scratch.clear();
    scratch.extend_from_slice(values);
    scratch.resize(row_floats * size.height as usize, 0.0);
    ctx.queue.write_texture(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        bytemuck::cast_slice(scratch),
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(width * channels * 4),
            rows_per_image: Some(size.height),
        },
        size,
    );
}

/// Buffer with contents, at least 16 bytes (zero-sized bindings are not allowed).
fn buffer_init(
    device: &wgpu::Device,
    label: &str,
    bytes: &[u8],
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    let mut data = bytes.to_vec();
    if data.len() < 16 {
        data.resize(16, 0);
    }
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: &data,
        usage,
    })
}

/// Unique undirected edges of a triangle list, as line-list indices (the wireframe).
pub fn triangle_edges(indices: &[u32]) -> Vec<u32> {
    let mut edges: Vec<(u32, u32)> = indices
        .chunks_exact(3)
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| (a.min(b), a.max(b)))
        .filter(|(a, b)| a != b)
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges.into_iter().flat_map(|(a, b)| [a, b]).collect()
}

/// Upload a texture (sRGB RGBA8) and make its sampler.
fn upload_texture(ctx: &GpuContext, t: &Texture) -> (wgpu::Texture, wgpu::Sampler) {
    let size = wgpu::Extent3d {
        width: t.image.width.max(1),
        height: t.image.height.max(1),
        depth_or_array_layers: 1,
    };
    let texture = ctx.device.create_texture_with_data(
        &ctx.queue,
        &wgpu::TextureDescriptor {
            label: t.name.as_deref().or(Some("base colour")),
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8UnormSrgb,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        },
        wgpu::util::TextureDataOrder::LayerMajor,
        &t.image.pixels,
    );
    let address = |w: Wrap| match w {
        Wrap::Repeat => wgpu::AddressMode::Repeat,
        Wrap::ClampToEdge => wgpu::AddressMode::ClampToEdge,
        Wrap::MirroredRepeat => wgpu::AddressMode::MirrorRepeat,
    };
    let filter = |linear: bool| {
        if linear {
            wgpu::FilterMode::Linear
        } else {
            wgpu::FilterMode::Nearest
        }
    };
    let sampler = ctx.device.create_sampler(&wgpu::SamplerDescriptor {
        label: Some("base colour"),
        address_mode_u: address(t.wrap[0]),
        address_mode_v: address(t.wrap[1]),
        mag_filter: filter(t.mag_linear),
        min_filter: filter(t.min_linear),
        ..Default::default()
    });
    (texture, sampler)
}

impl SceneBuffers {
    /// The upload behind every [`super::GpuScene`] constructor: the scene checked against `source`,
    /// the frame-wide bindings, the textures, then each draw's buffers and bind groups.
    pub(super) fn upload(
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        max_influences: Option<usize>,
        source: PaletteSource,
        instances: u32,
    ) -> Result<SceneBuffers> {
        check_source(ctx, source)?;
        let layouts = ctx.layouts.of(source)?;
        let plan = UploadPlan::new(ctx, scene, frame, max_influences, source, instances)?;
        let frame_store = match source {
            PaletteSource::Storage => storage_frame_store(ctx, layouts, frame, &plan)?,
            PaletteSource::Uniform { .. } => uniform_frame_store(ctx, layouts, &plan)?,
        };
        let materials = Materials::upload(ctx, scene);
        let bones = uniform_bones_buffer(ctx, scene, &plan)?;
        let upload = DrawUpload {
            ctx,
            layouts,
            scene,
            frame,
            plan: &plan,
            materials: &materials,
            bones: bones.as_ref(),
        };
        let mut kept_textures: Vec<wgpu::Texture> = Vec::new();
        let mut scratch: Vec<f32> = Vec::new();
        let mut draws = Vec::with_capacity(scene.draws.len());
        let mut cpu_first_vertex = 0u64;
        for (i, d) in scene.draws.iter().enumerate() {
            let (draw, morph_texture) = upload.draw(i, d, cpu_first_vertex, &mut scratch)?;
            kept_textures.extend(morph_texture);
            cpu_first_vertex += draw.vertex_count as u64;
            draws.push(draw);
        }
        let draw_params = plan.storage().then(|| {
            let all: Vec<DrawParams> = draws.iter().map(|d| d.params_data).collect();
            buffer_init(
                &ctx.device,
                "draw params (all)",
                bytemuck::cast_slice(&all),
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            )
        });
        ctx.check()?;
        kept_textures.extend(materials.uploaded.into_iter().map(|(t, _)| t));
        Ok(SceneBuffers {
            palette_entries: frame.layout.len,
            dq_scratch: Vec::new(),
            moved: Vec::new(),
            rows: Vec::new(),
            block_scratch: Vec::new(),
            writes: Default::default(),
            source,
            palette: frame_store.palette,
            morph_weights: frame_store.morph_weights,
            bones,
            frame_bind_group: frame_store.bind_group,
            draws,
            draw_params,
            max_influences,
            morph_weight_scratch: vec![0.0; plan.total_weights as usize],
            morph_weight_base: plan.morph_weight_base,
            cpu_vertices: None,
            instances,
            drawn: instances,
            cpu_scratch: Vec::new(),
            vertex_errors: frame_store.vertex_errors,
            error_scratch: Vec::new(),
            cpu_vertex_total: cpu_first_vertex,
            _textures: kept_textures,
        })
    }
}

/// Uniform path: the scene's one buffer of `BonePalette` blocks, a run of every draw's block
/// per instance (`None` on the storage path). Its size is checked against the adapter's
/// largest buffer first.
fn uniform_bones_buffer(
    ctx: &GpuContext,
    scene: &Scene,
    plan: &UploadPlan,
) -> Result<Option<wgpu::Buffer>> {
    if plan.storage() {
        return Ok(None);
    }
    let bytes = plan.bones_stride * scene.draws.len() as u64 * plan.instances as u64;
    let max = ctx.device.limits().max_buffer_size;
    if bytes > max {
        return Err(Error::Gpu(format!(
            "{} of {} draws on the uniform palette need {bytes} bytes of palette blocks; the \
             adapter's largest buffer is {max}",
            crate::info::count(plan.instances as usize, "instance", "instances"),
            scene.draws.len()
        )));
    }
    Ok(Some(ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bone palettes"),
        size: bytes.max(16),
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })))
}

/// The sizes and per-draw facts an upload is laid out by, worked out (and checked against the
/// palette source) before any buffer is made.
struct UploadPlan {
    source: PaletteSource,
    /// Characters drawn from the upload.
    instances: u32,
    /// Uniform path: bytes from one instance's `BonePalette` block to the next (the block
    /// size rounded up to the adapter's uniform offset alignment); 0 on the storage path.
    bones_stride: u64,
    /// Per draw: palette entries (its skin's joints, 1 for a rigid draw).
    palette_len: Vec<u32>,
    /// Per draw: first morph weight in the frame's weight array.
    morph_weight_base: Vec<u32>,
    /// Morph weights of all draws.
    total_weights: u32,
    /// The node each storage palette entry stands for: the frame's entries, then again for
    /// their DQS form.
    joint_nodes: Vec<u32>,
    /// Vertices over all draws.
    vertex_total: u64,
    /// The influence limit skinned draws are reduced to (None = all kept).
    max_influences: Option<usize>,
}

impl UploadPlan {
    /// Lay out `scene`'s upload for `source`; an error when a draw does not fit the uniform
    /// palette.
    fn new(
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        max_influences: Option<usize>,
        source: PaletteSource,
        instances: u32,
    ) -> Result<UploadPlan> {
        // Uniform path: one block per instance, each at an offset the adapter can bind.
        let bones_stride = match source {
            PaletteSource::Uniform { bones } => {
                BonePaletteLayout { bones }.size().next_multiple_of(
                    ctx.device
                        .limits()
                        .min_uniform_buffer_offset_alignment
                        .max(1) as u64,
                )
            }
            PaletteSource::Storage => 0,
        };
        let palette_len: Vec<u32> = scene
            .draws
            .iter()
            .map(|d| d.skin.map_or(1, |s| scene.skins[s].joints.len()) as u32)
            .collect();
        if let PaletteSource::Uniform { bones } = source {
            check_uniform_fit(scene, &palette_len, bones)?;
        }
        let mut morph_weight_base = Vec::with_capacity(scene.draws.len());
        let mut total_weights = 0u32;
        for d in &scene.draws {
            morph_weight_base.push(total_weights);
            total_weights += scene.primitive(d).morph_targets.len() as u32;
        }
        Ok(UploadPlan {
            source,
            instances,
            bones_stride,
            palette_len,
            morph_weight_base,
            total_weights,
            joint_nodes: palette_joint_nodes(scene, frame),
            vertex_total: scene.vertex_count() as u64,
            max_influences,
        })
    }

    /// Whether the upload is for the storage palette path.
    fn storage(&self) -> bool {
        self.source == PaletteSource::Storage
    }
}

/// Uniform path: an error when a draw uses more joints than the `bones` of the uniform
/// palette (`palette_len` per draw) or more morph targets than its slots.
fn check_uniform_fit(scene: &Scene, palette_len: &[u32], bones: u32) -> Result<()> {
    if let Some((i, &n)) = palette_len.iter().enumerate().find(|(_, n)| **n > bones) {
        return Err(Error::Gpu(format!(
            "{}: draw {i} uses {n} joints, more than the uniform palette's {bones}; \
             split it into submeshes of at most {bones} bones first (PartitionedScene)",
            scene.name
        )));
    }
    if let Some((i, d)) = scene
        .draws
        .iter()
        .enumerate()
        .find(|(_, d)| scene.primitive(d).morph_targets.len() > UNIFORM_MORPH_SLOTS as usize)
    {
        return Err(Error::Gpu(format!(
            "{}: draw {i} has {} morph targets; the uniform palette path takes up to \
             {UNIFORM_MORPH_SLOTS}",
            scene.name,
            scene.primitive(d).morph_targets.len()
        )));
    }
    Ok(())
}

/// The node each palette entry stands for (same order as PaletteJob writes). The storage
/// palette holds every instance's block of matrices, then every instance's block packed as DQS
/// joints, each block these entries: entry p of the buffer stands for node
/// `joint_nodes[p mod len]` (palette_storage.wgsl's `joint_node`).
fn palette_joint_nodes(scene: &Scene, frame: &FrameState) -> Vec<u32> {
    let mut joint_nodes: Vec<u32> = Vec::with_capacity(frame.layout.len);
    for skin in &scene.skins {
        joint_nodes.extend(skin.joints.iter().map(|&n| n as u32));
    }
    for d in scene.draws.iter().filter(|d| d.skin.is_none()) {
        joint_nodes.push(d.node as u32);
    }
    joint_nodes
}

/// The frame-wide bindings (group 0) and what they bind.
struct FrameStore {
    /// Storage path: the frame palette.
    palette: Option<wgpu::Buffer>,
    /// Storage path: the frame's morph weights.
    morph_weights: Option<wgpu::Buffer>,
    /// Where the heatmap's per-vertex errors live.
    vertex_errors: ErrorStore,
    bind_group: wgpu::BindGroup,
}

/// Storage path, group 0: the palette (a block per instance, checked against the adapter's
/// storage binding limit), the morph weights, the node of each palette entry and the
/// per-vertex errors.
fn storage_frame_store(
    ctx: &GpuContext,
    layouts: &PaletteLayouts,
    frame: &FrameState,
    plan: &UploadPlan,
) -> Result<FrameStore> {
    let device = &ctx.device;
    let instances = plan.instances;
    // One character's entries as rows and in DQS form.
    let character_bytes = (frame.layout.len.max(1)
        * (std::mem::size_of::<MatrixRows>() + std::mem::size_of::<Mat4>()))
        as u64;
    let palette_bytes = instances as u64 * character_bytes;
    let max_binding = device.limits().max_storage_buffer_binding_size;
    if palette_bytes > max_binding {
        return Err(Error::Gpu(format!(
            "{} of {} matrices and their DQS form ({palette_bytes} bytes) exceed the \
             adapter's storage binding limit {max_binding}: at most {} characters of this \
             model fit",
            crate::info::count(instances as usize, "palette", "palettes"),
            frame.layout.len,
            max_binding / character_bytes
        )));
    }
    let palette = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("palette"),
        size: palette_bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let morph_weights = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("morph weights"),
        size: (plan.total_weights.max(4) as u64) * 4,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let joint_nodes = buffer_init(
        device,
        "joint nodes",
        bytemuck::cast_slice(&plan.joint_nodes),
        wgpu::BufferUsages::STORAGE,
    );
    let errors = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("vertex errors"),
        size: (plan.vertex_total.max(4)) * 4,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("frame"),
        layout: &layouts.frame,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: palette.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: morph_weights.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: joint_nodes.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 3,
                resource: errors.as_entire_binding(),
            },
        ],
    });
    Ok(FrameStore {
        palette: Some(palette),
        morph_weights: Some(morph_weights),
        vertex_errors: ErrorStore::Buffer(errors),
        bind_group,
    })
}

/// Uniform path, group 0: the per-vertex errors as a float texture (the palettes live in
/// each draw's `BonePalette` block).
fn uniform_frame_store(
    ctx: &GpuContext,
    layouts: &PaletteLayouts,
    plan: &UploadPlan,
) -> Result<FrameStore> {
    let (texture, width) = float_texture(
        ctx,
        "vertex errors",
        wgpu::TextureFormat::R32Float,
        plan.vertex_total as usize,
    )?;
    let view = texture.create_view(&Default::default());
    let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("frame (uniform palette)"),
        layout: &layouts.frame,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::TextureView(&view),
        }],
    });
    Ok(FrameStore {
        palette: None,
        morph_weights: None,
        vertex_errors: ErrorStore::Texture { texture, width },
        bind_group,
    })
}

/// The scene's base colour textures on the GPU; slot 0 is a 1×1 white one for untextured
/// draws, scene texture k is slot k + 1.
struct Materials {
    /// Each slot's texture and sampler.
    uploaded: Vec<(wgpu::Texture, wgpu::Sampler)>,
    /// Each slot's view.
    views: Vec<wgpu::TextureView>,
}

impl Materials {
    /// Upload the white texture and `scene`'s textures.
    fn upload(ctx: &GpuContext, scene: &Scene) -> Materials {
        let white = Texture {
            name: Some("white".into()),
            image: crate::image::Rgba8 {
                width: 1,
                height: 1,
                pixels: vec![255; 4],
            },
            mag_linear: false,
            min_linear: false,
            wrap: [Wrap::Repeat; 2],
        };
        let uploaded: Vec<(wgpu::Texture, wgpu::Sampler)> = std::iter::once(&white)
            .chain(&scene.textures)
            .map(|t| upload_texture(ctx, t))
            .collect();
        let views = uploaded
            .iter()
            .map(|(t, _)| t.create_view(&Default::default()))
            .collect();
        Materials { uploaded, views }
    }

    /// The slot `prim`'s base colour reads (white without a texture; the last slot for an
    /// index past the scene's textures).
    fn slot(&self, prim: &Primitive) -> usize {
        prim.base_color_texture
            .map_or(0, |t| t + 1)
            .min(self.views.len() - 1)
    }
}

/// A draw's skin influences for the GPU: the skin's sets (reduced to `max_influences` when
/// given) or a rigid weight of 1, with at most [`GPU_MAX_INFLUENCES`] per vertex — wider sets
/// whose vertices use at most that many are compacted (exact: nothing is dropped), the rest
/// are an error.
fn draw_influences(
    scene: &Scene,
    i: usize,
    d: &Draw,
    max_influences: Option<usize>,
) -> Result<(SkinWeights, Option<ReductionStats>)> {
    let prim = scene.primitive(d);
    let n = prim.vertex_count();
    let (weights, reduction): (SkinWeights, Option<ReductionStats>) =
        match (d.skin, prim.skin_weights.as_ref()) {
            (Some(_), Some(w)) => match max_influences {
                Some(k) => {
                    let (r, s) = reduce_influences(w, k);
                    (r, Some(s))
                }
                None => (w.clone(), None),
            },
            _ => {
                let mut w = SkinWeights {
                    width: 4,
                    joints: vec![0; n * 4],
                    weights: vec![0.0; n * 4],
                };
                for v in 0..n {
                    w.weights[v * 4] = 1.0;
                }
                (w, None)
            }
        };
    if weights.width <= GPU_MAX_INFLUENCES {
        return Ok((weights, reduction));
    }
    let used = weights.max_influences();
    if used > GPU_MAX_INFLUENCES {
        return Err(Error::TooManyInfluences {
            model: scene.name.clone(),
            draw: i,
            used,
            max: GPU_MAX_INFLUENCES,
        });
    }
    Ok((reduce_influences(&weights, GPU_MAX_INFLUENCES).0, reduction))
}

/// A primitive's per-vertex attributes as the GPU reads them, defaults where it has none.
struct DrawAttributes {
    /// Zeros without normals.
    normals: Vec<Vec3>,
    /// Zeros without tangents.
    tangents: Vec<Vec4>,
    /// Zeros without TEXCOORD_0.
    uvs: Vec<Vec2>,
    /// White without COLOR_0.
    colors: Vec<Vec4>,
    /// Per morph target, per vertex: position, normal and tangent deltas (zeros where the
    /// target has none).
    morph_deltas: Vec<Vec4>,
    /// Unique triangle edges as a line list (empty for lines and points).
    edges: Vec<u32>,
}

impl DrawAttributes {
    /// `prim`'s attributes, defaults filled in.
    fn of(prim: &Primitive) -> DrawAttributes {
        let n = prim.vertex_count();
        let mut morph_deltas: Vec<Vec4> = Vec::with_capacity(3 * n * prim.morph_targets.len());
        for t in &prim.morph_targets {
            for v in 0..n {
                morph_deltas.push(
                    t.positions
                        .as_ref()
                        .map_or(Vec4::ZERO, |x| x[v].extend(0.0)),
                );
                morph_deltas.push(t.normals.as_ref().map_or(Vec4::ZERO, |x| x[v].extend(0.0)));
                morph_deltas.push(t.tangents.as_ref().map_or(Vec4::ZERO, |x| x[v].extend(0.0)));
            }
        }
        DrawAttributes {
            normals: prim.normals.clone().unwrap_or_else(|| vec![Vec3::ZERO; n]),
            tangents: prim.tangents.clone().unwrap_or_else(|| vec![Vec4::ZERO; n]),
            uvs: prim.uvs.clone().unwrap_or_else(|| vec![Vec2::ZERO; n]),
            colors: prim.colors.clone().unwrap_or_else(|| vec![Vec4::ONE; n]),
            morph_deltas,
            edges: match prim.topology {
                Topology::Triangles => triangle_edges(&prim.indices),
                Topology::Lines | Topology::Points => Vec::new(),
            },
        }
    }
}

/// A draw's group 1 and what only its palette path binds.
struct DrawBinding {
    /// Group 1 of the draw (on the uniform path its block bound at a dynamic offset).
    bind_group: wgpu::BindGroup,
    /// Uniform path: the draw's block in an instance's run, and its nodes.
    bones_offset: Option<u64>,
    bone_nodes: Vec<u32>,
    /// Storage path: the capture shader's input.
    capture_input: Option<wgpu::Buffer>,
    /// Storage path: the morph deltas the bind group holds.
    morph_deltas: Option<wgpu::Buffer>,
    /// Uniform path: the morph delta texture (kept alive with the scene).
    morph_texture: Option<wgpu::Texture>,
}

/// What every draw's upload reads: the device, the scene laid out by its plan, the shared
/// textures.
struct DrawUpload<'a> {
    ctx: &'a GpuContext,
    layouts: &'a PaletteLayouts,
    scene: &'a Scene,
    frame: &'a FrameState,
    plan: &'a UploadPlan,
    materials: &'a Materials,
    /// Uniform path: the scene's one buffer of `BonePalette` blocks.
    bones: Option<&'a wgpu::Buffer>,
}

impl DrawUpload<'_> {
    /// Draw `i`'s buffers and bind groups, its vertices starting at `first_vertex` in the
    /// scene-wide per-vertex stores, and the morph texture it binds (uniform path; `scratch`
    /// pads its rows).
    fn draw(
        &self,
        i: usize,
        d: &Draw,
        first_vertex: u64,
        scratch: &mut Vec<f32>,
    ) -> Result<(GpuDraw, Option<wgpu::Texture>)> {
        let device = &self.ctx.device;
        let prim = self.scene.primitive(d);
        let (weights, reduction) = draw_influences(self.scene, i, d, self.plan.max_influences)?;
        let influence_sets = (weights.width / 4) as u32;
        let packing = InfluencePacking::of(&weights);
        let (joint_bytes, weight_bytes) = packing.pack(&weights);
        let attributes = DrawAttributes::of(prim);
        let vtx = wgpu::BufferUsages::VERTEX;
        // Joints and weights are also the capture shader's input on the storage path, and
        // with positions and normals the compute skinning's (copied into its batches).
        let vtx_in = if self.plan.storage() {
            vtx | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC
        } else {
            vtx
        };
        let index = wgpu::BufferUsages::INDEX;
        let params_data = self.params(i, prim, first_vertex);
        let params = buffer_init(
            device,
            "draw params",
            bytemuck::bytes_of(&params_data),
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        let binding = match self.plan.source {
            PaletteSource::Storage => self.storage_binding(prim, &params, &attributes),
            PaletteSource::Uniform { bones } => {
                self.uniform_binding(i, bones, prim, &params, &attributes, scratch)?
            }
        };
        let a = &attributes;
        let draw = GpuDraw {
            vertex_count: prim.vertex_count() as u32,
            index_count: prim.indices.len() as u32,
            topology: prim.topology,
            influence_sets,
            positions: buffer_init(
                device,
                "positions",
                bytemuck::cast_slice(&prim.positions),
                vtx_in,
            ),
            normals: buffer_init(device, "normals", bytemuck::cast_slice(&a.normals), vtx_in),
            tangents: buffer_init(device, "tangents", bytemuck::cast_slice(&a.tangents), vtx),
            joints: buffer_init(device, "joints", &joint_bytes, vtx_in),
            weights: buffer_init(device, "weights", &weight_bytes, vtx_in),
            packing,
            uvs: buffer_init(device, "uvs", bytemuck::cast_slice(&a.uvs), vtx),
            colors: buffer_init(device, "colors", bytemuck::cast_slice(&a.colors), vtx),
            indices: buffer_init(
                device,
                "indices",
                bytemuck::cast_slice(&prim.indices),
                index,
            ),
            edge_index_count: a.edges.len() as u32,
            edges: buffer_init(device, "edges", bytemuck::cast_slice(&a.edges), index),
            capture_input: binding.capture_input,
            morph_deltas: binding.morph_deltas,
            params,
            params_data,
            matrix_base: params_data.palette_base,
            bones_offset: binding.bones_offset,
            bones_instance_bytes: self.plan.bones_stride * self.scene.draws.len() as u64,
            bone_nodes: binding.bone_nodes,
            frame_palette_base: self.frame.layout.draw_base.get(i).copied().unwrap_or(0),
            palette_len: self.plan.palette_len[i],
            bind_group: binding.bind_group,
            reduction,
            cpu_first_vertex: first_vertex,
        };
        Ok((draw, binding.morph_texture))
    }

    /// Draw `i`'s parameters before any skinning options are set (LBS, exact normals,
    /// renormalised); palette and morph weight bases are the storage path's (0 on the
    /// uniform path, whose blocks are per draw).
    fn params(&self, i: usize, prim: &Primitive, first_vertex: u64) -> DrawParams {
        let storage = self.plan.storage();
        DrawParams {
            base_color: prim.base_color,
            palette_base: if storage {
                self.frame.layout.draw_base[i]
            } else {
                0
            },
            vertex_count: prim.vertex_count() as u32,
            morph_target_count: prim.morph_targets.len() as u32,
            morph_weight_base: if storage {
                self.plan.morph_weight_base[i]
            } else {
                0
            },
            has_normals: prim.normals.is_some() as u32,
            has_tangents: prim.tangents.is_some() as u32,
            first_vertex: first_vertex as u32,
            skin_mode: 0,
            normal_mode: 0,
            renormalize: 1,
            instance_palette_rows: if storage {
                self.frame.layout.len as u32 * PALETTE_MATRIX_ROWS
            } else {
                0
            },
            instance_vertex_stride: self.plan.vertex_total as u32,
            palette_row_base: if storage {
                self.frame.layout.draw_base[i] * PALETTE_MATRIX_ROWS
            } else {
                0
            },
            ..DrawParams::default()
        }
    }

    /// Group 1 entries both palette paths bind: the draw's parameters and its material.
    fn shared_entries<'b>(
        &'b self,
        prim: &Primitive,
        params: &'b wgpu::Buffer,
    ) -> [wgpu::BindGroupEntry<'b>; 3] {
        let slot = self.materials.slot(prim);
        [
            wgpu::BindGroupEntry {
                binding: 0,
                resource: params.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::TextureView(&self.materials.views[slot]),
            },
            wgpu::BindGroupEntry {
                binding: 3,
                resource: wgpu::BindingResource::Sampler(&self.materials.uploaded[slot].1),
            },
        ]
    }

    /// Storage path: group 1 with the morph deltas in a storage buffer, and the draw's
    /// capture shader input.
    fn storage_binding(
        &self,
        prim: &Primitive,
        params: &wgpu::Buffer,
        attributes: &DrawAttributes,
    ) -> DrawBinding {
        let device = &self.ctx.device;
        let morph_deltas = buffer_init(
            device,
            "morph deltas",
            bytemuck::cast_slice(&attributes.morph_deltas),
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        );
        let [params_entry, view_entry, sampler_entry] = self.shared_entries(prim, params);
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("draw"),
            layout: &self.layouts.draw,
            entries: &[
                params_entry,
                view_entry,
                sampler_entry,
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: morph_deltas.as_entire_binding(),
                },
            ],
        });
        let capture_in: Vec<CaptureVertex> = (0..prim.vertex_count())
            .map(|v| CaptureVertex {
                position: prim.positions[v].extend(1.0).to_array(),
                normal: attributes.normals[v].extend(0.0).to_array(),
                tangent: attributes.tangents[v].to_array(),
            })
            .collect();
        let capture_input = buffer_init(
            device,
            "capture input",
            bytemuck::cast_slice(&capture_in),
            wgpu::BufferUsages::STORAGE,
        );
        DrawBinding {
            bind_group: group,
            bones_offset: None,
            bone_nodes: Vec::new(),
            capture_input: Some(capture_input),
            morph_deltas: Some(morph_deltas),
            morph_texture: None,
        }
    }

    /// Uniform path: draw `i`'s group 1, binding its block of the scene's `BonePalette`
    /// buffer (at a dynamic offset per instance) and its morph delta texture (padded rows
    /// through `scratch`); the block's nodes written into every instance's run.
    fn uniform_binding(
        &self,
        i: usize,
        bones: u32,
        prim: &Primitive,
        params: &wgpu::Buffer,
        attributes: &DrawAttributes,
        scratch: &mut Vec<f32>,
    ) -> Result<DrawBinding> {
        let (ctx, device) = (self.ctx, &self.ctx.device);
        let bones_buffer = self
            .bones
            .ok_or_else(|| Error::Gpu("uniform palette upload without its bone buffer".into()))?;
        let (instances, stride) = (self.plan.instances, self.plan.bones_stride);
        let instance_bytes = stride * self.scene.draws.len() as u64;
        let block = BonePaletteLayout { bones };
        let offset = i as u64 * stride;
        // The nodes never change: written once into every instance's block (and again with
        // each crowd frame, which writes whole blocks).
        let base = self.frame.layout.draw_base[i] as usize;
        let nodes: Vec<u32> = self
            .plan
            .joint_nodes
            .get(base..base + self.plan.palette_len[i] as usize)
            .map(<[u32]>::to_vec)
            .unwrap_or_default();
        for k in 0..instances as u64 {
            ctx.queue.write_buffer(
                bones_buffer,
                k * instance_bytes + offset + block.nodes_offset(),
                bytemuck::cast_slice(&nodes),
            );
        }
        let deltas = &attributes.morph_deltas;
        let (morph, width) = float_texture(
            ctx,
            "morph deltas",
            wgpu::TextureFormat::Rgba32Float,
            deltas.len(),
        )?;
        write_float_texture(ctx, &morph, width, 4, bytemuck::cast_slice(deltas), scratch);
        let morph_view = morph.create_view(&Default::default());
        let shared = self.shared_entries(prim, params);
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("draw (uniform palette)"),
            layout: &self.layouts.draw,
            entries: &[
                shared[0].clone(),
                shared[1].clone(),
                shared[2].clone(),
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&morph_view),
                },
                wgpu::BindGroupEntry {
                    binding: 4,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: bones_buffer,
                        offset,
                        size: wgpu::BufferSize::new(block.size()),
                    }),
                },
            ],
        });
        Ok(DrawBinding {
            bind_group,
            bones_offset: Some(offset),
            bone_nodes: nodes,
            capture_input: None,
            morph_deltas: None,
            morph_texture: Some(morph),
        })
    }
}
