//! One frame of the CPU side: animation → pose → `model_from_node` → frame palette, and
//! CPU skinning of any draw from that state. The GPU path uploads the same palette.

use glam::{Mat4, Vec3, Vec4};

use crate::anim::{AnimateJob, Pose, SoaAnimateJob, SoaClip, SoaState};
use crate::error::Result;
use crate::scene::Scene;
use crate::skeleton::LocalToModelJob;
use crate::skin::dqs::decompose_palette;
use crate::skin::modes::stitch_weights;
use crate::skin::weights::reduce_influences;
use crate::skin::{
    DqJoint, DqsSkinningJob, MorphJob, PaletteJob, PaletteLayout, ReductionStats, SkinMode,
    SkinOptions, SkinnedVertices, SkinningJob, VertexWeights,
};

/// Per-frame state reused between frames (no allocation once warm).
pub struct FrameState {
    /// Where each skin and draw starts in `palette`.
    pub layout: PaletteLayout,
    /// Current pose: local transforms and morph weights per node.
    pub pose: Pose,
    /// The animation last sampled, compiled for four-lane sampling, and its playback state
    /// (made again when another animation is asked for).
    clip: Option<(usize, SoaClip, SoaState)>,
    /// Model matrix of every node (index into `scene.nodes`), from `pose`.
    pub model_from_node: Vec<Mat4>,
    /// `model_from_bind` of every skin joint, then one `model_from_node` per rigid draw.
    pub palette: Vec<Mat4>,
}

impl FrameState {
    /// State for `scene` at its rest pose; `model_from_node` and `palette` are filled by the
    /// first evaluation.
    pub fn new(scene: &Scene) -> FrameState {
        FrameState {
            layout: PaletteLayout::new(scene),
            pose: Pose::rest(scene),
            clip: None,
            model_from_node: Vec::with_capacity(scene.nodes.len()),
            palette: Vec::new(),
        }
    }

    /// Sample animation `anim` (None = rest pose) at `time_s` and build the palette.
    pub fn evaluate(&mut self, scene: &Scene, anim: Option<usize>, time_s: f32) -> Result<()> {
        let animation = match anim {
            Some(a) => Some(
                scene
                    .animations
                    .get(a)
                    .ok_or_else(|| scene.unknown_animation(&a.to_string()))?,
            ),
            None => None,
        };
        match (anim, animation) {
            (Some(a), Some(animation)) => {
                if self.clip.as_ref().is_none_or(|c| c.0 != a) {
                    let clip = SoaClip::new(scene, animation)?;
                    let state = SoaState::new(&clip);
                    self.clip = Some((a, clip, state));
                }
                if let Some((_, clip, state)) = &mut self.clip {
                    SoaAnimateJob {
                        scene,
                        clip,
                        time_s,
                        state,
                        ahead: None,
                        pose: &mut self.pose,
                    }
                    .run()?;
                }
            }
            _ => AnimateJob {
                scene,
                animation: None,
                time_s,
                cursors: &mut [],
                pose: &mut self.pose,
            }
            .run()?,
        }
        self.evaluate_current_pose(scene)
    }

    /// Local→model and palette from `self.pose` as the caller left it (layering, IK and links
    /// write their result straight into it), instead of sampling one animation.
    pub fn evaluate_current_pose(&mut self, scene: &Scene) -> Result<()> {
        LocalToModelJob {
            scene,
            pose: &self.pose,
            model_from_node: &mut self.model_from_node,
        }
        .run()?;
        PaletteJob {
            scene,
            layout: &self.layout,
            model_from_node: &self.model_from_node,
            palette: &mut self.palette,
        }
        .run()
    }

    /// The palette slice draw `draw` indexes from joint 0.
    pub fn draw_palette(&self, scene: &Scene, draw: usize) -> &[Mat4] {
        let d = &scene.draws[draw];
        let base = self.layout.draw_base[draw] as usize;
        let len = d.skin.map_or(1, |s| scene.skins[s].joints.len());
        &self.palette[base..base + len]
    }

    /// Current morph weights of draw `draw` (index into `scene.draws`): its node's weights.
    pub fn morph_weights(&self, scene: &Scene, draw: usize) -> &[f32] {
        &self.pose.morph_weights[scene.draws[draw].node]
    }
}

/// CPU skinning of every draw, with per-draw vertex-weight arrays prepared once.
pub struct CpuSkinner {
    weights: Vec<VertexWeights>,
    /// Per draw: what the influence limit changed (None when not reduced / not skinned).
    pub reduction: Vec<Option<ReductionStats>>,
    morphed_p: Vec<Vec3>,
    morphed_n: Vec<Vec3>,
    morphed_t: Vec<Vec4>,
    /// Normalise normals while skinning (default); false leaves it to a `RenormalizeJob` pass.
    /// Draws whose options say not to renormalise are never normalised.
    pub renormalize: bool,
    /// How each draw is skinned (blend, normals).
    options: Vec<SkinOptions>,
    /// Per draw: stitching weights (one bone per vertex), made when a draw is set to stitch.
    stitch: Vec<Option<VertexWeights>>,
    /// Scratch: the draw's palette as DQS joints.
    dq_palette: Vec<DqJoint>,
}

impl CpuSkinner {
    /// Prepare the vertex-weight array of every draw of `scene`; `max_influences` = `Some(k)`
    /// reduces skinned draws to their `k` largest weights (renormalised), `None` keeps all.
    pub fn new(scene: &Scene, max_influences: Option<usize>) -> CpuSkinner {
        let mut weights = Vec::with_capacity(scene.draws.len());
        let mut reduction = Vec::with_capacity(scene.draws.len());
        for d in &scene.draws {
            let prim = scene.primitive(d);
            match (d.skin, prim.skin_weights.as_ref()) {
                (Some(_), Some(w)) => match max_influences {
                    Some(k) => {
                        let (r, stats) = reduce_influences(w, k);
                        weights.push(VertexWeights::from_skin_weights(&r));
                        reduction.push(Some(stats));
                    }
                    None => {
                        weights.push(VertexWeights::from_skin_weights(w));
                        reduction.push(None);
                    }
                },
                _ => {
                    weights.push(VertexWeights::rigid(prim.vertex_count()));
                    reduction.push(None);
                }
            }
        }
        CpuSkinner {
            weights,
            reduction,
            morphed_p: Vec::new(),
            morphed_n: Vec::new(),
            morphed_t: Vec::new(),
            renormalize: true,
            options: vec![SkinOptions::default(); scene.draws.len()],
            stitch: vec![None; scene.draws.len()],
            dq_palette: Vec::new(),
        }
    }

    /// Skin every draw of `scene` with `options`.
    pub fn set_options(&mut self, scene: &Scene, options: SkinOptions) {
        for d in 0..self.options.len() {
            self.set_draw_options(scene, d, options);
        }
    }

    /// Skin draw `draw` of `scene` with `options` (out-of-range draws are ignored).
    pub fn set_draw_options(&mut self, scene: &Scene, draw: usize, options: SkinOptions) {
        let Some(slot) = self.options.get_mut(draw) else {
            return;
        };
        *slot = options;
        if options.mode == SkinMode::Stitch && self.stitch[draw].is_none() {
            let d = &scene.draws[draw];
            let prim = scene.primitive(d);
            self.stitch[draw] = Some(match (d.skin, prim.skin_weights.as_ref()) {
                (Some(_), Some(w)) => VertexWeights::from_skin_weights(&stitch_weights(w)),
                _ => VertexWeights::rigid(prim.vertex_count()),
            });
        }
    }

    /// How draw `draw` is skinned.
    pub fn options(&self, draw: usize) -> SkinOptions {
        self.options.get(draw).copied().unwrap_or_default()
    }

    /// Morph then skin draw `draw` into `out` (resized as needed).
    pub fn skin_draw(
        &mut self,
        scene: &Scene,
        frame: &FrameState,
        draw: usize,
        out: &mut SkinnedVertices,
    ) -> Result<()> {
        let prim = scene.primitive(&scene.draws[draw]);
        let n = prim.vertex_count();
        let has_morph = !prim.morph_targets.is_empty();
        if has_morph {
            MorphJob {
                primitive: prim,
                weights: frame.morph_weights(scene, draw),
                out_positions: &mut self.morphed_p,
                out_normals: prim.normals.as_ref().map(|_| &mut self.morphed_n),
                out_tangents: prim.tangents.as_ref().map(|_| &mut self.morphed_t),
            }
            .run()?;
        }
        let (positions, normals, tangents) = if has_morph {
            (
                &self.morphed_p[..],
                prim.normals.as_ref().map(|_| &self.morphed_n[..]),
                prim.tangents.as_ref().map(|_| &self.morphed_t[..]),
            )
        } else {
            (
                &prim.positions[..],
                prim.normals.as_deref(),
                prim.tangents.as_deref(),
            )
        };
        out.positions.resize(n, Vec3::ZERO);
        match (&mut out.normals, normals) {
            (Some(v), Some(_)) => v.resize(n, Vec3::ZERO),
            (slot, Some(_)) => *slot = Some(vec![Vec3::ZERO; n]),
            (slot, None) => *slot = None,
        }
        match (&mut out.tangents, tangents) {
            (Some(v), Some(_)) => v.resize(n, Vec4::ZERO),
            (slot, Some(_)) => *slot = Some(vec![Vec4::ZERO; n]),
            (slot, None) => *slot = None,
        }
        let options = self.options(draw);
        let normalize = self.renormalize && options.renormalize;
        let palette = frame.draw_palette(scene, draw);
        match options.mode {
            SkinMode::Dqs => {
                decompose_palette(palette, &mut self.dq_palette);
                DqsSkinningJob {
                    palette: &self.dq_palette,
                    weights: &self.weights[draw],
                    positions,
                    normals,
                    tangents,
                    out_positions: &mut out.positions,
                    out_normals: out.normals.as_deref_mut(),
                    out_tangents: out.tangents.as_deref_mut(),
                    normal_mode: options.normals,
                    renormalize: normalize,
                    orthonormalize_tangents: options.renormalize,
                }
                .run()
            }
            SkinMode::Lbs | SkinMode::Stitch => {
                let weights = match (options.mode, &self.stitch[draw]) {
                    (SkinMode::Stitch, Some(w)) => w,
                    _ => &self.weights[draw],
                };
                SkinningJob {
                    palette,
                    weights,
                    positions,
                    normals,
                    tangents,
                    out_positions: &mut out.positions,
                    out_normals: out.normals.as_deref_mut(),
                    out_tangents: out.tangents.as_deref_mut(),
                    renormalize: normalize,
                    orthonormalize_tangents: options.renormalize,
                    normal_mode: options.normals,
                }
                .run()
            }
        }
    }

    /// Skin every draw (index order of `scene.draws`).
    pub fn skin_all(&mut self, scene: &Scene, frame: &FrameState) -> Result<Vec<SkinnedVertices>> {
        let mut v = Vec::with_capacity(scene.draws.len());
        for i in 0..scene.draws.len() {
            let mut out = SkinnedVertices::default();
            self.skin_draw(scene, frame, i, &mut out)?;
            v.push(out);
        }
        Ok(v)
    }
}

/// Every draw of `scene` skinned once, at `time_s` of clip `anim` (None: the rest pose), with
/// at most `max_influences` per vertex (None: all): set-up and one frame, for callers that
/// look at a pose or two rather than play (`diff`'s pairing, `check`).
pub fn skin_pose(
    scene: &Scene,
    anim: Option<usize>,
    time_s: f32,
    max_influences: Option<usize>,
) -> Result<Vec<SkinnedVertices>> {
    let mut frame = FrameState::new(scene);
    frame.evaluate(scene, anim, time_s)?;
    CpuSkinner::new(scene, max_influences).skin_all(scene, &frame)
}
