//! A scene's per-frame writes: the palette (a block per crowd instance, with its DQS form
//! where a draw skins with DQS: a crowd's in one upload), the morph weights, the skinning
//! options, and the scene-wide per-vertex stores (the CPU-skinned vertices and the |GPU − CPU|
//! errors), each one upload from scratch space kept between frames, each counted
//! ([`FrameWrites`]). The buffers they write are made once in scene_buffers.rs.

use glam::{Mat4, Vec3};

use super::context::GpuContext;
use super::palette_source::PaletteSource;
use super::scene_buffers::{ErrorStore, FrameWrites, SceneBuffers, write_float_texture};
use super::shader_types::{
    BonePaletteLayout, CPU_VERTEX_STRIDE, DrawParams, PALETTE_DQS_ROWS, PALETTE_MATRIX_ROWS,
};
use crate::error::{Error, Result};
use crate::frame::FrameState;
use crate::scene::Scene;
use crate::skin::palette::rows_of_palette;
use crate::skin::{MatrixRows, SkinMode, SkinOptions, SkinnedVertices, dqs};

impl SceneBuffers {
    /// Write this frame's palette (instance 0's on a crowd) and morph weights: on the storage
    /// path one upload each; on the uniform path each draw's matrices and morph weights into
    /// its block.
    pub fn write_frame(&mut self, ctx: &GpuContext, scene: &Scene, frame: &FrameState) {
        self.write_morph_weights(ctx, scene, frame);
        match self.source {
            PaletteSource::Storage => {
                if frame.palette.len() <= self.palette_entries {
                    self.write_palette_block(ctx, 0, &frame.palette);
                }
            }
            PaletteSource::Uniform { bones } => {
                self.write_uniform_blocks(ctx, 0, BonePaletteLayout { bones }, &frame.palette)
            }
        }
    }

    /// This frame's morph weights (shared by a crowd's instances) from `frame`'s pose: one
    /// upload on the storage path; on the uniform path they go into each draw's block with its
    /// palette (the next [`SceneBuffers::write_frame`] or [`SceneBuffers::write_crowd`]).
    pub fn write_morph_weights(&mut self, ctx: &GpuContext, scene: &Scene, frame: &FrameState) {
        for (i, d) in scene.draws.iter().enumerate() {
            let base = self.morph_weight_base[i] as usize;
            let count = scene.primitive(d).morph_targets.len();
            let w = &frame.pose.morph_weights[d.node];
            for k in 0..count {
                self.morph_weight_scratch[base + k] = w.get(k).copied().unwrap_or(0.0);
            }
        }
        if self.source == PaletteSource::Storage
            && let Some(weights) = &self.morph_weights
            && !self.morph_weight_scratch.is_empty()
        {
            ctx.queue
                .write_buffer(weights, 0, bytemuck::cast_slice(&self.morph_weight_scratch));
            self.writes.other += 1;
        }
    }

    /// Every instance's palette in one upload (storage path): `palettes` holds the crowd's
    /// palettes back to back ([`crate::crowd::Crowd::palettes`]: `palette_entries` each, one
    /// per instance), each moved by its instance's `offsets` entry (where the character
    /// stands), in one queue write straight into the queue's staging memory: on the storage
    /// path the matrices and, when a draw skins with DQS, their packed forms after them; on
    /// the uniform path every instance's run of `BonePalette` blocks (each draw's matrices in
    /// the form it skins with, its nodes and the morph weights of the last
    /// [`SceneBuffers::write_morph_weights`]), bound by dynamic offsets. Palettes or offsets
    /// that do not match the upload are an error and nothing is written.
    pub fn write_crowd(
        &mut self,
        ctx: &GpuContext,
        palettes: &[Mat4],
        offsets: &[Vec3],
    ) -> Result<()> {
        self.write_crowd_visible(ctx, palettes, offsets, None)
    }

    /// [`SceneBuffers::write_crowd`] for the characters `visible` lists (indices into the
    /// crowd, each at most once; None: all), packed to the front: instance `k` of the draws
    /// is character `visible[k]`, and [`SceneBuffers::drawn_instances`] becomes their count,
    /// what the draws and the compute pass skin. Culled characters cost no upload.
    pub fn write_crowd_visible(
        &mut self,
        ctx: &GpuContext,
        palettes: &[Mat4],
        offsets: &[Vec3],
        visible: Option<&[u32]>,
    ) -> Result<()> {
        let (n, e) = (self.instances as usize, self.palette_entries);
        if palettes.len() != n * e || offsets.len() != n {
            return Err(Error::Gpu(format!(
                "crowd palettes: {} matrices and {} offsets for {} of {e} entries",
                palettes.len(),
                offsets.len(),
                crate::info::count(n, "instance", "instances")
            )));
        }
        if let Some(v) = visible
            && (v.len() > n || v.iter().any(|&c| c as usize >= n))
        {
            return Err(Error::Gpu(format!(
                "crowd visibility: {} characters listed for {n}, or one out of range",
                v.len()
            )));
        }
        let drawn = visible.map_or(n, |v| v.len());
        self.drawn = drawn as u32;
        let chosen = Chosen { visible, drawn };
        if let PaletteSource::Uniform { bones } = self.source {
            return self.write_crowd_blocks(
                ctx,
                palettes,
                offsets,
                chosen,
                BonePaletteLayout { bones },
            );
        }
        let Some(buffer) = &self.palette else {
            return Ok(());
        };
        let (rows, dq) = (size_of::<MatrixRows>(), size_of::<Mat4>());
        let dqs = self.any_dqs();
        // The rows of the drawn instances, then (DQS) the packed forms at their place after
        // every instance's rows.
        let bytes = if dqs {
            n * e * rows + drawn * e * dq
        } else {
            drawn * e * rows
        };
        let Some(size) = wgpu::BufferSize::new(bytes as u64) else {
            return Ok(());
        };
        let Some(mut view) = ctx.queue.write_buffer_with(buffer, 0, size) else {
            return Err(Error::Gpu(
                "crowd palettes: the queue gave no staging memory".into(),
            ));
        };
        let (block, dq_block) = (e * rows, e * dq);
        for (i, c) in chosen.iter().enumerate() {
            let (p, o) = (&palettes[c * e..(c + 1) * e], offsets[c]);
            self.moved.clear();
            self.moved.extend(p.iter().map(|m| moved(*m, o)));
            rows_of_palette(&self.moved, &mut self.rows);
            view.slice(i * block..(i + 1) * block)
                .copy_from_slice(bytemuck::cast_slice(&self.rows));
            if dqs {
                dqs::pack_palette(&self.moved, &mut self.dq_scratch);
                let at = n * block + i * dq_block;
                view.slice(at..at + dq_block)
                    .copy_from_slice(bytemuck::cast_slice(&self.dq_scratch));
            }
        }
        drop(view);
        self.writes.palette += 1;
        self.writes.palette_bytes += size.get();
        Ok(())
    }

    /// Uniform path of [`SceneBuffers::write_crowd`]: every instance's run of blocks (each
    /// draw's matrices in the form it skins with, its nodes, the shared morph weights) in one
    /// queue write.
    fn write_crowd_blocks(
        &mut self,
        ctx: &GpuContext,
        palettes: &[Mat4],
        offsets: &[Vec3],
        chosen: Chosen<'_>,
        block: BonePaletteLayout,
    ) -> Result<()> {
        let (Some(buffer), Some(first)) = (&self.bones, self.draws.first()) else {
            return Ok(());
        };
        let (e, run) = (self.palette_entries, first.bones_instance_bytes as usize);
        let Some(size) = wgpu::BufferSize::new((chosen.drawn * run) as u64) else {
            return Ok(());
        };
        let Some(mut view) = ctx.queue.write_buffer_with(buffer, 0, size) else {
            return Err(Error::Gpu(
                "crowd palettes: the queue gave no staging memory".into(),
            ));
        };
        let dqs = SkinMode::Dqs.shader_code();
        self.block_scratch.resize(run, 0);
        for (i, c) in chosen.iter().enumerate() {
            let (p, o) = (&palettes[c * e..(c + 1) * e], offsets[c]);
            self.moved.clear();
            self.moved.extend(p.iter().map(|m| moved(*m, o)));
            self.block_scratch.fill(0);
            for (d, gd) in self.draws.iter().enumerate() {
                let Some(at) = gd.bones_offset.map(|b| b as usize) else {
                    continue;
                };
                let base = gd.frame_palette_base as usize;
                if let Some(m) = self.moved.get(base..base + gd.palette_len as usize) {
                    let m = if gd.params_data.skin_mode == dqs {
                        dqs::pack_palette(m, &mut self.dq_scratch);
                        &self.dq_scratch[..]
                    } else {
                        m
                    };
                    let bytes: &[u8] = bytemuck::cast_slice(m);
                    self.block_scratch[at..at + bytes.len()].copy_from_slice(bytes);
                }
                let nodes: &[u8] = bytemuck::cast_slice(&gd.bone_nodes);
                let n = at + block.nodes_offset() as usize;
                self.block_scratch[n..n + nodes.len()].copy_from_slice(nodes);
                if let Some(w) =
                    draw_morph_weights(&self.morph_weight_base, &self.morph_weight_scratch, d)
                {
                    let w: &[u8] = bytemuck::cast_slice(w);
                    let m = at + block.morph_offset() as usize;
                    self.block_scratch[m..m + w.len()].copy_from_slice(w);
                }
            }
            view.slice(i * run..(i + 1) * run)
                .copy_from_slice(&self.block_scratch);
        }
        drop(view);
        self.writes.palette += 1;
        self.writes.palette_bytes += size.get();
        Ok(())
    }

    /// Instances the draws and the compute pass skin: every instance, or after
    /// [`SceneBuffers::write_crowd_visible`] the characters it was given.
    pub fn drawn_instances(&self) -> u32 {
        self.drawn
    }

    /// The writes made since the last call, and the count starts again.
    pub fn take_writes(&mut self) -> FrameWrites {
        std::mem::take(&mut self.writes)
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
                "palette of instance {instance}: this upload holds {} on the {}",
                crate::info::count(self.instances as usize, "instance", "instances"),
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
        let Some(buffer) = &self.bones else { return };
        for (i, gd) in self.draws.iter().enumerate() {
            let Some(block_offset) = gd.bones_offset else {
                continue;
            };
            let offset = instance as u64 * gd.bones_instance_bytes + block_offset;
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
                self.writes.palette += 1;
                self.writes.palette_bytes += std::mem::size_of_val(m) as u64;
            }
            if let Some(w) =
                draw_morph_weights(&self.morph_weight_base, &self.morph_weight_scratch, i)
                && !w.is_empty()
            {
                ctx.queue.write_buffer(
                    buffer,
                    offset + block.morph_offset(),
                    bytemuck::cast_slice(w),
                );
                self.writes.other += 1;
            }
        }
    }

    /// Matrices (as rows) into instance `instance`'s block, and their DQS form into its DQS
    /// block (after every instance's rows) when a draw needs it.
    fn write_palette_block(&mut self, ctx: &GpuContext, instance: u32, palette: &[Mat4]) {
        let Some(buffer) = &self.palette else { return };
        if palette.is_empty() {
            return;
        }
        let e = self.palette_entries as u64;
        let (rows, dq) = (size_of::<MatrixRows>() as u64, size_of::<Mat4>() as u64);
        rows_of_palette(palette, &mut self.rows);
        let written: &[u8] = bytemuck::cast_slice(&self.rows);
        ctx.queue
            .write_buffer(buffer, u64::from(instance) * e * rows, written);
        self.writes.palette += 1;
        self.writes.palette_bytes += written.len() as u64;
        if self.any_dqs() {
            dqs::pack_palette(palette, &mut self.dq_scratch);
            let at = u64::from(self.instances) * e * rows + u64::from(instance) * e * dq;
            let written: &[u8] = bytemuck::cast_slice(&self.dq_scratch);
            ctx.queue.write_buffer(buffer, at, written);
            self.writes.palette += 1;
            self.writes.palette_bytes += written.len() as u64;
        }
    }

    /// Palette bytes one character's frame writes: on the storage path its matrices as rows,
    /// and their DQS form when a draw skins with DQS; on the uniform path each draw's own
    /// matrices (in the form the draw skins with).
    pub fn palette_upload_bytes(&self) -> u64 {
        let e = self.palette_entries as u64;
        match self.source {
            PaletteSource::Storage => {
                let dq = if self.any_dqs() { size_of::<Mat4>() } else { 0 };
                e * (size_of::<MatrixRows>() + dq) as u64
            }
            // Every draw's whole block (a crowd frame writes an instance's run of blocks).
            PaletteSource::Uniform { .. } => {
                self.draws.first().map_or(0, |d| d.bones_instance_bytes)
            }
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
        // DQS draws read the packed blocks, which follow every instance's rows.
        let e = self.palette_entries as u32;
        let dqs_first_row = self.instances * e * PALETTE_MATRIX_ROWS;
        let storage = self.source == PaletteSource::Storage;
        let Some(gd) = self.draws.get_mut(draw) else {
            return;
        };
        gd.params_data.set_options(options);
        if storage {
            let p = &mut gd.params_data;
            (p.palette_row_base, p.instance_palette_rows) = match options.mode {
                SkinMode::Dqs => (
                    dqs_first_row + gd.matrix_base * PALETTE_DQS_ROWS,
                    e * PALETTE_DQS_ROWS,
                ),
                SkinMode::Lbs | SkinMode::Stitch => (
                    gd.matrix_base * PALETTE_MATRIX_ROWS,
                    e * PALETTE_MATRIX_ROWS,
                ),
            };
        }
        ctx.queue
            .write_buffer(&gd.params, 0, bytemuck::bytes_of(&gd.params_data));
        self.writes.other += 1;
        if let Some(all) = &self.draw_params {
            let at = (draw * size_of::<DrawParams>()) as u64;
            ctx.queue
                .write_buffer(all, at, bytemuck::bytes_of(&gd.params_data));
            self.writes.other += 1;
        }
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
        self.writes.other += 1;
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
        self.writes.other += 1;
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

/// `m` moved by `offset` (a translation applied after it: column 3 gains the offset times the
/// matrix's last row, which is (0, 0, 0, 1) for the affine palettes skinning uses).
fn moved(m: Mat4, offset: Vec3) -> Mat4 {
    if offset == Vec3::ZERO {
        return m;
    }
    Mat4::from_translation(offset) * m
}

/// Draw `draw`'s morph weights in the frame's weight array (`base`: each draw's first weight;
/// the draw's weights run to the next draw's first).
fn draw_morph_weights<'a>(base: &[u32], weights: &'a [f32], draw: usize) -> Option<&'a [f32]> {
    let start = *base.get(draw)? as usize;
    let end = base.get(draw + 1).map_or(weights.len(), |&e| e as usize);
    weights.get(start..end)
}

/// The characters a crowd upload writes, in instance order.
#[derive(Clone, Copy)]
struct Chosen<'a> {
    visible: Option<&'a [u32]>,
    drawn: usize,
}

impl Chosen<'_> {
    /// Character index of each drawn instance.
    fn iter(self) -> impl Iterator<Item = usize> {
        let visible = self.visible;
        (0..self.drawn).map(move |i| visible.map_or(i, |v| v[i] as usize))
    }
}
