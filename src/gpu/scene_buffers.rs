//! Scene upload: per-draw vertex, influence, morph and parameter buffers (static), and the
//! per-frame palette and morph-weight storage buffers.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3, Vec4};
use wgpu::util::DeviceExt;

use super::context::GpuContext;
use crate::error::{Error, Result};
use crate::frame::FrameState;
use crate::scene::{Scene, SkinWeights, Topology};
use crate::skin::ReductionStats;
use crate::skin::weights::reduce_influences;

/// Per-draw parameters. Mirrors `DrawParams` in shaders/skin.wgsl (same order and padding).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct DrawParams {
    pub base_color: [f32; 4],
    pub palette_base: u32,
    pub vertex_count: u32,
    pub morph_target_count: u32,
    pub morph_weight_base: u32,
    pub has_normals: u32,
    pub has_tangents: u32,
    pub _pad: [u32; 2],
}

/// GPU buffers of one draw.
pub struct GpuDraw {
    pub vertex_count: u32,
    pub index_count: u32,
    pub topology: Topology,
    /// 1 (4 influences) or 2 (8 influences): selects the pipeline variant.
    pub influence_sets: u32,
    pub positions: wgpu::Buffer,
    pub normals: wgpu::Buffer,
    pub tangents: wgpu::Buffer,
    /// `influence_sets` vec4<u32> per vertex; also bound as capture input.
    pub joints: wgpu::Buffer,
    pub weights: wgpu::Buffer,
    pub indices: wgpu::Buffer,
    /// 3 vec4 per vertex (position, normal, tangent) for the capture shader.
    pub capture_input: wgpu::Buffer,
    pub params: wgpu::Buffer,
    pub morph_deltas: wgpu::Buffer,
    pub bind_group: wgpu::BindGroup,
    pub reduction: Option<ReductionStats>,
}

/// A scene on the GPU.
pub struct GpuScene {
    pub frame_layout: wgpu::BindGroupLayout,
    pub draw_layout: wgpu::BindGroupLayout,
    pub palette: wgpu::Buffer,
    pub morph_weights: wgpu::Buffer,
    pub frame_uniform: wgpu::Buffer,
    pub frame_bind_group: wgpu::BindGroup,
    pub draws: Vec<GpuDraw>,
    /// Per draw: first morph weight in the frame's weight array.
    morph_weight_base: Vec<u32>,
    morph_weight_scratch: Vec<f32>,
}

/// Size of the render frame uniform (see render.rs `FrameUniform`).
pub const FRAME_UNIFORM_SIZE: u64 = 96;

fn storage_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    read_only: bool,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
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

impl GpuScene {
    /// Upload `scene`. `max_influences` reduces skinned draws to the K largest weights
    /// (renormalised), as the CPU path does with the same K.
    pub fn new(
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        max_influences: Option<usize>,
    ) -> Result<GpuScene> {
        let device = &ctx.device;
        let vs_cs = wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::COMPUTE;
        let frame_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("frame"),
            entries: &[
                storage_entry(0, vs_cs, true),
                storage_entry(1, vs_cs, true),
                uniform_entry(2, wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT),
            ],
        });
        let draw_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("draw"),
            entries: &[
                uniform_entry(0, vs_cs | wgpu::ShaderStages::FRAGMENT),
                storage_entry(1, vs_cs, true),
            ],
        });
        let palette_bytes = (frame.layout.len.max(1) * std::mem::size_of::<Mat4>()) as u64;
        let max_binding = ctx.device.limits().max_storage_buffer_binding_size;
        if palette_bytes > max_binding {
            return Err(Error::Gpu(format!(
                "palette of {} matrices ({palette_bytes} bytes) exceeds the adapter's storage binding limit {max_binding}",
                frame.layout.len
            )));
        }
        let palette = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("palette"),
            size: palette_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut morph_weight_base = Vec::with_capacity(scene.draws.len());
        let mut total_weights = 0u32;
        for d in &scene.draws {
            morph_weight_base.push(total_weights);
            total_weights += scene.primitive(d).morph_targets.len() as u32;
        }
        let morph_weights = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("morph weights"),
            size: (total_weights.max(4) as u64) * 4,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let frame_uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("frame uniform"),
            size: FRAME_UNIFORM_SIZE,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let frame_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("frame"),
            layout: &frame_layout,
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
                    resource: frame_uniform.as_entire_binding(),
                },
            ],
        });
        let mut draws = Vec::with_capacity(scene.draws.len());
        for (i, d) in scene.draws.iter().enumerate() {
            let prim = scene.primitive(d);
            let n = prim.vertex_count();
            // Influences: the skin's sets (optionally reduced) or a rigid weight of 1.
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
            // Up to 8 influences per vertex: compact wider sets whose vertices use at most 8
            // (exact: nothing is dropped), refuse the rest with a clear way out.
            let weights = if weights.width > 8 {
                let used = weights.max_influences();
                if used > 8 {
                    return Err(Error::Gpu(format!(
                        "draw {i} ({}) has vertices with {used} influences; the GPU path handles up to 8 (use --max-influences 8)",
                        scene.name
                    )));
                }
                reduce_influences(&weights, 8).0
            } else {
                weights
            };
            let influence_sets = (weights.width / 4) as u32;
            let normals: Vec<Vec3> = prim.normals.clone().unwrap_or_else(|| vec![Vec3::ZERO; n]);
            let tangents: Vec<Vec4> = prim.tangents.clone().unwrap_or_else(|| vec![Vec4::ZERO; n]);
            let mut capture_in: Vec<Vec4> = Vec::with_capacity(3 * n);
            for v in 0..n {
                capture_in.push(prim.positions[v].extend(1.0));
                capture_in.push(normals[v].extend(0.0));
                capture_in.push(tangents[v]);
            }
            let mut deltas: Vec<Vec4> = Vec::with_capacity(3 * n * prim.morph_targets.len());
            for t in &prim.morph_targets {
                for v in 0..n {
                    deltas.push(
                        t.positions
                            .as_ref()
                            .map_or(Vec4::ZERO, |x| x[v].extend(0.0)),
                    );
                    deltas.push(t.normals.as_ref().map_or(Vec4::ZERO, |x| x[v].extend(0.0)));
                    deltas.push(t.tangents.as_ref().map_or(Vec4::ZERO, |x| x[v].extend(0.0)));
                }
            }
            let vtx = wgpu::BufferUsages::VERTEX;
            let sto = wgpu::BufferUsages::STORAGE;
            let positions = buffer_init(
                device,
                "positions",
                bytemuck::cast_slice(&prim.positions),
                vtx,
            );
            let normals_buf = buffer_init(device, "normals", bytemuck::cast_slice(&normals), vtx);
            let tangents_buf =
                buffer_init(device, "tangents", bytemuck::cast_slice(&tangents), vtx);
            let joints = buffer_init(
                device,
                "joints",
                bytemuck::cast_slice(&weights.joints),
                vtx | sto,
            );
            let weights_buf = buffer_init(
                device,
                "weights",
                bytemuck::cast_slice(&weights.weights),
                vtx | sto,
            );
            let indices = buffer_init(
                device,
                "indices",
                bytemuck::cast_slice(&prim.indices),
                wgpu::BufferUsages::INDEX,
            );
            let capture_input = buffer_init(
                device,
                "capture input",
                bytemuck::cast_slice(&capture_in),
                sto,
            );
            let morph_deltas =
                buffer_init(device, "morph deltas", bytemuck::cast_slice(&deltas), sto);
            let params_data = DrawParams {
                base_color: prim.base_color,
                palette_base: frame.layout.draw_base[i],
                vertex_count: n as u32,
                morph_target_count: prim.morph_targets.len() as u32,
                morph_weight_base: morph_weight_base[i],
                has_normals: prim.normals.is_some() as u32,
                has_tangents: prim.tangents.is_some() as u32,
                _pad: [0; 2],
            };
            let params = buffer_init(
                device,
                "draw params",
                bytemuck::bytes_of(&params_data),
                wgpu::BufferUsages::UNIFORM,
            );
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("draw"),
                layout: &draw_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: params.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: morph_deltas.as_entire_binding(),
                    },
                ],
            });
            draws.push(GpuDraw {
                vertex_count: n as u32,
                index_count: prim.indices.len() as u32,
                topology: prim.topology,
                influence_sets,
                positions,
                normals: normals_buf,
                tangents: tangents_buf,
                joints,
                weights: weights_buf,
                indices,
                capture_input,
                params,
                morph_deltas,
                bind_group,
                reduction,
            });
        }
        ctx.check()?;
        Ok(GpuScene {
            frame_layout,
            draw_layout,
            palette,
            morph_weights,
            frame_uniform,
            frame_bind_group,
            draws,
            morph_weight_base,
            morph_weight_scratch: vec![0.0; total_weights as usize],
        })
    }

    /// Write this frame's palette and morph weights (one upload each).
    pub fn update(&mut self, ctx: &GpuContext, scene: &Scene, frame: &FrameState) {
        if !frame.palette.is_empty() {
            ctx.queue
                .write_buffer(&self.palette, 0, bytemuck::cast_slice(&frame.palette));
        }
        if !self.morph_weight_scratch.is_empty() {
            for (i, d) in scene.draws.iter().enumerate() {
                let base = self.morph_weight_base[i] as usize;
                let count = scene.primitive(d).morph_targets.len();
                let w = &frame.pose.morph_weights[d.node];
                for k in 0..count {
                    self.morph_weight_scratch[base + k] = w.get(k).copied().unwrap_or(0.0);
                }
            }
            ctx.queue.write_buffer(
                &self.morph_weights,
                0,
                bytemuck::cast_slice(&self.morph_weight_scratch),
            );
        }
    }
}
