//! CcdJob: Cyclic Coordinate Descent IK with several weighted effectors, per-bone participation,
//! reference-based or incremental starts, Euler joint limits and angular velocity limiting.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §Using Inverse Kinematics, §Reference-based IK
//! to §Joint Constraints (several effectors, the starts, velocity and joint limits); CCD as
//! Welman, "Inverse Kinematics and Geometric Constraints for Articulated Figure Manipulation"
//! (MSc thesis, Simon Fraser University, 1993), and Lander, "Making Kine More Flexible" (Game
//! Developer, 1998), describe it.
//!
//! Method: one iteration visits every chain joint once, from the chain ends towards the roots
//! (descending node index: nodes are depth-first, so a child always comes before its parent).
//! At a joint, every effector whose chain contains it proposes the shortest-arc rotation that
//! turns (joint → current tip) onto (joint → target). The arc is taken in the joint's
//! parent-relative frame `F = model_from_parent · T` (the frame its local rotation acts in):
//! both vectors are mapped by the inverse of the parent's linear part, so with scale in the
//! chain, non-uniform included, the rotated tip still lands on the model-space ray towards
//! the target. The proposals are blended by effector weight (normalised weighted quaternion
//! sum, see below), the angle is scaled by the joint's participation weight, the result is
//! pre-multiplied onto the local rotation and clamped by the joint's limits
//! ([`JointLimits`], ZYX, relative to `reference`). The joint's chain descendants'
//! model matrices are then updated so the next joint sees the new tips. Iterations stop when
//! every weighted effector is within `tolerance_m` or after `settings.iterations`.
//!
//! Blend of several effectors (§5, figure 3): each proposal is a shortest arc, so its `w` is
//! ≥ 0 and all proposals lie in one hemisphere; the blend is `normalize(Σ wₖ·qₖ)`. For two
//! effectors it lies on the great arc between the two proposals and moves monotonically
//! from one to the other as the weights go from (1, 0) to (0, 1). Weights are relative: a
//! joint in a single weighted chain turns fully whatever that effector's weight; how much a
//! joint turns is the participation weight's job. An effector with weight 0 is switched off:
//! it neither resets nor turns any joint (its chain keeps `input` unless another effector
//! covers it) and `reached` ignores it; its residual is still reported.
//!
//! Starts (§5.1/§5.2): `ReferenceBased` resets chain joints' rotations to `reference` every
//! frame (same root and target → bit-identical result every frame); `Incremental` starts from
//! `previous` (last frame's output) when given, else from `input`. Translations and scales
//! always come from `input`. Every start rotation is clamped to the joint limits first, but
//! for the rotation this scratch last returned for that joint, under the same limits and
//! reference: it was clamped then and is taken as it is (the usual incremental start).
//! A joint with participation 0 is not part of the solve at all: it keeps its `input` rotation
//! exactly (no reset, no clamp, no velocity limit) but still moves with its parents.
//!
//! Velocity limiting (§5.3): after solving, when `max_angular_velocity_rad_s` is set and
//! `previous` is given, each solved joint's difference `d = q · q_prev⁻¹` is converted to
//! angle/axis; an angle above `max · dt` is cut to exactly that and converted back
//! (`q = axis_angle(axis, max·dt) · q_prev`), then the joint limits are applied again, so the
//! limits always hold. The cap is exact for joints without limits; for a limited joint the
//! cut rotation lies between two in-box rotations and the re-clamp only corrects the small
//! amount by which the Euler box is not convex along that arc. Residuals are measured after
//! this step, so `reached` describes the returned pose.
//!
//! Degenerate cases give defined results: an arm shorter than [`MIN_ARM_M`] (target at the
//! joint, tip at the joint, zero-length bones) gives that effector no say at that joint; a
//! parent frame with a singular linear part (zero scale) leaves the joint unturned; an
//! unreachable target stretches the chain towards it (`reached = false`, residual ≥ the
//! distance beyond reach); opposite 180° proposals that cancel leave the joint unturned.
//! NaN or infinite inputs are validate errors. Nothing panics and nothing becomes NaN.
//!
//! Cost: per iteration, for each chain joint with `e` effectors through it: one 3x3 inverse, `e`
//! point transforms and shortest arcs, one clamp (a few `atan2`), and one matrix product per chain
//! node below it (O(c²) for a chain of c joints; c is small). Setup is O(nodes) (marking the chain
//! nodes' ancestors; local→model only for those and the chain). No allocation once `IkScratch` and
//! the output vectors have grown.
//!
//! Limits: CCD favours the joints near the tip (they turn first), converges linearly and can
//! stall when limits block the direct path; Euler boxes are not convex; several effectors
//! that disagree converge to a weighted compromise, not a least-squares optimum.

use glam::{Mat3A, Mat4, Quat, Vec3, Vec3A, Vec4};

use super::limits::{InsideTest, JointLimits, normalize_or_identity};
use crate::error::{Error, Result};
use crate::math::Trs;
use crate::scene::{Node, Scene};
use crate::skeleton::compose_model;

/// Arms (joint → tip, joint → target) shorter than this (model units, metres) have no
/// direction: the effector does not turn that joint.
pub const MIN_ARM_M: f32 = 1e-6;

/// One end effector: bring a point of `end_node` to `target_model` by rotating the chain
/// `end_node` and its `chain_length - 1` nearest ancestors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Effector {
    /// Last node of the chain (index into `scene.nodes`); its tip is pulled to the target.
    pub end_node: usize,
    /// Joints rotated, counting `end_node` and its ancestors (1 = only `end_node`).
    pub chain_length: usize,
    /// Point in `end_node`'s local frame to bring to the target, e.g. `(bone_length, 0, 0)`
    /// for bones along +X, `Vec3::ZERO` for a glTF joint origin.
    pub tip_local: Vec3,
    /// Target position in model space (metres).
    pub target_model: Vec3,
    /// Relative weight where chains share joints (≥ 0; 0 = ignored).
    pub weight: f32,
}

/// Where the chain joints start each frame (Weber, "Run-Time Skin Deformation", §Reference-based IK
/// / §Incremental IK).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IkMode {
    /// Start from `reference` every frame.
    ReferenceBased,
    /// Start from `previous` (last frame's solution) when given, else from `input`.
    Incremental,
}

/// Solver settings of a [`CcdJob`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IkSettings {
    /// Maximum CCD sweeps (≥ 1).
    pub iterations: u32,
    /// An effector is reached when its tip is within this distance (model units).
    pub tolerance_m: f32,
    /// Where the chain joints start each frame.
    pub mode: IkMode,
    /// Cap on each solved joint's rotation change from `previous`, per second.
    pub max_angular_velocity_rad_s: Option<f32>,
    /// Frame time for the velocity cap (> 0).
    pub dt_s: f32,
}

impl Default for IkSettings {
    fn default() -> Self {
        IkSettings {
            iterations: 10,
            tolerance_m: 1e-3,
            mode: IkMode::ReferenceBased,
            max_angular_velocity_rad_s: None,
            dt_s: 1.0 / 60.0,
        }
    }
}

/// Outcome of one [`CcdJob`] run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IkResult {
    /// Every effector with weight > 0 is within `tolerance_m` (true when there are none).
    pub reached: bool,
    /// Per effector: distance from its tip to its target in the output pose.
    pub residual_m: Vec<f32>,
    /// CCD sweeps run (0 when the start pose already reached every target).
    pub iterations_used: u32,
}

/// Reusable buffers for [`CcdJob`]: keep one per solver so frames do not allocate.
#[derive(Clone, Debug, Default)]
pub struct IkScratch {
    /// `model_from_node` for chain nodes and their ancestors (`used`; other entries are stale
    /// and never read), indexed by node, at least up to the deepest chain node.
    model: Vec<Mat4>,
    /// `parent_from_node` (the local matrix) of the same nodes, kept current as chain joints
    /// turn, so a subtree update is products only.
    local: Vec<Mat4>,
    /// Per node: recomputed in the current subtree update (all false between uses).
    moved: Vec<bool>,
    /// Every chain node (any participation), ascending, unique.
    path: Vec<usize>,
    /// The chain nodes and all their ancestors, ascending: the nodes whose model matrices the
    /// solver reads, and so those a turn must bring up to date below it (a node between two
    /// chains, e.g. a wrist under one chain's elbow above another chain's finger, included).
    used: Vec<usize>,
    /// (joint, effector) for weighted effectors' chain joints with participation > 0,
    /// joints descending.
    pairs: Vec<(usize, usize)>,
    /// Per solved joint: this frame's limits (`None`: none) and their trig-free inside test,
    /// kept between frames so the test is made again only when the limits change.
    inside: Vec<Option<(JointLimits, InsideTest)>>,
    /// Per solved joint: its reference rotation normalised (once per frame, not per step).
    reference_unit: Vec<Quat>,
    /// Per solved joint: the rotation the last run that solved it returned for it (`None`:
    /// never solved), under that run's `inside` limits and `reference_unit` (kept with it);
    /// a start equal to it is already clamped.
    returned: Vec<Option<Quat>>,
}

/// CCD inverse kinematics on one pose.
///
/// Validation rules:
/// 1. `reference` and `input` have one entry per scene node;
/// 2. `previous`, when given, has one entry per scene node;
/// 3. `participation` is empty (every weight 1) or has one entry per node, each chain node's
///    in [0, 1] (the solver reads no other);
/// 4. `limits` is empty (no limits) or has one entry per node; the chain nodes' given limits
///    are finite with `min_rad <= max_rad` on every axis (the solver reads no other);
/// 5. every effector's `end_node` is a scene node;
/// 6. every effector's `chain_length` is at least 1 and at most 1 + the number of ancestors
///    of its `end_node`;
/// 7. no chain node is a `matrix` node (its local transform is fixed: it cannot rotate);
/// 8. every effector's `tip_local` and `target_model` are finite, its `weight` finite and ≥ 0;
/// 9. settings: `iterations >= 1`, `tolerance_m` finite and ≥ 0, `dt_s` finite and > 0,
///    `max_angular_velocity_rad_s`, when given, finite and ≥ 0;
/// 10. every `input` local is finite, and the `reference` and `previous` locals of chain
///     nodes are finite.
pub struct CcdJob<'a> {
    /// The scene whose nodes the poses index.
    pub scene: &'a Scene,
    /// Reference (rest) locals: limits are relative to their rotations; `ReferenceBased`
    /// starts chains from them.
    pub reference: &'a [Trs],
    /// This frame's FK pose.
    pub input: &'a [Trs],
    /// Last frame's solved pose: the `Incremental` start and the velocity-limit base.
    pub previous: Option<&'a [Trs]>,
    /// Per node, 0..=1 (empty = all 1): scales the angle a joint turns per step.
    pub participation: &'a [f32],
    /// Per node (empty = none): Euler-box limits relative to `reference`.
    pub limits: &'a [Option<JointLimits>],
    /// End effectors to satisfy.
    pub effectors: &'a [Effector],
    /// Iterations, tolerance, start mode and velocity cap.
    pub settings: IkSettings,
    /// The solved pose (one entry per node; overwritten).
    pub output: &'a mut Vec<Trs>,
    /// Receives whether the targets were reached, residuals and iterations used.
    pub result: &'a mut IkResult,
    /// Reusable buffers (see [`IkScratch`]).
    pub scratch: &'a mut IkScratch,
}

const JOB: &str = "CcdJob";

fn trs_is_finite(t: &Trs) -> bool {
    t.translation.is_finite() && t.rotation.is_finite() && t.scale.is_finite()
}

impl CcdJob<'_> {
    /// Check the numbered rules above.
    pub fn validate(&self) -> Result<()> {
        let n = self.scene.nodes.len();
        self.validate_pose_lengths(n)?;
        self.validate_participation(n)?;
        self.validate_limits(n)?;
        for (e, eff) in self.effectors.iter().enumerate() {
            self.validate_effector(e, eff, n)?;
        }
        validate_settings(&self.settings)?;
        self.validate_input()
    }

    /// Rules 1 and 2: `reference`, `input` and `previous` (when given) have `n` entries.
    fn validate_pose_lengths(&self, n: usize) -> Result<()> {
        if self.reference.len() != n || self.input.len() != n {
            return Err(Error::job(
                JOB,
                1,
                format!(
                    "{} reference and {} input locals for {n} nodes",
                    self.reference.len(),
                    self.input.len()
                ),
            ));
        }
        if let Some(p) = self.previous
            && p.len() != n
        {
            return Err(Error::job(
                JOB,
                2,
                format!("{} previous locals for {n} nodes", p.len()),
            ));
        }
        Ok(())
    }

    /// Rule 3's count: `participation` is empty or has `n` weights (their range is checked
    /// on the chains, [`CcdJob::validate_chain`]).
    fn validate_participation(&self, n: usize) -> Result<()> {
        if !self.participation.is_empty() && self.participation.len() != n {
            return Err(Error::job(
                JOB,
                3,
                format!(
                    "{} participation weights for {n} nodes",
                    self.participation.len()
                ),
            ));
        }
        Ok(())
    }

    /// Rule 4's count: `limits` is empty or has `n` entries (their values are checked on the
    /// chains, [`CcdJob::validate_chain`]).
    fn validate_limits(&self, n: usize) -> Result<()> {
        if !self.limits.is_empty() && self.limits.len() != n {
            return Err(Error::job(
                JOB,
                4,
                format!("{} joint limits for {n} nodes", self.limits.len()),
            ));
        }
        Ok(())
    }

    /// Rules 3 and 4 at chain node `node`: its participation weight lies in [0, 1] and its
    /// limits, when given, are finite with min <= max.
    fn validate_chain_node(&self, node: usize) -> Result<()> {
        if let Some(&w) = self.participation.get(node)
            && !(0.0..=1.0).contains(&w)
        {
            return Err(Error::job(
                JOB,
                3,
                format!("participation[{node}] = {w} is not in [0, 1]"),
            ));
        }
        if let Some(Some(l)) = self.limits.get(node)
            && !l.is_valid()
        {
            return Err(Error::job(
                JOB,
                4,
                format!("limits[{node}] = {l:?} are not finite with min <= max"),
            ));
        }
        Ok(())
    }

    /// Rules 5 to 8 for effector `e` (and rules 3, 4 and 10 for its chain's participation,
    /// limits, reference and previous locals, checked as the chain is walked).
    fn validate_effector(&self, e: usize, eff: &Effector, n: usize) -> Result<()> {
        if eff.end_node >= n {
            return Err(Error::job(
                JOB,
                5,
                format!(
                    "effectors[{e}].end_node {} is not one of {n} nodes",
                    eff.end_node
                ),
            ));
        }
        if eff.chain_length == 0 {
            return Err(Error::job(
                JOB,
                6,
                format!("effectors[{e}].chain_length is 0"),
            ));
        }
        self.validate_chain(e, eff)?;
        if !eff.tip_local.is_finite() || !eff.target_model.is_finite() {
            return Err(Error::job(
                JOB,
                8,
                format!(
                    "effectors[{e}]: tip {} or target {} is not finite",
                    eff.tip_local, eff.target_model
                ),
            ));
        }
        if !eff.weight.is_finite() || eff.weight < 0.0 {
            return Err(Error::job(
                JOB,
                8,
                format!(
                    "effectors[{e}].weight {} is not finite and >= 0",
                    eff.weight
                ),
            ));
        }
        Ok(())
    }

    /// Rules 3, 4, 6, 7 and 10 along effector `e`'s chain (its `end_node` in range): valid
    /// participation and limits, enough ancestors, none a `matrix` node, finite reference and
    /// previous locals.
    fn validate_chain(&self, e: usize, eff: &Effector) -> Result<()> {
        let mut k = Some(eff.end_node);
        for c in 0..eff.chain_length {
            let Some(node) = k else {
                return Err(Error::job(
                    JOB,
                    6,
                    format!(
                        "effectors[{e}].chain_length {} exceeds node {}'s {c} joints up to the root",
                        eff.chain_length, eff.end_node
                    ),
                ));
            };
            self.validate_chain_node(node)?;
            if self.scene.nodes[node].matrix.is_some() {
                return Err(Error::job(
                    JOB,
                    7,
                    format!("effectors[{e}]: chain node {node} is a matrix node and cannot rotate"),
                ));
            }
            if !trs_is_finite(&self.reference[node])
                || self.previous.is_some_and(|p| !trs_is_finite(&p[node]))
            {
                return Err(Error::job(
                    JOB,
                    10,
                    format!(
                        "effectors[{e}]: reference or previous local of chain node {node} is not finite"
                    ),
                ));
            }
            k = self.scene.nodes[node].parent;
        }
        Ok(())
    }

    /// Rule 10: every `input` local is finite.
    fn validate_input(&self) -> Result<()> {
        // Every frame: first a branch-free pass (x·0 is 0 for finite x, NaN otherwise; four
        // lanes summed across nodes, one horizontal sum at the end), the search for the
        // culprit only when it fails. Two sums, each taking every other node (the fold swaps
        // them), so each node waits on the add of the node before last, not on that of the last.
        let zero = |t: &Trs| {
            Vec4::from(t.rotation) * 0.0 + (t.translation * 0.0 + t.scale * 0.0).extend(0.0)
        };
        let (a, b) = self
            .input
            .iter()
            .fold((Vec4::ZERO, Vec4::ZERO), |(a, b), t| (b, a + zero(t)));
        if (a + b).element_sum() != 0.0
            && let Some(i) = self.input.iter().position(|t| !trs_is_finite(t))
        {
            return Err(Error::job(JOB, 10, format!("input[{i}] is not finite")));
        }
        Ok(())
    }

    /// Validate, then solve: write the solved pose to `output` and the outcome to `result`.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let job = Solve {
            nodes: &self.scene.nodes,
            effectors: self.effectors,
            participation: self.participation,
            limits: self.limits,
            reference: self.reference,
            previous: self.previous,
            settings: self.settings,
        };
        let out = &mut *self.output;
        let s = &mut *self.scratch;
        let result = &mut *self.result;

        out.clear();
        out.extend_from_slice(self.input);
        s.gather_chains(&job);
        s.start_rotations(&job, out);
        s.chain_models(job.nodes, out);

        let settings = job.settings;
        let tolerance = settings.tolerance_m;
        let mut done = residuals(&s.model, job.effectors, tolerance, &mut result.residual_m);
        let mut used = 0u32;
        while used < settings.iterations && !done {
            used += 1;
            s.sweep(&job, out);
            done = residuals(&s.model, job.effectors, tolerance, &mut result.residual_m);
        }

        // Velocity limiting (§5.3).
        if let (Some(max), Some(prev)) = (settings.max_angular_velocity_rad_s, job.previous)
            && s.limit_velocity(VelocityCap::new(max * settings.dt_s), prev, out)
        {
            for &k in &s.used {
                s.model[k] = model_from_local(&job.nodes[k], &s.model, &s.local[k]);
            }
            done = residuals(&s.model, job.effectors, tolerance, &mut result.residual_m);
        }

        for &(j, _) in &s.pairs {
            s.returned[j] = Some(out[j].rotation);
        }
        result.reached = done;
        result.iterations_used = used;
        Ok(())
    }
}

/// Rule 9: the solver settings.
fn validate_settings(s: &IkSettings) -> Result<()> {
    if s.iterations == 0 {
        return Err(Error::job(JOB, 9, "iterations is 0"));
    }
    if !s.tolerance_m.is_finite() || s.tolerance_m < 0.0 {
        return Err(Error::job(
            JOB,
            9,
            format!("tolerance {} is not finite and >= 0", s.tolerance_m),
        ));
    }
    if !s.dt_s.is_finite() || s.dt_s <= 0.0 {
        return Err(Error::job(
            JOB,
            9,
            format!("dt {} is not finite and > 0", s.dt_s),
        ));
    }
    if let Some(v) = s.max_angular_velocity_rad_s
        && (!v.is_finite() || v < 0.0)
    {
        return Err(Error::job(
            JOB,
            9,
            format!("max angular velocity {v} is not finite and >= 0"),
        ));
    }
    Ok(())
}

/// What one solve reads: the job's inputs, borrowed apart from its outputs and scratch.
struct Solve<'a> {
    /// The scene's nodes.
    nodes: &'a [Node],
    /// End effectors.
    effectors: &'a [Effector],
    /// Per node participation (empty = all 1).
    participation: &'a [f32],
    /// Per node limits (empty = none).
    limits: &'a [Option<JointLimits>],
    /// Reference locals.
    reference: &'a [Trs],
    /// Last frame's solved locals.
    previous: Option<&'a [Trs]>,
    /// Iterations, tolerance, start mode and velocity cap.
    settings: IkSettings,
}

impl Solve<'_> {
    /// Node `i`'s participation weight (1 when none are given).
    #[inline]
    fn participation(&self, i: usize) -> f32 {
        self.participation.get(i).copied().unwrap_or(1.0)
    }

    /// Node `i`'s limits, if any.
    #[inline]
    fn limit_of(&self, i: usize) -> Option<JointLimits> {
        self.limits.get(i).copied().flatten()
    }
}

impl IkScratch {
    /// The chain nodes (`path`, ascending) and the (joint, effector) pairs of weighted
    /// effectors' participating joints (`pairs`, joints descending).
    fn gather_chains(&mut self, job: &Solve) {
        self.path.clear();
        self.pairs.clear();
        for (e, eff) in job.effectors.iter().enumerate() {
            let mut k = eff.end_node;
            for c in 0..eff.chain_length {
                self.path.push(k);
                if eff.weight > 0.0 && job.participation(k) > 0.0 {
                    self.pairs.push((k, e));
                }
                if c + 1 < eff.chain_length {
                    // validate() rule 6 guarantees the ancestor exists; stop the chain if not.
                    match job.nodes[k].parent {
                        Some(p) => k = p,
                        None => break,
                    }
                }
            }
        }
        // One effector (the usual case) pushes its chain end first: already descending, so the
        // sorts are skipped.
        if self.path.is_sorted_by(|a, b| a >= b) {
            self.path.reverse();
        } else {
            self.path.sort_unstable();
        }
        self.path.dedup();
        let order = |a: &(usize, usize), b: &(usize, usize)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
        if !self.pairs.is_sorted_by(|a, b| order(a, b).is_le()) {
            self.pairs.sort_unstable_by(order);
        }
    }

    /// Start rotations of the solved joints in `out` (§5.1 / §5.2), clamped to the limits
    /// (their inside tests made when the limits are new or changed).
    fn start_rotations(&mut self, job: &Solve, out: &mut [Trs]) {
        let n = job.nodes.len();
        if self.inside.len() < n {
            self.inside.resize(n, None);
        }
        if self.reference_unit.len() < n {
            self.reference_unit.resize(n, Quat::IDENTITY);
        }
        if self.returned.len() < n {
            self.returned.resize(n, None);
        }
        let mut prev_joint = usize::MAX;
        for &(j, _) in &self.pairs {
            if j == prev_joint {
                continue;
            }
            prev_joint = j;
            let start = match (job.settings.mode, job.previous) {
                (IkMode::ReferenceBased, _) => job.reference[j].rotation,
                (IkMode::Incremental, Some(p)) => p[j].rotation,
                (IkMode::Incremental, None) => out[j].rotation,
            };
            // This frame's limits with their inside test (made again only when they changed):
            // what every clamp of `j` below uses.
            let mut kept = true;
            match job.limit_of(j) {
                Some(l) if self.inside[j].is_none_or(|(cached, _)| cached != l) => {
                    self.inside[j] = Some((l, InsideTest::new(&l)));
                    kept = false;
                }
                Some(_) => {}
                None => {
                    kept = self.inside[j].is_none();
                    self.inside[j] = None;
                }
            }
            let r_unit = normalize_or_identity(job.reference[j].rotation);
            kept &= r_unit == self.reference_unit[j];
            self.reference_unit[j] = r_unit;
            // The rotation this scratch last returned for the joint, under the same limits and
            // reference (an incremental start from `previous`), is already clamped: taken as
            // it is. A joint sitting on a bound would otherwise go through the clamp's
            // decomposition every frame only to come back unchanged or a rounding away.
            out[j].rotation = if kept && self.returned[j] == Some(start) {
                start
            } else {
                clamp_joint(&self.inside[j], r_unit, normalize_or_identity(start))
            };
        }
    }

    /// Local and model matrices of the chain nodes and their ancestors (nothing else is
    /// read), listed ascending in `used`.
    fn chain_models(&mut self, nodes: &[Node], out: &[Trs]) {
        let top = self.path.last().map_or(0, |&k| k + 1);
        // Grown, never cleared: `moved` is all false between uses (this loop and
        // `update_subtree` put back what they set), and `model` and `local` are read only at
        // the nodes written below (`used`: a used node's parent is used too).
        if self.moved.len() < top {
            self.moved.resize(top, false);
            self.model.resize(top, Mat4::IDENTITY);
            self.local.resize(top, Mat4::IDENTITY);
        }
        for &k in &self.path {
            // Mark k and its unmarked ancestors (parents have lower indices: depth-first).
            let mut n = Some(k);
            while let Some(i) = n {
                if self.moved[i] {
                    break;
                }
                self.moved[i] = true;
                n = nodes[i].parent;
            }
        }
        self.used.clear();
        for i in 0..top {
            if !self.moved[i] {
                continue;
            }
            self.moved[i] = false;
            self.used.push(i);
            self.local[i] = nodes[i].matrix.unwrap_or_else(|| out[i].to_mat4());
            self.model[i] = model_from_local(&nodes[i], &self.model, &self.local[i]);
        }
    }

    /// One CCD iteration: every solved joint, deepest first, turned by its effectors'
    /// blended proposal and clamped; the model matrices below it brought up to date.
    fn sweep(&mut self, job: &Solve, out: &mut [Trs]) {
        let mut g = 0;
        while g < self.pairs.len() {
            let j = self.pairs[g].0;
            let mut h = g;
            while h < self.pairs.len() && self.pairs[h].0 == j {
                h += 1;
            }
            let turned = turn_joint(
                j,
                &self.pairs[g..h],
                job.nodes[j].parent,
                &self.model,
                job.effectors,
                job.participation(j),
            );
            g = h;
            let Some(delta) = turned else { continue };
            let q = normalize_or_identity(delta * out[j].rotation);
            let q = clamp_joint(&self.inside[j], self.reference_unit[j], q);
            if q == out[j].rotation {
                continue;
            }
            out[j].rotation = q;
            self.local[j] = out[j].to_mat4();
            update_subtree(
                j,
                job.nodes,
                &self.used,
                &self.local,
                &mut self.model,
                &mut self.moved,
            );
        }
    }

    /// §5.3: cut each solved joint's change from `prev` to `cap` and clamp it again; true when
    /// any joint was cut (its local matrix is current, the model matrices are not).
    fn limit_velocity(&mut self, cap: VelocityCap, prev: &[Trs], out: &mut [Trs]) -> bool {
        let mut changed = false;
        let mut prev_joint = usize::MAX;
        for &(j, _) in &self.pairs {
            if j == prev_joint {
                continue;
            }
            prev_joint = j;
            let qp = normalize_or_identity(prev[j].rotation);
            if let Some(q) = cap.limit(qp, out[j].rotation) {
                out[j].rotation = clamp_joint(&self.inside[j], self.reference_unit[j], q);
                // The other chain locals are current: every turn above kept them so.
                self.local[j] = out[j].to_mat4();
                changed = true;
            }
        }
        changed
    }
}

/// The joint's limits (with their inside test, as set for this frame) applied to `q_unit`
/// relative to `r_unit`, both already normalised: `limits.clamp(r_unit, q_unit)`, without the
/// decomposition when the test finds `q_unit` inside; `q_unit` when the joint has no limits.
#[inline]
fn clamp_joint(limits: &Option<(JointLimits, InsideTest)>, r_unit: Quat, q_unit: Quat) -> Quat {
    match limits {
        Some((l, test)) => l.clamp_tested_unit(test, r_unit, q_unit),
        None => q_unit,
    }
}

/// Model-space tip of an effector.
#[inline]
fn tip_model(model: &[Mat4], eff: &Effector) -> Vec3A {
    model[eff.end_node].transform_point3a(eff.tip_local.into())
}

/// Fill per-effector residuals; true when every weighted effector is within tolerance.
fn residuals(model: &[Mat4], effectors: &[Effector], tolerance: f32, out: &mut Vec<f32>) -> bool {
    out.clear();
    let mut all = true;
    for eff in effectors {
        let r = Vec3::from(tip_model(model, eff)).distance(eff.target_model);
        out.push(r);
        if eff.weight > 0.0 && (r.is_nan() || r > tolerance) {
            all = false;
        }
    }
    all
}

/// The blended, participation-scaled rotation (in the joint's parent-relative frame) for one
/// CCD step at joint `j`, or `None` when the joint does not turn. Not always unit length: a
/// single full-participation proposal comes as [`rotation_arc_scaled`] returns it, and the
/// caller normalises its product with the joint's rotation.
fn turn_joint(
    j: usize,
    pairs: &[(usize, usize)],
    parent: Option<usize>,
    model: &[Mat4],
    effectors: &[Effector],
    participation: f32,
) -> Option<Quat> {
    let pivot = Vec3A::from_vec4(model[j].w_axis);
    // Inverse of the parent's linear part: model-space offsets → parent-relative frame.
    let parent_from_model = match parent {
        Some(p) => {
            let lin = Mat3A::from_mat4(model[p]);
            let det = lin.determinant();
            if !det.is_finite() || det.abs() < 1e-30 {
                return None;
            }
            lin.inverse()
        }
        None => Mat3A::IDENTITY,
    };
    let mut sum = Vec4::ZERO;
    let mut proposals = 0u32;
    let mut last = Quat::IDENTITY;
    // Several effectors: weights relative to the largest, so that only their ratios count
    // (1e-13 and 1e-13 blend as 1 and 1; 1e20 and 1e20 do not overflow the sum).
    let w_max = if pairs.len() > 1 {
        pairs
            .iter()
            .map(|&(_, e)| effectors[e].weight)
            .fold(0.0f32, f32::max)
    } else {
        1.0
    };
    for &(_, e) in pairs {
        let eff = &effectors[e];
        if eff.weight <= 0.0 {
            continue;
        }
        let to_tip = tip_model(model, eff) - pivot;
        let to_target = Vec3A::from(eff.target_model) - pivot;
        if to_tip.length_squared() < MIN_ARM_M * MIN_ARM_M
            || to_target.length_squared() < MIN_ARM_M * MIN_ARM_M
        {
            continue;
        }
        let Some(arc) =
            rotation_arc_scaled(parent_from_model * to_tip, parent_from_model * to_target)
        else {
            continue;
        };
        proposals += 1;
        last = arc;
        if pairs.len() > 1 {
            sum += Vec4::from(arc.normalize()) * (eff.weight / w_max);
        }
    }
    let delta = if proposals == 1 {
        // One proposal is the blend. The caller normalises `delta · rotation`, so a full
        // turn is used as it comes (not unit: that would cost a square root and a division
        // on every step); a share of it is taken from the unit rotation.
        if participation >= 1.0 {
            return Some(last);
        }
        last.normalize()
    } else {
        let len = sum.length();
        if !len.is_finite() || len <= 1e-12 {
            return None;
        }
        Quat::from_vec4(sum / len)
    };
    if participation >= 1.0 {
        return Some(delta);
    }
    Some(scale_angle(delta, participation))
}

/// Shortest-arc rotation taking the direction of `a` onto that of `b` (any lengths):
/// `normalize(a × b, |a||b| + a·b)`, one square root for both lengths. Unlike
/// `Quat::from_rotation_arc`, which returns identity below ≈7e-4 rad (CCD would stall at
/// ≈1 mm per metre of arm), it stays exact for small angles. Near 180°
/// (`|a||b| + a·b < 1e-7 |a||b|`) it turns half a turn about an axis perpendicular to `a` (any
/// one: the arc is ambiguous). `None` when either vector has no direction (zero, or lengths
/// that overflow or are not finite).
///
/// Returned before normalisation: `(a × b, |a||b| + a·b) / (|a||b|)`, whose squared length
/// `2 (1 + cos θ)` lies in (2e-7, 4] (the same rotation once normalised; dividing by `|a||b|`
/// keeps any finite arm lengths from overflowing it). Callers normalise it, or a product with it.
fn rotation_arc_scaled(a: Vec3A, b: Vec3A) -> Option<Quat> {
    let ab = (a.length_squared() * b.length_squared()).sqrt();
    if !(ab.is_finite() && ab > 1e-30) {
        return None;
    }
    let w = ab + a.dot(b);
    if w < 1e-7 * ab {
        let axis = a.normalize_or_zero().any_orthonormal_vector();
        return Some(Quat::from_axis_angle(axis.into(), std::f32::consts::PI));
    }
    let c = a.cross(b);
    Some(Quat::from_vec4(c.extend(w) / ab))
}

/// The rotation about the same axis by `t` times the angle (shortest way round).
fn scale_angle(q: Quat, t: f32) -> Quat {
    let q = if q.w < 0.0 { -q } else { q };
    let v = q.xyz();
    let s = v.length();
    if s.is_nan() || s <= 1e-12 {
        return Quat::IDENTITY;
    }
    let angle = 2.0 * s.atan2(q.w);
    Quat::from_axis_angle(v / s, angle * t)
}

/// §5.3: the difference `d = q_new · q_prev⁻¹` as angle/axis; when its angle exceeds
/// `max_angle`, the rotation `axis_angle(axis, max_angle) · q_prev`, else `None`. A negative
/// cap counts as 0 (no change allowed); a NaN cap as none (`None`: `CcdJob` refuses both).
pub fn limit_rotation_change(q_prev: Quat, q_new: Quat, max_angle: f32) -> Option<Quat> {
    VelocityCap::new(max_angle).limit(q_prev, q_new)
}

/// A per-frame angle cap as the sine and cosine of its half angle, made once a frame: then
/// [`VelocityCap::limit`] needs no trigonometry per joint.
#[derive(Clone, Copy, Debug)]
struct VelocityCap {
    /// `sin`, `cos` of half the cap; `None` when the cap is π or more (no change of a unit
    /// quaternion turns further) or not a number.
    half: Option<(f32, f32)>,
}

impl VelocityCap {
    fn new(max_angle: f32) -> VelocityCap {
        // `max_angle * 0.5` as `Quat::from_axis_angle` halves it (the same sine and cosine);
        // NaN fails the comparison: no cap.
        let h = max_angle.max(0.0) * 0.5;
        VelocityCap {
            half: (h < std::f32::consts::FRAC_PI_2 && !max_angle.is_nan()).then(|| h.sin_cos()),
        }
    }

    /// [`limit_rotation_change`]: with `d = (v, w)` on the `w ≥ 0` side and `s = |v|`, its
    /// angle `2·atan2(s, w)` exceeds the cap `2h` (`h < π/2`) exactly when
    /// `s·cos h > w·sin h`; the cut rotation is `((v/s)·sin h, cos h) · q_prev`, what
    /// `Quat::from_axis_angle(v/s, 2h)` builds from the same `sin_cos` (the same bits; tested).
    #[inline]
    fn limit(&self, q_prev: Quat, q_new: Quat) -> Option<Quat> {
        let (sin_h, cos_h) = self.half?;
        let mut d = normalize_or_identity(q_new) * q_prev.conjugate();
        if d.w < 0.0 {
            d = -d;
        }
        let v = d.xyz();
        let s = v.length();
        // NaN is not greater, and s = 0 never exceeds (w·sin h ≥ 0).
        let exceeds = s * cos_h > d.w * sin_h;
        if !exceeds {
            return None;
        }
        // As `Quat::from_axis_angle(v / s, 2h)` computes it: the same bits.
        let axis = (v / s) * sin_h;
        Some(normalize_or_identity(
            Quat::from_xyzw(axis.x, axis.y, axis.z, cos_h) * q_prev,
        ))
    }
}

/// `model_from_parent · local` for node `node` (its parent's entry in `model` already
/// current), composed as `LocalToModelJob` does.
#[inline]
fn model_from_local(node: &crate::scene::Node, model: &[Mat4], local: &Mat4) -> Mat4 {
    compose_model(node.parent.map(|p| &model[p]), local, node.matrix.is_some())
}

/// Recompute `model` for `j` and every node of `used` (the chain nodes and their ancestors,
/// ascending) below it: a node follows when its parent was recomputed.
fn update_subtree(
    j: usize,
    nodes: &[crate::scene::Node],
    used: &[usize],
    local: &[Mat4],
    model: &mut [Mat4],
    moved: &mut [bool],
) {
    model[j] = model_from_local(&nodes[j], model, &local[j]);
    let start = used.partition_point(|&k| k <= j);
    moved[j] = true;
    for &k in &used[start..] {
        if let Some(p) = nodes[k].parent
            && moved[p]
        {
            model[k] = model_from_local(&nodes[k], model, &local[k]);
            moved[k] = true;
        }
    }
    moved[j] = false;
    for &k in &used[start..] {
        moved[k] = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn velocity_cut_is_exact() {
        let a = Quat::from_rotation_y(0.3);
        let b = Quat::from_axis_angle(Vec3::new(1.0, 1.0, 0.0).normalize(), 1.2) * a;
        let c = limit_rotation_change(a, b, 0.1).expect("a 1.2 rad change exceeds the 0.1 rad cap");
        let d = c * a.conjugate();
        let angle = 2.0 * d.xyz().length().atan2(d.w.abs());
        assert!((angle - 0.1).abs() < 1e-5, "{angle}");
        assert!(limit_rotation_change(a, a, 0.1).is_none());
    }

    /// The trig-free cut against the angle/axis definition (atan2, `from_axis_angle`), f64,
    /// over seeded random rotations and caps from 0 to past π.
    #[test]
    fn velocity_cap_matches_the_angle_definition() {
        let mut seed = 0x1234_5678_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as f32 / u32::MAX as f32
        };
        let mut random = |max: f32| {
            let axis = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize();
            (axis, max * next())
        };
        let mut cut = 0;
        for i in 0..20_000 {
            let (a_axis, a_angle) = random(6.0);
            let (d_axis, d_angle) = random(3.1);
            let prev = Quat::from_axis_angle(a_axis, a_angle);
            let new = Quat::from_axis_angle(d_axis, d_angle) * prev;
            let max = [0.0, 0.01, 0.2, 1.0, 3.0, 3.2, 7.0][i % 7];
            let got = limit_rotation_change(prev, new, max);
            // f64: the change's angle, and the cut rotation by the definition.
            let dd = (new.as_dquat() * prev.as_dquat().conjugate()).normalize();
            let dd = if dd.w < 0.0 { -dd } else { dd };
            let angle = 2.0 * dd.xyz().length().atan2(dd.w);
            if (angle - max as f64).abs() < 1e-5 {
                continue; // on the boundary either answer is right
            }
            match got {
                None => assert!(angle <= max as f64, "{i}: {angle} > {max} not cut"),
                Some(q) => {
                    cut += 1;
                    assert!(angle > max as f64, "{i}: {angle} <= {max} cut");
                    let want = glam::DQuat::from_axis_angle(dd.xyz().normalize(), max as f64)
                        * prev.as_dquat();
                    let r = q.as_dquat().conjugate() * want;
                    let e = 2.0 * r.xyz().length().atan2(r.w.abs());
                    assert!(e < 2e-6, "{i}: cut off by {e:e} rad");
                    // The same bits as building the cut with `from_axis_angle`.
                    let mut d = normalize_or_identity(new) * prev.conjugate();
                    if d.w < 0.0 {
                        d = -d;
                    }
                    let s = d.xyz().length();
                    let old = normalize_or_identity(Quat::from_axis_angle(d.xyz() / s, max) * prev);
                    assert_eq!(q, old, "{i}: not from_axis_angle's bits");
                }
            }
        }
        assert!(cut > 5_000, "{cut} cuts");
        // A NaN cap is no cap; a negative one allows no change.
        let (a, b) = (Quat::from_rotation_y(0.3), Quat::from_rotation_x(0.5));
        assert_eq!(limit_rotation_change(a, b, f32::NAN), None);
        assert_eq!(
            limit_rotation_change(a, b, -1.0),
            limit_rotation_change(a, b, 0.0)
        );
        assert_eq!(
            limit_rotation_change(a, b, 0.0),
            Some(normalize_or_identity(a))
        );
    }

    fn rotation_arc(a: Vec3, b: Vec3) -> Option<Quat> {
        rotation_arc_scaled(a.into(), b.into()).map(Quat::normalize)
    }

    fn b_far() -> Vec3 {
        Vec3::new(-0.3, 2.0, 0.7)
    }

    #[test]
    fn rotation_arc_small_and_opposite() {
        let a = Vec3::X;
        for angle in [1e-5f32, 1e-3, 0.5, 3.0] {
            let b = Vec3::new(angle.cos(), angle.sin(), 0.0);
            let q = rotation_arc(a, b).expect("both vectors have a direction");
            assert!((q * a - b).length() < 1e-6, "{angle}");
            // Lengths do not matter.
            let q2 = rotation_arc(a * 0.01, b * 300.0).expect("both vectors have a direction");
            assert!((q2 * a - b).length() < 1e-6, "{angle}");
        }
        let q = rotation_arc(a, -a * 2.0).expect("both vectors have a direction");
        // Before normalisation its length stays in range whatever the arm lengths.
        for (x, y) in [(a * 1e18, b_far()), (a * 1e-6, b_far() * 1e-6)] {
            let l2 = rotation_arc_scaled(x.into(), y.into())
                .expect("finite arms have a direction")
                .length_squared();
            assert!(l2 > 2e-7 && l2 <= 4.0 + 1e-6, "{l2}");
        }
        assert!((q * a + a).length() < 1e-6 && q.is_finite());
        assert!(rotation_arc(Vec3::ZERO, a).is_none());
        assert!(rotation_arc(Vec3::splat(f32::MAX), a).is_none());
    }

    #[test]
    fn scale_angle_halves() {
        let q = Quat::from_rotation_z(1.0);
        let h = scale_angle(q, 0.5);
        assert!(h.angle_between(Quat::from_rotation_z(0.5)) < 1e-6);
        assert_eq!(scale_angle(Quat::IDENTITY, 0.5), Quat::IDENTITY);
    }
}
