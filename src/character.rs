//! The CPU animation stage end to end for one character, in seed 000's order:
//! sample motions → layer on bone masks → CCD IK → bone links → local→model + palette →
//! skin → renormalise normals, each stage timed (Weber's table, §14).
//!
//! A [`Character`] owns every buffer it needs, so a frame allocates nothing once warm.
//! [`Character::from_scene`] plays one animation on any model; [`Character::humanoid_demo`]
//! shows the full stage: run on the lower body cross-fading from walk, a throw on the upper
//! body, the left hand reaching for a moving target by IK within the joint limits, and bone
//! links at elbows and knees.

use std::time::Instant;

use glam::Vec3;

use crate::anim::layer::{track_mask, BoneMask, CrossFade, Layer, LayerJob, DEFAULT_THRESHOLD};
use crate::anim::{AnimateJob, Cursor, Pose};
use crate::error::{Error, Result};
use crate::frame::{CpuSkinner, FrameState};
use crate::ik::{CcdJob, Effector, IkMode, IkResult, IkScratch, IkSettings, JointLimits};
use crate::links::{insert_links, BoneInfo, LinkPoseJob, LinkRig, LinkSpec, LinkStats};
use crate::math::Trs;
use crate::rig::{BoneMeta, RigScene};
use crate::scene::Scene;
use crate::skin::{NormalizeJob, SkinnedVertices};

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

/// Median time of each stage over a run, in microseconds.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct StageTimes {
    pub sample: f64,
    pub layer: f64,
    pub ik: f64,
    pub links: f64,
    pub palette: f64,
    pub skin: f64,
    pub normals: f64,
}

impl StageTimes {
    pub fn total(&self) -> f64 {
        self.sample + self.layer + self.ik + self.links + self.palette + self.skin + self.normals
    }
}

pub struct Character {
    pub scene: Scene,
    pub layers: Vec<LayerSpec>,
    pub ik: Option<IkSpec>,
    pub links: Option<LinkRig>,
    /// What inserting the links changed (weights moved, influences before/after).
    pub link_stats: Option<LinkStats>,
    pub ik_result: IkResult,
    reference: Vec<Trs>,
    layer_poses: Vec<Pose>,
    cursors: Vec<Vec<Cursor>>,
    layered: Vec<Trs>,
    ik_out: Vec<Trs>,
    previous: Option<Vec<Trs>>,
    ik_scratch: IkScratch,
    pose: Pose,
    pub frame: FrameState,
    skinner: CpuSkinner,
    pub outputs: Vec<SkinnedVertices>,
}

impl Character {
    fn new(scene: Scene, layers: Vec<LayerSpec>, ik: Option<IkSpec>, links: Option<LinkRig>) -> Character {
        let reference: Vec<Trs> = scene.nodes.iter().map(|n| n.rest).collect();
        let pose = Pose::rest(&scene);
        let mut skinner = CpuSkinner::new(&scene, None);
        skinner.normalize_normals = false;
        Character {
            layer_poses: layers.iter().map(|_| pose.clone()).collect(),
            cursors: layers.iter().map(|l| vec![Cursor::default(); scene.animations[l.anim].channels.len()]).collect(),
            layered: reference.clone(),
            ik_out: Vec::with_capacity(reference.len()),
            previous: None,
            ik_scratch: IkScratch::default(),
            ik_result: IkResult::default(),
            frame: FrameState::new(&scene),
            link_stats: None,
            outputs: vec![SkinnedVertices::default(); scene.draws.len()],
            skinner,
            pose,
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
            .map(|a| vec![LayerSpec { anim: a, mask: track_mask(&scene, &scene.animations[a]), weight: 1.0, fade: None, looping: true }])
            .unwrap_or_default();
        Character::new(scene, layers, None, None)
    }

    /// Play animation `anim` of a native rig, with the bone links its bones ask for when
    /// `links` is set (no IK).
    pub fn from_native(rig: &crate::rig::WeberRig, anim: Option<usize>, links: bool) -> Result<Character> {
        let rs = rig.to_scene()?;
        let (scene, link_rig, stats) = if links {
            let (s, l, _, st) = with_links(&rs)?;
            (s, Some(l), Some(st))
        } else {
            (rs.scene.clone(), None, None)
        };
        let mut c = Character::from_scene(scene, anim);
        // Each motion loops as the rig says (seed 000 §3.4 motions; `Motion::looping`).
        for l in &mut c.layers {
            l.looping = rs.looping.get(l.anim).copied().unwrap_or(false);
        }
        c.links = link_rig;
        c.link_stats = stats;
        Ok(c)
    }

    /// The built-in humanoid with every stage in use (see the module documentation).
    pub fn humanoid_demo() -> Result<Character> {
        let rig = crate::rig::humanoid::humanoid();
        let rs = rig.to_scene()?;
        let looping = rs.looping.clone();
        let (scene, links, bones, _) = with_links(&rs)?;
        let node = |n: &str| BoneMask::node(&scene, n).ok_or_else(|| Error::Usage(format!("humanoid has no bone {n}")));
        let upper = BoneMask::subtree(&scene, node("spine")?);
        let lower = BoneMask::invert(&upper);
        let masked = |anim: usize, mask: &[f32]| -> Vec<f32> { track_mask(&scene, &scene.animations[anim]).iter().zip(mask).map(|(a, b)| a * b).collect() };
        let fade = CrossFade { start_s: 0.5, duration_s: 0.6 };
        let layers = vec![
            // Lower body: walk cross-fading into run; upper body: the throw alone.
            LayerSpec { anim: 0, mask: masked(0, &lower), weight: 1.0, fade: Some((fade, false)), looping: looping[0] },
            LayerSpec { anim: 1, mask: masked(1, &lower), weight: 1.0, fade: Some((fade, true)), looping: looping[1] },
            // The throw does not loop: it plays once, then holds its last key.
            LayerSpec { anim: 2, mask: masked(2, &upper), weight: 1.0, fade: None, looping: looping[2] },
        ];
        let hand = node("l_hand")?;
        let limits = bones.iter().map(|b| b.limits_deg.map(|l| JointLimits::new(l.min.map(f32::to_radians), l.max.map(f32::to_radians)))).collect();
        let ik = IkSpec {
            effectors: vec![Effector { end_node: hand, chain_length: 3, tip_local: Vec3::new(bones[hand].length_m, 0.0, 0.0), target_model: Vec3::new(0.35, 1.35, 0.35), weight: 1.0 }],
            settings: IkSettings { iterations: 8, tolerance_m: 1e-3, mode: IkMode::Incremental, max_angular_velocity_rad_s: Some(12.0), dt_s: 1.0 / 60.0 },
            participation: vec![1.0; scene.nodes.len()],
            limits,
            orbit: Some((Vec3::new(0.3, 1.3, 0.3), 0.15, 2.0)),
        };
        Ok(Character::new(scene, layers, Some(ik), Some(links)))
    }

    /// Advance to `time_s` (`dt_s` since the last frame, for IK velocity limits) and skin on
    /// the CPU. Returns this frame's stage times in µs.
    pub fn update(&mut self, time_s: f32, dt_s: f32) -> Result<StageTimes> {
        let mut times = StageTimes::default();
        let scene = &self.scene;
        // 1. Sample every motion (cursors cached per layer).
        let t0 = Instant::now();
        for ((spec, pose), cursors) in self.layers.iter().zip(&mut self.layer_poses).zip(&mut self.cursors) {
            let anim = &scene.animations[spec.anim];
            let d = anim.duration_s();
            let t = if spec.looping && d > 0.0 { time_s.rem_euclid(d) } else { time_s };
            AnimateJob { scene, animation: Some(anim), time_s: t, cursors, pose }.run()?;
        }
        let t1 = Instant::now();
        // 2. Layer them through their masks.
        if self.layers.is_empty() {
            self.layered.copy_from_slice(&self.reference);
        } else {
            // A fixed array: no allocation per frame.
            let unused = Layer { pose: &self.reference, weight: 0.0, mask: None };
            let mut layers = [unused; MAX_LAYERS];
            let count = self.layers.len().min(MAX_LAYERS);
            for (slot, (spec, pose)) in layers.iter_mut().zip(self.layers.iter().zip(&self.layer_poses)) {
                let fade = spec.fade.map_or(1.0, |(f, fade_in)| {
                    let (a, b) = f.weights(time_s);
                    if fade_in { b } else { a }
                });
                *slot = Layer { pose: &pose.locals, weight: spec.weight * fade, mask: Some(&spec.mask) };
            }
            LayerJob { reference: &self.reference, layers: &layers[..count], threshold: DEFAULT_THRESHOLD, output: &mut self.layered }.run()?;
        }
        // Morph weights come from the first layer's sample (or rest).
        match self.layer_poses.first() {
            Some(p) => self.pose.morph_weights.clone_from(&p.morph_weights),
            None => self.pose.reset(scene),
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
        self.pose.locals.clone_from(locals);
        let t3 = Instant::now();
        // 4. Bone links follow their parent and child.
        if let Some(rig) = &self.links {
            LinkPoseJob { rig, locals: &mut self.pose.locals }.run()?;
        }
        let t4 = Instant::now();
        // 5. local→model and the gradient palette.
        self.frame.evaluate_pose(scene, &self.pose)?;
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
        Ok(times)
    }
}

/// Insert the bone links a native rig asks for (per bone `links`, at the bone's base joint).
pub fn with_links(rs: &RigScene) -> Result<(Scene, LinkRig, Vec<BoneMeta>, LinkStats)> {
    let scene = &rs.scene;
    let info = BoneInfo { length_m: rs.bones.iter().map(|b| b.length_m).collect(), joint_radius_m: rs.bones.iter().map(|b| b.joint_radius_m()).collect() };
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
pub fn bench(character: &mut Character, frames: usize, mut progress: impl FnMut(usize)) -> Result<StageTimes> {
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
    })
}
