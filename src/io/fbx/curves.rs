//! FBX translation and scale curves converted exactly to glTF's CUBICSPLINE (or LINEAR).
//!
//! Based on: ufbx 0.11.5's curve evaluation (`ufbx_evaluate_curve`: a cubic segment is a
//! cubic Bézier in (time, value) whose control points sit `right.dx` after and `left.dx`
//! before its keys) and its node transform (`ufbxi_get_transform`); the glTF 2.0
//! specification, Appendix C (cubic Hermite with tangents per second, scaled by the key
//! interval).
//!
//! Method: with unweighted tangents (`dx` a third of the interval) the Bézier's time is linear
//! in its parameter, so each segment is the cubic Hermite through its keys with slopes
//! `right.dy / right.dx` and `left.dy / left.dx`; a linear segment is the Hermite whose slopes
//! are its secant, a flat constant one that with slope 0. The three curves of a property may
//! key different times: every knot is at a time of the union (and at the take's ends), and a
//! segment split at an inner time is still a cubic, with its exact value and slope there.
//! The node's glTF property is `A · curves + c` when (the rule, checked per node):
//! - the stack has one layer, of weight 1, not animated;
//! - the node is no helper, has no scale helper and its parent none (their scale multiplies
//!   the translation and can be animated);
//! - of the transform properties only `Lcl Translation`, `Lcl Rotation` and `Lcl Scaling`
//!   are animated (no pivot, offset, pre/post rotation or rotation order);
//! - for a translation, the rotation and scale pivots and the scaling offset are zero, or
//!   neither rotation nor scaling is animated (else `R · (Sp − S·Sp + Soff − Rp)` varies);
//! - every curve extrapolates constantly and has no constant segment that jumps, and no
//!   weighted tangent.
//!
//! Then `A` is the unit and axis conversion ufbx puts on the node (`adjust_*`: a rotation,
//! a scale and a mirror for a translation; the two scale factors for a scale) and `c` what
//! the rest adds (pivots, offsets, the conversion's translation), found as ufbx's value at
//! the first knot less `A ·` the curves there. The track is then checked against ufbx's
//! evaluation at the knots and inside every interval ([`track::worst_error`]); a track off by
//! more than the tolerance is not used (the caller samples the property).
//!
//! Cost: O(keys) curve evaluations and 4 ufbx evaluations per knot.

use super::track::{self, Knot, Property, Target, Track};

/// Unweighted tangents lie a third of the interval from their key; ufbx stores the weight
/// 0.333333 (f32) times the interval, 3.3e-7 from a third: within 1e-5 of it a tangent is
/// unweighted (a weighted one is written to four decimals: 0.3333 is 3.3e-5 away).
const UNWEIGHTED_SLACK: f64 = 1e-5;

/// Transform properties that move a node's pivots or its rotation's frame (any animated
/// one leaves the property to sampling).
const COMPLEX_PROPS: [&str; 7] = [
    "PreRotation",
    "PostRotation",
    "RotationOffset",
    "ScalingOffset",
    "RotationPivot",
    "ScalingPivot",
    "RotationOrder",
];

/// The exact track of `property` (translation or scale) of `target`'s node over `times`
/// limits (`range`: the take's ends in file seconds, or `None` for every key), when the rule
/// of the module documentation holds; `None` otherwise.
pub(super) fn exact(
    target: &Target,
    property: Property,
    range: Option<(f64, f64)>,
) -> Option<Track> {
    let name = match property {
        Property::Translation => "Lcl Translation",
        Property::Scale => "Lcl Scaling",
        Property::Rotation => return None,
    };
    let anim = target.anim;
    let node = target.node;
    let layer = match anim.layers.as_ref() {
        [layer] if layer.weight == 1.0 && !layer.weight_is_animated => layer,
        _ => return None,
    };
    let helpers = node.is_scale_helper
        || node.is_geometry_transform_helper
        || node.scale_helper.is_some()
        || node
            .parent
            .as_ref()
            .is_some_and(|p| p.scale_helper.is_some());
    let props = layer.find_anim_props(&node.element);
    let animated = |n: &str| props.iter().any(|p| p.prop_name.as_ref() as &str == n);
    if helpers || COMPLEX_PROPS.iter().any(|n| animated(n)) {
        return None;
    }
    if property == Property::Translation
        && (animated("Lcl Rotation") || animated("Lcl Scaling"))
        && ["RotationPivot", "ScalingPivot", "ScalingOffset"]
            .iter()
            .any(|n| !prop_is_zero(node, n))
    {
        return None;
    }
    let value = layer
        .find_anim_prop(&node.element, name)?
        .anim_value
        .as_ref();
    let curves: [Option<&ufbx::AnimCurve>; 3] =
        std::array::from_fn(|i| value.curves[i].as_ref().map(|c| c.as_ref()));
    if !curves.iter().flatten().all(|c| convertible(c)) {
        return None;
    }
    let defaults = [
        value.default_value.x,
        value.default_value.y,
        value.default_value.z,
    ];
    let times = knot_times(&curves, range)?;
    let at = |t: f64| -> [(f64, f64, f64); 3] {
        std::array::from_fn(|i| match curves[i] {
            Some(c) => curve_at(c, t),
            None => (defaults[i], 0.0, 0.0),
        })
    };
    let a = conversion(node, property);
    let first = at(times[0]);
    let ufbx_first = target.eval(property, times[0]);
    let mapped = apply(&a, first.map(|v| v.0));
    let c: [f64; 3] = std::array::from_fn(|i| ufbx_first[i] - mapped[i]);
    let knots: Vec<Knot> = times
        .iter()
        .map(|&t| {
            let v = at(t);
            let value = apply(&a, v.map(|x| x.0));
            Knot::new(
                t,
                [value[0] + c[0], value[1] + c[1], value[2] + c[2], 0.0],
                vec4(apply(&a, v.map(|x| x.1))),
                vec4(apply(&a, v.map(|x| x.2))),
            )
        })
        .collect();
    let cubic = !knots.windows(2).all(|w| is_linear(&w[0], &w[1]));
    let track = Track { knots, cubic };
    let at_knots = track
        .knots
        .iter()
        .map(|k| target.error(property, k.value, target.eval(property, k.time)))
        .fold(0.0, f64::max);
    let between = track::worst_error(target, property, &track, |_| false);
    (at_knots.max(between) <= 1.0).then_some(track)
}

fn vec4(v: [f64; 3]) -> [f64; 4] {
    [v[0], v[1], v[2], 0.0]
}

/// Whether the node's (static) vector property `name` is zero (or absent).
fn prop_is_zero(node: &ufbx::Node, name: &str) -> bool {
    node.element
        .props
        .find_prop(name)
        .is_none_or(|p| p.value_vec4.x == 0.0 && p.value_vec4.y == 0.0 && p.value_vec4.z == 0.0)
}

/// Whether every segment of `curve` converts exactly: linear, cubic with unweighted
/// tangents, or constant without a jump; held (not repeated or sloped) past its ends.
fn convertible(curve: &ufbx::AnimCurve) -> bool {
    let held = |e: &ufbx::Extrapolation| e.mode == ufbx::ExtrapolationMode::Constant;
    if !held(&curve.pre_extrapolation) || !held(&curve.post_extrapolation) {
        return false;
    }
    curve.keyframes.windows(2).all(|w| {
        let (a, b) = (&w[0], &w[1]);
        let span = b.time - a.time;
        // Keys at one time (or out of order, or NaN): a jump, not a curve.
        if span.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return false;
        }
        let third = |dx: f32| (f64::from(dx) / span - 1.0 / 3.0).abs() <= UNWEIGHTED_SLACK;
        match a.interpolation {
            ufbx::Interpolation::Linear => true,
            ufbx::Interpolation::Cubic => third(a.right.dx) && third(b.left.dx),
            ufbx::Interpolation::ConstantPrev | ufbx::Interpolation::ConstantNext => {
                a.value == b.value
            }
        }
    })
}

/// Knot times: every key time of the curves, in order, within `range` with its two ends
/// added; `None` when no curve has a key.
fn knot_times(
    curves: &[Option<&ufbx::AnimCurve>; 3],
    range: Option<(f64, f64)>,
) -> Option<Vec<f64>> {
    let mut times: Vec<f64> = curves
        .iter()
        .flatten()
        .flat_map(|c| c.keyframes.iter().map(|k| k.time))
        .collect();
    if times.is_empty() {
        return None;
    }
    times.sort_by(f64::total_cmp);
    times.dedup();
    if let Some((begin, end)) = range {
        times.retain(|&t| t > begin && t < end);
        times.insert(0, begin);
        times.push(end);
    }
    Some(times)
}

/// `curve` at `t`: its value, and its slope (per second) on the left and on the right of `t`
/// (they differ only at a key). Held, with slope 0, before the first key and after the last.
fn curve_at(curve: &ufbx::AnimCurve, t: f64) -> (f64, f64, f64) {
    let keys = curve.keyframes.as_ref();
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
        return (0.0, 0.0, 0.0);
    };
    if keys.len() == 1 || t < first.time {
        return (first.value, 0.0, 0.0);
    }
    if t > last.time {
        return (last.value, 0.0, 0.0);
    }
    // The segment starting at or before t (the last one for t at the last key).
    let after = keys.partition_point(|k| k.time <= t);
    let i = after.saturating_sub(1).min(keys.len() - 2);
    let (a, b) = (&keys[i], &keys[i + 1]);
    let (value, slope) = segment_at(a, b, t);
    if t == a.time && i > 0 {
        let (_, left) = segment_at(&keys[i - 1], a, t);
        return (value, left, slope);
    }
    if t == b.time {
        // The last key: held after it.
        return (value, slope, 0.0);
    }
    if t == a.time {
        // The first key: held before it.
        return (value, 0.0, slope);
    }
    (value, slope, slope)
}

/// The segment from key `a` to `b` at `t`: value and slope per second (see
/// [`convertible`] for the segments this is exact for).
fn segment_at(a: &ufbx::Keyframe, b: &ufbx::Keyframe, t: f64) -> (f64, f64) {
    let span = b.time - a.time;
    let u = ((t - a.time) / span).clamp(0.0, 1.0);
    let slope = |g: &ufbx::Tangent| {
        if g.dx > 0.0 {
            f64::from(g.dy) / f64::from(g.dx)
        } else {
            0.0
        }
    };
    match a.interpolation {
        ufbx::Interpolation::Linear => (
            a.value + (b.value - a.value) * u,
            (b.value - a.value) / span,
        ),
        ufbx::Interpolation::Cubic => {
            let (m0, m1) = (slope(&a.right) * span, slope(&b.left) * span);
            let (u2, u3) = (u * u, u * u * u);
            let value = (2.0 * u3 - 3.0 * u2 + 1.0) * a.value
                + (u3 - 2.0 * u2 + u) * m0
                + (-2.0 * u3 + 3.0 * u2) * b.value
                + (u3 - u2) * m1;
            let d = (6.0 * u2 - 6.0 * u) * a.value
                + (3.0 * u2 - 4.0 * u + 1.0) * m0
                + (-6.0 * u2 + 6.0 * u) * b.value
                + (3.0 * u2 - 2.0 * u) * m1;
            (value, d / span)
        }
        ufbx::Interpolation::ConstantPrev | ufbx::Interpolation::ConstantNext => (a.value, 0.0),
    }
}

/// The linear map ufbx puts between a node's curves and its local `property` (the unit and
/// axis conversion of a root: `adjust_*`), as rows.
fn conversion(node: &ufbx::Node, property: Property) -> [[f64; 3]; 3] {
    let mut m = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    if property == Property::Scale {
        if node.has_adjust_transform {
            let k = node.adjust_post_scale * node.adjust_pre_scale;
            m = m.map(|row| row.map(|x| x * k));
        }
        return m;
    }
    if node.has_adjust_transform {
        let q = node.adjust_pre_rotation;
        let r = glam::DMat3::from_quat(glam::DQuat::from_xyzw(q.x, q.y, q.z, q.w));
        let k = node.adjust_pre_scale * node.adjust_translation_scale;
        m = std::array::from_fn(|i| std::array::from_fn(|j| r.col(j)[i] * k));
    }
    let mirrored = match node.adjust_mirror_axis {
        ufbx::MirrorAxis::None => None,
        ufbx::MirrorAxis::X => Some(0),
        ufbx::MirrorAxis::Y => Some(1),
        ufbx::MirrorAxis::Z => Some(2),
    };
    if let Some(i) = mirrored {
        m[i] = m[i].map(|x| -x);
    }
    m
}

fn apply(m: &[[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
    m.map(|row| row[0] * v[0] + row[1] * v[1] + row[2] * v[2])
}

/// Whether the Hermite from `a` to `b` is their straight line (both tangents the secant).
fn is_linear(a: &Knot, b: &Knot) -> bool {
    let dt = b.time - a.time;
    (0..3).all(|i| {
        let secant = (b.value[i] - a.value[i]) / dt;
        let close = |x: f64| (x - secant).abs() <= 1e-6 * secant.abs().max(1e-9);
        close(a.out_tangent[i]) && close(b.in_tangent[i])
    })
}
