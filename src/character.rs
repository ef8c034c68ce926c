//! The CPU animation stage end to end for one character, in seed 000's order:
//! sample motions → layer on bone masks → CCD IK → bone links → local→model + palette →
//! skin → renormalise normals, each stage timed (Weber's table, §14).
//!
//! A [`Character`] owns every buffer it needs, so a frame allocates nothing once warm.
//! [`Character::from_scene`] plays one animation on any model; [`Character::from_spec`] sets up
//! a native rig from a [`CharacterSpec`] (layers on bone masks, a cross-fade, IK effectors with
//! the rig's joint limits, bone links), which the CLI builds from `--layer/--fade/--ik/--links`;
//! [`Character::humanoid_demo`] is the spec that shows every stage: walk cross-fading into run
//! on the lower body, a throw on the upper body, the left hand reaching a moving target, links
//! at elbows and knees.

use std::time::Instant;

use glam::Vec3;

use crate::anim::layer::{BoneMask, CrossFade, DEFAULT_THRESHOLD, Layer, LayerJob, track_mask};
use crate::anim::{AnimateJob, Cursor, Pose};
use crate::error::{Error, Result};
use crate::frame::{CpuSkinner, FrameState};
use crate::ik::{CcdJob, Effector, IkMode, IkResult, IkScratch, IkSettings, JointLimits};
use crate::links::{BoneInfo, LinkPoseJob, LinkRig, LinkSpec, LinkStats, insert_links};
use crate::math::Trs;
use crate::rig::{BoneMeta, RigScene};
use crate::scene::Scene;
use crate::skin::{NormalizeJob, SkinnedVertices};

/// Which bones a layer covers.
#[derive(Clone, Debug, PartialEq)]
pub enum MaskSpec {
    All,
    /// A bone and its descendants.
    Subtree(String),
    /// Everything but a bone's subtree.
    Except(String),
}

/// One layer of a [`CharacterSpec`]: `MOTION[:MASK[:WEIGHT]]` on the command line, MOTION a
/// name or index, MASK `all`, `BONE` (its subtree) or `!BONE` (all but its subtree).
#[derive(Clone, Debug, PartialEq)]
pub struct LayerArg {
    pub motion: String,
    pub mask: MaskSpec,
    pub weight: f32,
}

impl std::str::FromStr for LayerArg {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let mut parts = s.split(':');
        let motion = parts
            .next()
            .filter(|m| !m.is_empty())
            .ok_or("layer needs a motion: MOTION[:MASK[:WEIGHT]]")?
            .to_string();
        let mask = match parts.next() {
            None | Some("all") | Some("") => MaskSpec::All,
            Some(b) => match b.strip_prefix('!') {
                Some(rest) => MaskSpec::Except(rest.to_string()),
                None => MaskSpec::Subtree(b.to_string()),
            },
        };
        let weight = match parts.next() {
            None => 1.0,
            Some(w) => w
                .parse::<f32>()
                .ok()
                .filter(|w| w.is_finite() && *w >= 0.0)
                .ok_or(format!("layer weight {w:?} is not a finite number >= 0"))?,
        };
        if parts.next().is_some() {
            return Err(format!("{s:?}: too many ':' (MOTION[:MASK[:WEIGHT]])"));
        }
        Ok(LayerArg {
            motion,
            mask,
            weight,
        })
    }
}

/// A cross-fade between two layers (by position in the layer list): `FROM:TO:START_S:DURATION_S`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FadeArg {
    pub from: usize,
    pub to: usize,
    pub fade: CrossFade,
}

impl std::str::FromStr for FadeArg {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let p: Vec<&str> = s.split(':').collect();
        let bad = || format!("{s:?}: expected FROM_LAYER:TO_LAYER:START_S:DURATION_S");
        if p.len() != 4 {
            return Err(bad());
        }
        let from = p[0].parse().map_err(|_| bad())?;
        let to = p[1].parse().map_err(|_| bad())?;
        let start_s: f32 = p[2].parse().map_err(|_| bad())?;
        let duration_s: f32 = p[3].parse().map_err(|_| bad())?;
        if !start_s.is_finite() || !(duration_s.is_finite() && duration_s >= 0.0) {
            return Err(bad());
        }
        Ok(FadeArg {
            from,
            to,
            fade: CrossFade {
                start_s,
                duration_s,
            },
        })
    }
}

/// An IK effector: `END_BONE:CHAIN_LENGTH:X,Y,Z[:WEIGHT]`, the end bone's tip reaching the
/// model-space target.
#[derive(Clone, Debug, PartialEq)]
pub struct IkArg {
    pub end_bone: String,
    pub chain_length: usize,
    pub target_m: Vec3,
    pub weight: f32,
}

impl std::str::FromStr for IkArg {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let p: Vec<&str> = s.split(':').collect();
        let bad = |why: &str| format!("{s:?}: {why} (END_BONE:CHAIN_LENGTH:X,Y,Z[:WEIGHT])");
        if p.len() < 3 || p.len() > 4 || p[0].is_empty() {
            return Err(bad("wrong number of parts"));
        }
        let chain_length: usize = p[1]
            .parse()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| bad("chain length must be >= 1"))?;
        let xyz: Vec<f32> = p[2]
            .split(',')
            .map(|v| v.trim().parse::<f32>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad("target must be X,Y,Z"))?;
        if xyz.len() != 3 || xyz.iter().any(|v| !v.is_finite()) {
            return Err(bad("target must be three finite numbers"));
        }
        let weight = match p.get(3) {
            None => 1.0,
            Some(w) => w
                .parse::<f32>()
                .ok()
                .filter(|w| w.is_finite() && *w >= 0.0)
                .ok_or_else(|| bad("weight must be >= 0"))?,
        };
        Ok(IkArg {
            end_bone: p[0].to_string(),
            chain_length,
            target_m: Vec3::new(xyz[0], xyz[1], xyz[2]),
            weight,
        })
    }
}

/// How to animate a native rig: layers, an optional cross-fade, IK effectors and bone links.
#[derive(Clone, Debug)]
pub struct CharacterSpec {
    pub layers: Vec<LayerArg>,
    pub fade: Option<FadeArg>,
    pub ik: Vec<IkArg>,
    pub ik_settings: IkSettings,
    /// Targets orbit (centre, radius, rad/s) instead of staying put (the demo's driver).
    pub orbit: Option<(Vec3, f32, f32)>,
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
            layers: vec![LayerArg {
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
        let layer = |m: &str, mask: MaskSpec| LayerArg {
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
            fade: Some(FadeArg {
                from: 0,
                to: 1,
                fade: CrossFade {
                    start_s: 0.5,
                    duration_s: 0.6,
                },
            }),
            ik: vec![IkArg {
                end_bone: "l_hand".into(),
                chain_length: 3,
                target_m: Vec3::new(0.35, 1.35, 0.35),
                weight: 1.0,
            }],
            ik_settings: Self::IK_SETTINGS,
            orbit: Some((Vec3::new(0.3, 1.3, 0.3), 0.15, 2.0)),
            links: true,
        }
    }
}

/// Layers a character blends at once (more are ignored; ozz and game engines use a handful).
pub const MAX_LAYERS: usize = 8;

/// One motion layer.
#[derive(Clone, Debug)]
pub struct LayerSpec {
    pub anim: usize,
    /// Per node 0..1 (already multiplied by the motion's track mask).
    pub mask: Vec<f32>,
    pub weight: f32,
    /// When set, the layer's weight is scaled by the fade's B weight (fade in) or A weight
    /// (fade out).
    pub fade: Option<(CrossFade, bool)>,
    pub looping: bool,
}

/// IK set-up: effectors whose targets may move each frame, settings, per-node data.
#[derive(Clone, Debug)]
pub struct IkSpec {
    pub effectors: Vec<Effector>,
    pub settings: IkSettings,
    pub participation: Vec<f32>,
    pub limits: Vec<Option<JointLimits>>,
    /// Target path: `target(time) = centre + radius·(cos ωt, sin ωt·0.5, sin ωt)` per effector
    /// (a demo driver; callers may set `effectors[i].target_model` directly instead).
    pub orbit: Option<(Vec3, f32, f32)>,
}

/// Time of each stage in microseconds (one frame's, or medians over a run).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct StageTimes {
    pub sample: f64,
    pub layer: f64,
    pub ik: f64,
    pub links: f64,
    pub palette: f64,
    pub skin: f64,
    pub normals: f64,
    /// Whole frame: the sum for one frame; over a run, the median of per-frame sums (not the
    /// sum of the stage medians).
    pub frame: f64,
}

pub struct Character {
    pub scene: Scene,
    pub layers: Vec<LayerSpec>,
    pub ik: Option<IkSpec>,
    pub links: Option<LinkRig>,
    /// What inserting the links changed (weights moved, influences before/after).
    pub link_stats: Option<LinkStats>,
    pub ik_result: IkResult,
    /// Bones driven by hand: applied after layering, before IK (per node; `None` = not driven).
    overrides: Vec<Option<Trs>>,
    reference: Vec<Trs>,
    layer_poses: Vec<Pose>,
    cursors: Vec<Vec<Cursor>>,
    layered: Vec<Trs>,
    ik_out: Vec<Trs>,
    previous: Option<Vec<Trs>>,
    ik_scratch: IkScratch,
    pub frame: FrameState,
    skinner: CpuSkinner,
    pub outputs: Vec<SkinnedVertices>,
}

impl Character {
    fn new(
        scene: Scene,
        layers: Vec<LayerSpec>,
        ik: Option<IkSpec>,
        links: Option<LinkRig>,
    ) -> Character {
        let reference: Vec<Trs> = scene.nodes.iter().map(|n| n.rest).collect();
        let pose = Pose::rest(&scene);
        let mut skinner = CpuSkinner::new(&scene, None);
        skinner.normalize_normals = false;
        Character {
            layer_poses: layers.iter().map(|_| pose.clone()).collect(),
            cursors: layers
                .iter()
                .map(|l| vec![Cursor::default(); scene.animations[l.anim].channels.len()])
                .collect(),
            layered: reference.clone(),
            overrides: vec![None; reference.len()],
            ik_out: Vec::with_capacity(reference.len()),
            previous: None,
            ik_scratch: IkScratch::default(),
            ik_result: IkResult::default(),
            frame: FrameState::new(&scene),
            link_stats: None,
            outputs: vec![SkinnedVertices::default(); scene.draws.len()],
            skinner,
            reference,
            scene,
            layers,
            ik,
            links,
        }
    }

    /// Play animation `anim` (looping) on any scene: one full-body layer, no IK, no links.
    pub fn from_scene(scene: Scene, anim: Option<usize>) -> Character {
        let layers = anim
            .map(|a| {
                vec![LayerSpec {
                    anim: a,
                    mask: track_mask(&scene, &scene.animations[a]),
                    weight: 1.0,
                    fade: None,
                    looping: true,
                }]
            })
            .unwrap_or_default();
        Character::new(scene, layers, None, None)
    }

    /// The built-in humanoid with every stage in use (see the module documentation): the
    /// [`CharacterSpec::humanoid_demo`] set-up.
    pub fn humanoid_demo() -> Result<Character> {
        Character::from_spec(
            &crate::rig::humanoid::humanoid(),
            &CharacterSpec::humanoid_demo(),
        )
    }

    /// Any native rig with layers on bone masks, a cross-fade, IK effectors (joint limits from
    /// the rig's bones) and its bone links, as `spec` says.
    pub fn from_spec(rig: &crate::rig::WeberRig, spec: &CharacterSpec) -> Result<Character> {
        let rs = rig.to_scene()?;
        let (scene, links, bones, stats) = if spec.links {
            let (s, l, b, st) = with_links(&rs)?;
            (s, Some(l), b, Some(st))
        } else {
            let bones = rs.bones.clone();
            (rs.scene.clone(), None, bones, None)
        };
        let bone = |n: &str| {
            BoneMask::node(&scene, n)
                .ok_or_else(|| Error::Usage(format!("{}: no bone named {n:?}", rig.name)))
        };
        let motion = |m: &str| -> Result<usize> {
            if let Ok(i) = m.parse::<usize>() {
                return if i < scene.animations.len() {
                    Ok(i)
                } else {
                    Err(Error::Usage(format!(
                        "{}: motion {i} does not exist ({} motions)",
                        rig.name,
                        scene.animations.len()
                    )))
                };
            }
            scene
                .animations
                .iter()
                .position(|a| a.name.as_deref() == Some(m))
                .ok_or_else(|| Error::Usage(format!("{}: no motion named {m:?}", rig.name)))
        };
        let mut layers = Vec::with_capacity(spec.layers.len());
        for l in &spec.layers {
            let anim = motion(&l.motion)?;
            let region = match &l.mask {
                MaskSpec::All => vec![1.0; scene.nodes.len()],
                MaskSpec::Subtree(b) => BoneMask::subtree(&scene, bone(b)?),
                MaskSpec::Except(b) => BoneMask::invert(&BoneMask::subtree(&scene, bone(b)?)),
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
                return Err(Error::Usage(format!(
                    "--fade {}:{}: layers are numbered 0..{n} and must differ",
                    f.from, f.to
                )));
            }
            layers[f.from].fade = Some((f.fade, false));
            layers[f.to].fade = Some((f.fade, true));
        }
        if layers.len() > MAX_LAYERS {
            return Err(Error::Usage(format!(
                "{} layers; at most {MAX_LAYERS}",
                layers.len()
            )));
        }
        let ik = if spec.ik.is_empty() {
            None
        } else {
            let mut effectors = Vec::with_capacity(spec.ik.len());
            for e in &spec.ik {
                let end_node = bone(&e.end_bone)?;
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
        let mut c = Character::new(scene, layers, ik, links);
        c.link_stats = stats;
        Ok(c)
    }

    /// Drive `node`'s local transform by hand from the next frame on (it replaces the layered
    /// motion; IK may still rotate it when it is in a chain). `None` hands it back to the motions.
    pub fn set_override(&mut self, node: usize, local: Option<Trs>) -> Result<()> {
        let n = self.overrides.len();
        let slot = self
            .overrides
            .get_mut(node)
            .ok_or_else(|| Error::Usage(format!("bone {node} does not exist ({n} nodes)")))?;
        if let Some(t) = &local {
            if !(t.translation.is_finite() && t.rotation.is_finite() && t.scale.is_finite())
                || t.rotation.length() < 1e-6
            {
                return Err(Error::Usage(format!(
                    "override of bone {node} is not a finite transform with a non-zero rotation"
                )));
            }
        }
        *slot = local.map(|t| Trs {
            rotation: t.rotation.normalize(),
            ..t
        });
        Ok(())
    }

    /// Advance to `time_s` (`dt_s` since the last frame, for IK velocity limits) and skin on
    /// the CPU. Returns this frame's stage times in µs.
    pub fn update(&mut self, time_s: f32, dt_s: f32) -> Result<StageTimes> {
        let mut times = StageTimes::default();
        let scene = &self.scene;
        // 1. Sample every motion (cursors cached per layer).
        let t0 = Instant::now();
        for ((spec, pose), cursors) in self
            .layers
            .iter()
            .zip(&mut self.layer_poses)
            .zip(&mut self.cursors)
        {
            let anim = &scene.animations[spec.anim];
            let d = anim.duration_s();
            let t = if spec.looping && d > 0.0 {
                time_s.rem_euclid(d)
            } else {
                time_s
            };
            AnimateJob {
                scene,
                animation: Some(anim),
                time_s: t,
                cursors,
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
                let fade = spec.fade.map_or(1.0, |(f, fade_in)| {
                    let (a, b) = f.weights(time_s);
                    if fade_in { b } else { a }
                });
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
            Some(p) => self.frame.pose.morph_weights.clone_from(&p.morph_weights),
            None => self.frame.pose.reset(scene),
        }
        let t2 = Instant::now();
        // 3. CCD IK.
        let mut locals = &self.layered;
        if let Some(ik) = &mut self.ik {
            if let Some((centre, radius, omega)) = ik.orbit {
                let a = omega * time_s;
                for e in &mut ik.effectors {
                    e.target_model = centre + radius * Vec3::new(a.cos(), 0.5 * a.sin(), a.sin());
                }
            }
            let mut settings = ik.settings;
            settings.dt_s = dt_s.max(1e-6);
            CcdJob {
                scene,
                reference: &self.reference,
                input: &self.layered,
                previous: self.previous.as_deref(),
                participation: &ik.participation,
                limits: &ik.limits,
                effectors: &ik.effectors,
                settings,
                output: &mut self.ik_out,
                result: &mut self.ik_result,
                scratch: &mut self.ik_scratch,
            }
            .run()?;
            match &mut self.previous {
                Some(p) => p.copy_from_slice(&self.ik_out),
                None => self.previous = Some(self.ik_out.clone()),
            }
            locals = &self.ik_out;
        }
        self.frame.pose.locals.clone_from(locals);
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
        for (i, out) in self.outputs.iter_mut().enumerate() {
            self.skinner.skin_draw(scene, &self.frame, i, out)?;
        }
        let t6 = Instant::now();
        for out in &mut self.outputs {
            if let Some(n) = out.normals.as_deref_mut() {
                NormalizeJob { normals: n }.run();
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
