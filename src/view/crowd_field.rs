//! A field of N characters to look at: the crowd the viewer, the web page and `render` show
//! (their crowd options). Each character cycles through the model's
//! clips from its own phase ([`CrowdSetup::cycling`]) on a square grid; every frame the crowd
//! stage poses them all on every core, each is bounded from its palette
//! ([`crate::skin::skinned_bounds`]) and tested against the view's frustum, and only the
//! characters in view are uploaded (one write), skinned and drawn. With a level of detail
//! ([`CrowdField::set_lod`], the viewer's default) the characters small on screen are animated
//! every second or fourth frame and those out of view every eighth ([`lod_period`]), each on its
//! own beat so every frame animates about the same share; `render` and every check animate
//! them all.

use glam::Vec3;
use web_time::Instant;

use super::crowd::{crowd_layout, grid_offset};
use crate::camera::{Frustum, OrbitCamera};
use crate::character::Character;
use crate::crowd::{Crowd, CrowdSetup};
use crate::error::{Error, Result};
use crate::gpu::{GpuContext, GpuScene, PaletteSource, Skinning};
use crate::math::finite_bounds;
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
    /// Poses the stage evaluated this frame (every character's without a level of detail).
    pub animated: usize,
}

/// Where a field is seen from, for its animation level of detail: the eye and the focal
/// length in pixels (the viewport's height over `2 tan(fov_y / 2)`), so that a thing of size
/// `s` at distance `d` spans about `s × focal_px / d` pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodView {
    /// The eye, world space.
    pub eye_m: Vec3,
    /// Pixels one unit of slope spans vertically.
    pub focal_px: f32,
}

impl LodView {
    /// The view of `camera` on a viewport `height_px` pixels high.
    pub fn of(camera: &OrbitCamera, height_px: u32) -> LodView {
        LodView {
            eye_m: camera.eye(),
            focal_px: height_px as f32 / (2.0 * (camera.fov_y_rad * 0.5).tan()).max(1e-6),
        }
    }
}

/// A character at least this many pixels across (its box's diagonal on screen) is animated
/// every frame; each halving of the size halves the rate, down to every fourth frame, as
/// Unreal's update rate optimisation steps it by screen size. The sizes are this project's
/// choice: a walking CesiumMan 96 px tall moves a vertex about a pixel a frame at 60 Hz, so
/// half its frames are the first thing one could miss.
pub const FULL_RATE_PX: f32 = 96.0;

/// Frames between two animations of a character out of view: its box stays within eight
/// frames of its pose, so it is drawn again as soon as that pose enters the view.
pub const OUT_OF_VIEW_PERIOD: u32 = 8;

/// Frames between two animations of a character `size_px` across on screen (`None`: out of
/// view): 1 from [`FULL_RATE_PX`], 2 from half of it, else 4; [`OUT_OF_VIEW_PERIOD`] out of
/// view. A size that is not a number counts as large.
pub fn lod_period(size_px: Option<f32>) -> u32 {
    match size_px {
        None => OUT_OF_VIEW_PERIOD,
        Some(s) if s.is_nan() || s >= FULL_RATE_PX => 1,
        Some(s) if s >= FULL_RATE_PX * 0.5 => 2,
        Some(_) => 4,
    }
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
    /// Bounds of the whole field, and the corners of its occupied cells
    /// ([`super::crowd::field_corners`]).
    field: Aabb,
    corners: Vec<Vec3>,
    period_s: f32,
    gpu: GpuScene,
    stats: FieldStats,
    /// The animation level of detail's view (None: every character every frame).
    lod: Option<LodView>,
    /// Frames updated so far (each character's beat is `(frame + c) % period`).
    frame: u64,
    /// Per character: animated this frame (the level of detail's scratch).
    animate: Vec<bool>,
    /// Per character: in view in the last culled frame.
    in_view: Vec<bool>,
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
        let (layout, corners) = crowd_layout(character, n)?;
        let field =
            finite_bounds(corners.iter().copied()).ok_or_else(|| Error::NothingToRender {
                model: character.scene.name.clone(),
            })?;
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
            corners,
            period_s: layout.period_s,
            gpu,
            stats: FieldStats::default(),
            lod: None,
            frame: 0,
            animate: vec![true; n as usize],
            in_view: vec![true; n as usize],
        })
    }

    /// Animate the characters at a rate by their size on screen from `view` (None: every
    /// character every frame, the default).
    pub fn set_lod(&mut self, view: Option<LodView>) {
        self.lod = view;
    }

    /// Which characters this frame animates under the level of detail, from the last frame's
    /// boxes and view (every character before the first bounded frame).
    fn pick_animated(&mut self, view: LodView) {
        let frame = self.frame;
        let boxes = &self.boxes;
        for (c, flag) in self.animate.iter_mut().enumerate() {
            let size_px = match (boxes.get(c).copied().flatten(), self.in_view.get(c)) {
                (_, Some(false)) => None,
                (Some((lo, hi)), _) => {
                    let centre = (lo + hi) * 0.5 + self.offsets.get(c).copied().unwrap_or_default();
                    let distance_m = (centre - view.eye_m).length().max(1e-6);
                    Some((hi - lo).length() * view.focal_px / distance_m)
                }
                (None, _) => Some(f32::NAN),
            };
            *flag = (frame + c as u64).is_multiple_of(u64::from(lod_period(size_px)));
        }
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
        let crowd_stats = match self.lod {
            Some(view) if self.boxes.len() == self.crowd.len() => {
                self.pick_animated(view);
                self.crowd.update_some(time_s, &self.animate)?
            }
            _ => self.crowd.update(time_s)?,
        };
        self.frame += 1;
        let t1 = Instant::now();
        let culled = match frustum {
            Some(f) => {
                self.crowd
                    .bound(&self.bounds, &self.morph_weights, &mut self.boxes)?;
                visible(&self.boxes, &self.offsets, f, &mut self.visible);
                self.in_view.fill(false);
                for &c in &self.visible {
                    if let Some(v) = self.in_view.get_mut(c as usize) {
                        *v = true;
                    }
                }
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
            animated: crowd_stats.animated,
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

    /// What a view frames: the corners of the occupied cells' boxes (a partly filled last row
    /// framed apart from the full ones).
    pub fn framing_points(&self) -> &[Vec3] {
        &self.corners
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

#[cfg(test)]
mod tests {
    use super::{FULL_RATE_PX, OUT_OF_VIEW_PERIOD, lod_period};

    /// The rate steps at the full-rate size and half of it; out of view is the slowest; a
    /// size that is not a number is animated every frame.
    #[test]
    fn the_period_steps_with_screen_size() {
        let cases = [
            (Some(1000.0), 1),
            (Some(FULL_RATE_PX), 1),
            (Some(FULL_RATE_PX - 0.01), 2),
            (Some(FULL_RATE_PX * 0.5), 2),
            (Some(FULL_RATE_PX * 0.5 - 0.01), 4),
            (Some(0.0), 4),
            (Some(f32::NAN), 1),
            (None, OUT_OF_VIEW_PERIOD),
        ];
        for (size, want) in cases {
            assert_eq!(lod_period(size), want, "{size:?}");
        }
    }
}
