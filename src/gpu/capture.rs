//! Capture pipeline: a compute pass that runs the shared WGSL `skin()` over every vertex of
//! the chosen draws and writes positions/normals/tangents to storage buffers for readback.
//! Shader: shaders/capture.wgsl (with shaders/skin.wgsl prepended).

use glam::{Vec3, Vec4};

use super::context::{GpuContext, MapsInFlight};
use super::palette_source::PaletteSource;
use super::scene::GpuScene;
use super::shader_types::{CPU_VERTEX_STRIDE, CaptureVertex, RECORD_BYTES, WORKGROUP_SIZE};
use super::shaders::{CAPTURE_WGSL, module_with_skin};
use super::skinning::CapturePath;
use super::variants::{SkinVariant, Variants};
use crate::error::{Error, Result};
use crate::skin::SkinnedVertices;

/// Bytes of one draw's capture output for `instances` instances, within the adapter's
/// storage binding size.
fn output_bytes(vertex_count: u32, instances: u32, ctx: &GpuContext) -> Result<u64> {
    let bytes = u64::from(vertex_count.max(1)) * u64::from(instances.max(1)) * RECORD_BYTES;
    let max = ctx.device.limits().max_storage_buffer_binding_size;
    if bytes > max {
        return Err(Error::Gpu(format!(
            "a capture of {} of {vertex_count} vertices needs {bytes} bytes; a storage \
             binding holds {max} on {}",
            crate::info::count(instances as usize, "instance", "instances"),
            ctx.info.name
        )));
    }
    Ok(bytes)
}

/// The capture shader of one [`GpuScene`] (its output buffers are sized to the scene).
pub struct Capture {
    device: wgpu::Device,
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    /// Per influence sets and blend, made when a draw first needs one.
    pipelines: Variants<SkinVariant, wgpu::ComputePipeline>,
    outputs: Vec<wgpu::Buffer>,
    bind_groups: Vec<wgpu::BindGroup>,
    /// Staging buffers per draw slot, kept while their size holds (a batch of compared frames
    /// made a new 10 MB buffer per batch: page faults cost more than the copy).
    staging: Vec<(u64, wgpu::Buffer)>,
    /// The submission that fills the staging buffers ([`Capture::submit_instances`]).
    submitted: Option<wgpu::SubmissionIndex>,
}

impl Capture {
    /// Pipelines and per-draw output buffers for `gpu`.
    pub fn new(ctx: &GpuContext, gpu: &GpuScene) -> Result<Capture> {
        if !ctx.compute_capture() || gpu.source != PaletteSource::Storage {
            return Err(Error::Gpu(
                "the capture shader needs compute shaders and storage buffers (the storage \
                 palette path); read the uniform path back through the draw"
                    .into(),
            ));
        }
        let groups = ctx.layouts.of(PaletteSource::Storage)?;
        let device = &ctx.device;
        let io_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("capture io"),
            entries: &[0u32, 1, 2, 3].map(|b| wgpu::BindGroupLayoutEntry {
                binding: b,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: b != 3 },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }),
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("capture"),
            bind_group_layouts: &[Some(&groups.frame), Some(&groups.draw), Some(&io_layout)],
            immediate_size: 0,
        });
        let module = module_with_skin(device, "capture.wgsl", CAPTURE_WGSL, PaletteSource::Storage);
        let mut outputs = Vec::with_capacity(gpu.draws.len());
        let mut bind_groups = Vec::with_capacity(gpu.draws.len());
        for d in &gpu.draws {
            let input = d
                .capture_input
                .as_ref()
                .ok_or_else(|| Error::Gpu("a draw without capture shader input".into()))?;
            let out = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("capture output"),
                size: output_bytes(d.vertex_count, gpu.instances(), ctx)?,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            bind_groups.push(device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("capture io"),
                layout: &io_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: input.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: d.joints.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: d.weights.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 3,
                        resource: out.as_entire_binding(),
                    },
                ],
            }));
            outputs.push(out);
        }
        ctx.check()?;
        let c = Capture {
            device: device.clone(),
            module,
            layout,
            pipelines: Variants::new(),
            outputs,
            bind_groups,
            staging: Vec::new(),
            submitted: None,
        };
        Ok(c)
    }

    /// The capture pipeline of `variant`, made on first use.
    fn pipeline(&self, variant: SkinVariant) -> wgpu::ComputePipeline {
        self.pipelines.get(variant, |v| {
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some("capture"),
                    layout: Some(&self.layout),
                    module: &self.module,
                    entry_point: Some("capture"),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &v.constants(),
                        zero_initialize_workgroup_memory: false,
                    },
                    cache: None,
                })
        })
    }

    /// Record the compute pass that skins `draws` (instance 0) into the output buffers.
    pub fn record(&self, enc: &mut wgpu::CommandEncoder, gpu: &GpuScene, draws: &[usize]) {
        self.record_instances(enc, gpu, draws, 1);
    }

    /// Record the compute pass that skins the first `instances` instances of `draws` (each
    /// with its palette block) into the output buffers, one after another.
    fn record_instances(
        &self,
        enc: &mut wgpu::CommandEncoder,
        gpu: &GpuScene,
        draws: &[usize],
        instances: u32,
    ) {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("capture"),
            timestamp_writes: None,
        });
        pass.set_bind_group(0, &gpu.frame_bind_group, &[]);
        for &i in draws {
            let (Some(d), Some(bind_group)) = (gpu.draws.get(i), self.bind_groups.get(i)) else {
                continue;
            };
            pass.set_pipeline(&self.pipeline(SkinVariant::of(d)));
            pass.set_bind_group(1, &d.bind_group, &[]);
            pass.set_bind_group(2, bind_group, &[]);
            pass.dispatch_workgroups(d.vertex_count.div_ceil(WORKGROUP_SIZE), instances, 1);
        }
    }

    /// Skin `draws` (indices into the scene's draw list) on the GPU with the palette and
    /// morph weights last written by [`GpuScene::update`], and read the results back.
    pub fn run(
        &mut self,
        ctx: &GpuContext,
        gpu: &GpuScene,
        draws: &[usize],
    ) -> Result<Vec<SkinnedVertices>> {
        Ok(self
            .run_instances(ctx, gpu, draws, 1)?
            .pop()
            .unwrap_or_default())
    }

    /// Skin the first `instances` instances of `draws` of a crowd upload (each with the
    /// palette written into its block, [`crate::gpu::SceneBuffers::write_instance_palette`]) in one pass and
    /// read them back together: `[instance][k]` for `draws[k]`. A batch of compared frames.
    pub fn run_instances(
        &mut self,
        ctx: &GpuContext,
        gpu: &GpuScene,
        draws: &[usize],
        instances: u32,
    ) -> Result<Vec<Vec<SkinnedVertices>>> {
        self.submit_instances(ctx, gpu, draws, instances)?;
        self.collect_instances(ctx, gpu, draws, instances)
    }

    /// The first half of [`Capture::run_instances`]: record and submit the pass and the
    /// copies into the staging buffers, without waiting, so a caller can submit other work
    /// (the draw capture) before [`Capture::collect_instances`] waits for this.
    pub fn submit_instances(
        &mut self,
        ctx: &GpuContext,
        gpu: &GpuScene,
        draws: &[usize],
        instances: u32,
    ) -> Result<()> {
        if instances == 0 || instances > gpu.instances() {
            return Err(Error::Gpu(format!(
                "capture of {}; the upload holds {}",
                crate::info::count(instances as usize, "instance", "instances"),
                gpu.instances()
            )));
        }
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("capture"),
            });
        self.record_instances(&mut enc, gpu, draws, instances);
        for (slot, &i) in draws.iter().enumerate() {
            let size =
                gpu.draws[i].vertex_count.max(1) as u64 * RECORD_BYTES * u64::from(instances);
            if self.staging.get(slot).is_none_or(|(s, _)| *s < size) {
                let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("capture staging"),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                match self.staging.get_mut(slot) {
                    Some(s) => *s = (size, buffer),
                    None => self.staging.push((size, buffer)),
                }
            }
            enc.copy_buffer_to_buffer(&self.outputs[i], 0, &self.staging[slot].1, 0, size);
        }
        self.submitted = Some(ctx.queue.submit([enc.finish()]));
        ctx.check()
    }

    /// The second half of [`Capture::run_instances`]: wait for the submitted capture of the
    /// same `draws` and `instances` and read it back.
    pub fn collect_instances(
        &self,
        ctx: &GpuContext,
        gpu: &GpuScene,
        draws: &[usize],
        instances: u32,
    ) -> Result<Vec<Vec<SkinnedVertices>>> {
        let mut result: Vec<Vec<SkinnedVertices>> = (0..instances)
            .map(|_| Vec::with_capacity(draws.len()))
            .collect();
        for (k, &i) in draws.iter().enumerate() {
            let n = gpu.draws[i].vertex_count as usize;
            let len = n * instances as usize * RECORD_BYTES as usize;
            let Some((size, staging)) = self.staging.get(k) else {
                return Err(Error::Gpu(
                    "capture collected before it was submitted".into(),
                ));
            };
            if (len as u64) > *size {
                return Err(Error::Gpu(format!(
                    "capture of {len} bytes collected from a {size}-byte submission"
                )));
            }
            ctx.map_read_after(staging, self.submitted.clone(), |bytes| {
                // In place where the mapping is aligned for the records (wgpu aligns mappings
                // to 8 bytes), else copied out first.
                let copied: Vec<CaptureVertex>;
                let records: &[CaptureVertex] = match bytemuck::try_cast_slice(&bytes[..len]) {
                    Ok(r) => r,
                    Err(_) => {
                        copied = bytemuck::pod_collect_to_vec(&bytes[..len]);
                        &copied
                    }
                };
                for (instance, out) in result.iter_mut().enumerate() {
                    let r = &records[instance * n..(instance + 1) * n];
                    out.push(SkinnedVertices {
                        positions: r
                            .iter()
                            .map(|r| Vec4::from(r.position).truncate())
                            .collect(),
                        normals: Some(r.iter().map(|r| Vec4::from(r.normal).truncate()).collect()),
                        tangents: Some(r.iter().map(|r| Vec4::from(r.tangent)).collect()),
                    });
                }
            })?;
        }
        Ok(result)
    }
}

/// The capture shader of every draw, read back asynchronously: [`AsyncCapture::submit`]
/// records the capture and a copy into staging buffers and asks for them to be mapped
/// ([`AsyncCapture::submit_compute_skinned`] copies the compute-skinning pass's own output
/// instead);
/// [`AsyncCapture::poll`] returns the vertices once every buffer is mapped (usually a frame or
/// two later), without waiting. The staging buffers and the result vectors are made once and
/// reused, so a steady stream of captures allocates nothing.
pub struct AsyncCapture {
    staging: Vec<wgpu::Buffer>,
    /// The staging buffers' maps on their way.
    maps: MapsInFlight,
    results: Vec<SkinnedVertices>,
    records: Vec<CaptureVertex>,
    draws: Vec<usize>,
    /// What the buffers in flight (or last read) hold.
    source: CapturePath,
}

impl AsyncCapture {
    /// Staging buffers for every draw of `gpu`.
    pub fn new(ctx: &GpuContext, gpu: &GpuScene) -> AsyncCapture {
        AsyncCapture {
            staging: Self::make_staging(ctx, gpu),
            maps: MapsInFlight::default(),
            results: vec![SkinnedVertices::default(); gpu.draws.len()],
            records: Vec::new(),
            draws: (0..gpu.draws.len()).collect(),
            source: CapturePath::CaptureShader,
        }
    }

    fn make_staging(ctx: &GpuContext, gpu: &GpuScene) -> Vec<wgpu::Buffer> {
        gpu.draws
            .iter()
            .map(|d| {
                ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("async capture staging"),
                    size: d.vertex_count.max(1) as u64 * RECORD_BYTES,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect()
    }

    /// What the last submitted readback holds.
    pub fn source(&self) -> CapturePath {
        self.source
    }

    /// A capture is on its way.
    pub fn in_flight(&self) -> bool {
        self.maps.in_flight()
    }

    /// Capture every draw with the palette last written to `gpu`, unless one is still on its
    /// way (then nothing happens and `false` is returned).
    pub fn submit(&mut self, ctx: &GpuContext, capture: &Capture, gpu: &GpuScene) -> bool {
        if self.maps.in_flight() || self.staging.is_empty() {
            return false;
        }
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("async capture"),
            });
        capture.record(&mut enc, gpu, &self.draws);
        for (i, s) in self.staging.iter().enumerate() {
            enc.copy_buffer_to_buffer(&capture.outputs[i], 0, s, 0, s.size());
        }
        self.source = CapturePath::CaptureShader;
        self.map_after(ctx, enc);
        true
    }

    /// Read back what the compute-skinning pass last wrote for instance 0 (every draw,
    /// [`CPU_VERTEX_STRIDE`] bytes a vertex), instead of running the capture: the vertices
    /// the compute path draws. `false` (nothing happens) when a readback is still on its way
    /// or `gpu` has no compute skinning.
    pub fn submit_compute_skinned(&mut self, ctx: &GpuContext, gpu: &GpuScene) -> bool {
        let Some(compute) = gpu.compute_skinning() else {
            return false;
        };
        if self.maps.in_flight() || self.staging.is_empty() {
            return false;
        }
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("async compute-skinned readback"),
            });
        for (s, d) in self.staging.iter().zip(&gpu.draws) {
            let bytes = d.vertex_count as u64 * CPU_VERTEX_STRIDE;
            if bytes > 0 {
                let from = d.cpu_first_vertex * CPU_VERTEX_STRIDE;
                enc.copy_buffer_to_buffer(compute.output(), from, s, 0, bytes);
            }
        }
        self.source = CapturePath::ComputePass;
        self.map_after(ctx, enc);
        true
    }

    /// Submit `enc` (which fills the staging buffers) and ask for every buffer to be mapped.
    fn map_after(&mut self, ctx: &GpuContext, enc: wgpu::CommandEncoder) {
        ctx.queue.submit([enc.finish()]);
        self.maps.map_all(&self.staging);
    }

    /// The captured vertices (one per draw) once every buffer is mapped; `None` while the
    /// capture is on its way or when none was submitted. Never waits.
    pub fn poll(&mut self, ctx: &GpuContext, gpu: &GpuScene) -> Result<Option<&[SkinnedVertices]>> {
        match self.maps.landed(ctx, "a capture readback") {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => {
                // A buffer whose map failed is not mapped again: the next capture gets new
                // ones.
                self.staging = Self::make_staging(ctx, gpu);
                return Err(e);
            }
        }
        if self.source == CapturePath::ComputePass {
            return self.read_compute_skinned(gpu).map(Some);
        }
        for ((s, out), d) in self.staging.iter().zip(&mut self.results).zip(&gpu.draws) {
            let n = d.vertex_count as usize;
            {
                let bytes = s
                    .get_mapped_range(..)
                    .map_err(|e| crate::error::Error::Gpu(format!("get_mapped_range: {e}")))?;
                self.records.clear();
                self.records.extend(
                    bytes[..n * RECORD_BYTES as usize]
                        .chunks_exact(RECORD_BYTES as usize)
                        .map(bytemuck::pod_read_unaligned::<CaptureVertex>),
                );
            }
            s.unmap();
            out.positions.clear();
            out.positions.extend(
                self.records
                    .iter()
                    .map(|r| Vec4::from(r.position).truncate()),
            );
            let normals = out.normals.get_or_insert_with(Vec::new);
            normals.clear();
            normals.extend(self.records.iter().map(|r| Vec4::from(r.normal).truncate()));
            out.tangents = None;
        }
        Ok(Some(&self.results))
    }

    /// Unpack mapped compute-skinned vertices (position, normal: six f32 each).
    fn read_compute_skinned(&mut self, gpu: &GpuScene) -> Result<&[SkinnedVertices]> {
        for ((s, out), d) in self.staging.iter().zip(&mut self.results).zip(&gpu.draws) {
            let n = d.vertex_count as usize;
            out.positions.clear();
            let normals = out.normals.get_or_insert_with(Vec::new);
            normals.clear();
            {
                let bytes = s
                    .get_mapped_range(..)
                    .map_err(|e| crate::error::Error::Gpu(format!("get_mapped_range: {e}")))?;
                for v in
                    bytes[..n * CPU_VERTEX_STRIDE as usize].chunks_exact(CPU_VERTEX_STRIDE as usize)
                {
                    let f: [f32; 6] = bytemuck::pod_read_unaligned(v);
                    out.positions.push(Vec3::new(f[0], f[1], f[2]));
                    normals.push(Vec3::new(f[3], f[4], f[5]));
                }
            }
            s.unmap();
            out.tangents = None;
        }
        Ok(&self.results)
    }
}
