//! Test support: deterministic generated test rigs: a branching skeleton, a skinned tube mesh
//! around its bones, optional morph targets and two animations, built in code from a seed.
//!
//! What: [`generate_rig`] returns a validated [`Scene`] meant to be exported (the exporter
//! lives in `io`) and run through independent engines. It exercises what real files get
//! wrong: an "armature" node with its own TRS above the joint tree (a spine chain with one or
//! two side chains), joints with rest translations, rotations, one uniform and (with
//! `non_uniform_scale`) several non-uniform scales; a skin whose joint order is shuffled
//! (skin index ≠ node order); a skinned-mesh node with a non-identity TRS under a
//! "mesh_parent" node with TRS, both of which glTF says to ignore — the inverse bind matrices
//! are `inverse(restWorld_j) · B` with `B` the mesh node's rest world matrix, so at rest the
//! skinned vertices equal `B · POSITION`; morph targets with POSITION and NORMAL deltas (target
//! 0 sparse: most deltas exactly zero); two animations mixing STEP, LINEAR and CUBICSPLINE
//! samplers with irregular key times whose first key (t = 0) is the rest value, LINEAR
//! rotation keys with random quaternion sign flips (only shortest-path slerp gets them
//! right), CUBICSPLINE keys with non-zero tangents, scale channels (non-uniform with
//! `non_uniform_scale`), a morph-weights channel when there are targets, and channels on
//! "mesh_parent" and on the mesh node that must have no effect on the skinned vertices.
//!
//! Method: xorshift64* seeded through splitmix64 (`rng.rs`) draws every number, so the
//! same [`RigOptions`] give the same scene, bit for bit. Geometry is built in f64 in world rest
//! space: one capsule per chain (rings of `verts_per_ring` vertices along the chain's polyline with
//! a parallel-transported frame, hemispherical end caps with poles), with radial normals and
//! circumferential tangents; it is then carried into the mesh node's space with `inverse(B)`
//! (positions), `Bᵀ` (normals) and `inverse(B)` (tangents). Each joint owns the segment from its
//! origin to its chain successor (a leaf: a tip along its local +Y). Weights follow Dunia's
//! inverse-distance rule (Dunia, "Implicit Animation Overview", `w = k/dⁿ` with k = 1, n = 4) on
//! the distance from the vertex to each joint's segment; the `max_influences` largest are kept and
//! normalised to sum 1, so every vertex really uses `min(max_influences, joints)` joints
//! (JOINTS_0/WEIGHTS_0, plus a second set above 4).
//!
//! Limits: one mesh with one triangle primitive and one skin; joints 2..=64 (so joint
//! indices fit u8), `max_influences` 1..=8, `morph_targets` 0..=4, `verts_per_ring` 3..=64.
//! Tubes of different chains overlap near branch points and strongly bent chains may
//! self-intersect: the mesh is for numerical comparison, not for looking good. Morph targets
//! have no TANGENT deltas. Bit-for-bit determinism holds for one build of the crate on one
//! platform (libm `sin`/`cos` may differ between platforms).

use std::f64::consts::TAU;

use glam::{DMat3, DMat4, DQuat, DVec3, DVec4, Mat4, Quat, Vec3, Vec4};

use skinview::anim::{Animation, Channel, Interpolation, Path, Sampler};
use skinview::error::{Error, Result};
use skinview::math::Trs;
use skinview::scene::{
    Mesh, MorphTarget, Node, Primitive, RawScene, Scene, SceneBuilder, Skin, SkinWeights, Topology,
};

// xorshift64* seeded through splitmix64 (tests/common/rng.rs; the example includes it too).
use super::rng::XorShift64Star as Rng;

/// Parameters of [`generate_rig`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RigOptions {
    pub seed: u64,
    /// Joint count, 2..=64.
    pub joints: usize,
    /// Influences kept per vertex, 1..=8 (a vertex uses `min(max_influences, joints)`).
    pub max_influences: usize,
    /// Morph targets, 0..=4.
    pub morph_targets: usize,
    /// Vertices per ring of the tube mesh, 3..=64.
    pub verts_per_ring: usize,
    /// Non-uniform scales on some joints' rest pose and in the scale channels.
    pub non_uniform_scale: bool,
}

impl Default for RigOptions {
    fn default() -> Self {
        RigOptions {
            seed: 1,
            joints: 12,
            max_influences: 4,
            morph_targets: 0,
            verts_per_ring: 16,
            non_uniform_scale: true,
        }
    }
}

/// Rings per bone segment along a tube (the segment's end ring belongs to the next one).
const RINGS_PER_SEGMENT: usize = 3;
/// Rings of each hemispherical end cap, pole excluded.
const CAP_RINGS: usize = 2;
/// Length of a leaf joint's segment along its local +Y.
const TIP_LENGTH: f64 = 0.22;

/// Generate the rig described by `o` (see the module documentation).
pub fn generate_rig(o: &RigOptions) -> Result<Scene> {
    check_options(o)?;
    let mut rng = Rng::seeded(o.seed);
    let sk = Skeleton::generate(&mut rng, o);

    // Nodes: armature, joints (creation order: parents first), mesh_parent, skinned mesh.
    let armature_node = 0usize;
    let joint_node = |j: usize| 1 + j;
    let mesh_parent_node = 1 + o.joints;
    let mesh_node = mesh_parent_node + 1;

    let mesh_parent_rest = Trs {
        translation: Vec3::new(
            rng.range(-0.6, 0.6) as f32,
            rng.range(-0.3, 0.3) as f32,
            rng.range(-0.6, 0.6) as f32,
        ),
        rotation: random_rotation(&mut rng, 0.3, 0.8),
        scale: Vec3::splat(rng.range(0.85, 1.2) as f32),
    };
    let mesh_rest = Trs {
        translation: Vec3::new(
            rng.range(-0.4, 0.4) as f32,
            rng.range(-0.4, 0.4) as f32,
            rng.range(-0.4, 0.4) as f32,
        ),
        rotation: random_rotation(&mut rng, 0.3, 1.2),
        scale: if o.non_uniform_scale {
            Vec3::new(1.15, 0.9, 1.05)
        } else {
            Vec3::splat(0.8)
        },
    };
    // B: rest world matrix of the skinned-mesh node.
    let b = mesh_parent_rest.to_dmat4() * mesh_rest.to_dmat4();

    let geometry = Geometry::build(&mut rng, o, &sk);
    let primitive = geometry.primitive(&mut rng, o, &sk, &b);

    // Skin: joints in a shuffled order; IBM_j = inverse(restWorld_j) · B.
    let mut order: Vec<usize> = (0..o.joints).collect();
    rng.shuffle(&mut order);
    let mut skin_index_of = vec![0usize; o.joints];
    for (s, &j) in order.iter().enumerate() {
        skin_index_of[j] = s;
    }
    let joint_from_bind: Vec<Mat4> = order
        .iter()
        .map(|&j| (sk.world[j].inverse() * b).as_mat4())
        .collect();
    let skin = Skin {
        name: Some("rig".into()),
        joints: order.iter().map(|&j| joint_node(j)).collect(),
        joint_from_bind,
    };
    let mut primitive = primitive;
    if let Some(w) = primitive.skin_weights.as_mut() {
        for j in w.joints.iter_mut() {
            *j = skin_index_of[*j as usize] as u32;
        }
    }

    let node = |name: String, parent: Option<usize>, rest: Trs| Node {
        name: Some(name),
        source_index: 0,
        parent,
        rest,
        matrix: None,
        mesh: None,
        skin: None,
        morph_weights: None,
    };
    let mut nodes = Vec::with_capacity(mesh_node + 1);
    nodes.push(node("armature".into(), None, sk.armature));
    for joint in &sk.joints {
        nodes.push(node(
            joint.name.clone(),
            Some(joint.parent.map_or(armature_node, joint_node)),
            joint.rest,
        ));
    }
    nodes.push(node("mesh_parent".into(), None, mesh_parent_rest));
    let mut skinned = node("skinned_mesh".into(), Some(mesh_parent_node), mesh_rest);
    skinned.mesh = Some(0);
    skinned.skin = Some(0);
    nodes.push(skinned);
    for (i, n) in nodes.iter_mut().enumerate() {
        n.source_index = i;
    }

    let targets = o.morph_targets;
    let anims = Animations {
        o,
        sk: &sk,
        joint_node: &joint_node,
        armature: (armature_node, nodes[armature_node].rest),
        mesh_parent: (mesh_parent_node, mesh_parent_rest),
        mesh: (mesh_node, mesh_rest),
        targets,
    };
    let animations = vec![anims.sway(&mut rng), anims.twist(&mut rng)];

    let raw = RawScene {
        name: format!(
            "generated rig (seed {}, {} joints, {} influences, {} morph targets, {} verts/ring, non-uniform scale {})",
            o.seed,
            o.joints,
            o.max_influences,
            o.morph_targets,
            o.verts_per_ring,
            o.non_uniform_scale
        ),
        nodes,
        meshes: vec![Mesh {
            name: Some("tube".into()),
            primitives: vec![primitive],
            default_morph_weights: vec![0.0; targets],
        }],
        skins: vec![skin],
        animations,
        roots: vec![armature_node, mesh_parent_node],
        report: Default::default(),
        textures: Vec::new(),
    };
    let mut scene = SceneBuilder::build(raw)?;
    // Keep `source_index` equal to the scene (and exported glTF) node index.
    for (i, n) in scene.nodes.iter_mut().enumerate() {
        n.source_index = i;
    }
    Ok(scene)
}

fn check_options(o: &RigOptions) -> Result<()> {
    let bad = |what: &str, range: &str, v: usize| {
        Err(Error::invalid(
            "rig options",
            what,
            format!("must be in {range}, got {v}"),
        ))
    };
    if !(2..=64).contains(&o.joints) {
        return bad("joints", "2..=64", o.joints);
    }
    if !(1..=8).contains(&o.max_influences) {
        return bad("max_influences", "1..=8", o.max_influences);
    }
    if o.morph_targets > 4 {
        return bad("morph_targets", "0..=4", o.morph_targets);
    }
    if !(3..=64).contains(&o.verts_per_ring) {
        return bad("verts_per_ring", "3..=64", o.verts_per_ring);
    }
    Ok(())
}

fn random_rotation(rng: &mut Rng, lo: f64, hi: f64) -> Quat {
    let axis = rng.unit_vector();
    let angle = rng.sign() * rng.range(lo, hi);
    DQuat::from_axis_angle(axis, angle).normalize().as_quat()
}

// ---------------------------------------------------------------------------------------
// Skeleton

struct Joint {
    name: String,
    /// Parent joint (None: child of the armature node).
    parent: Option<usize>,
    /// The next joint along this joint's chain (its segment ends there).
    next: Option<usize>,
    rest: Trs,
}

struct Skeleton {
    armature: Trs,
    joints: Vec<Joint>,
    /// Chains as joint lists; `chain_base[c]`: the joint a side chain hangs from.
    chains: Vec<Vec<usize>>,
    chain_base: Vec<Option<usize>>,
    /// Rest world matrices of the joints.
    world: Vec<DMat4>,
    /// Bone segments (origin, end) in world rest space, per joint.
    segments: Vec<(DVec3, DVec3)>,
}

impl Skeleton {
    /// A spine and up to two side chains of `o.joints` joints, scaled, with their rest world
    /// matrices and bone segments. The draws come in a fixed order (the rigs are bit for bit
    /// the same for one seed).
    fn generate(rng: &mut Rng, o: &RigOptions) -> Skeleton {
        let n = o.joints;
        let (sides, side_total) = side_chain_counts(rng, n);
        let spine_len = n - side_total;
        let armature = Trs {
            translation: Vec3::new(
                rng.range(-0.3, 0.3) as f32,
                rng.range(-0.2, 0.2) as f32,
                rng.range(-0.3, 0.3) as f32,
            ),
            rotation: random_rotation(rng, 0.2, 0.6),
            scale: Vec3::splat(rng.range(0.9, 1.2) as f32),
        };
        let mut joints: Vec<Joint> = Vec::with_capacity(n);
        let spine = push_spine(rng, &mut joints, spine_len);
        let mut chains = vec![spine.clone()];
        let mut chain_base = vec![None];
        // Side chains, hanging from spine joints 1.. (never the root joint), on opposite sides.
        let mut remaining = side_total;
        for s in 0..sides {
            let len_chain = if s + 1 == sides {
                remaining
            } else {
                (side_total / 2).max(1)
            };
            remaining -= len_chain;
            let base = spine[1 + rng.index(spine_len - 1)];
            chains.push(push_side_chain(rng, &mut joints, s, base, len_chain));
            chain_base.push(Some(base));
        }
        scale_joints(rng, o, &mut joints);
        let (world, segments) = rest_world(&armature, &joints);
        Skeleton {
            armature,
            joints,
            chains,
            chain_base,
            world,
            segments,
        }
    }
}

/// How many side chains `n` joints get (none below 4 joints, one below 8, else one or two),
/// and how many joints they take together.
fn side_chain_counts(rng: &mut Rng, n: usize) -> (usize, usize) {
    let sides = if n < 4 {
        0
    } else if n < 8 {
        1
    } else {
        1 + rng.index(2)
    };
    let side_total = if sides == 0 {
        0
    } else {
        ((n as f64 * rng.range(0.3, 0.45)).round() as usize).clamp(sides, n - 2)
    };
    (sides, side_total)
}

/// A bone of length `len` along the parent's +Y, a little off axis.
fn along(rng: &mut Rng, len: f64) -> Vec3 {
    Vec3::new(
        rng.range(-0.04, 0.04) as f32,
        len as f32,
        rng.range(-0.04, 0.04) as f32,
    )
}

/// The spine: `spine_len` joints, each the child of the one before, the first a child of the
/// armature. Returns the spine's joints.
fn push_spine(rng: &mut Rng, joints: &mut Vec<Joint>, spine_len: usize) -> Vec<usize> {
    let mut spine: Vec<usize> = Vec::with_capacity(spine_len);
    for i in 0..spine_len {
        let (translation, rotation) = if i == 0 {
            (
                Vec3::new(
                    rng.range(-0.1, 0.1) as f32,
                    rng.range(0.0, 0.1) as f32,
                    rng.range(-0.1, 0.1) as f32,
                ),
                random_rotation(rng, 0.0, 0.3),
            )
        } else {
            let len = rng.range(0.22, 0.38);
            (along(rng, len), random_rotation(rng, 0.0, 0.35))
        };
        let parent = if i == 0 { None } else { Some(spine[i - 1]) };
        let j = joints.len();
        if let Some(p) = parent {
            joints[p].next = Some(j);
        }
        joints.push(Joint {
            name: format!("spine_{i}"),
            parent,
            next: None,
            rest: Trs {
                translation,
                rotation,
                scale: Vec3::ONE,
            },
        });
        spine.push(j);
    }
    spine
}

/// Side chain `s` (0: +X side, else -X): `len_chain` joints hanging from spine joint `base`,
/// pointing sideways. Returns the chain's joints.
fn push_side_chain(
    rng: &mut Rng,
    joints: &mut Vec<Joint>,
    s: usize,
    base: usize,
    len_chain: usize,
) -> Vec<usize> {
    let side = if s == 0 { 1.0 } else { -1.0 };
    let mut chain = Vec::with_capacity(len_chain);
    for i in 0..len_chain {
        let (translation, rotation) = if i == 0 {
            let t = Vec3::new(
                (side * rng.range(0.1, 0.16)) as f32,
                rng.range(-0.03, 0.06) as f32,
                rng.range(-0.03, 0.03) as f32,
            );
            // Point the chain's +Y sideways.
            let r = DQuat::from_rotation_z(-side * rng.range(1.1, 1.5))
                * DQuat::from_rotation_x(rng.range(-0.25, 0.25));
            (t, r.normalize().as_quat())
        } else {
            let len = rng.range(0.2, 0.32);
            (along(rng, len), random_rotation(rng, 0.0, 0.35))
        };
        let parent = if i == 0 { base } else { chain[i - 1] };
        let j = joints.len();
        if i > 0 {
            joints[parent].next = Some(j);
        }
        joints.push(Joint {
            name: format!("side{s}_{i}"),
            parent: Some(parent),
            next: None,
            rest: Trs {
                translation,
                rotation,
                scale: Vec3::ONE,
            },
        });
        chain.push(j);
    }
    chain
}

/// Scales: one uniform, and (with `o.non_uniform_scale`) non-uniform ones on about a third of
/// the joints.
fn scale_joints(rng: &mut Rng, o: &RigOptions, joints: &mut [Joint]) {
    let n = joints.len();
    let uniform = rng.index(n);
    joints[uniform].rest.scale = Vec3::splat(if rng.chance(0.5) { 0.85 } else { 1.2 });
    if o.non_uniform_scale {
        let mut candidates: Vec<usize> = (0..n).filter(|&j| j != uniform).collect();
        rng.shuffle(&mut candidates);
        let count = n.div_ceil(3).min(candidates.len()).max(1);
        for &j in &candidates[..count] {
            let s = Vec3::new(
                rng.range(1.1, 1.35) as f32,
                rng.range(0.75, 0.9) as f32,
                rng.range(0.9, 1.15) as f32,
            );
            // Permute the axes so the stretch is not always along X.
            let s = match rng.index(3) {
                0 => s,
                1 => Vec3::new(s.y, s.z, s.x),
                _ => Vec3::new(s.z, s.x, s.y),
            };
            joints[j].rest.scale = s;
        }
    }
}

/// Rest world matrices of the joints under the armature, and each joint's bone segment in
/// world rest space (to its chain successor, or a tip along its +Y).
fn rest_world(armature: &Trs, joints: &[Joint]) -> (Vec<DMat4>, Vec<(DVec3, DVec3)>) {
    let arm = armature.to_dmat4();
    let mut world: Vec<DMat4> = Vec::with_capacity(joints.len());
    for j in joints {
        let parent = j.parent.map_or(arm, |p| world[p]);
        world.push(parent * j.rest.to_dmat4());
    }
    let origin = |m: &DMat4| m.transform_point3(DVec3::ZERO);
    let segments = joints
        .iter()
        .enumerate()
        .map(|(j, joint)| {
            let a = origin(&world[j]);
            let b = match joint.next {
                Some(k) => origin(&world[k]),
                None => world[j].transform_point3(DVec3::new(0.0, TIP_LENGTH, 0.0)),
            };
            (a, b)
        })
        .collect();
    (world, segments)
}

// ---------------------------------------------------------------------------------------
// Geometry

/// The tube mesh in world rest space.
struct Geometry {
    positions: Vec<DVec3>,
    normals: Vec<DVec3>,
    tangents: Vec<DVec3>,
    indices: Vec<u32>,
    /// Mean tube radius (scale of the morph deltas).
    radius: f64,
}

/// One ring of vertices: centre, axis, frame vector `u` (⊥ axis), radius and the latitude
/// `phi` of a cap ring (0 on the body; normals tilt towards ±axis on the caps).
struct Ring {
    centre: DVec3,
    axis: DVec3,
    u: DVec3,
    radius: f64,
    phi: f64,
}

impl Geometry {
    fn build(rng: &mut Rng, o: &RigOptions, sk: &Skeleton) -> Geometry {
        let arm_scale = sk.armature.scale.x as f64;
        let radius = rng.range(0.075, 0.095) * arm_scale;
        let mut g = Geometry {
            positions: Vec::new(),
            normals: Vec::new(),
            tangents: Vec::new(),
            indices: Vec::new(),
            radius,
        };
        for (c, chain) in sk.chains.iter().enumerate() {
            let mut pts: Vec<DVec3> = Vec::with_capacity(chain.len() + 2);
            if let Some(base) = sk.chain_base[c] {
                pts.push(sk.segments[base].0);
            }
            pts.extend(chain.iter().map(|&j| sk.segments[j].0));
            pts.push(sk.segments[*chain.last().expect("chains are non-empty")].1);
            let r = if c == 0 { radius } else { radius * 0.75 };
            g.capsule(&pts, r, o.verts_per_ring);
        }
        g
    }

    /// A capsule along the polyline `pts`.
    fn capsule(&mut self, pts: &[DVec3], r: f64, vpr: usize) {
        let dirs: Vec<DVec3> = pts.windows(2).map(|w| (w[1] - w[0]).normalize()).collect();
        // Body rings with a parallel-transported frame.
        let mut rings: Vec<Ring> = Vec::new();
        let first_axis = dirs[0];
        let helper = if first_axis.x.abs() < 0.9 {
            DVec3::X
        } else {
            DVec3::Y
        };
        let mut u = (helper - first_axis * first_axis.dot(helper)).normalize();
        for (s, w) in pts.windows(2).enumerate() {
            let last_segment = s + 1 == dirs.len();
            let count = if last_segment {
                RINGS_PER_SEGMENT + 1
            } else {
                RINGS_PER_SEGMENT
            };
            for k in 0..count {
                let f = k as f64 / RINGS_PER_SEGMENT as f64;
                let axis = if k == 0 && s > 0 {
                    (dirs[s - 1] + dirs[s]).normalize_or(dirs[s])
                } else {
                    dirs[s]
                };
                u = (u - axis * axis.dot(u)).normalize();
                rings.push(Ring {
                    centre: w[0].lerp(w[1], f),
                    axis,
                    u,
                    radius: r,
                    phi: 0.0,
                });
            }
        }
        // Caps: CAP_RINGS rings of decreasing radius and a pole at each end.
        let (start, end) = (rings.first().expect("rings"), rings.last().expect("rings"));
        let (s_c, s_a, s_u) = (start.centre, start.axis, start.u);
        let (e_c, e_a, e_u) = (end.centre, end.axis, end.u);
        let cap = |c: DVec3, a: DVec3, u: DVec3, sign: f64, k: usize| {
            let phi = sign * std::f64::consts::FRAC_PI_2 * k as f64 / (CAP_RINGS + 1) as f64;
            Ring {
                centre: c + a * (r * phi.sin()),
                axis: a,
                u,
                radius: r * phi.cos(),
                phi,
            }
        };
        let mut all: Vec<Ring> = (1..=CAP_RINGS)
            .rev()
            .map(|k| cap(s_c, s_a, s_u, -1.0, k))
            .collect();
        all.extend(rings);
        all.extend((1..=CAP_RINGS).map(|k| cap(e_c, e_a, e_u, 1.0, k)));

        let base = self.positions.len() as u32;
        for ring in &all {
            let v = ring.axis.cross(ring.u);
            for k in 0..vpr {
                let a = TAU * k as f64 / vpr as f64;
                let radial = ring.u * a.cos() + v * a.sin();
                self.positions.push(ring.centre + radial * ring.radius);
                self.normals
                    .push((radial * ring.phi.cos() + ring.axis * ring.phi.sin()).normalize());
                self.tangents.push(v * a.cos() - ring.u * a.sin());
            }
        }
        let vpr32 = vpr as u32;
        for r in 0..all.len() as u32 - 1 {
            for k in 0..vpr32 {
                let a = base + r * vpr32 + k;
                let b = base + r * vpr32 + (k + 1) % vpr32;
                let (c, d) = (a + vpr32, b + vpr32);
                self.indices.extend_from_slice(&[a, b, d, a, d, c]);
            }
        }
        // Poles.
        let first_ring = base;
        let last_ring = base + (all.len() as u32 - 1) * vpr32;
        let pole_start = self.positions.len() as u32;
        self.positions.push(s_c - s_a * r);
        self.normals.push(-s_a);
        self.tangents.push(s_u);
        let pole_end = pole_start + 1;
        self.positions.push(e_c + e_a * r);
        self.normals.push(e_a);
        self.tangents.push(e_u);
        for k in 0..vpr32 {
            let (a, b) = (k, (k + 1) % vpr32);
            self.indices
                .extend_from_slice(&[pole_start, first_ring + b, first_ring + a]);
            self.indices
                .extend_from_slice(&[pole_end, last_ring + a, last_ring + b]);
        }
    }

    /// The primitive in the mesh node's space (`b` = its rest world matrix), with skin
    /// weights (joint indices = joint numbers, remapped to skin order by the caller) and
    /// morph targets.
    fn primitive(&self, rng: &mut Rng, o: &RigOptions, sk: &Skeleton, b: &DMat4) -> Primitive {
        let b_inv = b.inverse();
        let b3 = DMat3::from_mat4(*b);
        let b3_inv = b3.inverse();
        let b3_t = b3.transpose();
        let positions: Vec<Vec3> = self
            .positions
            .iter()
            .map(|p| b_inv.transform_point3(*p).as_vec3())
            .collect();
        let normals: Vec<Vec3> = self
            .normals
            .iter()
            .map(|n| (b3_t * *n).normalize().as_vec3())
            .collect();
        let tangents: Vec<Vec4> = self
            .tangents
            .iter()
            .map(|t| (b3_inv * *t).normalize().as_vec3().extend(1.0))
            .collect();

        // Weights: w = 1 / d^4 to each joint's segment, the k largest kept and normalised.
        let k = o.max_influences.min(o.joints);
        let width = if o.max_influences > 4 { 8 } else { 4 };
        let mut joints = Vec::with_capacity(self.positions.len() * width);
        let mut weights = Vec::with_capacity(self.positions.len() * width);
        let floor = 1e-3 * self.radius;
        let mut cand: Vec<(usize, f64)> = Vec::with_capacity(o.joints);
        for p in &self.positions {
            cand.clear();
            cand.extend(sk.segments.iter().enumerate().map(|(j, &(a, e))| {
                (j, 1.0 / point_segment_distance(*p, a, e).max(floor).powi(4))
            }));
            cand.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
            let sum: f64 = cand[..k].iter().map(|c| c.1).sum();
            for i in 0..width {
                match cand.get(i).filter(|_| i < k) {
                    Some(&(j, w)) => {
                        joints.push(j as u32);
                        weights.push((w / sum) as f32);
                    }
                    None => {
                        joints.push(0);
                        weights.push(0.0);
                    }
                }
            }
        }

        let morph_targets = (0..o.morph_targets)
            .map(|t| self.morph_target(rng, t, &b3_inv, &tangents))
            .collect();
        Primitive {
            positions,
            normals: Some(normals),
            tangents: Some(tangents),
            indices: self.indices.clone(),
            topology: Topology::Triangles,
            skin_weights: Some(SkinWeights {
                width,
                joints,
                weights,
            }),
            morph_targets,
            base_color: [0.55, 0.70, 0.85, 1.0],
            ..Default::default()
        }
    }

    /// Morph target `t`: target 0 is a local bulge (deltas exactly zero outside a ball), the
    /// others smooth fields over the whole mesh. Deltas in mesh space.
    fn morph_target(
        &self,
        rng: &mut Rng,
        t: usize,
        b3_inv: &DMat3,
        tangents: &[Vec4],
    ) -> MorphTarget {
        let n = self.positions.len();
        let amp = self.radius * rng.range(0.4, 0.8);
        let mut dp = vec![Vec3::ZERO; n];
        let mut dn = vec![Vec3::ZERO; n];
        if t == 0 {
            let centre = self.positions[rng.index(n)];
            let reach = self.radius * 2.5;
            for v in 0..n {
                let d = (self.positions[v] - centre).length() / reach;
                if d < 1.0 {
                    let f = (1.0 - d * d).powi(2);
                    dp[v] = (*b3_inv * (self.normals[v] * (amp * f))).as_vec3();
                    dn[v] = (tangents[v].truncate().as_dvec3() * (0.4 * f)).as_vec3();
                }
            }
        } else {
            let k1 = rng.unit_vector() * rng.range(3.0, 9.0);
            let k2 = rng.unit_vector() * rng.range(3.0, 9.0);
            let dir = rng.unit_vector();
            let (ph1, ph2) = (rng.range(0.0, TAU), rng.range(0.0, TAU));
            for v in 0..n {
                let p = self.positions[v];
                let s1 = (k1.dot(p) + ph1).sin();
                let s2 = (k2.dot(p) + ph2).cos();
                let world = self.normals[v] * (amp * s1) + dir * (0.4 * amp * s2);
                dp[v] = (*b3_inv * world).as_vec3();
                dn[v] = DVec3::new(0.3 * s2, 0.2 * s1, -0.25 * s1 * s2).as_vec3();
            }
        }
        MorphTarget {
            positions: Some(dp),
            normals: Some(dn),
            tangents: None,
        }
    }
}

fn point_segment_distance(p: DVec3, a: DVec3, b: DVec3) -> f64 {
    let ab = b - a;
    let len2 = ab.length_squared();
    let t = if len2 > 0.0 {
        ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p - (a + ab * t)).length()
}

// ---------------------------------------------------------------------------------------
// Animations

struct Animations<'a, F: Fn(usize) -> usize> {
    o: &'a RigOptions,
    sk: &'a Skeleton,
    joint_node: &'a F,
    armature: (usize, Trs),
    mesh_parent: (usize, Trs),
    mesh: (usize, Trs),
    targets: usize,
}

/// Strictly increasing irregular key times starting at 0.
fn key_times(rng: &mut Rng, keys: usize) -> Vec<f32> {
    let mut t = 0.0f64;
    let mut v = vec![0.0f32];
    for _ in 1..keys {
        t += rng.range(0.07, 0.55);
        v.push(t as f32);
    }
    v
}

/// Sampler of vectors (translation, scale, weights): key 0 is `rest`, later keys `key(rng)`;
/// CUBICSPLINE tangents are random with magnitude up to `tangent`.
fn vector_sampler(
    rng: &mut Rng,
    interpolation: Interpolation,
    keys: usize,
    rest: &[f32],
    tangent: f64,
    mut key: impl FnMut(&mut Rng) -> Vec<f32>,
) -> Sampler {
    let times_s = key_times(rng, keys);
    let c = rest.len();
    let mut values = Vec::with_capacity(keys * c * 3);
    for k in 0..keys {
        let v = if k == 0 { rest.to_vec() } else { key(rng) };
        if interpolation == Interpolation::CubicSpline {
            values.extend((0..c).map(|_| rng.range(-tangent, tangent) as f32));
            values.extend_from_slice(&v);
            values.extend((0..c).map(|_| rng.range(-tangent, tangent) as f32));
        } else {
            values.extend_from_slice(&v);
        }
    }
    Sampler {
        interpolation,
        times_s,
        values,
        components: c,
        is_rotation: false,
    }
}

/// Rotation sampler: key 0 is `rest`, later keys `rest · (random rotation up to max_angle)`.
/// LINEAR and STEP keys get random sign flips (the same rotation; only a shortest-path
/// slerp interpolates them correctly); CUBICSPLINE keys are kept on one hemisphere (a
/// flip there would change the curve) and get random non-zero tangents.
fn rotation_sampler(
    rng: &mut Rng,
    interpolation: Interpolation,
    keys: usize,
    rest: Quat,
    max_angle: f64,
) -> Sampler {
    let times_s = key_times(rng, keys);
    let rest_d = rest.as_dquat();
    let mut prev = rest_d;
    let mut values = Vec::with_capacity(keys * 12);
    for k in 0..keys {
        let mut q = if k == 0 {
            rest_d
        } else {
            (rest_d * DQuat::from_axis_angle(rng.unit_vector(), rng.range(-max_angle, max_angle)))
                .normalize()
        };
        match interpolation {
            Interpolation::CubicSpline => {
                if q.dot(prev) < 0.0 {
                    q = -q;
                }
                prev = q;
                let tangent = |rng: &mut Rng| {
                    DVec4::new(
                        rng.range(-0.8, 0.8),
                        rng.range(-0.8, 0.8),
                        rng.range(-0.8, 0.8),
                        rng.range(-0.8, 0.8),
                    )
                    .as_vec4()
                    .to_array()
                };
                values.extend_from_slice(&tangent(rng));
                values.extend_from_slice(&if k == 0 {
                    rest.to_array()
                } else {
                    q.as_quat().to_array()
                });
                values.extend_from_slice(&tangent(rng));
            }
            _ => {
                if k > 0 && rng.chance(0.5) {
                    q = -q;
                }
                values.extend_from_slice(&if k == 0 {
                    rest.to_array()
                } else {
                    q.as_quat().to_array()
                });
            }
        }
    }
    Sampler {
        interpolation,
        times_s,
        values,
        components: 4,
        is_rotation: true,
    }
}

fn translation_sampler(
    rng: &mut Rng,
    interpolation: Interpolation,
    keys: usize,
    rest: Vec3,
    amp: f64,
) -> Sampler {
    vector_sampler(rng, interpolation, keys, &rest.to_array(), amp, |rng| {
        (rest.as_dvec3()
            + DVec3::new(
                rng.range(-amp, amp),
                rng.range(-amp, amp),
                rng.range(-amp, amp),
            ))
        .as_vec3()
        .to_array()
        .to_vec()
    })
}

fn scale_sampler(
    rng: &mut Rng,
    interpolation: Interpolation,
    keys: usize,
    rest: Vec3,
    non_uniform: bool,
) -> Sampler {
    vector_sampler(rng, interpolation, keys, &rest.to_array(), 0.5, |rng| {
        let f = if non_uniform {
            DVec3::new(
                rng.range(0.7, 1.35),
                rng.range(0.7, 1.35),
                rng.range(0.7, 1.35),
            )
        } else {
            DVec3::splat(rng.range(0.75, 1.3))
        };
        (rest.as_dvec3() * f).as_vec3().to_array().to_vec()
    })
}

fn weights_sampler(
    rng: &mut Rng,
    interpolation: Interpolation,
    keys: usize,
    targets: usize,
) -> Sampler {
    vector_sampler(rng, interpolation, keys, &vec![0.0; targets], 1.5, |rng| {
        (0..targets).map(|_| rng.range(0.0, 1.0) as f32).collect()
    })
}

impl<F: Fn(usize) -> usize> Animations<'_, F> {
    fn channel(node: usize, path: Path, sampler: Sampler) -> Channel {
        Channel {
            node,
            path,
            sampler,
        }
    }

    fn keys(rng: &mut Rng) -> usize {
        3 + rng.index(5)
    }

    /// Animation 0: most joints rotate (interpolations cycled), translations on the root
    /// joint and one more, two scale channels, morph weights (LINEAR) and a translation on
    /// "mesh_parent" (no effect).
    fn sway(&self, rng: &mut Rng) -> Animation {
        use Interpolation::*;
        let sk = self.sk;
        let n = sk.joints.len();
        let mut ch = Vec::new();
        let cycle = [Linear, CubicSpline, Linear, Step];
        let off = rng.index(4);
        for j in 0..n {
            if j < 3 || rng.chance(0.8) {
                let interp = cycle[(j + off) % 4];
                let keys = Self::keys(rng);
                ch.push(Self::channel(
                    (self.joint_node)(j),
                    Path::Rotation,
                    rotation_sampler(rng, interp, keys, sk.joints[j].rest.rotation, 0.9),
                ));
            }
        }
        let keys = Self::keys(rng);
        ch.push(Self::channel(
            (self.joint_node)(0),
            Path::Translation,
            translation_sampler(rng, CubicSpline, keys, sk.joints[0].rest.translation, 0.08),
        ));
        // Another joint than the root (one channel per node and path).
        let j = 1 + rng.index(n - 1);
        let keys = Self::keys(rng);
        ch.push(Self::channel(
            (self.joint_node)(j),
            Path::Translation,
            translation_sampler(rng, Step, keys, sk.joints[j].rest.translation, 0.05),
        ));
        let nus = self.o.non_uniform_scale;
        for interp in [Linear, CubicSpline] {
            let j = rng.index(n);
            if ch
                .iter()
                .any(|c| c.node == (self.joint_node)(j) && c.path == Path::Scale)
            {
                continue;
            }
            let keys = Self::keys(rng);
            ch.push(Self::channel(
                (self.joint_node)(j),
                Path::Scale,
                scale_sampler(rng, interp, keys, sk.joints[j].rest.scale, nus),
            ));
        }
        if self.targets > 0 {
            let keys = Self::keys(rng);
            ch.push(Self::channel(
                self.mesh.0,
                Path::Weights,
                weights_sampler(rng, Linear, keys, self.targets),
            ));
        }
        let keys = Self::keys(rng);
        ch.push(Self::channel(
            self.mesh_parent.0,
            Path::Translation,
            translation_sampler(rng, Linear, keys, self.mesh_parent.1.translation, 0.5),
        ));
        Animation {
            name: Some("sway".into()),
            channels: ch,
        }
    }

    /// Animation 1: the armature rotates (LINEAR, sign flips), a subset of joints rotates,
    /// a STEP scale and a LINEAR translation, morph weights (CUBICSPLINE), and CUBICSPLINE
    /// translation on "mesh_parent" plus STEP rotation on the mesh node (no effect).
    fn twist(&self, rng: &mut Rng) -> Animation {
        use Interpolation::*;
        let sk = self.sk;
        let n = sk.joints.len();
        let mut ch = Vec::new();
        let keys = Self::keys(rng);
        ch.push(Self::channel(
            self.armature.0,
            Path::Rotation,
            rotation_sampler(rng, Linear, keys, self.armature.1.rotation, 0.6),
        ));
        let cycle = [CubicSpline, Linear, Step, Linear];
        let off = rng.index(4);
        for j in 0..n {
            if j < 2 || rng.chance(0.6) {
                let keys = Self::keys(rng);
                ch.push(Self::channel(
                    (self.joint_node)(j),
                    Path::Rotation,
                    rotation_sampler(
                        rng,
                        cycle[(j + off) % 4],
                        keys,
                        sk.joints[j].rest.rotation,
                        0.8,
                    ),
                ));
            }
        }
        let j = rng.index(n);
        let keys = Self::keys(rng);
        ch.push(Self::channel(
            (self.joint_node)(j),
            Path::Scale,
            scale_sampler(
                rng,
                Step,
                keys,
                sk.joints[j].rest.scale,
                self.o.non_uniform_scale,
            ),
        ));
        let j = rng.index(n);
        let keys = Self::keys(rng);
        ch.push(Self::channel(
            (self.joint_node)(j),
            Path::Translation,
            translation_sampler(rng, Linear, keys, sk.joints[j].rest.translation, 0.06),
        ));
        if self.targets > 0 {
            let keys = Self::keys(rng);
            ch.push(Self::channel(
                self.mesh.0,
                Path::Weights,
                weights_sampler(rng, CubicSpline, keys, self.targets),
            ));
        }
        let keys = Self::keys(rng);
        ch.push(Self::channel(
            self.mesh_parent.0,
            Path::Translation,
            translation_sampler(rng, CubicSpline, keys, self.mesh_parent.1.translation, 0.5),
        ));
        let keys = Self::keys(rng);
        ch.push(Self::channel(
            self.mesh.0,
            Path::Rotation,
            rotation_sampler(rng, Step, keys, self.mesh.1.rotation, 1.0),
        ));
        Animation {
            name: Some("twist".into()),
            channels: ch,
        }
    }
}

/// Woodland's arm with a biceps (his "Advanced Topics": weights that do not sum to 1): a
/// tube of radius 0.1 m along +X from 0 to 2 m, `upper_arm` (root, 1 m) and `forearm`, and a
/// muscle bone `biceps` under the upper arm from (0.3, 0.08, 0) along +X, 0.4 m. Ordinary
/// weights: upper arm below x = 0.9, forearm above 1.1, linear between. The biceps adds
/// `0.5 · sin(π (x − 0.3) / 0.4) · max(0, y / r)` on the upper half over x ∈ [0.3, 0.7].
/// Motions: "flex" (the whole arm turns 40° about Z at the shoulder while the biceps scales
/// to (1, 1.6, 1.6)) and "shoulder" (the same turn, biceps unscaled), each 0 → 1 s.
pub fn biceps_rig() -> skinview::rig::WeberRig {
    use skinview::rig::{Bone, Key, Motion, RigMesh, Track, WeberRig};
    let bone = |name: &str, parent: Option<usize>, length_m: f32, displacement_m: [f32; 3]| Bone {
        name: name.into(),
        parent,
        length_m,
        displacement_m,
        rotation: [0.0, 0.0, 0.0, 1.0],
        limits_deg: None,
        base_section: None,
        tip_section: None,
        links: None,
        muscle: false,
    };
    let mut biceps = bone("biceps", Some(0), 0.4, [-0.7, 0.08, 0.0]);
    biceps.muscle = true;
    let mut rig = WeberRig::new(
        "biceps_arm",
        vec![
            bone("upper_arm", None, 1.0, [0.0; 3]),
            bone("forearm", Some(0), 1.0, [0.0; 3]),
            biceps,
        ],
    );
    let (rings, around, r) = (41usize, 12usize, 0.1f32);
    let mut mesh = RigMesh {
        positions: Vec::new(),
        normals: Vec::new(),
        triangles: Vec::new(),
        weights: Vec::new(),
        color: [0.8, 0.7, 0.6, 1.0],
    };
    for i in 0..rings {
        let x = 2.0 * i as f32 / (rings - 1) as f32;
        for j in 0..around {
            let a = std::f32::consts::TAU * j as f32 / around as f32;
            let (y, z) = (r * a.cos(), r * a.sin());
            mesh.positions.push([x, y, z]);
            mesh.normals.push([0.0, a.cos(), a.sin()]);
            let fore = ((x - 0.9) / 0.2).clamp(0.0, 1.0);
            let mut w = vec![];
            if fore < 1.0 {
                w.push((0, 1.0 - fore));
            }
            if fore > 0.0 {
                w.push((1, fore));
            }
            let m = if (0.3..=0.7).contains(&x) && y > 0.0 {
                0.5 * (std::f32::consts::PI * (x - 0.3) / 0.4).sin() * (y / r)
            } else {
                0.0
            };
            if m > 0.0 {
                w.push((2, m));
            }
            mesh.weights.push(w);
        }
    }
    for i in 0..rings as u32 - 1 {
        for j in 0..around as u32 {
            let at = |i: u32, j: u32| i * around as u32 + j % around as u32;
            // Counter-clockwise seen from outside (the normals point out).
            mesh.triangles
                .push([at(i, j), at(i + 1, j + 1), at(i + 1, j)]);
            mesh.triangles
                .push([at(i, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    rig.mesh = Some(mesh);
    let turn = Quat::from_rotation_z(40f32.to_radians()).to_array();
    let shoulder = || Track {
        bone: "upper_arm".into(),
        displacement_keys: Vec::new(),
        rotation_keys: vec![
            Key {
                time_s: 0.0,
                value: [0.0, 0.0, 0.0, 1.0],
            },
            Key {
                time_s: 1.0,
                value: turn,
            },
        ],
        scale_keys: Vec::new(),
    };
    let flex = Track {
        bone: "biceps".into(),
        displacement_keys: Vec::new(),
        rotation_keys: Vec::new(),
        scale_keys: vec![
            Key {
                time_s: 0.0,
                value: [1.0; 3],
            },
            Key {
                time_s: 1.0,
                value: [1.0, 1.6, 1.6],
            },
        ],
    };
    rig.motions = vec![
        Motion {
            name: "flex".into(),
            looping: false,
            tracks: vec![shoulder(), flex],
        },
        Motion {
            name: "shoulder".into(),
            looping: false,
            tracks: vec![shoulder()],
        },
    ];
    rig
}
