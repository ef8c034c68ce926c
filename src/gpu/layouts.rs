//! Bind group layouts shared by every pipeline and every scene on a device (created once per
//! [`super::GpuContext`]), so a [`super::GpuScene`] can be drawn by any renderer and read back
//! by any capture. One set per palette source ([`super::PaletteSource`]); the storage set exists
//! only where the vertex stage can read storage buffers.
//!
//! | group | storage path | uniform path |
//! |---|---|---|
//! | 0 frame (per scene) | 0: palette `array<vec4<f32>>` (3 rows an entry, 4 in DQS form), 1: morph weights `array<f32>`, 2: node of each palette entry `array<u32>`, 3: per-vertex errors `array<f32>` (2, 3: vertex stage only) | 0: per-vertex errors, R32Float texture |
//! | 1 draw (per draw) | 0: `DrawParams`, 1: morph deltas `array<vec4<f32>>`, 2: base colour texture, 3: its sampler | 0: `DrawParams`, 1: morph deltas, Rgba32Float texture, 2, 3: as storage, 4: `BonePalette` uniform (K matrices, their nodes, morph weights), at a dynamic offset (the instance's run of blocks) |
//! | 2 view (render, draw capture) | 0: `ViewUniform` | same |
//! | 2 capture io (capture shader) | its own layout, see `capture.rs` | — |

use super::palette_source::PaletteSource;
use crate::error::{Error, Result};

/// Groups 0 and 1 of one palette source.
#[derive(Debug)]
pub struct PaletteLayouts {
    /// Group 0: one scene's frame data.
    pub frame: wgpu::BindGroupLayout,
    /// Group 1: one draw's parameters, morph deltas, texture (and, uniform path, palette).
    pub draw: wgpu::BindGroupLayout,
}

/// The layouts of groups 0–2 (see the module documentation).
#[derive(Debug)]
pub struct Layouts {
    /// The storage-buffer path's groups 0 and 1 (`None` where the vertex stage cannot read
    /// storage buffers).
    pub storage: Option<PaletteLayouts>,
    /// The uniform path's groups 0 and 1.
    pub uniform: PaletteLayouts,
    /// Group 2 of the render pipelines: the camera.
    pub view: wgpu::BindGroupLayout,
}

/// A read-only or read-write storage buffer entry.
pub fn storage_entry(
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

/// A uniform buffer entry.
pub fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
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

/// A uniform buffer entry bound at a dynamic offset (`set_bind_group`'s offsets).
fn dynamic_uniform_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A 2D texture entry; `filterable` false for float formats read with `textureLoad`.
fn texture_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    filterable: bool,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        count: None,
    }
}

/// The base colour texture and its sampler (fragment stage), bindings 2 and 3 of group 1.
fn material_entries() -> [wgpu::BindGroupLayoutEntry; 2] {
    use wgpu::ShaderStages as S;
    [
        texture_entry(2, S::FRAGMENT, true),
        wgpu::BindGroupLayoutEntry {
            binding: 3,
            visibility: S::FRAGMENT,
            ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
            count: None,
        },
    ]
}

/// Storage buffers the storage path's vertex stage binds (group 0: four, group 1: one).
const STORAGE_BUFFERS_IN_VERTEX_STAGE: u32 = 5;

impl Layouts {
    /// Create the layouts on `device`; the storage set only when `vertex_storage` (the
    /// adapter's `VERTEX_STORAGE` downlevel flag) and the device's limits allow it.
    pub fn new(device: &wgpu::Device, vertex_storage: bool) -> Layouts {
        use wgpu::ShaderStages as S;
        let storage = (vertex_storage
            && device.limits().max_storage_buffers_per_shader_stage
                >= STORAGE_BUFFERS_IN_VERTEX_STAGE)
            .then(|| {
                let vs_cs = S::VERTEX | S::COMPUTE;
                let [texture, sampler] = material_entries();
                PaletteLayouts {
                    frame: device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                        label: Some("frame (storage palette)"),
                        entries: &[
                            storage_entry(0, vs_cs, true),
                            storage_entry(1, vs_cs, true),
                            storage_entry(2, S::VERTEX, true),
                            storage_entry(3, S::VERTEX, true),
                        ],
                    }),
                    draw: device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                        label: Some("draw (storage palette)"),
                        entries: &[
                            uniform_entry(0, vs_cs | S::FRAGMENT),
                            storage_entry(1, vs_cs, true),
                            texture,
                            sampler,
                        ],
                    }),
                }
            });
        let [texture, sampler] = material_entries();
        let uniform = PaletteLayouts {
            frame: device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("frame (uniform palette)"),
                entries: &[texture_entry(0, S::VERTEX, false)],
            }),
            draw: device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("draw (uniform palette)"),
                entries: &[
                    uniform_entry(0, S::VERTEX | S::FRAGMENT),
                    texture_entry(1, S::VERTEX, false),
                    texture,
                    sampler,
                    // One buffer holds every draw's block for every instance: a dynamic
                    // offset picks the instance's.
                    dynamic_uniform_entry(4, S::VERTEX),
                ],
            }),
        };
        let view = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("view"),
            entries: &[uniform_entry(0, S::VERTEX | S::FRAGMENT)],
        });
        Layouts {
            storage,
            uniform,
            view,
        }
    }

    /// Groups 0 and 1 of `source`; an error where the storage path is unavailable.
    pub fn of(&self, source: PaletteSource) -> Result<&PaletteLayouts> {
        match source {
            PaletteSource::Storage => self.storage.as_ref().ok_or_else(|| {
                Error::Gpu(
                    "this adapter cannot read storage buffers in the vertex stage; use the \
                     uniform palette path"
                        .into(),
                )
            }),
            PaletteSource::Uniform { .. } => Ok(&self.uniform),
        }
    }
}
