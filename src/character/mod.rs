//! The CPU animation stage end to end for one character, in the order of Weber, "Run-Time Skin
//! Deformation": sample motions → layer on bone masks → CCD IK → bone links → local→model + palette
//! → skin → renormalise normals, each stage timed (Weber's table, §14). This is the one frame
//! driver: the CLI, the tests, the comparison and the viewer all advance a [`Character`].
//!
//! A [`Character`] is built in one place, from a [`CharacterSetup`] (the [`setup`] module: what
//! plays, the mesh split, the influence limit, the blend; its `validate()` holds the rules of
//! which options combine), and owns every buffer it needs, so a frame allocates nothing once
//! warm. [`Character::humanoid_demo`] is the set-up that shows every stage: walk cross-fading
//! into run on the lower body, a throw on the upper body, the left hand reaching a moving
//! target, links at elbows and knees. Timing whole runs is in [`mod@bench`].

pub mod bench;
mod motions;
pub mod setup;

use web_time::Instant;

use crate::anim::layer::{DEFAULT_THRESHOLD, Layer, LayerJob};
use crate::anim::{Pose, SoaAnimateJob, SoaClip, SoaState};
use crate::error::{Error, Result};
use crate::frame::{CpuSkinner, FrameState};
use crate::ik::{CcdJob, IkResult, IkScratch};
use crate::links::{LinkPoseJob, LinkRig, LinkStats};
use crate::math::Trs;
use crate::rig::BoneMeta;
use crate::scene::Scene;
use crate::skin::{RenormalizeJob, SkinOptions, SkinnedVertices};

pub use bench::{BenchReport, bench};
pub use setup::{
    CharacterSetup, CharacterSpec, FadeDesc, IkGoal, IkSpec, LayerDesc, LayerFade, LayerSpec,
    MAX_LAYERS, MaskSpec, Motion, MotionRef, Orbit, SplitSpec, SplitSummary, with_links,
};

/// Longest time [`Character::play_to`] plays to: ten minutes of 60 Hz frames (36 000 updates)
/// is already far past any clip; the bound keeps a typo from running for hours.
pub const MAX_PLAY_S: f32 = 600.0;

/// Time of each stage in microseconds (one frame's, or medians over a run).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct StageTimes {
    /// Sampling every motion.
    pub sample: f64,
    /// Layering through the masks.
    pub layer: f64,
    /// CCD IK.
    pub ik: f64,
    /// Posing the bone links.
    pub links: f64,
    /// Local→model and the gradient palette.
    pub palette: f64,
    /// CPU skinning.
    pub skin: f64,
    /// Renormalising normals.
    pub normals: f64,
    /// Whole frame: the sum for one frame; over a run, the median of per-frame sums (not the
    /// sum of the stage medians). Not serialised: [`BenchReport`] carries it as `frame_us`.
    #[serde(skip)]
    pub frame: f64,
}

/// One animated, skinned character: its scene, motion layers, IK, bone links and every
/// buffer a frame needs (see the module documentation).
pub struct Character {
    /// The scene played (with bone links inserted when the rig has them).
    pub scene: Scene,
    /// Motion layers, blended in order; kept in step with `clips` (both private: set-up
    /// replaces them together, [`Character::layers`] reads them).
    layers: Vec<LayerSpec>,
    /// IK set-up, if any.
    pub ik: Option<IkSpec>,
    /// Bone links posed every frame, if any (node indices into `scene`).
    pub links: Option<LinkRig>,
    /// What inserting the links changed (weights moved, influences before/after).
    pub link_stats: Option<LinkStats>,
    /// Native rigs: Weber's per-node bone metadata (lengths, limits, sections; links get
    /// defaults), in this character's node order.
    pub bones: Option<Vec<BoneMeta>>,
    /// What splitting the mesh into submeshes made (`None`: drawn whole).
    pub split: Option<SplitSummary>,
    /// Outcome of the last frame's IK solve (default when there is no IK).
    pub ik_result: IkResult,
    /// Bones driven by hand: applied after layering, before IK (per node; `None` = not driven).
    overrides: Vec<Option<Trs>>,
    /// Morph weights held by hand: (node, target, weight), replacing the clip's.
    morph_overrides: Vec<(usize, usize, f32)>,
    reference: Vec<Trs>,
    layer_poses: Vec<Pose>,
    /// Per layer: its motion compiled for four-lane sampling, and the playback state.
    clips: Vec<(SoaClip, SoaState)>,
    layered: Vec<Trs>,
    previous: Option<Vec<Trs>>,
    /// `previous` holds last frame's solution (false after [`Character::restart`]; the buffer
    /// is kept so restarting allocates nothing).
    previous_valid: bool,
    ik_scratch: IkScratch,
    /// The current frame: pose, `model_from_node` and palette.
    pub frame: FrameState,
    skinner: CpuSkinner,
    max_influences: Option<usize>,
    /// Skin on the CPU every update (default). Off, `outputs` keep their last contents and a
    /// frame ends with the palette (what a GPU-only view needs).
    pub cpu_skinning: bool,
    /// CPU-skinned vertices of the last frame, one per draw (index into `scene.draws`).
    pub outputs: Vec<SkinnedVertices>,
}

impl Character {
    /// Drive `node`'s local transform by hand from the next frame on (it replaces the layered
    /// motion; IK may still rotate it when it is in a chain). `None` hands it back to the motions.
    pub fn set_override(&mut self, node: usize, local: Option<Trs>) -> Result<()> {
        let count = self.overrides.len();
        let slot = self
            .overrides
            .get_mut(node)
            .ok_or(Error::UnknownNode { node, count })?;
        if let Some(t) = &local
            && (!(t.translation.is_finite() && t.rotation.is_finite() && t.scale.is_finite())
                || t.rotation.length() < 1e-6)
        {
            return Err(Error::InvalidOverride { node });
        }
        *slot = local.map(|t| Trs {
            rotation: t.rotation.normalize(),
            ..t
        });
        Ok(())
    }

    /// Hold morph target `target` of `node`'s mesh at `weight` from the next frame on (it
    /// replaces the clip's weight, as Babylon's influence sliders and Blender's shape-key
    /// values do); `None` hands it back to the clip.
    pub fn set_morph_override(
        &mut self,
        node: usize,
        target: usize,
        weight: Option<f32>,
    ) -> Result<()> {
        let targets = self
            .scene
            .nodes
            .get(node)
            .and_then(|n| n.mesh)
            .and_then(|m| self.scene.meshes.get(m))
            .map_or(0, |m| m.morph_target_count());
        if target >= targets {
            return Err(Error::InvalidMorphOverride {
                node,
                target,
                count: targets,
            });
        }
        self.morph_overrides
            .retain(|&(n, t, _)| (n, t) != (node, target));
        if let Some(w) = weight {
            if !w.is_finite() {
                return Err(Error::InvalidMorphOverride {
                    node,
                    target,
                    count: targets,
                });
            }
            self.morph_overrides.push((node, target, w));
        }
        Ok(())
    }

    /// Hand every morph weight held by hand back to the clip.
    pub fn release_morph_overrides(&mut self) {
        self.morph_overrides.clear();
    }

    /// The reference pose (local transforms per node) that IK joint limits are relative to.
    pub fn reference_pose(&self) -> &[Trs] {
        &self.reference
    }

    /// The morph weights held by hand: (node, target, weight).
    pub fn morph_overrides(&self) -> &[(usize, usize, f32)] {
        &self.morph_overrides
    }

    /// Forget the frame history (incremental IK and velocity limits start from the next
    /// frame's input), as when playback jumps back to the start of a loop.
    pub fn restart(&mut self) {
        self.previous_valid = false;
    }

    /// Reduce every skinned vertex of the CPU path to its `k` largest weights (renormalised),
    /// or use them all (`None`); the GPU upload takes the same `k`. Set-up time, not per frame.
    fn set_max_influences(&mut self, k: Option<usize>) {
        if self.max_influences != k {
            let options: Vec<SkinOptions> = (0..self.scene.draws.len())
                .map(|d| self.skinner.options(d))
                .collect();
            self.skinner = CpuSkinner::new(&self.scene, k);
            self.skinner.renormalize = false;
            for (d, o) in options.into_iter().enumerate() {
                self.skinner.set_draw_options(&self.scene, d, o);
            }
            self.max_influences = k;
        }
    }

    /// Skin every draw with `options` (blend mode, normals) on the CPU path; the GPU upload
    /// takes the same options ([`Character::skin_options`]).
    pub fn set_skin_options(&mut self, options: SkinOptions) {
        self.skinner.set_options(&self.scene, options);
    }

    /// The current frame skinned on the CPU in `options` instead of the character's own (its
    /// outputs and settings are unchanged): what a mode-against-mode comparison measures.
    pub fn skin_current_with(&self, options: SkinOptions) -> Result<Vec<SkinnedVertices>> {
        let mut skinner = CpuSkinner::new(&self.scene, self.max_influences);
        skinner.set_options(&self.scene, options);
        let mut outputs = self.outputs.clone();
        for (i, out) in outputs.iter_mut().enumerate() {
            skinner.skin_draw(&self.scene, &self.frame, i, out)?;
        }
        Ok(outputs)
    }

    /// How draw `draw` is skinned.
    pub fn skin_options(&self, draw: usize) -> SkinOptions {
        self.skinner.options(draw)
    }

    /// The influence limit of the CPU path ([`CharacterSetup::max_influences`]).
    pub fn max_influences(&self) -> Option<usize> {
        self.max_influences
    }

    /// What reducing the influences changed, per draw (`None`: not reduced, or rigid).
    pub fn reduction(&self) -> &[Option<crate::skin::ReductionStats>] {
        &self.skinner.reduction
    }

    /// Play from t = 0 to `time_s` at 60 Hz (incremental IK and velocity limits need the
    /// history), ending exactly on `time_s`.
    pub fn play_to(&mut self, time_s: f32) -> Result<()> {
        self.play_to_with(time_s, &mut |_| {})
    }

    /// [`Character::play_to`], calling `after_frame` after each frame it plays. The frame
    /// history is forgotten first ([`Character::restart`]), so playing again plays the same.
    pub fn play_to_with(
        &mut self,
        time_s: f32,
        after_frame: &mut dyn FnMut(&Character),
    ) -> Result<()> {
        self.restart();
        if !(0.0..=MAX_PLAY_S).contains(&time_s) {
            return Err(Error::TimeRange {
                time_s,
                max_s: MAX_PLAY_S,
            });
        }
        let dt = 1.0 / 60.0;
        let steps = (time_s / dt).floor() as usize;
        for i in 0..=steps {
            self.update(i as f32 * dt, dt)?;
            after_frame(self);
        }
        // The last partial step, with the time it really covers.
        let rest = time_s - steps as f32 * dt;
        if rest > 0.0 {
            self.update(time_s, rest)?;
            after_frame(self);
        }
        Ok(())
    }

    /// Advance to `time_s` (`dt_s` since the last frame, for IK velocity limits) and skin on
    /// the CPU. Returns this frame's stage times in µs.
    pub fn update(&mut self, time_s: f32, dt_s: f32) -> Result<StageTimes> {
        let t0 = Instant::now();
        let mut marks = [t0; 5];
        self.animate_marked(time_s, dt_s, &mut |stage| marks[stage] = Instant::now())?;
        let [t1, t2, t3, t4, t5] = marks;
        self.skin()?;
        let t6 = Instant::now();
        self.renormalize();
        let t7 = Instant::now();
        let us = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e6;
        Ok(StageTimes {
            sample: us(t0, t1),
            layer: us(t1, t2),
            ik: us(t2, t3),
            links: us(t3, t4),
            palette: us(t4, t5),
            skin: us(t5, t6),
            normals: us(t6, t7),
            frame: us(t0, t7),
        })
    }

    /// The animation stage alone (stages 1 to 5: sample, layer, IK, bone links, local→model
    /// and the palette), untimed: [`Character::update`] without skinning and without its clock
    /// reads between stages. What `bench` times as a whole, the way ozz-animation's benchmark
    /// times its sampling and local→model.
    pub fn animate(&mut self, time_s: f32, dt_s: f32) -> Result<()> {
        self.animate_marked(time_s, dt_s, &mut |_| {})
    }

    /// Stages 1 to 5 in order, calling `done(k)` after stage `k + 1` (`k` in 0..5).
    fn animate_marked(
        &mut self,
        time_s: f32,
        dt_s: f32,
        done: &mut impl FnMut(usize),
    ) -> Result<()> {
        if !time_s.is_finite() {
            return Err(Error::TimeRange {
                time_s,
                max_s: f32::MAX,
            });
        }
        self.sample(time_s)?;
        done(0);
        self.layer(time_s)?;
        done(1);
        self.solve_ik(time_s, dt_s)?;
        done(2);
        // 4. Bone links follow their parent and child.
        if let Some(rig) = &self.links {
            LinkPoseJob {
                rig,
                locals: &mut self.frame.pose.locals,
            }
            .run()?;
        }
        done(3);
        // 5. local→model and the gradient palette.
        self.frame.evaluate_current_pose(&self.scene)?;
        done(4);
        Ok(())
    }

    /// 1. Sample every motion at `time_s` into its layer's pose (four tracks at a time;
    ///    intervals cached per layer). A layer whose weight is 0 at `time_s` (faded out, or not
    ///    yet in) is not sampled: the layering skips it whatever its pose holds. The first
    ///    layer is sampled anyway when its clip drives morph weights (the frame's come from it).
    fn sample(&mut self, time_s: f32) -> Result<()> {
        let scene = &self.scene;
        for (i, ((spec, pose), (clip, state))) in self
            .layers
            .iter()
            .zip(&mut self.layer_poses)
            .zip(&mut self.clips)
            .enumerate()
        {
            let morph_source = || i == 0 && clip.animates_morph_weights();
            if spec.weight_at(time_s) == 0.0 && !morph_source() {
                continue;
            }
            // The clip was compiled from `scene.animations[spec.anim]` (`compile_layers`).
            SoaAnimateJob {
                scene,
                clip,
                time_s: spec.clip_time(time_s, clip.duration_s()),
                state,
                ahead: None,
                pose,
            }
            .run()?;
        }
        Ok(())
    }

    /// 2. Layer the sampled poses through their masks (fades at `time_s`), then the bones and
    ///    morph weights held by hand.
    fn layer(&mut self, time_s: f32) -> Result<()> {
        if self.layers.is_empty() {
            self.layered.copy_from_slice(&self.reference);
        } else {
            // A fixed array: no allocation per frame.
            let unused = Layer {
                pose: &self.reference,
                weight: 0.0,
                mask: None,
            };
            let mut layers = [unused; MAX_LAYERS];
            let mut count = 0;
            // Layers at weight 0 add nothing (`LayerJob` skips them bone by bone): left out,
            // the others in their order, so the blend is the same to the bit.
            for (spec, pose) in self.layers.iter().zip(&self.layer_poses) {
                let weight = spec.weight_at(time_s);
                if weight == 0.0 {
                    continue;
                }
                let Some(slot) = layers.get_mut(count) else {
                    break;
                };
                *slot = Layer {
                    pose: &pose.locals,
                    weight,
                    mask: Some(&spec.mask),
                };
                count += 1;
            }
            LayerJob {
                reference: &self.reference,
                layers: &layers[..count],
                threshold: DEFAULT_THRESHOLD,
                output: &mut self.layered,
            }
            .run()?;
        }
        // Bones driven by hand replace what the motions gave them.
        for (l, o) in self.layered.iter_mut().zip(&self.overrides) {
            if let Some(t) = o {
                *l = *t;
            }
        }
        pose_morph_weights(
            &mut self.frame.pose,
            self.layer_poses.first(),
            &self.scene,
            &self.morph_overrides,
        );
        Ok(())
    }

    /// 3. CCD IK on the layered pose (targets on their orbit at `time_s`, velocity limits over
    ///    `dt_s`), written straight into the frame's pose (no copy of its output); without IK
    ///    the layered pose is the frame's.
    fn solve_ik(&mut self, time_s: f32, dt_s: f32) -> Result<()> {
        let Some(ik) = &mut self.ik else {
            self.frame.pose.locals.clone_from(&self.layered);
            return Ok(());
        };
        if let Some(orbit) = ik.orbit {
            let target = orbit.at(time_s);
            for e in &mut ik.effectors {
                e.target_model = target;
            }
        }
        let mut settings = ik.settings;
        settings.dt_s = dt_s.max(1e-6);
        CcdJob {
            scene: &self.scene,
            reference: &self.reference,
            input: &self.layered,
            previous: self.previous.as_deref().filter(|_| self.previous_valid),
            participation: &ik.participation,
            limits: &ik.limits,
            effectors: &ik.effectors,
            settings,
            output: &mut self.frame.pose.locals,
            result: &mut self.ik_result,
            scratch: &mut self.ik_scratch,
        }
        .run()?;
        match &mut self.previous {
            Some(p) => p.copy_from_slice(&self.frame.pose.locals),
            None => self.previous = Some(self.frame.pose.locals.clone()),
        }
        self.previous_valid = true;
        Ok(())
    }

    /// 6. Skin every draw on the CPU (when [`Character::cpu_skinning`] is on).
    fn skin(&mut self) -> Result<()> {
        if self.cpu_skinning {
            for (i, out) in self.outputs.iter_mut().enumerate() {
                self.skinner.skin_draw(&self.scene, &self.frame, i, out)?;
            }
        }
        Ok(())
    }

    /// 7. Renormalise the CPU-skinned normals of the draws that ask for it.
    fn renormalize(&mut self) {
        if self.cpu_skinning {
            for (i, out) in self.outputs.iter_mut().enumerate() {
                if let Some(n) = out.normals.as_deref_mut()
                    && self.skinner.options(i).renormalize
                {
                    RenormalizeJob { normals: n }.run();
                }
            }
        }
    }
}

/// This frame's morph weights into `pose`: the first layer's sample (`first`; the rest pose
/// without one), then the ones held by hand (`held`: node, target, weight).
fn pose_morph_weights(
    pose: &mut Pose,
    first: Option<&Pose>,
    scene: &Scene,
    held: &[(usize, usize, f32)],
) {
    match first {
        Some(p) => {
            // Rigs without morph targets have only empty lists: nothing to copy (the usual
            // case; a list-by-list copy costs more than this check).
            let w = &mut pose.morph_weights;
            let both_empty = w.len() == p.morph_weights.len()
                && w.iter()
                    .zip(&p.morph_weights)
                    .all(|(a, b)| a.is_empty() && b.is_empty());
            if !both_empty {
                w.clone_from(&p.morph_weights);
            }
        }
        None => pose.reset(scene),
    }
    for &(node, target, w) in held {
        if let Some(slot) = pose
            .morph_weights
            .get_mut(node)
            .and_then(|m| m.get_mut(target))
        {
            *slot = w;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: panics are its report
    use super::*;

    /// Every layer of `c` sampled afresh at `time_s` (new playback states) and layered:
    /// what `layer` gives when nothing is skipped.
    fn layered_afresh(c: &Character, time_s: f32) -> Vec<Trs> {
        let poses: Vec<Pose> = c
            .layers
            .iter()
            .zip(&c.clips)
            .map(|(spec, (clip, _))| {
                let mut pose = Pose::rest(&c.scene);
                SoaAnimateJob {
                    scene: &c.scene,
                    clip,
                    time_s: spec.clip_time(time_s, clip.duration_s()),
                    state: &mut SoaState::new(clip),
                    ahead: None,
                    pose: &mut pose,
                }
                .run()
                .expect("the demo clip samples");
                pose
            })
            .collect();
        let layers: Vec<Layer> = c
            .layers
            .iter()
            .zip(&poses)
            .map(|(spec, p)| Layer {
                pose: &p.locals,
                weight: spec.weight_at(time_s),
                mask: Some(&spec.mask),
            })
            .collect();
        let mut out = c.reference.clone();
        LayerJob {
            reference: &c.reference,
            layers: &layers,
            threshold: DEFAULT_THRESHOLD,
            output: &mut out,
        }
        .run()
        .expect("the demo layers blend");
        out
    }

    /// A layer at weight 0 is not sampled, and that changes nothing: over the demo's first
    /// three seconds (the walk fades out from 0.5 to 1.1 s while the run fades in) the layered
    /// pose is bit for bit that of every layer sampled afresh, while the walk's last sample
    /// stays as it was when it left (it is not sampled again).
    #[test]
    fn layers_at_weight_zero_are_skipped_without_changing_the_pose() {
        let mut c = Character::humanoid_demo().expect("the built-in demo builds");
        assert_eq!(c.layers[0].weight_at(0.0), 1.0);
        let dt = 1.0 / 60.0;
        let mut left: Option<Pose> = None;
        for i in 0..180 {
            let t = i as f32 * dt;
            c.update(t, dt).expect("a demo frame updates");
            assert!(c.layered == layered_afresh(&c, t), "t = {t} s");
            if c.layers[0].weight_at(t) == 0.0 {
                let walk = &c.layer_poses[0];
                match &left {
                    None => left = Some(walk.clone()),
                    Some(p) => assert!(walk.locals == p.locals, "walk sampled at {t} s"),
                }
            }
        }
        assert!(left.is_some(), "the walk faded out");
    }
}
