//! A scene on the GPU as the pipelines draw it: its buffers ([`SceneBuffers`], uploaded once
//! in scene_buffers.rs and written each frame in scene_frame.rs) and, beside them, the
//! compute-skinning pass once enabled. The pass is built from the buffers and dispatched over
//! them, so it is owned here, next to them, not inside them.

use std::ops::{Deref, DerefMut};

use super::compute_skin::{ComputeSkinning, DispatchOrder};
use super::context::GpuContext;
use super::palette_source::PaletteSource;
use super::scene_buffers::{MAX_INSTANCES, SceneBuffers};
use crate::error::{Error, Result};
use crate::frame::FrameState;
use crate::scene::Scene;

/// A scene on the GPU: its buffers (reached through `Deref`: draws, palette source, per-frame
/// writes) and its compute-skinning pass, once enabled.
pub struct GpuScene {
    buffers: SceneBuffers,
    compute: Option<ComputeSkinning>,
}

impl From<SceneBuffers> for GpuScene {
    fn from(buffers: SceneBuffers) -> GpuScene {
        GpuScene {
            buffers,
            compute: None,
        }
    }
}

impl Deref for GpuScene {
    type Target = SceneBuffers;

    fn deref(&self) -> &SceneBuffers {
        &self.buffers
    }
}

impl DerefMut for GpuScene {
    fn deref_mut(&mut self) -> &mut SceneBuffers {
        &mut self.buffers
    }
}

impl GpuScene {
    /// Upload `scene` for the storage palette path. `max_influences` reduces skinned draws
    /// to the K largest weights (renormalised), as the CPU path does with the same K.
    pub fn new(
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        max_influences: Option<usize>,
    ) -> Result<GpuScene> {
        Self::with_palette(ctx, scene, frame, max_influences, PaletteSource::Storage)
    }

    /// Upload `scene` for `source`. The uniform path needs every draw to use at most K joints
    /// (a [`crate::partition::PartitionedScene`]'s scene does) and at most
    /// [`super::UNIFORM_MORPH_SLOTS`] morph targets.
    pub fn with_palette(
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        max_influences: Option<usize>,
        source: PaletteSource,
    ) -> Result<GpuScene> {
        SceneBuffers::upload(ctx, scene, frame, max_influences, source, 1).map(GpuScene::from)
    }

    /// Upload `scene` for a crowd of `instances` characters on the storage palette path: one
    /// palette buffer holding a block per instance ([`SceneBuffers::write_instance_palette`]),
    /// drawn with instanced draws ([`crate::gpu::DrawOptions::instances`]) or skinned by the
    /// compute pass into one copy per instance. Morph weights are shared. At most
    /// [`MAX_INSTANCES`]; the palettes must fit one storage binding (checked).
    pub fn crowd(
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        max_influences: Option<usize>,
        instances: u32,
    ) -> Result<GpuScene> {
        Self::crowd_with_palette(
            ctx,
            scene,
            frame,
            max_influences,
            instances,
            PaletteSource::Storage,
        )
    }

    /// [`GpuScene::crowd`] on any palette source. On the uniform path each draw holds one
    /// `BonePalette` block per instance and each instance is its own draw call (a uniform
    /// array cannot be indexed by instance), as engines without storage buffers draw crowds.
    pub fn crowd_with_palette(
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        max_influences: Option<usize>,
        instances: u32,
        source: PaletteSource,
    ) -> Result<GpuScene> {
        if !(1..=MAX_INSTANCES).contains(&instances) {
            return Err(Error::Gpu(format!(
                "a crowd of {instances} instances: 1..={MAX_INSTANCES}"
            )));
        }
        SceneBuffers::upload(ctx, scene, frame, max_influences, source, instances)
            .map(GpuScene::from)
    }

    /// Write this frame's palette and morph weights ([`SceneBuffers::write_frame`]) and, with
    /// compute skinning on, skin every instance into its buffer (one submission). A crowd
    /// writes its other instances' palettes ([`SceneBuffers::write_instance_palette`]) first.
    pub fn update(&mut self, ctx: &GpuContext, scene: &Scene, frame: &FrameState) {
        self.write_frame(ctx, scene, frame);
        self.submit_compute_skinning(ctx);
    }

    /// Skin with the compute pass from now on ([`crate::gpu::Skinning::ComputePass`] draws its
    /// buffer): builds the pipelines and the skinned vertex buffer once. Storage palette path
    /// with compute shaders only (an error says so otherwise).
    pub fn enable_compute_skinning(&mut self, ctx: &GpuContext) -> Result<()> {
        self.enable_compute_skinning_with(ctx, None)
    }

    /// [`GpuScene::enable_compute_skinning`] with output buffers of at most
    /// `max_buffer_bytes` each (`None`: the adapter's storage binding size).
    pub fn enable_compute_skinning_with(
        &mut self,
        ctx: &GpuContext,
        max_buffer_bytes: Option<u64>,
    ) -> Result<()> {
        if self.compute.is_none() {
            self.compute = Some(match max_buffer_bytes {
                Some(max) => ComputeSkinning::with_max_buffer(ctx, &self.buffers, max)?,
                None => ComputeSkinning::new(ctx, &self.buffers)?,
            });
        }
        Ok(())
    }

    /// Dispatch the compute-skinning pass in `order` from now on (nothing when it is off; the
    /// same bits in either order).
    pub fn set_dispatch_order(&mut self, order: DispatchOrder) {
        if let Some(c) = &mut self.compute {
            c.order = order;
        }
    }

    /// The compute-skinning pass, once [`GpuScene::enable_compute_skinning`] has run.
    pub fn compute_skinning(&self) -> Option<&ComputeSkinning> {
        self.compute.as_ref()
    }

    /// Record the compute-skinning pass (nothing when it is off), with optional timestamps.
    pub fn record_compute_skinning(
        &self,
        enc: &mut wgpu::CommandEncoder,
        timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) {
        if let Some(c) = &self.compute {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("compute skinning"),
                timestamp_writes: timestamps,
            });
            c.record(&mut pass, &self.buffers);
        }
    }

    /// Skin every instance with the palettes written so far (one submission; nothing when
    /// compute skinning is off).
    pub fn submit_compute_skinning(&self, ctx: &GpuContext) {
        if self.compute.is_none() {
            return;
        }
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("compute skinning"),
            });
        self.record_compute_skinning(&mut enc, None);
        ctx.queue.submit([enc.finish()]);
    }
}
