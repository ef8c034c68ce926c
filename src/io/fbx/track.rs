//! One node property's track as the importer builds it before it becomes a channel: knots in
//! the file's seconds with f32-rounded values and tangents, played as the runtime sampler
//! plays them (lerp, shortest-arc slerp, or cubic Hermite then normalised), and the error of
//! such a track against ufbx's own evaluation of the node ([`Target`]), in units of its
//! tolerance.
//!
//! Tolerance (issue 44): a track is within it where, at every checked time, it is off ufbx's
//! evaluation by at most [`TOLERANCE_REL`] of the model's rest diagonal (the bounds of every
//! mesh placed by its node at rest, before skinning; the joints' bounds for a file with no
//! mesh), or by 4 ulp (f32) of the coordinate, whichever is larger. Per property, as seen at
//! a point at most a diagonal from the node: a translation component may be off by
//! `TOLERANCE_REL × diagonal / s` (`s` the parent's world scale at rest); a rotation by
//! `TOLERANCE_REL` radians; a scale component by `TOLERANCE_REL` of the node's largest scale
//! component.

/// How far an imported track may be from ufbx's evaluation, relative to the model's rest
/// diagonal: 1e-6, ten f32 ulps of a coordinate near the diagonal, the accuracy the issue
/// asks of curves (an FBX import is otherwise checked to about 5e-7 of the diagonal).
pub(super) const TOLERANCE_REL: f64 = 1e-6;

/// Which part of a node's local transform a track holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Property {
    Translation,
    Rotation,
    Scale,
}

impl Property {
    pub(super) fn name(self) -> &'static str {
        match self {
            Property::Translation => "translation",
            Property::Rotation => "rotation",
            Property::Scale => "scale",
        }
    }

    /// Floats per value: 3, or 4 for a rotation (x, y, z, w).
    pub(super) fn components(self) -> usize {
        match self {
            Property::Rotation => 4,
            _ => 3,
        }
    }
}

/// A knot: time (file seconds), value and the tangents either side (per second), each
/// rounded to f32 as the channel stores them (the tangents are unused in a LINEAR track).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Knot {
    pub time: f64,
    pub value: [f64; 4],
    pub in_tangent: [f64; 4],
    pub out_tangent: [f64; 4],
}

impl Knot {
    pub(super) fn new(
        time: f64,
        value: [f64; 4],
        in_tangent: [f64; 4],
        out_tangent: [f64; 4],
    ) -> Knot {
        Knot {
            time,
            value: f32_round(value),
            in_tangent: f32_round(in_tangent),
            out_tangent: f32_round(out_tangent),
        }
    }
}

/// A property's track: knots in time order and how to play between them.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Track {
    pub knots: Vec<Knot>,
    /// CUBICSPLINE (Hermite on the tangents) rather than LINEAR.
    pub cubic: bool,
}

fn f32_round(v: [f64; 4]) -> [f64; 4] {
    v.map(|x| x as f32 as f64)
}

/// The track between knots `a` and `b` at `u` in [0, 1], as the sampler plays it.
pub(super) fn interpolate(property: Property, cubic: bool, a: &Knot, b: &Knot, u: f64) -> [f64; 4] {
    let dt = b.time - a.time;
    let rotation = property == Property::Rotation;
    let mut out: [f64; 4] = if cubic {
        let (u2, u3) = (u * u, u * u * u);
        let h00 = 2.0 * u3 - 3.0 * u2 + 1.0;
        let h10 = (u3 - 2.0 * u2 + u) * dt;
        let h01 = -2.0 * u3 + 3.0 * u2;
        let h11 = (u3 - u2) * dt;
        std::array::from_fn(|i| {
            h00 * a.value[i] + h10 * a.out_tangent[i] + h01 * b.value[i] + h11 * b.in_tangent[i]
        })
    } else if rotation {
        let qa = glam::DQuat::from_array(a.value);
        let qb = glam::DQuat::from_array(b.value);
        let qb = if qa.dot(qb) < 0.0 { -qb } else { qb };
        qa.slerp(qb, u).to_array()
    } else {
        std::array::from_fn(|i| a.value[i] + (b.value[i] - a.value[i]) * u)
    };
    if rotation {
        let len = out.iter().map(|x| x * x).sum::<f64>().sqrt();
        if len > 0.0 && len.is_finite() {
            out = out.map(|x| x / len);
        }
    }
    out
}

/// A node's local transform as ufbx evaluates it, and the scales its errors are measured in.
pub(super) struct Target<'a> {
    pub anim: &'a ufbx::Anim,
    pub node: &'a ufbx::Node,
    /// Translation tolerance, in the parent's units (see the module documentation).
    pub translation_tolerance: f64,
}

impl Target<'_> {
    /// `property` of the node at `time` (file seconds); a rotation as (x, y, z, w).
    pub(super) fn eval(&self, property: Property, time: f64) -> [f64; 4] {
        let t = ufbx::evaluate_transform(self.anim, self.node, time);
        match property {
            Property::Translation => [t.translation.x, t.translation.y, t.translation.z, 0.0],
            Property::Rotation => [t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w],
            Property::Scale => [t.scale.x, t.scale.y, t.scale.z, 0.0],
        }
    }

    /// How far `ours` is from ufbx's `theirs`, in tolerances (at most 1 is within it).
    pub(super) fn error(&self, property: Property, ours: [f64; 4], theirs: [f64; 4]) -> f64 {
        let ulps4 = |x: f64| 4.0 * f64::from((x.abs() as f32).next_up() - x.abs() as f32);
        match property {
            Property::Translation => (0..3)
                .map(|i| {
                    (ours[i] - theirs[i]).abs() / self.translation_tolerance.max(ulps4(theirs[i]))
                })
                .fold(0.0, f64::max),
            Property::Scale => {
                let largest = theirs[..3].iter().fold(0.0f64, |m, x| m.max(x.abs()));
                (0..3)
                    .map(|i| {
                        (ours[i] - theirs[i]).abs()
                            / (TOLERANCE_REL * largest).max(ulps4(theirs[i]))
                    })
                    .fold(0.0, f64::max)
            }
            Property::Rotation => {
                // The angle between unit quaternions is about twice their distance (sign
                // chosen to be the nearer).
                let d = |s: f64| {
                    (0..4)
                        .map(|i| (ours[i] - s * theirs[i]).powi(2))
                        .sum::<f64>()
                        .sqrt()
                };
                let angle = 2.0 * d(1.0).min(d(-1.0));
                let floor = 2.0 * ulps4(1.0);
                angle / TOLERANCE_REL.max(floor)
            }
        }
    }
}

/// Fractions of a key interval where a track is checked against ufbx: the quarter points,
/// near where the error of a chord or a Hermite between exact knots peaks, and the golden
/// section's two points, which no whole number of turns in the interval maps onto its ends
/// (at the quarter points alone, a segment of 4k turns would look like no turn at all).
pub(super) const CHECKS: [f64; 5] = [
    0.25,
    0.381_966_011_250_105,
    0.5,
    0.618_033_988_749_895,
    0.75,
];

/// The worst error (in tolerances) of `track` between its knots, at [`CHECKS`] of each
/// interval but `skip`ped ones (steps, which the bake leaves as a short ramp).
pub(super) fn worst_error(
    target: &Target,
    property: Property,
    track: &Track,
    skip: impl Fn(usize) -> bool,
) -> f64 {
    let mut worst: f64 = 0.0;
    for (i, w) in track.knots.windows(2).enumerate() {
        if skip(i) {
            continue;
        }
        for u in CHECKS {
            let t = w[0].time + (w[1].time - w[0].time) * u;
            let ours = interpolate(property, track.cubic, &w[0], &w[1], u);
            worst = worst.max(target.error(property, ours, target.eval(property, t)));
        }
    }
    worst
}

/// The model's rest diagonal: every mesh's vertices placed by its nodes at rest; with no
/// mesh, the nodes' origins; 1 when that is empty or flat (a single point).
pub(super) fn rest_diagonal(fbx: &ufbx::Scene) -> f64 {
    let point = |p: ufbx::Vec3| glam::Vec3::new(p.x as f32, p.y as f32, p.z as f32);
    let meshes = fbx.nodes.iter().flat_map(|node| {
        node.mesh.iter().flat_map(move |mesh| {
            mesh.vertices
                .iter()
                .map(move |&p| point(ufbx::transform_position(&node.geometry_to_world, p)))
        })
    });
    let origins = fbx.nodes.iter().map(|node| {
        let m = &node.node_to_world;
        point(ufbx::Vec3 {
            x: m.m03,
            y: m.m13,
            z: m.m23,
        })
    });
    let d = crate::math::finite_bounds(meshes)
        .or_else(|| crate::math::finite_bounds(origins))
        .map_or(0.0, crate::math::bounds_diagonal_f64);
    if d.is_finite() && d > 0.0 { d } else { 1.0 }
}

/// The world scale of `node`'s parent at rest (its matrix's longest axis; 1 for a root or a
/// degenerate parent): a parent scaling by `s` makes a local translation error `s` times
/// larger in the model.
pub(super) fn parent_scale(node: &ufbx::Node) -> f64 {
    let Some(p) = &node.parent else { return 1.0 };
    let m = &p.node_to_world;
    let s = [
        (m.m00, m.m10, m.m20),
        (m.m01, m.m11, m.m21),
        (m.m02, m.m12, m.m22),
    ]
    .iter()
    .map(|&(x, y, z)| (x * x + y * y + z * z).sqrt())
    .fold(0.0, f64::max);
    if s.is_finite() && s > 0.0 { s } else { 1.0 }
}
