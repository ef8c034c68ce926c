//! Compute-skinning pipeline: the `skin_vertices` entry point of shaders/capture.wgsl (with
//! shaders/skin.wgsl prepended) skins every vertex of every draw once per frame, and of every
//! instance of a crowd, into the scene's skinned vertex buffer (position and normal,
//! [`CPU_VERTEX_STRIDE`] bytes a vertex, the layout the CPU-skinned view already draws). The
//! renderer then draws that buffer with a plain vertex shader ([`super::Skinning::ComputePass`]),
//! as Unreal's and Godot's compute skinning do, so a depth pre-pass, shadow passes and the
//! colour pass share one skinning instead of each running the vertex-shader blend.
//!
//! It shares the capture's shader on purpose: the influence loader and `skin()` are the
//! capture's, so the capture shader (read back in every comparison) checks most of this path's
//! code too, and the draw-path capture reads the drawn buffer back
//! ([`super::CapturePath::ComputePass`]).
//!
//! Batches: draws that share their influence sets, joint and weight packing and morph target
//! count are skinned in one dispatch per output buffer (RecursiveSkeletons' 84 draws in one),
//! their inputs copied draw after draw into the batch's buffers at set-up, a table giving each
//! 64-vertex block its draw, and every draw's parameters read from the scene's table
//! ([`SceneBuffers::draw_params`]), so per-draw skinning options cost a dispatch only when a
//! batch's draws differ in them. Bevy packs every skin's matrices into one buffer for the same
//! reason: the cost of a crowd should not grow with its draw calls.
//!
//! Cost: one dispatch per batch and output buffer (64-thread workgroups, instances along z, or
//! along x in [`DispatchOrder::InstanceInner`]); reads each vertex's position and normal (12
//! each) and its joints and weights as packed ([`super::influence_packing`]: 8 bytes for four
//! u8 joints and unorm8 weights, 20 with f32 weights, 32 unpacked), and writes 24:
//! [`bytes_moved`]. Memory: the batches' inputs are a second copy of the draws' positions,
//! normals, joints, weights and morph deltas. A crowd's copies (instances × vertices × 24
//! bytes) are split over as many output buffers as the adapter's storage binding size asks,
//! whole instances in each. Limits: one instance's copy must fit one binding; a batch may have
//! up to 64 × the adapter's workgroups per dimension² vertices; storage palette path only.

use super::context::GpuContext;
use super::influence_packing::InfluencePacking;
use super::palette_source::PaletteSource;
use super::scene_buffers::{GpuDraw, PreSkinned, SceneBuffers};
use super::shader_types::{BatchDraw, CPU_VERTEX_STRIDE, SkinChunk, WORKGROUP_SIZE};
use super::shaders::{CAPTURE_WGSL, module_with_skin};
use super::variants::{SkinVariant, Variants};
use crate::error::{Error, Result};

/// Bytes the skinning pass moves for one vertex of `d` without morph targets: reads its
/// position and normal (24) and its packed joints and weights, writes the skinned position
/// and normal ([`CPU_VERTEX_STRIDE`]).
pub fn bytes_moved(d: &GpuDraw) -> u64 {
    24 + d.packing.bytes_per_vertex(d.influence_sets) + CPU_VERTEX_STRIDE
}

fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// The order in which `skin_vertices` walks a crowd (the pipeline constant `INSTANCE_INNER`
/// of shaders/capture.wgsl). Both give the same bits; which is faster depends on the GPU's
/// caches (the GPU benchmark times both).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum DispatchOrder {
    /// The instance is the outer index (workgroup z): every vertex of one instance, then the
    /// next instance's.
    #[default]
    InstanceOuter,
    /// The instance is the inner index (workgroup x): neighbouring workgroups skin the same
    /// 64 vertices for consecutive instances, so the mesh is read once per block from cache.
    InstanceInner,
}

/// Vertices of one character from which a crowd is skinned instance-inner: measured on an
/// NVIDIA H200 (`scripts/gpu-report.sh`, BENCHMARKS.md), the 108k-vertex dense humanoid ran
/// 2–8 % faster instance-inner at 16–4,096 instances, the 3k–7k-vertex CesiumMan and humanoid
/// 0–4 % faster instance-outer at 256–4,096. The threshold lies between the two sizes.
pub const INSTANCE_INNER_MIN_VERTICES: usize = 32_768;

impl DispatchOrder {
    /// Both orders, the default first.
    pub const ALL: [DispatchOrder; 2] =
        [DispatchOrder::InstanceOuter, DispatchOrder::InstanceInner];

    /// The faster order for a crowd of `instances` characters of `vertices` each (see
    /// [`INSTANCE_INNER_MIN_VERTICES`]).
    pub fn for_crowd(vertices: usize, instances: u32) -> DispatchOrder {
        if instances > 1 && vertices >= INSTANCE_INNER_MIN_VERTICES {
            DispatchOrder::InstanceInner
        } else {
            DispatchOrder::InstanceOuter
        }
    }

    /// `instance-outer` / `instance-inner`.
    pub fn name(self) -> &'static str {
        match self {
            DispatchOrder::InstanceOuter => "instance-outer",
            DispatchOrder::InstanceInner => "instance-inner",
        }
    }
}

/// How the skinned copies are laid out: how many instances one output buffer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputeLayout {
    /// Whole instances per output buffer (the last may hold fewer).
    pub instances_per_buffer: u32,
    /// Output buffers.
    pub buffers: u32,
}

impl ComputeLayout {
    /// Split `instances` copies of `instance_bytes` each over buffers of at most `max_bytes`.
    /// An error when one copy alone is larger.
    pub fn new(instances: u32, instance_bytes: u64, max_bytes: u64) -> Result<ComputeLayout> {
        let per = max_bytes / instance_bytes.max(1);
        if per == 0 {
            return Err(Error::Gpu(format!(
                "compute skinning: one instance's skinned copy is {instance_bytes} bytes; this \
                 adapter binds at most {max_bytes} bytes"
            )));
        }
        let per = per.min(instances.max(1) as u64) as u32;
        Ok(ComputeLayout {
            instances_per_buffer: per,
            buffers: instances.max(1).div_ceil(per),
        })
    }

    /// The first instance buffer `buffer` holds and how many it holds, of `instances`.
    pub fn range(&self, buffer: u32, instances: u32) -> (u32, u32) {
        let first = buffer * self.instances_per_buffer;
        let held = self
            .instances_per_buffer
            .min(instances.max(1).saturating_sub(first));
        (first, held)
    }
}

/// The compute-skinning pass of one scene's buffers ([`SceneBuffers`]) and the buffers it
/// writes; a [`super::GpuScene`] holds it beside them.
pub struct ComputeSkinning {
    device: wgpu::Device,
    module: wgpu::ShaderModule,
    pipeline_layout: wgpu::PipelineLayout,
    /// Per dispatch order, influence sets and blend, made when a draw first needs one.
    pipelines: Variants<(DispatchOrder, SkinVariant), wgpu::ComputePipeline>,
    /// The draws skinned together, each batch in one dispatch per output buffer.
    batches: Vec<Batch>,
    /// Per output buffer, per batch.
    bind_groups: Vec<Vec<wgpu::BindGroup>>,
    outputs: Vec<wgpu::Buffer>,
    layout: ComputeLayout,
    instances: u32,
    vertex_total: u64,
    /// Workgroups per dimension the adapter allows.
    max_groups: u32,
    /// The order [`ComputeSkinning::record`] dispatches in ([`DispatchOrder::for_crowd`] of
    /// the scene; the same bits in either).
    pub order: DispatchOrder,
}

impl ComputeSkinning {
    /// Pipelines, bind groups and the skinned vertex buffers (every instance) of `gpu`, each
    /// buffer at most the adapter's storage binding size.
    pub(crate) fn new(ctx: &GpuContext, gpu: &SceneBuffers) -> Result<ComputeSkinning> {
        let limits = ctx.device.limits();
        let max = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        Self::with_max_buffer(ctx, gpu, max)
    }

    /// As `ComputeSkinning::new` (the adapter's binding size), with output buffers of at most `max_buffer_bytes` (tests
    /// split small crowds this way; never more than the adapter binds).
    pub fn with_max_buffer(
        ctx: &GpuContext,
        gpu: &SceneBuffers,
        max_buffer_bytes: u64,
    ) -> Result<ComputeSkinning> {
        if !ctx.compute_capture() || gpu.source != PaletteSource::Storage {
            return Err(Error::Gpu(format!(
                "compute skinning needs compute shaders and the storage palette; {} on {} \
                 skins in the vertex shader only",
                gpu.source.describe(),
                ctx.info.name
            )));
        }
        let instances = gpu.instances();
        let limits = ctx.device.limits();
        let vertex_total = gpu.vertex_total().max(1) as u64;
        let max = max_buffer_bytes.min(
            limits
                .max_storage_buffer_binding_size
                .min(limits.max_buffer_size),
        );
        let layout = ComputeLayout::new(instances, vertex_total * CPU_VERTEX_STRIDE, max)?;
        let max_groups = limits.max_compute_workgroups_per_dimension;
        if instances > max_groups {
            return Err(Error::Gpu(format!(
                "compute skinning: {instances} instances exceed this adapter's {max_groups} \
                 workgroups per dimension"
            )));
        }
        let groups = ctx.layouts.of(PaletteSource::Storage)?;
        let device = &ctx.device;
        let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let io_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("compute skinning io"),
            entries: &[
                storage(1, true),
                storage(2, true),
                storage(4, false),
                storage(5, true),
                storage(6, true),
                wgpu::BindGroupLayoutEntry {
                    binding: 7,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                storage(8, true),
                storage(9, true),
                storage(10, true),
            ],
        });
        // Group 1 of `skin_vertices`: the batch's morph deltas (it reads its draws'
        // parameters from the scene's table, not a draw's uniform).
        let morph_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("compute skinning morph deltas"),
            entries: &[storage(1, true)],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("compute skinning"),
            bind_group_layouts: &[Some(&groups.frame), Some(&morph_layout), Some(&io_layout)],
            immediate_size: 0,
        });
        let module = module_with_skin(
            device,
            "capture.wgsl (compute skinning)",
            CAPTURE_WGSL,
            PaletteSource::Storage,
        );
        let batches = Batch::all(ctx, gpu, &morph_layout)?;
        let Some(draw_params) = &gpu.draw_params else {
            return Err(Error::Gpu(
                "compute skinning: the scene has no table of draw parameters".into(),
            ));
        };
        let mut outputs = Vec::with_capacity(layout.buffers as usize);
        let mut bind_groups = Vec::with_capacity(layout.buffers as usize);
        for b in 0..layout.buffers {
            let (first, held) = layout.range(b, instances);
            let output = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("compute-skinned vertices"),
                size: held as u64 * vertex_total * CPU_VERTEX_STRIDE,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::VERTEX
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let chunk = wgpu::util::DeviceExt::create_buffer_init(
                device,
                &wgpu::util::BufferInitDescriptor {
                    label: Some("compute skinning chunk"),
                    contents: bytemuck::bytes_of(&SkinChunk {
                        instance_base: first,
                        ..bytemuck::Zeroable::zeroed()
                    }),
                    usage: wgpu::BufferUsages::UNIFORM,
                },
            );
            let groups: Vec<wgpu::BindGroup> = batches
                .iter()
                .map(|batch| {
                    let i = &batch.inputs;
                    device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("compute skinning io"),
                        layout: &io_layout,
                        entries: &[
                            entry(1, &i.joints),
                            entry(2, &i.weights),
                            entry(4, &output),
                            entry(5, &i.positions),
                            entry(6, &i.normals),
                            entry(7, &chunk),
                            entry(8, draw_params),
                            entry(9, &i.batch_draws),
                            entry(10, &i.block_draws),
                        ],
                    })
                })
                .collect();
            outputs.push(output);
            bind_groups.push(groups);
        }
        ctx.check()?;
        Ok(ComputeSkinning {
            device: device.clone(),
            module,
            pipeline_layout,
            pipelines: Variants::new(),
            batches,
            bind_groups,
            outputs,
            layout,
            instances,
            vertex_total,
            max_groups,
            order: DispatchOrder::for_crowd(gpu.vertex_total(), instances),
        })
    }

    /// The first skinned vertex buffer (instances `0..layout().instances_per_buffer`): per
    /// instance, every draw's vertices from its `cpu_first_vertex`, [`CPU_VERTEX_STRIDE`] bytes
    /// each. [`ComputeSkinning::pre_skinned`] finds any instance's copy.
    pub fn output(&self) -> &wgpu::Buffer {
        &self.outputs[0]
    }

    /// Where each instance's copy lies, for drawing or reading back.
    pub fn pre_skinned(&self) -> PreSkinned<'_> {
        PreSkinned {
            buffers: &self.outputs,
            instances_per_buffer: self.layout.instances_per_buffer,
            instance_vertices: self.vertex_total,
        }
    }

    /// How the copies are split over output buffers.
    pub fn layout(&self) -> ComputeLayout {
        self.layout
    }

    /// Instances the buffers hold.
    pub fn instances(&self) -> u32 {
        self.instances
    }

    /// The skinning pipeline of `order` and `variant`, made on first use.
    fn pipeline(&self, order: DispatchOrder, variant: SkinVariant) -> wgpu::ComputePipeline {
        self.pipelines.get((order, variant), |(order, v)| {
            let inner = (order == DispatchOrder::InstanceInner) as u32 as f64;
            let constants: Vec<(&str, f64)> = (v.constants().into_iter())
                .chain([("INSTANCE_INNER", inner)])
                .collect();
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some("compute skinning"),
                    layout: Some(&self.pipeline_layout),
                    module: &self.module,
                    entry_point: Some("skin_vertices"),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &constants,
                        zero_initialize_workgroup_memory: false,
                    },
                    cache: None,
                })
        })
    }

    /// Record the dispatches that skin every draw of `gpu` (every instance) with the palette
    /// last written, in [`ComputeSkinning::order`], into a compute pass the caller owns.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, gpu: &SceneBuffers) {
        self.record_in(pass, gpu, self.order);
    }

    /// [`ComputeSkinning::record`] in a given order (the benchmark times both).
    pub fn record_in(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        gpu: &SceneBuffers,
        order: DispatchOrder,
    ) {
        pass.set_bind_group(0, &gpu.frame_bind_group, &[]);
        let max = self.max_groups.max(1);
        for (b, groups) in self.bind_groups.iter().enumerate() {
            let (first, held) = self.layout.range(b as u32, self.instances);
            // Instances past the drawn ones (culled from a crowd) are not skinned.
            let held = held.min(gpu.drawn_instances().saturating_sub(first));
            if held == 0 {
                continue;
            }
            for (batch, group) in self.batches.iter().zip(groups) {
                pass.set_bind_group(1, &batch.morph_group, &[]);
                pass.set_bind_group(2, group, &[]);
                let rows = batch.blocks.min(max);
                let columns = batch.blocks.div_ceil(rows);
                for variant in batch.variants(gpu) {
                    pass.set_pipeline(&self.pipeline(order, variant));
                    match order {
                        DispatchOrder::InstanceOuter => {
                            pass.dispatch_workgroups(rows, columns, held)
                        }
                        DispatchOrder::InstanceInner => {
                            pass.dispatch_workgroups(held, rows, columns)
                        }
                    }
                }
            }
        }
    }

    /// Dispatches one [`ComputeSkinning::record`] makes when every instance is drawn: one per
    /// output buffer and batch when the batch's draws skin with the same options (one more per
    /// further set of options in a batch).
    pub fn dispatches(&self, gpu: &SceneBuffers) -> usize {
        let per_buffer: usize = self.batches.iter().map(|b| b.variants(gpu).count()).sum();
        per_buffer * self.layout.buffers as usize
    }

    /// Batches of draws skinned together (draws that share influence sets, packing and morph
    /// target count).
    pub fn batch_count(&self) -> usize {
        self.batches.len()
    }
}

/// The inputs of a batch: its draws' vertex data copied draw after draw, and the tables the
/// shader finds a workgroup's draw with.
struct BatchInputs {
    positions: wgpu::Buffer,
    normals: wgpu::Buffer,
    joints: wgpu::Buffer,
    weights: wgpu::Buffer,
    /// One [`BatchDraw`] per draw.
    batch_draws: wgpu::Buffer,
    /// Per [`WORKGROUP_SIZE`]-vertex block: its draw's index in `batch_draws`.
    block_draws: wgpu::Buffer,
}

/// Draws the compute pass skins in one dispatch: every draw with vertices that shares its
/// influence sets, joint and weight packing and morph target count (what a pipeline's data
/// constants and the copied inputs fix). The skinning options (blend, normals) may differ per
/// draw: a batch is dispatched once per distinct set of them, each draw's workgroups skinning
/// in the dispatch of its own.
struct Batch {
    /// Indices into the scene's draws.
    draws: Vec<usize>,
    /// [`WORKGROUP_SIZE`]-vertex blocks of all its draws (each draw starts a block).
    blocks: u32,
    inputs: BatchInputs,
    /// Group 1: the batch's morph deltas, draw after draw.
    morph_group: wgpu::BindGroup,
}

/// What makes draws batch together: their inputs' layout and the data constants.
fn batch_key(d: &GpuDraw) -> (u32, u32, InfluencePacking) {
    let v = SkinVariant::of(d);
    (v.sets, v.morph_targets, v.packing)
}

impl Batch {
    /// The scene's draws grouped into batches, their inputs copied on the GPU (one
    /// submission).
    fn all(
        ctx: &GpuContext,
        gpu: &SceneBuffers,
        morph_layout: &wgpu::BindGroupLayout,
    ) -> Result<Vec<Batch>> {
        let mut keys: Vec<(u32, u32, InfluencePacking)> = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        for (i, d) in gpu.draws.iter().enumerate() {
            if d.vertex_count == 0 {
                continue;
            }
            let key = batch_key(d);
            match keys.iter().position(|k| *k == key) {
                Some(k) => members[k].push(i),
                None => {
                    keys.push(key);
                    members.push(vec![i]);
                }
            }
        }
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("compute skinning batches"),
            });
        let batches = members
            .into_iter()
            .map(|draws| Batch::new(ctx, gpu, draws, morph_layout, &mut encoder))
            .collect::<Result<Vec<Batch>>>()?;
        ctx.queue.submit([encoder.finish()]);
        Ok(batches)
    }

    /// One batch of `draws` (sharing [`batch_key`]), its inputs copied by `encoder`.
    fn new(
        ctx: &GpuContext,
        gpu: &SceneBuffers,
        draws: Vec<usize>,
        morph_layout: &wgpu::BindGroupLayout,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<Batch> {
        let device = &ctx.device;
        let mut table = Vec::with_capacity(draws.len());
        let mut block_draws: Vec<u32> = Vec::new();
        let (mut vertices, mut blocks) = (0u32, 0u32);
        for (k, &i) in draws.iter().enumerate() {
            let n = gpu.draws[i].vertex_count;
            table.push(BatchDraw {
                draw: i as u32,
                first_vertex: vertices,
                first_block: blocks,
                _pad: 0,
            });
            let b = n.div_ceil(WORKGROUP_SIZE);
            block_draws.extend(std::iter::repeat_n(k as u32, b as usize));
            vertices += n;
            blocks += b;
        }
        // Bytes a vertex of each input takes, from the first draw (the batch shares them).
        let first = &gpu.draws[draws[0]];
        let (joint_set, weight_set) = first.packing.set_bytes();
        let sets = u64::from(first.influence_sets);
        let morph_bytes = u64::from(batch_key(first).1) * 3 * 16;
        let copy = |encoder: &mut wgpu::CommandEncoder,
                    label: &str,
                    per_vertex: u64,
                    source: &dyn Fn(&GpuDraw) -> Option<&wgpu::Buffer>|
         -> Result<wgpu::Buffer> {
            let total = u64::from(vertices) * per_vertex;
            let out = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: total.max(16),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            for (t, &i) in table.iter().zip(&draws) {
                let d = &gpu.draws[i];
                let bytes = u64::from(d.vertex_count) * per_vertex;
                if bytes == 0 {
                    continue;
                }
                let Some(from) = source(d) else {
                    return Err(Error::Gpu(format!(
                        "compute skinning: draw {i} has no {label} buffer to batch"
                    )));
                };
                let at = u64::from(t.first_vertex) * per_vertex;
                encoder.copy_buffer_to_buffer(from, 0, &out, at, bytes);
            }
            Ok(out)
        };
        let inputs = BatchInputs {
            positions: copy(encoder, "positions", 12, &|d| Some(&d.positions))?,
            normals: copy(encoder, "normals", 12, &|d| Some(&d.normals))?,
            joints: copy(encoder, "joints", joint_set * sets, &|d| Some(&d.joints))?,
            weights: copy(encoder, "weights", weight_set * sets, &|d| Some(&d.weights))?,
            batch_draws: init(device, "batch draws", bytemuck::cast_slice(&table)),
            block_draws: init(device, "block draws", bytemuck::cast_slice(&block_draws)),
        };
        let deltas = copy(encoder, "morph deltas", morph_bytes, &|d| {
            d.morph_deltas.as_ref()
        })?;
        let morph_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("compute skinning morph deltas"),
            layout: morph_layout,
            entries: &[entry(1, &deltas)],
        });
        Ok(Batch {
            draws,
            blocks,
            inputs,
            morph_group,
        })
    }

    /// The pipelines' variants this batch dispatches with: each distinct one among its draws'
    /// current options, in draw order.
    fn variants<'a>(&'a self, gpu: &'a SceneBuffers) -> impl Iterator<Item = SkinVariant> + 'a {
        let variant = |i: usize| SkinVariant::of(&gpu.draws[i]);
        self.draws.iter().enumerate().filter_map(move |(k, &i)| {
            let v = variant(i);
            let earlier = self.draws[..k].iter().any(|&e| variant(e) == v);
            (!earlier).then_some(v)
        })
    }
}

/// A read-only storage buffer holding `bytes` (at least 16 bytes).
fn init(device: &wgpu::Device, label: &str, bytes: &[u8]) -> wgpu::Buffer {
    let mut data = bytes.to_vec();
    data.resize(data.len().max(16), 0);
    wgpu::util::DeviceExt::create_buffer_init(
        device,
        &wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: &data,
            usage: wgpu::BufferUsages::STORAGE,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_splits_whole_instances_and_refuses_oversized_copies() {
        let l = ComputeLayout::new(10, 100, 350).expect("fits");
        assert_eq!(
            l,
            ComputeLayout {
                instances_per_buffer: 3,
                buffers: 4
            }
        );
        let l = ComputeLayout::new(2, 100, 1 << 20).expect("fits");
        assert_eq!(
            l,
            ComputeLayout {
                instances_per_buffer: 2,
                buffers: 1
            }
        );
        assert!(ComputeLayout::new(1, 101, 100).is_err());
    }

    /// Each buffer's range: consecutive, whole instances, the last holding the rest.
    #[test]
    fn ranges_cover_every_instance_once() {
        let l = ComputeLayout::new(10, 100, 350).expect("fits");
        let ranges: Vec<(u32, u32)> = (0..l.buffers).map(|b| l.range(b, 10)).collect();
        assert_eq!(ranges, [(0, 3), (3, 3), (6, 3), (9, 1)]);
    }

    /// The order kept from the H200 measurement: instance-inner for crowds of characters of
    /// at least INSTANCE_INNER_MIN_VERTICES, instance-outer otherwise and for one character.
    #[test]
    fn crowds_of_large_meshes_dispatch_instance_inner() {
        let big = INSTANCE_INNER_MIN_VERTICES;
        assert_eq!(
            DispatchOrder::for_crowd(big, 16),
            DispatchOrder::InstanceInner
        );
        assert_eq!(
            DispatchOrder::for_crowd(big - 1, 4096),
            DispatchOrder::InstanceOuter
        );
        assert_eq!(
            DispatchOrder::for_crowd(big * 4, 1),
            DispatchOrder::InstanceOuter
        );
    }
}
