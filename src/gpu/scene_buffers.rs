//! Scene upload: per-draw vertex, influence, morph and parameter buffers (static), the
//! per-frame palette and morph-weight storage buffers, and the upload path for CPU-skinned
//! vertices (one buffer for the whole scene, rewritten per frame when a view shows the CPU
//! reference).

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3, Vec4};
use wgpu::util::DeviceExt;

use super::context::GpuContext;
use crate::error::{Error, Result};
use crate::frame::FrameState;
use crate::scene::{Scene, SkinWeights, Topology};
use crate::skin::weights::reduce_influences;
use crate::skin::{ReductionStats, SkinnedVertices};

pub use crate::skin::weights::GPU_MAX_INFLUENCES;

/// Per-draw parameters. Mirrors `DrawParams` in shaders/skin.wgsl (same order and padding;
/// the size is checked against the WGSL struct by tests/gpu_layout.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct DrawParams {
    /// Base colour factor (linear RGBA).
    pub base_color: [f32; 4],
    /// First palette entry of this draw's skin (or its one rigid matrix).
    pub palette_base: u32,
    /// Vertices of the draw.
    pub vertex_count: u32,
    /// Morph targets of the draw's primitive.
    pub morph_target_count: u32,
    /// First morph weight of this draw in the frame's weight array.
    pub morph_weight_base: u32,
    /// 1 when the primitive has normals.
    pub has_normals: u32,
    /// 1 when the primitive has tangents.
    pub has_tangents: u32,
    /// Padding to 16 bytes.
    pub _pad: [u32; 2],
}

/// Bytes per vertex of the CPU-skinned upload: position and normal, `vec3<f32>` each.
pub const CPU_VERTEX_STRIDE: u64 = 24;

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
    /// `influence_sets` `vec4<u32>` per vertex; also bound as capture input.
    pub joints: wgpu::Buffer,
    pub weights: wgpu::Buffer,
    pub indices: wgpu::Buffer,
    /// 3 vec4 per vertex (position, normal, tangent) for the capture shader.
    pub capture_input: wgpu::Buffer,
    pub params: wgpu::Buffer,
    pub morph_deltas: wgpu::Buffer,
    pub bind_group: wgpu::BindGroup,
    pub reduction: Option<ReductionStats>,
    /// First vertex of this draw in the scene's CPU-skinned upload buffer.
    pub cpu_first_vertex: u64,
}

/// A scene on the GPU.
pub struct GpuScene {
    /// Frame palette (`model_from_bind` per skin joint, one matrix per rigid draw).
    pub palette: wgpu::Buffer,
    /// Morph weights of every draw for the current frame.
    pub morph_weights: wgpu::Buffer,
    /// Group 0 (palette, morph weights).
    pub frame_bind_group: wgpu::BindGroup,
    /// Per draw buffers, in scene draw order.
    pub draws: Vec<GpuDraw>,
    /// The influence limit the skin weights were reduced to (None = all kept).
    pub max_influences: Option<usize>,
    /// Per draw: first morph weight in the frame's weight array.
    morph_weight_base: Vec<u32>,
    morph_weight_scratch: Vec<f32>,
    /// CPU-skinned positions and normals of every draw (created on the first upload).
    cpu_vertices: Option<wgpu::Buffer>,
    cpu_scratch: Vec<f32>,
    cpu_vertex_total: u64,
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
        let palette_bytes = (frame.layout.len.max(1) * std::mem::size_of::<Mat4>()) as u64;
        let max_binding = ctx.device.limits().max_storage_buffer_binding_size;
        if palette_bytes > max_binding {
            return Err(Error::Gpu(format!(
                "palette of {} matrices ({palette_bytes} bytes) exceeds the adapter's storage \
                 binding limit {max_binding}",
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
        let frame_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("frame"),
            layout: &ctx.layouts.frame,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: palette.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: morph_weights.as_entire_binding(),
                },
            ],
        });
        let mut draws = Vec::with_capacity(scene.draws.len());
        let mut cpu_first_vertex = 0u64;
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
            // (exact: nothing is dropped), refuse the rest.
            let weights = if weights.width > GPU_MAX_INFLUENCES {
                let used = weights.max_influences();
                if used > GPU_MAX_INFLUENCES {
                    return Err(Error::TooManyInfluences {
                        model: scene.name.clone(),
                        draw: i,
                        used,
                        max: GPU_MAX_INFLUENCES,
                    });
                }
                reduce_influences(&weights, GPU_MAX_INFLUENCES).0
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
                layout: &ctx.layouts.draw,
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
                cpu_first_vertex,
            });
            cpu_first_vertex += n as u64;
        }
        ctx.check()?;
        Ok(GpuScene {
            palette,
            morph_weights,
            frame_bind_group,
            draws,
            max_influences,
            morph_weight_base,
            morph_weight_scratch: vec![0.0; total_weights as usize],
            cpu_vertices: None,
            cpu_scratch: Vec::new(),
            cpu_vertex_total: cpu_first_vertex,
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

    /// Upload CPU-skinned vertices (one [`SkinnedVertices`] per draw, in draw order) into the
    /// scene's one CPU vertex buffer, for views that draw the CPU reference. The buffer and its
    /// staging copy are made on the first call and reused; a draw whose output has the wrong
    /// length (or none) uploads zeros, so nothing stale is drawn.
    pub fn upload_skinned(&mut self, ctx: &GpuContext, outputs: &[SkinnedVertices]) {
        let floats = (self.cpu_vertex_total * CPU_VERTEX_STRIDE / 4) as usize;
        if floats == 0 {
            return;
        }
        let buffer = self.cpu_vertices.get_or_insert_with(|| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("cpu skinned vertices"),
                size: floats as u64 * 4,
                usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        self.cpu_scratch.resize(floats, 0.0);
        for (i, d) in self.draws.iter().enumerate() {
            let n = d.vertex_count as usize;
            let base = d.cpu_first_vertex as usize * 6;
            let dst = &mut self.cpu_scratch[base..base + 6 * n];
            match outputs.get(i).filter(|o| o.positions.len() == n) {
                Some(o) => {
                    for (v, chunk) in dst.chunks_exact_mut(6).enumerate() {
                        chunk[..3].copy_from_slice(&o.positions[v].to_array());
                        let nrm = o.normals.as_ref().and_then(|x| x.get(v)).copied();
                        chunk[3..].copy_from_slice(&nrm.unwrap_or(Vec3::ZERO).to_array());
                    }
                }
                None => dst.fill(0.0),
            }
        }
        ctx.queue
            .write_buffer(buffer, 0, bytemuck::cast_slice(&self.cpu_scratch));
    }

    /// The CPU-skinned vertex buffer, once [`GpuScene::upload_skinned`] has run.
    pub fn cpu_vertices(&self) -> Option<&wgpu::Buffer> {
        self.cpu_vertices.as_ref()
    }
}
