//! A field of N characters to look at: the crowd the viewer, the web page and `render` show
//! (their crowd options). Each character cycles through the model's
//! clips from its own phase ([`CrowdSetup::cycling`]) on a square grid; every frame the crowd
//! stage poses them all on every core, each is bounded from its palette
//! ([`crate::skin::skinned_bounds`]) and tested against the view's frustum, and only the
//! characters in view are uploaded (one write), skinned and drawn.

use glam::Vec3;
use web_time::Instant;

use super::crowd::{crowd_layout, grid_offset};
use crate::camera::Frustum;
use crate::character::Character;
use crate::crowd::{Crowd, CrowdSetup};
use crate::error::Result;
use crate::gpu::{GpuContext, GpuScene, PaletteSource, Skinning};
use crate::skin::PaletteLayout;
use crate::skin::skinned_bounds::{Aabb, SkinnedBounds};

/// A crowd frame's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FieldStats {
    /// Characters in the field.
    pub characters: usize,
    /// Characters in view (drawn and skinned).
    pub visible: usize,
    /// Threads of the crowd stage.
    pub threads: usize,
    /// The crowd stage (every character's palette), ms.
    pub stage_ms: f64,
    /// Bounding every character and testing it against the frustum, ms (0 without culling).
    pub cull_ms: f64,
    /// The palette upload (moving each visible palette into the queue's staging memory), ms.
    pub upload_ms: f64,
    /// Bytes of palettes uploaded.
    pub upload_bytes: u64,
    /// Palette writes this frame (one).
    pub palette_writes: u32,
}

impl FieldStats {
    /// Upload bytes per drawn character (0 when none is drawn).
    pub fn bytes_per_character(&self) -> f64 {
        match self.visible {
            0 => 0.0,
            v => self.upload_bytes as f64 / v as f64,
        }
    }
}

/// N copies of a character on a grid, on the GPU (see the module documentation).
pub struct CrowdField {
    crowd: Crowd,
    bounds: SkinnedBounds,
    /// Per character: its box in its own space (None: cannot be bounded, always drawn).
    boxes: Vec<Option<Aabb>>,
    visible: Vec<u32>,
    offsets: Vec<Vec3>,
    /// The character's morph weights at set-up (the crowd shares them).
    morph_weights: Vec<Vec<f32>>,
    field: Aabb,
    period_s: f32,
    gpu: GpuScene,
    stats: FieldStats,
}

impl CrowdField {
    /// A field of `n` copies of `character`'s model (its skinning options and influence
    /// limit), uploaded for `source` and, for [`Skinning::ComputePass`], its compute pass.
    /// `character` is posed once at rest to size the grid.
    pub fn new(
        ctx: &GpuContext,
        character: &mut Character,
        n: u32,
        source: PaletteSource,
        skinning: Skinning,
    ) -> Result<CrowdField> {
        // The upload first: it refuses a crowd size out of range before the grid is sized.
        let mut gpu = GpuScene::crowd_with_palette(
            ctx,
            &character.scene,
            &character.frame,
            character.max_influences(),
            n,
            source,
        )?;
        for d in 0..character.scene.draws.len() {
            gpu.set_skin_options(ctx, d, character.skin_options(d));
        }
        if skinning == Skinning::ComputePass {
            gpu.enable_compute_skinning(ctx)?;
        }
        let (layout, field) = crowd_layout(character, n)?;
        let scene = &character.scene;
        gpu.write_morph_weights(ctx, scene, &character.frame);
        let crowd = Crowd::new(scene.clone(), CrowdSetup::cycling(scene, n as usize))?;
        let bounds = SkinnedBounds::new(scene, &PaletteLayout::new(scene), |d| {
            character.skin_options(d).mode
        });
        Ok(CrowdField {
            crowd,
            bounds,
            boxes: Vec::with_capacity(n as usize),
            visible: Vec::with_capacity(n as usize),
            offsets: (0..n).map(|i| grid_offset(i, n, layout.step_m)).collect(),
            morph_weights: character.frame.pose.morph_weights.clone(),
            field,
            period_s: layout.period_s,
            gpu,
            stats: FieldStats::default(),
        })
    }

    /// Pose every character at crowd time `time_s`, keep those whose bounds meet `frustum`
    /// (None: all) and upload their palettes in one write. With compute skinning, the pass
    /// that skins them is the caller's to record or submit (`gpu().record_compute_skinning`).
    pub fn update(
        &mut self,
        ctx: &GpuContext,
        time_s: f32,
        frustum: Option<&Frustum>,
    ) -> Result<FieldStats> {
        let t0 = Instant::now();
        let crowd_stats = self.crowd.update(time_s)?;
        let t1 = Instant::now();
        let culled = match frustum {
            Some(f) => {
                self.crowd
                    .bound(&self.bounds, &self.morph_weights, &mut self.boxes)?;
                visible(&self.boxes, &self.offsets, f, &mut self.visible);
                Some(&self.visible[..])
            }
            None => None,
        };
        let t2 = Instant::now();
        self.gpu.take_writes();
        self.gpu
            .write_crowd_visible(ctx, self.crowd.palettes(), &self.offsets, culled)?;
        let writes = self.gpu.take_writes();
        let t3 = Instant::now();
        self.stats = FieldStats {
            characters: self.crowd.len(),
            visible: self.gpu.drawn_instances() as usize,
            threads: crowd_stats.threads,
            stage_ms: (t1 - t0).as_secs_f64() * 1e3,
            cull_ms: match frustum {
                Some(_) => (t2 - t1).as_secs_f64() * 1e3,
                None => 0.0,
            },
            upload_ms: (t3 - t2).as_secs_f64() * 1e3,
            upload_bytes: writes.palette_bytes,
            palette_writes: writes.palette,
        };
        Ok(self.stats)
    }

    /// The GPU scene the field draws (its drawn instances are the visible characters).
    pub fn gpu(&self) -> &GpuScene {
        &self.gpu
    }

    /// Bounds of the whole field at the rest pose (what a view frames).
    pub fn field_bounds(&self) -> Aabb {
        self.field
    }

    /// The longest clip: characters' phases are spread over it.
    pub fn period_s(&self) -> f32 {
        self.period_s
    }

    /// Characters in the field.
    pub fn len(&self) -> usize {
        self.crowd.len()
    }

    /// Never true: a field holds at least one character.
    pub fn is_empty(&self) -> bool {
        self.crowd.is_empty()
    }

    /// The last frame's figures.
    pub fn stats(&self) -> FieldStats {
        self.stats
    }

    /// Character `c`'s box where it stands in the last culled frame (None: not bounded, or
    /// past the field).
    pub fn character_bounds(&self, c: usize) -> Option<Aabb> {
        let (lo, hi) = self.boxes.get(c).copied().flatten()?;
        let o = self.offsets.get(c)?;
        Some((lo + *o, hi + *o))
    }
}

/// The characters whose box (`boxes[c]` in their own space, moved by `offsets[c]`) meets
/// `frustum`, in order, into `out`; a character without a box is kept.
pub fn visible(boxes: &[Option<Aabb>], offsets: &[Vec3], frustum: &Frustum, out: &mut Vec<u32>) {
    out.clear();
    for (c, (b, o)) in boxes.iter().zip(offsets).enumerate() {
        let seen = b.is_none_or(|(lo, hi)| frustum.intersects(lo + *o, hi + *o));
        if seen {
            out.push(c as u32);
        }
    }
}
