//! A scene's per-frame writes: the palette (a block per crowd instance, with its DQS form
//! where a draw skins with DQS), the morph weights, the skinning options, and the scene-wide
//! per-vertex stores (the CPU-skinned vertices and the |GPU − CPU| errors), each one upload from
//! scratch space kept between frames. The buffers they write are made once in scene_buffers.rs.

use glam::{Mat4, Vec3};

use super::context::GpuContext;
use super::palette_source::PaletteSource;
use super::scene_buffers::{ErrorStore, SceneBuffers, write_float_texture};
use super::shader_types::{BonePaletteLayout, CPU_VERTEX_STRIDE};
use crate::error::{Error, Result};
use crate::frame::FrameState;
use crate::scene::Scene;
use crate::skin::{SkinMode, SkinOptions, SkinnedVertices, dqs};

impl SceneBuffers {
    /// Write this frame's palette (instance 0's on a crowd) and morph weights: on the storage
    /// path one upload each; on the uniform path each draw's matrices and morph weights into
    /// its block.
    pub fn write_frame(&mut self, ctx: &GpuContext, scene: &Scene, frame: &FrameState) {
        for (i, d) in scene.draws.iter().enumerate() {
            let base = self.morph_weight_base[i] as usize;
            let count = scene.primitive(d).morph_targets.len();
            let w = &frame.pose.morph_weights[d.node];
            for k in 0..count {
                self.morph_weight_scratch[base + k] = w.get(k).copied().unwrap_or(0.0);
            }
        }
        match self.source {
            PaletteSource::Storage => {
                if frame.palette.len() <= self.palette_entries {
                    self.write_palette_block(ctx, 0, &frame.palette);
                }
                if let Some(weights) = &self.morph_weights
                    && !self.morph_weight_scratch.is_empty()
                {
                    ctx.queue.write_buffer(
                        weights,
                        0,
                        bytemuck::cast_slice(&self.morph_weight_scratch),
                    );
                }
            }
            PaletteSource::Uniform { bones } => {
                self.write_uniform_blocks(ctx, 0, BonePaletteLayout { bones }, &frame.palette)
            }
        }
    }

    /// Write instance `instance`'s palette (`model_from_bind` per entry, the layout of
    /// [`FrameState::palette`]) into its block of a crowd's palette (and its DQS form when a
    /// draw skins with DQS): on the storage path its block of the palette buffer, on the
    /// uniform path its block of each draw's `BonePalette` (with the morph weights the last
    /// [`SceneBuffers::write_frame`] took). An instance out of range or a palette of another
    /// length is an error and nothing is written.
    pub fn write_instance_palette(
        &mut self,
        ctx: &GpuContext,
        instance: u32,
        palette: &[Mat4],
    ) -> Result<()> {
        if instance >= self.instances {
            return Err(Error::Gpu(format!(
                "palette of instance {instance}: this upload holds {} instance(s) on the {}",
                self.instances,
                self.source.describe()
            )));
        }
        if palette.len() != self.palette_entries {
            return Err(Error::Gpu(format!(
                "palette of instance {instance}: {} matrices, the scene's palette has {}",
                palette.len(),
                self.palette_entries
            )));
        }
        match self.source {
            PaletteSource::Storage => self.write_palette_block(ctx, instance, palette),
            PaletteSource::Uniform { bones } => {
                self.write_uniform_blocks(ctx, instance, BonePaletteLayout { bones }, palette)
            }
        }
        Ok(())
    }

    /// Uniform path: each draw's matrices (DQS-packed where the draw skins with DQS) and
    /// morph weights into instance `instance`'s block.
    fn write_uniform_blocks(
        &mut self,
        ctx: &GpuContext,
        instance: u32,
        block: BonePaletteLayout,
        palette: &[Mat4],
    ) {
        let dqs = SkinMode::Dqs.shader_code();
        for (i, gd) in self.draws.iter().enumerate() {
            let Some(buffer) = &gd.bones else { continue };
            let offset = instance as u64 * gd.bones_stride;
            let base = gd.frame_palette_base as usize;
            if let Some(m) = palette.get(base..base + gd.palette_len as usize) {
                let m = if gd.params_data.skin_mode == dqs {
                    dqs::pack_palette(m, &mut self.dq_scratch);
                    &self.dq_scratch[..]
                } else {
                    m
                };
                ctx.queue.write_buffer(
                    buffer,
                    offset + BonePaletteLayout::MATRICES,
                    bytemuck::cast_slice(m),
                );
            }
            let wb = self.morph_weight_base[i] as usize;
            let end = self
                .morph_weight_base
                .get(i + 1)
                .map_or(self.morph_weight_scratch.len(), |&e| e as usize);
            if let Some(w) = self.morph_weight_scratch.get(wb..end)
                && !w.is_empty()
            {
                ctx.queue.write_buffer(
                    buffer,
                    offset + block.morph_offset(),
                    bytemuck::cast_slice(w),
                );
            }
        }
    }

    /// Matrices, then their DQS form when a draw needs it, into instance `instance`'s block.
    fn write_palette_block(&mut self, ctx: &GpuContext, instance: u32, palette: &[Mat4]) {
        let Some(buffer) = &self.palette else { return };
        if palette.is_empty() {
            return;
        }
        let matrix = std::mem::size_of::<Mat4>() as u64;
        let block = instance as u64 * 2 * self.palette_entries as u64 * matrix;
        ctx.queue
            .write_buffer(buffer, block, bytemuck::cast_slice(palette));
        if self.any_dqs() {
            dqs::pack_palette(palette, &mut self.dq_scratch);
            ctx.queue.write_buffer(
                buffer,
                block + self.palette_entries as u64 * matrix,
                bytemuck::cast_slice(&self.dq_scratch),
            );
        }
    }

    /// Palette bytes one character's frame writes: on the storage path its matrices, and their
    /// DQS form when a draw skins with DQS; on the uniform path each draw's own matrices (in
    /// the form the draw skins with).
    pub fn palette_upload_bytes(&self) -> u64 {
        let matrix = std::mem::size_of::<Mat4>() as u64;
        match self.source {
            PaletteSource::Storage => {
                let blocks = if self.any_dqs() { 2 } else { 1 };
                blocks * self.palette_entries as u64 * matrix
            }
            // Each draw's own matrices (a joint shared by submeshes is written once for each).
            PaletteSource::Uniform { .. } => self
                .draws
                .iter()
                .filter(|d| d.bones.is_some())
                .map(|d| d.palette_len as u64 * matrix)
                .sum(),
        }
    }

    /// Characters this upload draws (1 unless made by [`super::GpuScene::crowd`]).
    pub fn instances(&self) -> u32 {
        self.instances
    }

    /// Whether any draw is skinned with DQS.
    fn any_dqs(&self) -> bool {
        let dqs = SkinMode::Dqs.shader_code();
        self.draws.iter().any(|d| d.params_data.skin_mode == dqs)
    }

    /// Skin draw `draw` with `options` from the next [`super::GpuScene::update`] on (DQS draws read
    /// the packed half of the storage palette; uniform blocks are packed per draw).
    /// Out-of-range draws are ignored.
    pub fn set_skin_options(&mut self, ctx: &GpuContext, draw: usize, options: SkinOptions) {
        let entries = self.palette_entries as u32;
        let storage = self.source == PaletteSource::Storage;
        let Some(gd) = self.draws.get_mut(draw) else {
            return;
        };
        gd.params_data.set_options(options);
        if storage {
            gd.params_data.palette_base = gd.matrix_base
                + if options.mode == SkinMode::Dqs {
                    entries
                } else {
                    0
                };
        }
        ctx.queue
            .write_buffer(&gd.params, 0, bytemuck::bytes_of(&gd.params_data));
    }

    /// [`SceneBuffers::set_skin_options`] for every draw.
    pub fn set_all_skin_options(&mut self, ctx: &GpuContext, options: SkinOptions) {
        for d in 0..self.draws.len() {
            self.set_skin_options(ctx, d, options);
        }
    }

    /// Upload CPU-skinned vertices (one [`SkinnedVertices`] per draw, in draw order) into the
    /// scene's one CPU vertex buffer, for views that draw the CPU reference: one
    /// `write_buffer` from a scratch vector kept between frames; the buffer is made on the
    /// first call. Outputs that do not match the scene (count or vertex counts) are an error
    /// and nothing is written.
    pub fn upload_skinned(&mut self, ctx: &GpuContext, outputs: &[SkinnedVertices]) -> Result<()> {
        let floats = (self.cpu_vertex_total * CPU_VERTEX_STRIDE / 4) as usize;
        if outputs.len() != self.draws.len() {
            return Err(Error::Gpu(format!(
                "CPU-skinned upload: {} outputs for {} draws",
                outputs.len(),
                self.draws.len()
            )));
        }
        if let Some((i, (o, d))) = outputs
            .iter()
            .zip(&self.draws)
            .enumerate()
            .find(|(_, (o, d))| o.positions.len() != d.vertex_count as usize)
        {
            return Err(Error::Gpu(format!(
                "CPU-skinned upload: draw {i} has {} vertices, the scene {}",
                o.positions.len(),
                d.vertex_count
            )));
        }
        if floats == 0 {
            return Ok(());
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
        for (o, d) in outputs.iter().zip(&self.draws) {
            let n = d.vertex_count as usize;
            let base = d.cpu_first_vertex as usize * 6;
            let dst = &mut self.cpu_scratch[base..base + 6 * n];
            for (v, chunk) in dst.chunks_exact_mut(6).enumerate() {
                chunk[..3].copy_from_slice(&o.positions[v].to_array());
                let nrm = o.normals.as_ref().and_then(|x| x.get(v)).copied();
                chunk[3..].copy_from_slice(&nrm.unwrap_or(Vec3::ZERO).to_array());
            }
        }
        ctx.queue
            .write_buffer(buffer, 0, bytemuck::cast_slice(&self.cpu_scratch));
        Ok(())
    }

    /// Write |GPU − CPU| per vertex (model units) for the error heatmap: one value per vertex
    /// of the scene, draws in order (what [`crate::skin::vertex_distances`] computes). A slice of another
    /// length is ignored.
    pub fn upload_vertex_errors(&mut self, ctx: &GpuContext, errors: &[f32]) {
        if errors.is_empty() || errors.len() as u64 != self.cpu_vertex_total {
            return;
        }
        match &self.vertex_errors {
            ErrorStore::Buffer(b) => ctx.queue.write_buffer(b, 0, bytemuck::cast_slice(errors)),
            ErrorStore::Texture { texture, width } => {
                write_float_texture(ctx, texture, *width, 1, errors, &mut self.error_scratch)
            }
        }
    }

    /// Vertices over all draws (the length of the per-vertex buffers).
    pub fn vertex_total(&self) -> usize {
        self.cpu_vertex_total as usize
    }

    /// The CPU-skinned vertex buffer, once [`SceneBuffers::upload_skinned`] has run.
    pub fn cpu_vertices(&self) -> Option<&wgpu::Buffer> {
        self.cpu_vertices.as_ref()
    }
}
