//! A finding's mark drawn over its picture ([`Mark`]): the rest box and the frame's box of a
//! clip leaving its bounds, the narrowest ring (and the circle of its rest radius) with its
//! joint as a dot for a joint's blend zone, the vertex as a circled dot for a weight problem.
//! Dots and circles round a vertex are sized by the picture (a share of what it frames);
//! boxes and rings are the sizes the check measured. A ring's picture is a close-up of its
//! blend zone (a candy-wrapper's ring is a speck in a view of the whole model); the others
//! frame the whole model and the mark.
//! Lines are drawn in front of the mesh (a mark behind the body still shows), in model space
//! under the picture's own camera, and a legend names each colour.

use glam::Vec3;

use super::Mark;
use crate::camera::FRAMING_DIRECTION;
use crate::gpu::OverlayGeometry;
use crate::view::legend::{Legend, LegendKind};
use crate::view::skeleton::sphere;

/// The rest box (linear RGB): cyan.
pub const REST_COLOR: [f32; 3] = [0.1, 0.75, 1.0];
/// The frame's box and the narrowest ring: orange, far from cyan.
pub const FRAME_COLOR: [f32; 3] = [1.0, 0.35, 0.02];
/// The ring's rest radius: pale grey, behind the orange ring.
pub const REST_RING_COLOR: [f32; 3] = [0.7, 0.7, 0.75];
/// The vertex's circled dot: yellow.
pub const POINT_COLOR: [f32; 3] = [1.0, 0.9, 0.05];
/// The joint's dot: magenta, apart from the orange ring round it.
pub const JOINT_COLOR: [f32; 3] = [1.0, 0.15, 0.85];

/// A vertex's dot's radius, as a share of the size of what the picture frames.
const DOT_SHARE: f32 = 0.012;
/// A joint's dot's radius, as that share: smaller, as a candy-wrapper's ring round it may
/// have lost nearly all its radius (drawn in front, the dot would hide it).
const JOINT_DOT_SHARE: f32 = 0.006;
/// A ring's close-up frames a cube this many rest radii either side of its centre.
const RING_VIEW_RADII: f32 = 1.25;
/// The circle round a vertex's dot, as a share of that size.
const VERTEX_CIRCLE_SHARE: f32 = 0.05;

/// A finding's mark as geometry and the legend that names its colours.
pub struct MarkDrawing {
    /// Lines and triangles in model space.
    pub overlay: OverlayGeometry,
    /// Each colour in words.
    pub legend: Legend,
    /// The points the picture's camera frames (model space).
    pub frame_points: Vec<Vec3>,
}

/// `mark` drawn for a picture of a model whose skinned vertices are `skinned` there, the
/// legend titled `title` (where the picture is).
pub fn draw(mark: &Mark, title: String, skinned: &[Vec3]) -> MarkDrawing {
    let mut overlay = OverlayGeometry::default();
    let mut frame_points = framed(mark, skinned);
    let size = diagonal_m(&frame_points);
    let rgba = |c: [f32; 3]| [c[0], c[1], c[2], 1.0];
    let flat = |c: [f32; 3]| move |_: Vec3| rgba(c);
    let entries = match mark {
        Mark::Bounds {
            rest_min,
            rest_max,
            frame_min,
            frame_max,
        } => {
            let v = Vec3::from_array;
            overlay.wire_box(v(*rest_min), v(*rest_max), rgba(REST_COLOR), true);
            overlay.wire_box(v(*frame_min), v(*frame_max), rgba(FRAME_COLOR), true);
            vec![
                (REST_COLOR, "rest box".to_string()),
                (FRAME_COLOR, "skinned box at this frame".to_string()),
            ]
        }
        Mark::Ring {
            joint,
            joint_position,
            centre,
            axis,
            radius,
            rest_radius,
            ..
        } => {
            let (c, n) = (Vec3::from_array(*centre), Vec3::from_array(*axis));
            overlay.circle(c, n, *rest_radius, rgba(REST_RING_COLOR), true);
            overlay.circle(c, n, *radius, rgba(FRAME_COLOR), true);
            let dot = Vec3::from_array(*joint_position);
            sphere(
                dot,
                size * JOINT_DOT_SHARE,
                &flat(JOINT_COLOR),
                &mut overlay,
            );
            vec![
                (
                    FRAME_COLOR,
                    format!(
                        "narrowest ring: {:.0} % of its rest radius",
                        100.0 * radius / rest_radius.max(f32::MIN_POSITIVE)
                    ),
                ),
                (REST_RING_COLOR, "its rest radius".to_string()),
                (JOINT_COLOR, format!("joint {joint}")),
            ]
        }
        Mark::Vertex {
            draw,
            vertex,
            position,
            influences,
        } => {
            let p = Vec3::from_array(*position);
            sphere(p, size * DOT_SHARE, &flat(POINT_COLOR), &mut overlay);
            let towards_eye = FRAMING_DIRECTION.normalize();
            let circle = size * VERTEX_CIRCLE_SHARE;
            overlay.circle(p, towards_eye, circle, rgba(POINT_COLOR), true);
            vec![(
                POINT_COLOR,
                format!(
                    "vertex {vertex} of draw {draw}: {influences} influence{}",
                    if *influences == 1 { "" } else { "s" }
                ),
            )]
        }
    };
    frame_points.extend(points(&overlay));
    MarkDrawing {
        overlay,
        legend: Legend {
            title,
            kind: LegendKind::Swatches { entries, more: 0 },
        },
        frame_points,
    }
}

/// What a mark's picture frames before the mark itself: the corners of a cube round a ring
/// ([`RING_VIEW_RADII`] rest radii either side of its centre), else the whole model.
fn framed(mark: &Mark, skinned: &[Vec3]) -> Vec<Vec3> {
    match mark {
        Mark::Ring {
            centre,
            rest_radius,
            ..
        } => {
            let (c, half) = (Vec3::from_array(*centre), rest_radius * RING_VIEW_RADII);
            (0..8)
                .map(|i| {
                    let sign = |bit: usize| if i & bit == 0 { -half } else { half };
                    c + Vec3::new(sign(1), sign(2), sign(4))
                })
                .collect()
        }
        Mark::Bounds { .. } | Mark::Vertex { .. } => skinned.to_vec(),
    }
}

/// The diagonal of the box round the finite `points` (0 when none is).
fn diagonal_m(points: &[Vec3]) -> f32 {
    crate::math::finite_bounds(points.iter().copied()).map_or(0.0, crate::math::bounds_diagonal)
}

/// Every point of `overlay` (the picture frames the mark whole).
fn points(overlay: &OverlayGeometry) -> impl Iterator<Item = Vec3> + '_ {
    [
        &overlay.lines,
        &overlay.lines_front,
        &overlay.triangles,
        &overlay.triangles_front,
    ]
    .into_iter()
    .flatten()
    .map(|v| Vec3::from_array(v.position))
}
