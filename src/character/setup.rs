//! Setting up a character: the one place a [`Character`] is built from options. A
//! [`CharacterSetup`] says what plays (a clip, the rest pose, or the animation stage of a native
//! rig as a [`CharacterSpec`]), how the mesh is split for a bounded palette, how many influences
//! both skinning paths blend and how they blend; [`CharacterSetup::validate`] holds the rules of
//! which options combine, numbered as the jobs' rules are, and [`CharacterSetup::build`] /
//! [`CharacterSetup::build_rig`] apply them. The command line, the viewer, `compare`, `bench` and
//! the tests all build characters here; `io::Model::character` picks the right one for a loaded
//! model.

use glam::Vec3;

use super::Character;
use crate::anim::Pose;
use crate::anim::layer::{BoneMask, CrossFade, track_mask};
use crate::error::{Error, Result};
use crate::frame::{CpuSkinner, FrameState};
use crate::ik::{Effector, IkMode, IkResult, IkScratch, IkSettings, JointLimits};
use crate::links::{BoneInfo, LinkRig, LinkSpec, LinkStats, insert_links};
use crate::math::Trs;
use crate::partition::{MAX_BONES, MIN_BONES, PartitionedScene};
use crate::rig::{BoneMeta, RigScene};
use crate::scene::Scene;
use crate::skin::{SkinOptions, SkinnedVertices};

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

/// A motion of a scene, by position or by name. Written as text (`FromStr`, `Display`): digits
/// are an index, anything else a name (a clip named with digits only is reached by its index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MotionRef {
    /// Position in `scene.animations`.
    Index(usize),
    /// The animation's name.
    Name(String),
}

impl std::str::FromStr for MotionRef {
    type Err = String;

    /// `N` (digits) or a name; empty text is an error.
    fn from_str(text: &str) -> std::result::Result<MotionRef, String> {
        match text.trim() {
            "" => Err("name a motion (an animation's name or index)".into()),
            t => Ok(t
                .parse::<usize>()
                .map_or_else(|_| MotionRef::Name(t.to_string()), MotionRef::Index)),
        }
    }
}

impl std::fmt::Display for MotionRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MotionRef::Index(i) => write!(f, "{i}"),
            MotionRef::Name(n) => f.write_str(n),
        }
    }
}

impl MotionRef {
    /// Its index in `scene.animations`, or [`Error::UnknownAnimation`]
    /// ([`Scene::find_animation`] of its text).
    pub fn find(&self, scene: &Scene) -> Result<usize> {
        scene.find_animation(&self.to_string())
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
    /// The motion played.
    pub motion: MotionRef,
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

/// An IK goal: the tip of `end_bone` reaches `target_m` (model space), turning the
/// `chain_length` joints of the chain that ends at it.
#[derive(Clone, Debug, PartialEq)]
pub struct IkGoal {
    /// The bone whose tip reaches the target.
    pub end_bone: String,
    /// Joints that turn (≥ 1): the end bone and its nearest ancestors. An end bone with no
    /// length (a glTF joint) has its tip at its origin, which its own turn does not move: then
    /// its nearest ancestors alone ([`IkGoal::effector_chain`]).
    pub chain_length: usize,
    /// The target in model space (metres).
    pub target_m: Vec3,
    /// Effector weight (≥ 0) when several effectors share joints.
    pub weight: f32,
}

impl IkGoal {
    /// The solver's chain for an end bone of `length_m`: the end bone and `chain_length − 1`
    /// ancestors, or `chain_length` ancestors above an end bone with no length.
    pub fn effector_chain(&self, length_m: f32) -> usize {
        self.chain_length + usize::from(length_m <= 0.0)
    }
}

/// How to animate a native rig: layers, an optional cross-fade, IK effectors and bone links.
#[derive(Clone, Debug, PartialEq)]
pub struct CharacterSpec {
    /// Motion layers, blended in order (at most [`MAX_LAYERS`]).
    pub layers: Vec<LayerDesc>,
    /// Optional cross-fade between two of the layers.
    pub fade: Option<FadeDesc>,
    /// IK goals solved after layering (empty = no IK).
    pub ik: Vec<IkGoal>,
    /// Solver settings for the IK goals.
    pub ik_settings: IkSettings,
    /// Respect the rig's joint limits (off: every joint turns freely).
    pub ik_limits: bool,
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

    /// One full-body layer of `motion` (none: the rest pose) and the rig's links.
    pub fn single(motion: Option<MotionRef>) -> CharacterSpec {
        CharacterSpec {
            layers: motion
                .map(|motion| LayerDesc {
                    motion,
                    mask: MaskSpec::All,
                    weight: 1.0,
                })
                .into_iter()
                .collect(),
            fade: None,
            ik: Vec::new(),
            ik_settings: Self::IK_SETTINGS,
            ik_limits: true,
            orbit: None,
            links: true,
        }
    }

    /// The humanoid demo: walk cross-fading into run on the lower body, the throw alone on the
    /// upper body, the left hand reaching an orbiting target, links at elbows and knees.
    pub fn humanoid_demo() -> CharacterSpec {
        let layer = |m: &str, mask: MaskSpec| LayerDesc {
            motion: MotionRef::Name(m.into()),
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
            ik_limits: true,
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

impl LayerSpec {
    /// The layer's weight at `time_s`: its weight times its part in the cross-fade.
    pub fn weight_at(&self, time_s: f32) -> f32 {
        self.weight * self.fade.map_or(1.0, |f| f.weight(time_s))
    }

    /// Where in its clip (of `duration_s`) the layer is at `time_s`: wrapped into the clip
    /// when the layer loops, else `time_s` (the clip holds its last key).
    pub fn clip_time(&self, time_s: f32, duration_s: f32) -> f32 {
        if self.looping && duration_s > 0.0 {
            time_s.rem_euclid(duration_s)
        } else {
            time_s
        }
    }
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

/// A split of every skinned mesh into submeshes of at most `max_bones` bones (what a uniform
/// palette of K matrices per draw needs; glTF models and rigs played as clips).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitSpec {
    /// K: bones per submesh ([`MIN_BONES`]..=[`MAX_BONES`]).
    pub max_bones: usize,
    /// The GPU reads the palette as a uniform array of K matrices per draw (else the frame's
    /// storage buffer, the split only shown).
    pub uniform_palette: bool,
    /// Each submesh gets its own vertex colour (the submesh view).
    pub color_submeshes: bool,
}

/// What a split made, summed over primitives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitSummary {
    /// Submesh draws.
    pub submeshes: usize,
    /// Their lower bound (⌈bones used / K⌉ per primitive).
    pub lower_bound: usize,
    /// Vertices before the split.
    pub vertices_in: usize,
    /// Vertices after it (border vertices are duplicated).
    pub vertices_out: usize,
    /// Influences dropped to fit faces into K bones.
    pub dropped_influences: usize,
}

/// What a character plays.
#[derive(Clone, Debug, PartialEq)]
pub enum Motion {
    /// The rest pose.
    Rest,
    /// One animation over the whole model (index into `scene.animations`).
    Clip(usize),
    /// The animation stage: layers on bone masks, a cross-fade, IK, and on a native rig bone
    /// links and joint limits.
    Stage(CharacterSpec),
}

/// Everything that sets up a [`Character`] from a loaded model (see the module documentation).
///
/// Rules ([`CharacterSetup::validate`]; `build` checks the model-dependent ones, 8–9):
/// 1. At most [`MAX_LAYERS`] motion layers.
/// 2. Layer weights are finite and ≥ 0.
/// 3. A cross-fade names two different layers that exist.
/// 4. IK goals: a chain of at least one bone, a finite weight ≥ 0, a finite target.
/// 5. The orbit (the IK target's circle) has a finite centre, radius ≥ 0 and a finite rate.
/// 6. A split's K lies in [`MIN_BONES`]..=[`MAX_BONES`].
/// 7. A split and the animation stage exclude each other: the split is made from the stored
///    weights, which the stage's bone links rewrite.
/// 8. Bone links need a native rig ([`CharacterSetup::build_rig`]); the rest of the animation
///    stage (layers, a cross-fade, IK without joint limits) plays on any model.
/// 9. A clip names an animation the model has.
/// 10. The influence limit keeps at least one weight.
#[derive(Clone, Debug, PartialEq)]
pub struct CharacterSetup {
    /// What plays.
    pub motion: Motion,
    /// A clip wraps at its end (playback) instead of holding its last key (renders, dumps and
    /// comparisons at a time). The stage's layers loop as the rig says.
    pub looping: bool,
    /// Split the mesh for a bounded palette (`None`: drawn whole).
    pub split: Option<SplitSpec>,
    /// Influence limit of both skinning paths: the K largest weights, renormalised (`None`:
    /// every weight).
    pub max_influences: Option<usize>,
    /// How both paths skin (blend mode, normals).
    pub skin: SkinOptions,
}

/// [`CharacterSetup`]'s name in rule errors.
const JOB: &str = "CharacterSetup";

impl CharacterSetup {
    /// Play `anim` (`None`: the rest pose) on the whole model, holding its last key, no split,
    /// every influence, the default blend.
    pub fn clip(anim: Option<usize>) -> CharacterSetup {
        CharacterSetup {
            motion: anim.map_or(Motion::Rest, Motion::Clip),
            looping: false,
            split: None,
            max_influences: None,
            skin: SkinOptions::default(),
        }
    }

    /// Run the animation stage `spec` (native rigs).
    pub fn stage(spec: CharacterSpec) -> CharacterSetup {
        CharacterSetup {
            motion: Motion::Stage(spec),
            ..CharacterSetup::clip(None)
        }
    }

    /// The built-in humanoid's demo ([`CharacterSpec::humanoid_demo`]).
    pub fn humanoid_demo() -> CharacterSetup {
        CharacterSetup::stage(CharacterSpec::humanoid_demo())
    }

    /// The animation stage, when that is what plays.
    pub fn stage_spec(&self) -> Option<&CharacterSpec> {
        match &self.motion {
            Motion::Stage(s) => Some(s),
            _ => None,
        }
    }

    /// The animation stage, to edit.
    pub fn stage_spec_mut(&mut self) -> Option<&mut CharacterSpec> {
        match &mut self.motion {
            Motion::Stage(s) => Some(s),
            _ => None,
        }
    }

    /// Check rules 1–7 and 10 (see [`CharacterSetup`]).
    pub fn validate(&self) -> Result<()> {
        if let Motion::Stage(spec) = &self.motion {
            spec.validate()?;
            if self.split.is_some() {
                return Err(Error::job(
                    JOB,
                    7,
                    "a split is made from the stored weights, which the animation stage's bone \
                     links rewrite every frame: split a clip, or draw the stage whole",
                ));
            }
        }
        if let Some(s) = &self.split
            && !(MIN_BONES..=MAX_BONES).contains(&s.max_bones)
        {
            return Err(Error::job(
                JOB,
                6,
                format!(
                    "split into submeshes of {} bones: K must lie in {MIN_BONES}..={MAX_BONES}",
                    s.max_bones
                ),
            ));
        }
        if self.max_influences == Some(0) {
            return Err(Error::job(
                JOB,
                10,
                "influence limit 0: keep at least one weight per vertex",
            ));
        }
        Ok(())
    }

    /// A character playing this set-up on `scene` (any model: glTF or a rig's scene played as
    /// a clip; the animation stage without bone links). A rig's bone links, tips and joint
    /// limits need [`CharacterSetup::build_rig`] (rule 8).
    pub fn build(&self, scene: &Scene) -> Result<Character> {
        self.validate()?;
        let anim = match &self.motion {
            Motion::Rest => None,
            Motion::Clip(a) => Some(*a),
            Motion::Stage(spec) if spec.links => {
                return Err(Error::job(
                    JOB,
                    8,
                    format!(
                        "{}: bone links need a native rig's bones (builtin:arm, \
                         builtin:humanoid or a .rig.json); layers and IK work on any model",
                        scene.name
                    ),
                ));
            }
            Motion::Stage(spec) => {
                // Any model: layers and IK, the effector at its end joint, no joint limits.
                let looping = self.looping;
                let c = Character::from_stage(scene.clone(), None, None, &|_| looping, spec)?;
                return self.finish(c);
            }
        };
        let (mut c, summary) = match &self.split {
            Some(s) => {
                let (part, summary) = split_scene(scene, s)?;
                (
                    Character::from_scene(part, anim, self.looping)?,
                    Some(summary),
                )
            }
            None => (
                Character::from_scene(scene.clone(), anim, self.looping)?,
                None,
            ),
        };
        c.split = summary;
        self.finish(c)
    }

    /// A character playing this set-up on a native rig: the animation stage, or a clip on the
    /// rig's scene.
    pub fn build_rig(&self, rig: &RigScene) -> Result<Character> {
        match &self.motion {
            Motion::Stage(spec) => {
                self.validate()?;
                let mut c = Character::from_rig(rig, spec)?;
                if !spec.ik_limits
                    && let Some(ik) = c.ik.as_mut()
                {
                    ik.limits.iter_mut().for_each(|l| *l = None);
                }
                self.finish(c)
            }
            _ => self.build(&rig.scene),
        }
    }

    /// The influence limit and blend, once the character exists.
    fn finish(&self, mut c: Character) -> Result<Character> {
        c.set_max_influences(self.max_influences);
        c.set_skin_options(self.skin);
        Ok(c)
    }
}

/// `scene` split into submeshes of at most `s.max_bones` bones (coloured by submesh when asked).
fn split_scene(scene: &Scene, s: &SplitSpec) -> Result<(Scene, SplitSummary)> {
    let mut part = PartitionedScene::new(scene, s.max_bones)?;
    if s.color_submeshes {
        part.color_submeshes();
    }
    let stats = part.primitives.iter().map(|p| &p.partition.stats);
    let summary = SplitSummary {
        submeshes: part.submesh_count(),
        lower_bound: stats.clone().map(|s| s.lower_bound).sum(),
        vertices_in: stats.clone().map(|s| s.vertices_in).sum(),
        vertices_out: stats.map(|s| s.vertices_out).sum(),
        dropped_influences: part.dropped_influences(),
    };
    Ok((part.scene, summary))
}

impl CharacterSpec {
    /// Rules 1–5 of [`CharacterSetup`].
    pub fn validate(&self) -> Result<()> {
        if self.layers.len() > MAX_LAYERS {
            return Err(Error::TooManyLayers {
                count: self.layers.len(),
                max: MAX_LAYERS,
            });
        }
        if let Some((i, l)) = self
            .layers
            .iter()
            .enumerate()
            .find(|(_, l)| !(l.weight.is_finite() && l.weight >= 0.0))
        {
            return Err(Error::job(
                JOB,
                2,
                format!(
                    "layer {i} ({}): weight {} is not finite and >= 0",
                    l.motion, l.weight
                ),
            ));
        }
        if let Some(f) = &self.fade {
            let n = self.layers.len();
            if f.from >= n || f.to >= n || f.from == f.to {
                return Err(Error::FadeLayers {
                    from: f.from,
                    to: f.to,
                    layers: n,
                });
            }
        }
        for g in &self.ik {
            if g.chain_length == 0
                || !(g.weight.is_finite() && g.weight >= 0.0)
                || !g.target_m.is_finite()
            {
                return Err(Error::job(
                    JOB,
                    4,
                    format!(
                        "IK goal {:?}: chain of {} bones, weight {}, target {}: needs a chain of \
                         at least one bone, a finite weight >= 0 and a finite target",
                        g.end_bone, g.chain_length, g.weight, g.target_m
                    ),
                ));
            }
        }
        if let Some(o) = &self.orbit
            && !(o.centre_m.is_finite()
                && o.radius_m.is_finite()
                && o.radius_m >= 0.0
                && o.rate_rad_s.is_finite())
        {
            return Err(Error::job(
                JOB,
                5,
                format!(
                    "IK target orbit around {} of radius {} m at {} rad/s: needs finite values \
                     and a radius >= 0",
                    o.centre_m, o.radius_m, o.rate_rad_s
                ),
            ));
        }
        Ok(())
    }
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
        skinner.renormalize = false;
        let clips = super::motions::compile_layers(&scene, &layers)?;
        Ok(Character {
            layer_poses: layers.iter().map(|_| pose.clone()).collect(),
            clips,
            layered: reference.clone(),
            overrides: vec![None; reference.len()],
            morph_overrides: Vec::new(),
            previous: None,
            previous_valid: false,
            ik_scratch: IkScratch::default(),
            ik_result: IkResult::default(),
            frame: FrameState::new(&scene),
            link_stats: None,
            split: None,
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
    fn from_scene(scene: Scene, anim: Option<usize>, looping: bool) -> Result<Character> {
        let mut c = Character::new(scene, Vec::new(), None, None)?;
        c.set_clip(anim, looping)?;
        Ok(c)
    }

    /// The built-in humanoid with every stage in use (see the module documentation): the
    /// [`CharacterSetup::humanoid_demo`] set-up.
    pub fn humanoid_demo() -> Result<Character> {
        let rig = crate::builtin::humanoid_rig()?.to_scene()?;
        CharacterSetup::humanoid_demo().build_rig(&rig)
    }

    /// Any native rig with layers on bone masks, a cross-fade, IK effectors (joint limits from
    /// the rig's bones) and its bone links, as `spec` says.
    fn from_rig(rs: &RigScene, spec: &CharacterSpec) -> Result<Character> {
        let (scene, links, bones, stats) = if spec.links {
            let (s, l, b, st) = with_links(rs)?;
            (s, Some(l), b, Some(st))
        } else {
            (rs.scene.clone(), None, rs.bones.clone(), None)
        };
        let looping = |anim: usize| rs.looping.get(anim).copied().unwrap_or(false);
        let mut c = Character::from_stage(scene, Some(bones), links, &looping, spec)?;
        c.link_stats = stats;
        Ok(c)
    }

    /// The animation stage on `scene`: layers on bone masks, a cross-fade, IK effectors. With
    /// a native rig's `bones`, an effector is its bone's tip and the bones' joint limits apply;
    /// without (any glTF model), the effector is the end joint itself and no joint is limited.
    /// `looping(anim)`: whether a motion wraps at its end. `spec` was validated (rules 1-5).
    fn from_stage(
        scene: Scene,
        bones: Option<Vec<BoneMeta>>,
        links: Option<LinkRig>,
        looping: &dyn Fn(usize) -> bool,
        spec: &CharacterSpec,
    ) -> Result<Character> {
        let mut layers = Vec::with_capacity(spec.layers.len());
        for l in &spec.layers {
            let anim = l.motion.find(&scene)?;
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
                looping: looping(anim),
            });
        }
        if let Some(f) = &spec.fade {
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
                let length_m = bones
                    .as_ref()
                    .and_then(|b| b.get(end_node))
                    .map_or(0.0, |b| b.length_m);
                effectors.push(Effector {
                    end_node,
                    chain_length: e.effector_chain(length_m),
                    tip_local: Vec3::new(length_m, 0.0, 0.0),
                    target_model: e.target_m,
                    weight: e.weight,
                });
            }
            let limits = match &bones {
                Some(bones) => bones
                    .iter()
                    .map(|b| {
                        b.limits_deg.map(|l| {
                            JointLimits::new(l.min.map(f32::to_radians), l.max.map(f32::to_radians))
                        })
                    })
                    .collect(),
                None => vec![None; scene.nodes.len()],
            };
            Some(IkSpec {
                effectors,
                settings: spec.ik_settings,
                participation: vec![1.0; scene.nodes.len()],
                limits,
                orbit: spec.orbit,
            })
        };
        let mut c = Character::new(scene, layers, ik, links)?;
        c.bones = bones;
        Ok(c)
    }
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
