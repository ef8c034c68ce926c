//! One frame of retargeting: a source pose onto a target skeleton through a bone map.
//!
//! Based on: the reference-pose method of Godot 4's retargeting (rotations carried as the
//! change from each bone's rest orientation in world space) and of three.js's
//! `SkeletonUtils.retarget` (bind-pose world orientations), with the hips' travel scaled by the
//! ratio of hip heights as Unity's humanoid retargeting does.
//!
//! Method, per mapped pair (target t, source s), parents before children: the source bone's
//! model-space rotation now, taken out of its reference rotation and put on the target's,
//! `q_t = q_s · ref_s⁻¹ · ref_t`, made local with the target parent's model rotation as just
//! computed. Each target reference is first turned so the bone points where its source bone
//! points (see `aligned_rotations`). The reference is the **bind pose** (where the inverse bind matrices put each
//! joint, [`crate::poses::ReferencePoses`]) or the node **rest** pose, so a source bound in a
//! T-pose drives a target bound in an A-pose. The hips move by the source hips' travel from
//! their reference place times the ratio of hip heights (hips above the lowest joint, in the
//! reference pose), minus the travel the clip removes when played in place. With
//! translations on, every other mapped bone's local offset from its reference moves too, scaled
//! and turned from the source parent's reference frame into the target parent's. Unmapped
//! target bones keep their pose (the rest pose, from [`crate::anim::Pose::reset`]); scale and
//! morph weights are not carried.
//! Cost: one pass over the target's nodes (a matrix product each). Limits: non-uniform scale in
//! a reference pose is dropped from its rotation.

use glam::{Mat4, Quat, Vec3};

use super::map::BoneMap;
use crate::anim::Pose;
use crate::error::{Error, Result};
use crate::poses::ReferencePoses;
use crate::scene::Scene;

/// Which pose each bone's orientation is measured from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reference {
    /// Where the inverse bind matrices put the joints (what the mesh was bound in).
    #[default]
    Bind,
    /// The nodes' own rest transforms.
    Rest,
}

impl crate::choice::Choice for Reference {
    const ALL: &'static [Reference] = &[Reference::Bind, Reference::Rest];

    fn name(self) -> &'static str {
        match self {
            Reference::Bind => "bind",
            Reference::Rest => "rest",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Reference::Bind => "where the inverse bind matrices put the joints",
            Reference::Rest => "the nodes' own rest transforms",
        }
    }
}

/// What is carried over besides rotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetargetOptions {
    /// The pose orientations are measured from.
    pub reference: Reference,
    /// Every mapped bone's translation follows the source's offset from its reference pose
    /// (scaled, turned into the target parent's frame; zero for clips that only turn bones),
    /// else the hips' alone moves (rotation only).
    pub translations: bool,
    /// Keep the hips' horizontal travel over the clip (else the clip plays in place).
    pub root_motion: bool,
    /// Hold each foot where it was planted ([`super::foot_lock`]).
    pub foot_lock: bool,
}

impl Default for RetargetOptions {
    fn default() -> Self {
        RetargetOptions {
            reference: Reference::Bind,
            translations: true,
            root_motion: true,
            foot_lock: false,
        }
    }
}

/// What the job needs from the two skeletons, worked out once per (source, target, map,
/// options): reference rotations and places, the hips, the height ratio.
#[derive(Clone, Debug)]
pub struct RetargetSetup {
    /// The map it was made with.
    pub map: BoneMap,
    /// Its options.
    pub options: RetargetOptions,
    /// Model-space reference rotation of every source node.
    pub source_ref_rotation: Vec<Quat>,
    /// Model-space reference rotation of every target node.
    pub target_ref_rotation: Vec<Quat>,
    /// Local reference translation of every source node (in its parent's reference frame).
    pub source_ref_local: Vec<Vec3>,
    /// Local reference translation of every target node.
    pub target_ref_local: Vec<Vec3>,
    /// The (target, source) hips: the mapped pair whose target is the profile's hips, else the
    /// mapped target bone nearest the root.
    pub hips: Option<(usize, usize)>,
    /// Model-space reference places of the hips (target, source).
    pub hips_ref: (Vec3, Vec3),
    /// Target hip height over source hip height (1 when either is 0).
    pub height_ratio: f32,
    /// Each source node's parent.
    source_parent: Vec<Option<usize>>,
    /// Node counts it was made for (target, source).
    counts: (usize, usize),
}

/// Rotation of a model matrix (its scale dropped).
pub(super) fn rotation(m: &Mat4) -> Quat {
    m.to_scale_rotation_translation().1.normalize()
}

/// Per node, the model reference pose of `scene` as `reference` asks.
fn reference_pose(scene: &Scene, reference: Reference) -> Result<Vec<Mat4>> {
    let poses = ReferencePoses::new(scene)?;
    Ok(match reference {
        Reference::Bind => poses.bind,
        Reference::Rest => poses.rest,
    })
}

/// Each node's translation in its parent's reference frame.
fn local_translations(scene: &Scene, model: &[Mat4]) -> Vec<Vec3> {
    scene
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| match n.parent {
            Some(p) => model[p]
                .inverse()
                .transform_point3(model[i].w_axis.truncate()),
            None => model[i].w_axis.truncate(),
        })
        .collect()
}

/// Each target node's reference rotation, turned (in model space) so that a mapped bone with
/// one mapped child points where its source bone points in the source's reference pose: the
/// shortest turn of the bone's direction onto the source's. With it a source bound in a
/// T-pose drives a target bound in an A-pose into the source's poses, not 45° below them.
/// Bones with no mapped child, or several (the hips, a hand), keep their own.
fn aligned_rotations(
    target: &Scene,
    map: &BoneMap,
    (source, model): (&[Mat4], &[Mat4]),
) -> Vec<Quat> {
    let place = |m: &Mat4| m.w_axis.truncate();
    // Per mapped target node, its mapped children (nearest mapped descendants).
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); target.nodes.len()];
    for (c, _) in map.pairs() {
        let mut at = target.nodes[c].parent;
        while let Some(p) = at {
            if map.source_of[p].is_some() {
                children[p].push(c);
                break;
            }
            at = target.nodes[p].parent;
        }
    }
    (0..target.nodes.len())
        .map(|t| {
            let own = rotation(&model[t]);
            let (Some(s), [c]) = (map.source_of[t], children[t].as_slice()) else {
                return own;
            };
            let Some(sc) = map.source_of[*c] else {
                return own;
            };
            let along_t = place(&model[*c]) - place(&model[t]);
            let along_s = place(&source[sc]) - place(&source[s]);
            match (along_t.try_normalize(), along_s.try_normalize()) {
                (Some(a), Some(b)) => (Quat::from_rotation_arc(a, b) * own).normalize(),
                _ => own,
            }
        })
        .collect()
}

/// The hips' height above the scene's lowest joint in `model`.
fn hip_height(scene: &Scene, model: &[Mat4], hips: usize) -> f32 {
    let lowest = scene
        .skins
        .iter()
        .flat_map(|s| s.joints.iter())
        .filter_map(|&j| model.get(j))
        .map(|m| m.w_axis.y)
        .fold(f32::INFINITY, f32::min);
    let y = model[hips].w_axis.y;
    if lowest.is_finite() { y - lowest } else { y }
}

impl RetargetSetup {
    /// The set-up for playing `source` on `target` through `map`.
    pub fn new(
        source: &Scene,
        target: &Scene,
        map: BoneMap,
        options: RetargetOptions,
    ) -> Result<RetargetSetup> {
        if map.source_of.len() != target.nodes.len() {
            return Err(Error::job(
                "RetargetSetup",
                1,
                format!(
                    "the map has {} target nodes, {} has {}",
                    map.source_of.len(),
                    target.name,
                    target.nodes.len()
                ),
            ));
        }
        if let Some((t, s)) = map.pairs().find(|&(_, s)| s >= source.nodes.len()) {
            return Err(Error::job(
                "RetargetSetup",
                2,
                format!("target node {t} is mapped to source node {s}, past the source's nodes"),
            ));
        }
        let source_model = reference_pose(source, options.reference)?;
        let target_model = reference_pose(target, options.reference)?;
        let profile = super::map::humanoid_profile(target);
        let hips = map
            .pairs()
            .find(|&(t, _)| profile[t] == Some("hips"))
            .or_else(|| map.pairs().next());
        let (hips_ref, height_ratio) = match hips {
            Some((t, s)) => {
                let ht = hip_height(target, &target_model, t);
                let hs = hip_height(source, &source_model, s);
                let ratio = if ht > 0.0 && hs > 0.0 && (ht / hs).is_finite() {
                    ht / hs
                } else {
                    1.0
                };
                let place = |m: &Mat4| m.w_axis.truncate();
                ((place(&target_model[t]), place(&source_model[s])), ratio)
            }
            None => ((Vec3::ZERO, Vec3::ZERO), 1.0),
        };
        let target_ref_rotation = aligned_rotations(target, &map, (&source_model, &target_model));
        Ok(RetargetSetup {
            source_ref_rotation: source_model.iter().map(rotation).collect(),
            target_ref_rotation,
            source_ref_local: local_translations(source, &source_model),
            target_ref_local: local_translations(target, &target_model),
            hips,
            hips_ref,
            height_ratio,
            source_parent: source.nodes.iter().map(|n| n.parent).collect(),
            counts: (target.nodes.len(), source.nodes.len()),
            map,
            options,
        })
    }

    /// Source node `s`'s parent.
    pub fn source_parent(&self, s: usize) -> Option<usize> {
        self.source_parent.get(s).copied().flatten()
    }

    /// The reference rotations' turn from source node `s`'s frame to target node `t`'s
    /// (`ref_s⁻¹ · ref_t`), or from the model's frame for a root.
    pub fn turn(&self, t: Option<usize>, s: Option<usize>) -> Quat {
        let r = |v: &[Quat], i: Option<usize>| i.map_or(Quat::IDENTITY, |i| v[i]);
        r(&self.source_ref_rotation, s).inverse() * r(&self.target_ref_rotation, t)
    }
}

/// Retargets one source pose onto the target.
///
/// Validation rules:
/// 1. `source_model` has one matrix per source node;
/// 2. `source_pose` has one local transform per source node;
/// 3. `target_pose` and `target_model` have one entry per target node (`target_model` is
///    resized);
/// 4. the set-up was made for these two scenes (node counts);
/// 5. `travel` is finite.
pub struct RetargetJob<'a> {
    /// The set-up for the two scenes.
    pub setup: &'a RetargetSetup,
    /// The target scene.
    pub target: &'a Scene,
    /// The source's model matrices now (`FrameState::model_from_node`).
    pub source_model: &'a [Mat4],
    /// The source's local transforms now.
    pub source_pose: &'a Pose,
    /// Model-space hips travel to take away (in place), already scaled to the target.
    pub travel: Vec3,
    /// In: the target's pose to start from (its rest pose); out: the retargeted pose.
    pub target_pose: &'a mut Pose,
    /// Out: the target's model matrices of that pose.
    pub target_model: &'a mut Vec<Mat4>,
}

impl RetargetJob<'_> {
    /// Check the numbered rules above.
    pub fn validate(&self) -> Result<()> {
        let (nt, ns) = self.setup.counts;
        let fail = |rule, m: String| Err(Error::job("RetargetJob", rule, m));
        if self.source_model.len() != ns {
            return fail(
                1,
                format!("{} source matrices for {ns} nodes", self.source_model.len()),
            );
        }
        if self.source_pose.locals.len() != ns {
            return fail(
                2,
                format!(
                    "a source pose of {} nodes for {ns}",
                    self.source_pose.locals.len()
                ),
            );
        }
        if self.target_pose.locals.len() != self.target.nodes.len() {
            return fail(
                3,
                "the target pose does not match the target's nodes".into(),
            );
        }
        if self.target.nodes.len() != nt {
            return fail(
                4,
                format!(
                    "set up for {nt} target nodes, given {}",
                    self.target.nodes.len()
                ),
            );
        }
        if !self.travel.is_finite() {
            return fail(5, format!("travel {} is not finite", self.travel));
        }
        Ok(())
    }

    /// Validate, then write the retargeted pose and its model matrices.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let setup = self.setup;
        let ratio = setup.height_ratio;
        self.target_model.clear();
        for (t, node) in self.target.nodes.iter().enumerate() {
            let parent_model = node.parent.map_or(Mat4::IDENTITY, |p| self.target_model[p]);
            let local = &mut self.target_pose.locals[t];
            if let Some(s) = setup.map.source_of[t] {
                let q_now = rotation(&self.source_model[s]) * setup.turn(Some(t), Some(s));
                local.rotation = (rotation(&parent_model).inverse() * q_now).normalize();
                if setup.hips.is_some_and(|h| h.0 == t) {
                    let travel = self.source_model[s].w_axis.truncate() - setup.hips_ref.1;
                    let place = setup.hips_ref.0 + ratio * travel - self.travel;
                    local.translation = parent_model.inverse().transform_point3(place);
                } else if setup.options.translations {
                    let (pt, ps) = (node.parent, setup.source_parent[s]);
                    let offset = self.source_pose.locals[s].translation - setup.source_ref_local[s];
                    let turn = setup.turn(pt, ps);
                    local.translation =
                        setup.target_ref_local[t] + ratio * (turn.inverse() * offset);
                }
            }
            self.target_model.push(parent_model * local.to_mat4());
        }
        Ok(())
    }
}
