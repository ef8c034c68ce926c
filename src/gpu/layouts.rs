//! Bind group layouts shared by every pipeline and every scene on a device (created once per
//! [`super::GpuContext`]), so a [`super::GpuScene`] can be drawn by any renderer and read back
//! by any capture.
//!
//! | group | what | bindings |
//! |---|---|---|
//! | 0 | frame (per scene) | 0: palette `array<mat4x4<f32>>`, 1: morph weights `array<f32>`, 2: node of each palette entry `array<u32>`, 3: per-vertex errors `array<f32>` (vertex stage only) |
//! | 1 | draw (per draw) | 0: `DrawParams` uniform, 1: morph deltas `array<vec4<f32>>`, 2: base colour texture, 3: its sampler (fragment stage) |
//! | 2 | view (render, draw capture) | 0: `ViewUniform` |
//! | 2 | capture io (compute capture) | its own layout, see `capture.rs` |

/// The layouts of groups 0–2 (see the module documentation).
#[derive(Debug)]
pub struct Layouts {
    /// Group 0: palette and morph weights of one scene.
    pub frame: wgpu::BindGroupLayout,
    /// Group 1: one draw's parameters and morph deltas.
    pub draw: wgpu::BindGroupLayout,
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

impl Layouts {
    /// Create the layouts on `device`.
    pub fn new(device: &wgpu::Device) -> Layouts {
        use wgpu::ShaderStages as S;
        let vs_cs = S::VERTEX | S::COMPUTE;
        let frame = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("frame"),
            entries: &[
                storage_entry(0, vs_cs, true),
                storage_entry(1, vs_cs, true),
                storage_entry(2, S::VERTEX, true),
                storage_entry(3, S::VERTEX, true),
            ],
        });
        let draw = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("draw"),
            entries: &[
                uniform_entry(0, vs_cs | S::FRAGMENT),
                storage_entry(1, vs_cs, true),
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: S::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 3,
                    visibility: S::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let view = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("view"),
            entries: &[uniform_entry(0, S::VERTEX | S::FRAGMENT)],
        });
        Layouts { frame, draw, view }
    }
}
