//! The CPU animation stage end to end for one character, in the order of Weber, "Run-Time Skin
//! Deformation": sample motions → layer on bone masks → CCD IK → bone links → local→model + palette
//! → skin → renormalise normals, each stage timed (Weber's table, §14). This is the one frame
//! driver: the CLI, the tests, the comparison and the viewer all advance a [`Character`].
//!
//! A [`Character`] owns every buffer it needs, so a frame allocates nothing once warm.
//! [`Character::from_scene`] plays one animation on any model; [`Character::from_rig`] sets up
//! a native rig from a [`CharacterSpec`] (layers on bone masks, a cross-fade, IK effectors with
//! the rig's joint limits, bone links); [`Character::humanoid_demo`] is the spec that shows
//! every stage: walk cross-fading into run on the lower body, a throw on the upper body, the
//! left hand reaching a moving target, links at elbows and knees.

use std::time::Instant;

use glam::Vec3;

use crate::anim::layer::{BoneMask, CrossFade, DEFAULT_THRESHOLD, Layer, LayerJob, track_mask};
use crate::anim::{Pose, SoaAnimateJob, SoaClip, SoaState};
use crate::error::{Error, Result};
use crate::frame::{CpuSkinner, FrameState};
use crate::ik::{CcdJob, Effector, IkMode, IkResult, IkScratch, IkSettings, JointLimits};
use crate::links::{BoneInfo, LinkPoseJob, LinkRig, LinkSpec, LinkStats, insert_links};
use crate::math::Trs;
use crate::rig::{BoneMeta, RigScene};
use crate::scene::Scene;
use crate::skin::{NormalizeJob, SkinOptions, SkinnedVertices};

/// Which bones a layer covers. Written as text (`FromStr`, `Display`): `all` (or nothing),
/// `BONE` (its subtree), `!BONE` (all but its subtree) — one syntax for the command line and
/// the viewer.
#[derive(Clone, Debug, PartialEq)]
pub enum MaskSpec {
    /// Every bone.
    All,
    /// A bone and its descendants.
    Subtree(String),
    /// Everything but a bone's subtree.
    Except(String),
}

impl std::str::FromStr for MaskSpec {
    type Err = String;

    /// `all` or empty, `BONE`, `!BONE` (surrounding spaces ignored); `!` with no bone is an
    /// error.
    fn from_str(text: &str) -> std::result::Result<MaskSpec, String> {
        match text.trim() {
            "" | "all" => Ok(MaskSpec::All),
            t => match t.strip_prefix('!') {
                Some(b) if b.trim().is_empty() => {
                    Err(format!("mask {text:?}: name a bone after '!'"))
                }
                Some(b) => Ok(MaskSpec::Except(b.trim().to_string())),
                None => Ok(MaskSpec::Subtree(t.to_string())),
            },
        }
    }
}

impl std::fmt::Display for MaskSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaskSpec::All => f.write_str("all"),
            MaskSpec::Subtree(b) => f.write_str(b),
            MaskSpec::Except(b) => write!(f, "!{b}"),
        }
    }
}

/// IK targets circling a point (the demo's driver): `target(t) = centre + radius·(cos ωt,
/// ½ sin ωt, sin ωt)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Orbit {
    /// Centre of the circle, model space (metres).
    pub centre_m: Vec3,
    /// Radius (metres).
    pub radius_m: f32,
    /// Angular rate ω (rad/s).
    pub rate_rad_s: f32,
}

impl Orbit {
    /// Where the target is at `time_s`.
    pub fn at(&self, time_s: f32) -> Vec3 {
        let a = self.rate_rad_s * time_s;
        self.centre_m + self.radius_m * Vec3::new(a.cos(), 0.5 * a.sin(), a.sin())
    }
}

/// A layer's part in a cross-fade: the fade, and whether the layer fades in (its weight follows
/// the fade's B weight) or out (A weight).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerFade {
    /// When and how long.
    pub fade: CrossFade,
    /// Fades in (true) or out (false).
    pub fade_in: bool,
}

impl LayerFade {
    /// The layer's weight factor at `time_s`.
    pub fn weight(&self, time_s: f32) -> f32 {
        let (a, b) = self.fade.weights(time_s);
        if self.fade_in { b } else { a }
    }
}

/// One layer of a [`CharacterSpec`]: a motion (by name or index) on a bone mask, with a weight.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerDesc {
    /// Motion name, or its index as text.
    pub motion: String,
    /// The bones it drives.
    pub mask: MaskSpec,
    /// Its weight (≥ 0).
    pub weight: f32,
}

/// A cross-fade between two layers, by their position in the layer list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FadeDesc {
    /// The layer faded out.
    pub from: usize,
    /// The layer faded in.
    pub to: usize,
    /// When and how long.
    pub fade: CrossFade,
}

/// An IK goal: the tip of `end_bone` reaches `target_m` (model space), moving a chain of
/// `chain_length` bones ending at it.
#[derive(Clone, Debug, PartialEq)]
pub struct IkGoal {
    /// The bone whose tip reaches the target.
    pub end_bone: String,
    /// Bones in the chain, the end bone included (≥ 1).
    pub chain_length: usize,
    /// The target in model space (metres).
    pub target_m: Vec3,
    /// Effector weight (≥ 0) when several effectors share joints.
    pub weight: f32,
}

/// How to animate a native rig: layers, an optional cross-fade, IK effectors and bone links.
#[derive(Clone, Debug)]
pub struct CharacterSpec {
    /// Motion layers, blended in order (at most [`MAX_LAYERS`]).
    pub layers: Vec<LayerDesc>,
    /// Optional cross-fade between two of the layers.
    pub fade: Option<FadeDesc>,
    /// IK goals solved after layering (empty = no IK).
    pub ik: Vec<IkGoal>,
    /// Solver settings for the IK goals.
    pub ik_settings: IkSettings,
    /// Targets orbit instead of staying put (the demo's driver).
    pub orbit: Option<Orbit>,
    /// Insert the bone links the rig's bones ask for.
    pub links: bool,
}

impl CharacterSpec {
    /// Settings for interactive IK: incremental, 8 iterations, 1 mm, a 12 rad/s cap (a brisk
    /// human arm; lower caps let a twisting torso outrun the hand).
    pub const IK_SETTINGS: IkSettings = IkSettings {
        iterations: 8,
        tolerance_m: 1e-3,
        mode: IkMode::Incremental,
        max_angular_velocity_rad_s: Some(12.0),
        dt_s: 1.0 / 60.0,
    };

    /// One full-body layer of `motion` and the rig's links.
    pub fn single(motion: &str) -> CharacterSpec {
        CharacterSpec {
            layers: vec![LayerDesc {
                motion: motion.into(),
                mask: MaskSpec::All,
                weight: 1.0,
            }],
            fade: None,
            ik: Vec::new(),
            ik_settings: Self::IK_SETTINGS,
            orbit: None,
            links: true,
        }
    }

    /// The humanoid demo: walk cross-fading into run on the lower body, the throw alone on the
    /// upper body, the left hand reaching an orbiting target, links at elbows and knees.
    pub fn humanoid_demo() -> CharacterSpec {
        let layer = |m: &str, mask: MaskSpec| LayerDesc {
            motion: m.into(),
            mask,
            weight: 1.0,
        };
        CharacterSpec {
            layers: vec![
                layer("walk", MaskSpec::Except("spine".into())),
                layer("run", MaskSpec::Except("spine".into())),
                layer("throw", MaskSpec::Subtree("spine".into())),
            ],
            fade: Some(FadeDesc {
                from: 0,
                to: 1,
                fade: CrossFade {
                    start_s: 0.5,
                    duration_s: 0.6,
                },
            }),
            ik: vec![IkGoal {
                end_bone: "l_hand".into(),
                chain_length: 3,
                target_m: Vec3::new(0.35, 1.35, 0.35),
                weight: 1.0,
            }],
            ik_settings: Self::IK_SETTINGS,
            orbit: Some(Orbit {
                centre_m: Vec3::new(0.3, 1.3, 0.3),
                radius_m: 0.15,
                rate_rad_s: 2.0,
            }),
            links: true,
        }
    }
}

/// Layers a character blends at once (ozz and game engines use a handful; more is refused).
pub const MAX_LAYERS: usize = 8;

/// Longest time [`Character::play_to`] plays to: ten minutes of 60 Hz frames (36 000 updates)
/// is already far past any clip; the bound keeps a typo from running for hours.
pub const MAX_PLAY_S: f32 = 600.0;

/// One motion layer.
#[derive(Clone, Debug)]
pub struct LayerSpec {
    /// Animation played (index into `scene.animations`).
    pub anim: usize,
    /// Per node 0..1 (already multiplied by the motion's track mask).
    pub mask: Vec<f32>,
    /// Layer weight (≥ 0), before any fade.
    pub weight: f32,
    /// When set, the layer's weight is scaled by its part in the cross-fade.
    pub fade: Option<LayerFade>,
    /// Wrap time at the clip's end instead of holding the last key.
    pub looping: bool,
}

/// IK set-up: effectors whose targets may move each frame, settings, per-node data.
#[derive(Clone, Debug)]
pub struct IkSpec {
    /// End effectors; their targets may be moved between frames.
    pub effectors: Vec<Effector>,
    /// Solver settings (`dt_s` is replaced by each frame's time step).
    pub settings: IkSettings,
    /// Per node (index into `scene.nodes`): participation weight in 0..1.
    pub participation: Vec<f32>,
    /// Per node: joint limits, radians (`None` = unlimited).
    pub limits: Vec<Option<JointLimits>>,
    /// Every effector's target follows this path (a demo driver; callers may set
    /// `effectors[i].target_model` directly instead).
    pub orbit: Option<Orbit>,
}

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
    /// Motion layers, blended in order.
    pub layers: Vec<LayerSpec>,
    /// IK set-up, if any.
    pub ik: Option<IkSpec>,
    /// Bone links posed every frame, if any (node indices into `scene`).
    pub links: Option<LinkRig>,
    /// What inserting the links changed (weights moved, influences before/after).
    pub link_stats: Option<LinkStats>,
    /// Native rigs: Weber's per-node bone metadata (lengths, limits, sections; links get
    /// defaults), in this character's node order.
    pub bones: Option<Vec<BoneMeta>>,
    /// Outcome of the last frame's IK solve (default when there is no IK).
    pub ik_result: IkResult,
    /// Bones driven by hand: applied after layering, before IK (per node; `None` = not driven).
    overrides: Vec<Option<Trs>>,
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
    fn new(
        scene: Scene,
        layers: Vec<LayerSpec>,
        ik: Option<IkSpec>,
        links: Option<LinkRig>,
    ) -> Result<Character> {
        let reference: Vec<Trs> = scene.nodes.iter().map(|n| n.rest).collect();
        let pose = Pose::rest(&scene);
        let mut skinner = CpuSkinner::new(&scene, None);
        skinner.normalize_normals = false;
        let clips = compile_layers(&scene, &layers)?;
        Ok(Character {
            layer_poses: layers.iter().map(|_| pose.clone()).collect(),
            clips,
            layered: reference.clone(),
            overrides: vec![None; reference.len()],
            previous: None,
            previous_valid: false,
            ik_scratch: IkScratch::default(),
            ik_result: IkResult::default(),
            frame: FrameState::new(&scene),
            link_stats: None,
            bones: None,
            outputs: vec![SkinnedVertices::default(); scene.draws.len()],
            cpu_skinning: true,
            max_influences: None,
            skinner,
            reference,
            scene,
            layers,
            ik,
            links,
        })
    }

    /// Play animation `anim` on any scene: one full-body layer, no IK, no links. `looping`
    /// wraps time at the clip's end (playback); without it times past the end hold the last
    /// key (comparisons and dumps sample `t = duration` exactly).
    pub fn from_scene(scene: Scene, anim: Option<usize>, looping: bool) -> Result<Character> {
        let mut c = Character::new(scene, Vec::new(), None, None)?;
        c.set_clip(anim, looping)?;
        Ok(c)
    }

    /// Replace the layers with one full-body layer of `anim` (`None`: rest pose), as
    /// [`Character::from_scene`] sets up; IK, links and hand-driven bones stay. Set-up time.
    pub fn set_clip(&mut self, anim: Option<usize>, looping: bool) -> Result<()> {
        let layers = match anim {
            None => Vec::new(),
            Some(a) => {
                let clip = self
                    .scene
                    .animations
                    .get(a)
                    .ok_or_else(|| Error::UnknownAnimation {
                        model: self.scene.name.clone(),
                        requested: a.to_string(),
                        count: self.scene.animations.len(),
                    })?;
                vec![LayerSpec {
                    anim: a,
                    mask: track_mask(&self.scene, clip),
                    weight: 1.0,
                    fade: None,
                    looping,
                }]
            }
        };
        self.set_layers(layers)
    }

    /// Replace the motion layers (at most [`MAX_LAYERS`]); cursors start afresh. Set-up time.
    pub fn set_layers(&mut self, layers: Vec<LayerSpec>) -> Result<()> {
        if layers.len() > MAX_LAYERS {
            return Err(Error::TooManyLayers {
                count: layers.len(),
                max: MAX_LAYERS,
            });
        }
        for l in &layers {
            let count = self.scene.animations.len();
            if l.anim >= count || l.mask.len() != self.scene.nodes.len() {
                return Err(Error::UnknownAnimation {
                    model: self.scene.name.clone(),
                    requested: l.anim.to_string(),
                    count,
                });
            }
        }
        let pose = Pose::rest(&self.scene);
        self.layer_poses = layers.iter().map(|_| pose.clone()).collect();
        self.clips = compile_layers(&self.scene, &layers)?;
        self.layers = layers;
        Ok(())
    }

    /// The built-in humanoid with every stage in use (see the module documentation): the
    /// [`CharacterSpec::humanoid_demo`] set-up.
    pub fn humanoid_demo() -> Result<Character> {
        let rig = crate::builtin::humanoid_rig()?.to_scene()?;
        Character::from_rig(&rig, &CharacterSpec::humanoid_demo())
    }

    /// Any native rig with layers on bone masks, a cross-fade, IK effectors (joint limits from
    /// the rig's bones) and its bone links, as `spec` says.
    pub fn from_rig(rs: &RigScene, spec: &CharacterSpec) -> Result<Character> {
        let (scene, links, bones, stats) = if spec.links {
            let (s, l, b, st) = with_links(rs)?;
            (s, Some(l), b, Some(st))
        } else {
            (rs.scene.clone(), None, rs.bones.clone(), None)
        };
        if spec.layers.len() > MAX_LAYERS {
            return Err(Error::TooManyLayers {
                count: spec.layers.len(),
                max: MAX_LAYERS,
            });
        }
        let mut layers = Vec::with_capacity(spec.layers.len());
        for l in &spec.layers {
            let anim = scene.find_animation(&l.motion)?;
            let region = match &l.mask {
                MaskSpec::All => vec![1.0; scene.nodes.len()],
                MaskSpec::Subtree(b) => BoneMask::subtree(&scene, scene.find_node(b)?),
                MaskSpec::Except(b) => {
                    BoneMask::invert(&BoneMask::subtree(&scene, scene.find_node(b)?))
                }
            };
            // Bones the motion has no track for stay out of its layer (reference, IK or code).
            let mask = track_mask(&scene, &scene.animations[anim])
                .iter()
                .zip(&region)
                .map(|(a, b)| a * b)
                .collect();
            layers.push(LayerSpec {
                anim,
                mask,
                weight: l.weight,
                fade: None,
                looping: rs.looping.get(anim).copied().unwrap_or(false),
            });
        }
        if let Some(f) = &spec.fade {
            let n = layers.len();
            if f.from >= n || f.to >= n || f.from == f.to {
                return Err(Error::FadeLayers {
                    from: f.from,
                    to: f.to,
                    layers: n,
                });
            }
            layers[f.from].fade = Some(LayerFade {
                fade: f.fade,
                fade_in: false,
            });
            layers[f.to].fade = Some(LayerFade {
                fade: f.fade,
                fade_in: true,
            });
        }
        let ik = if spec.ik.is_empty() {
            None
        } else {
            let mut effectors = Vec::with_capacity(spec.ik.len());
            for e in &spec.ik {
                let end_node = scene.find_node(&e.end_bone)?;
                effectors.push(Effector {
                    end_node,
                    chain_length: e.chain_length,
                    tip_local: Vec3::new(bones[end_node].length_m, 0.0, 0.0),
                    target_model: e.target_m,
                    weight: e.weight,
                });
            }
            let limits = bones
                .iter()
                .map(|b| {
                    b.limits_deg.map(|l| {
                        JointLimits::new(l.min.map(f32::to_radians), l.max.map(f32::to_radians))
                    })
                })
                .collect();
            Some(IkSpec {
                effectors,
                settings: spec.ik_settings,
                participation: vec![1.0; scene.nodes.len()],
                limits,
                orbit: spec.orbit,
            })
        };
        let mut c = Character::new(scene, layers, ik, links)?;
        c.link_stats = stats;
        c.bones = Some(bones);
        Ok(c)
    }

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

    /// Forget the frame history (incremental IK and velocity limits start from the next
    /// frame's input), as when playback jumps back to the start of a loop.
    pub fn restart(&mut self) {
        self.previous_valid = false;
    }

    /// Reduce every skinned vertex of the CPU path to its `k` largest weights (renormalised),
    /// or use them all (`None`); the GPU upload takes the same `k`. Set-up time, not per frame.
    pub fn set_max_influences(&mut self, k: Option<usize>) {
        if self.max_influences != k {
            let options: Vec<SkinOptions> = (0..self.scene.draws.len())
                .map(|d| self.skinner.options(d))
                .collect();
            self.skinner = CpuSkinner::new(&self.scene, k);
            self.skinner.normalize_normals = false;
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

    /// The influence limit of the CPU path (see [`Character::set_max_influences`]).
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
        }
        // The last partial step, with the time it really covers.
        let rest = time_s - steps as f32 * dt;
        if rest > 0.0 {
            self.update(time_s, rest)?;
        }
        Ok(())
    }

    /// Advance to `time_s` (`dt_s` since the last frame, for IK velocity limits) and skin on
    /// the CPU. Returns this frame's stage times in µs.
    pub fn update(&mut self, time_s: f32, dt_s: f32) -> Result<StageTimes> {
        if !time_s.is_finite() {
            return Err(Error::TimeRange {
                time_s,
                max_s: f32::MAX,
            });
        }
        let mut times = StageTimes::default();
        let scene = &self.scene;
        // 1. Sample every motion (four tracks at a time; intervals cached per layer).
        let t0 = Instant::now();
        for ((spec, pose), (clip, state)) in self
            .layers
            .iter()
            .zip(&mut self.layer_poses)
            .zip(&mut self.clips)
        {
            // The clip was compiled from `scene.animations[spec.anim]` (`compile_layers`).
            let d = clip.duration_s();
            let t = if spec.looping && d > 0.0 {
                time_s.rem_euclid(d)
            } else {
                time_s
            };
            SoaAnimateJob {
                scene,
                clip,
                time_s: t,
                state,
                pose,
            }
            .run()?;
        }
        let t1 = Instant::now();
        // 2. Layer them through their masks.
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
            let count = self.layers.len().min(MAX_LAYERS);
            for (slot, (spec, pose)) in layers
                .iter_mut()
                .zip(self.layers.iter().zip(&self.layer_poses))
            {
                let fade = spec.fade.map_or(1.0, |f| f.weight(time_s));
                *slot = Layer {
                    pose: &pose.locals,
                    weight: spec.weight * fade,
                    mask: Some(&spec.mask),
                };
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
        // Morph weights come from the first layer's sample (or rest).
        match self.layer_poses.first() {
            Some(p) => {
                // Rigs without morph targets have only empty lists: nothing to copy (the
                // usual case; a list-by-list copy costs more than this check).
                let w = &mut self.frame.pose.morph_weights;
                let both_empty = w.len() == p.morph_weights.len()
                    && w.iter()
                        .zip(&p.morph_weights)
                        .all(|(a, b)| a.is_empty() && b.is_empty());
                if !both_empty {
                    w.clone_from(&p.morph_weights);
                }
            }
            None => self.frame.pose.reset(scene),
        }
        let t2 = Instant::now();
        // 3. CCD IK.
        // The solver writes the pose straight into the frame (no copy of its output).
        if let Some(ik) = &mut self.ik {
            if let Some(orbit) = ik.orbit {
                let target = orbit.at(time_s);
                for e in &mut ik.effectors {
                    e.target_model = target;
                }
            }
            let mut settings = ik.settings;
            settings.dt_s = dt_s.max(1e-6);
            CcdJob {
                scene,
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
        } else {
            self.frame.pose.locals.clone_from(&self.layered);
        }
        let t3 = Instant::now();
        // 4. Bone links follow their parent and child.
        if let Some(rig) = &self.links {
            LinkPoseJob {
                rig,
                locals: &mut self.frame.pose.locals,
            }
            .run()?;
        }
        let t4 = Instant::now();
        // 5. local→model and the gradient palette.
        self.frame.evaluate_current_pose(scene)?;
        let t5 = Instant::now();
        // 6. Skin every draw; 7. renormalise normals.
        if self.cpu_skinning {
            for (i, out) in self.outputs.iter_mut().enumerate() {
                self.skinner.skin_draw(scene, &self.frame, i, out)?;
            }
        }
        let t6 = Instant::now();
        if self.cpu_skinning {
            for (i, out) in self.outputs.iter_mut().enumerate() {
                if let Some(n) = out.normals.as_deref_mut()
                    && self.skinner.options(i).renormalize
                {
                    NormalizeJob { normals: n }.run();
                }
            }
        }
        let t7 = Instant::now();
        let us = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e6;
        times.sample = us(t0, t1);
        times.layer = us(t1, t2);
        times.ik = us(t2, t3);
        times.links = us(t3, t4);
        times.palette = us(t4, t5);
        times.skin = us(t5, t6);
        times.normals = us(t6, t7);
        times.frame = us(t0, t7);
        Ok(times)
    }
}

/// Each layer's motion compiled for four-lane sampling, with a fresh playback state.
fn compile_layers(scene: &Scene, layers: &[LayerSpec]) -> Result<Vec<(SoaClip, SoaState)>> {
    layers
        .iter()
        .map(|l| {
            let anim = scene
                .animations
                .get(l.anim)
                .ok_or_else(|| Error::UnknownAnimation {
                    model: scene.name.clone(),
                    requested: l.anim.to_string(),
                    count: scene.animations.len(),
                })?;
            let clip = SoaClip::new(scene, anim)?;
            let state = SoaState::new(&clip);
            Ok((clip, state))
        })
        .collect()
}

/// Insert the bone links a native rig asks for (per bone `links`, at the bone's base joint).
pub fn with_links(rs: &RigScene) -> Result<(Scene, LinkRig, Vec<BoneMeta>, LinkStats)> {
    let scene = &rs.scene;
    let info = BoneInfo {
        length_m: rs.bones.iter().map(|b| b.length_m).collect(),
        joint_radius_m: rs.bones.iter().map(|b| b.joint_radius_m()).collect(),
    };
    let specs: Vec<LinkSpec> = rs
        .bones
        .iter()
        .enumerate()
        .filter_map(|(n, b)| {
            let l = b.links?;
            let parent = scene.nodes[n].parent?;
            let mut spec = LinkSpec::new(parent, n);
            spec.count = l.count;
            spec.total_length_m = l.length_m;
            spec.normal_fade = l.normal_fade.unwrap_or(LinkSpec::DEFAULT_NORMAL_FADE);
            Some(spec)
        })
        .collect();
    let (linked, rig, stats) = insert_links(scene, &specs, &info)?;
    // Carry bone metadata over to the new node numbering (links get defaults).
    let mut bones = vec![BoneMeta::default(); linked.nodes.len()];
    for (old, &new) in rig.old_to_new.iter().enumerate() {
        if let (Some(b), Some(slot)) = (rs.bones.get(old), bones.get_mut(new)) {
            *slot = b.clone();
        }
    }
    Ok((linked, rig, bones, stats))
}

/// Run `frames` frames at 60 Hz and return the per-stage medians (µs).
pub fn bench(
    character: &mut Character,
    frames: usize,
    mut progress: impl FnMut(usize),
) -> Result<StageTimes> {
    let dt = 1.0 / 60.0;
    let mut all: Vec<StageTimes> = Vec::with_capacity(frames);
    // Warm-up: buffers reach their final size, caches fill.
    for i in 0..10 {
        character.update(i as f32 * dt, dt)?;
    }
    for i in 0..frames {
        all.push(character.update((i + 10) as f32 * dt, dt)?);
        progress(i);
    }
    let median = |f: &dyn Fn(&StageTimes) -> f64| {
        let mut v: Vec<f64> = all.iter().map(f).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    Ok(StageTimes {
        sample: median(&|t| t.sample),
        layer: median(&|t| t.layer),
        ik: median(&|t| t.ik),
        links: median(&|t| t.links),
        palette: median(&|t| t.palette),
        skin: median(&|t| t.skin),
        normals: median(&|t| t.normals),
        frame: median(&|t| t.frame),
    })
}

/// What a benchmark run measured on one character: its JSON form is the bench report
/// (`{"model","joints","vertices","stages_us":{...},"frame_us","cpu_kernel"}`), and it prints as
/// the stage table of Weber's §14.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchReport {
    /// Model name.
    pub model: String,
    /// Joints over all skins.
    pub joints: usize,
    /// Vertices over all draws.
    pub vertices: usize,
    /// Per-stage medians.
    pub stages_us: StageTimes,
    /// Median of whole frames.
    pub frame_us: f64,
    /// Motion layers blended.
    #[serde(skip)]
    pub layers: usize,
    /// IK effectors.
    #[serde(skip)]
    pub ik_effectors: usize,
    /// Bone links.
    #[serde(skip)]
    pub links: usize,
    /// Frames timed.
    #[serde(skip)]
    pub frames: usize,
    /// Worker threads skinning used.
    #[serde(skip)]
    pub threads: usize,
    /// The CPU kernel linear-blend skinning runs on (`portable`, `avx2` or `avx512`:
    /// [`crate::skin::simd::Kernel::chosen`]); dual-quaternion and stitched draws run the
    /// portable path whatever it says.
    pub cpu_kernel: &'static str,
}

impl BenchReport {
    /// Time `frames` frames of `character` (see [`fn@bench`]) and describe the result.
    pub fn measure(
        character: &mut Character,
        frames: usize,
        progress: impl FnMut(usize),
    ) -> Result<BenchReport> {
        let t = bench(character, frames.max(1), progress)?;
        let scene = &character.scene;
        // Nanosecond resolution: the clock's, and no float noise in the JSON.
        let ns = |us: f64| (us * 1000.0).round() / 1000.0;
        let stages = StageTimes {
            sample: ns(t.sample),
            layer: ns(t.layer),
            ik: ns(t.ik),
            links: ns(t.links),
            palette: ns(t.palette),
            skin: ns(t.skin),
            normals: ns(t.normals),
            frame: ns(t.frame),
        };
        Ok(BenchReport {
            model: scene.name.clone(),
            joints: scene.joint_count(),
            vertices: scene.vertex_count(),
            stages_us: stages,
            frame_us: stages.frame,
            layers: character.layers.len(),
            ik_effectors: character.ik.as_ref().map_or(0, |i| i.effectors.len()),
            links: character.links.as_ref().map_or(0, |l| l.links.len()),
            frames: frames.max(1),
            threads: rayon::current_num_threads(),
            cpu_kernel: crate::skin::simd::Kernel::chosen().name(),
        })
    }
}

impl std::fmt::Display for BenchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::info::count;
        let links = if self.links > 0 {
            format!(" (of which {} bone links)", self.links)
        } else {
            String::new()
        };
        writeln!(
            f,
            "model {}: {}{links}, {}, {}, {}",
            self.model,
            count(self.joints, "joint", "joints"),
            count(self.vertices, "vertex", "vertices"),
            count(self.layers, "motion layer", "motion layers"),
            count(self.ik_effectors, "IK effector", "IK effectors"),
        )?;
        writeln!(
            f,
            "median over {}, {}, skinning kernel {}:",
            count(self.frames, "frame", "frames"),
            count(self.threads, "thread", "threads"),
            self.cpu_kernel
        )?;
        let s = &self.stages_us;
        for (name, v) in [
            ("sample motion", s.sample),
            ("layer", s.layer),
            ("ik", s.ik),
            ("bone links", s.links),
            ("palette (local->model + palette)", s.palette),
            ("skin", s.skin),
            ("renormalise normals", s.normals),
        ] {
            writeln!(f, "  {name:<34} {v:>10.2} us")?;
        }
        write!(
            f,
            "  {:<34} {:>10.2} us",
            "frame (median of whole frames)", self.frame_us
        )
    }
}
