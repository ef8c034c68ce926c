//! An orbit camera (Blender / three.js OrbitControls style): a target point, yaw and pitch
//! around it, a distance, a vertical field of view. It frames a bounding box, orbits, pans and
//! zooms, and gives the `clip_from_world` matrix in wgpu's clip space (NDC z in [0, 1], y up).
//! Near and far planes follow the scene's bounding sphere so depth precision stays useful
//! whatever the zoom.

use glam::{Mat4, Vec3};

use crate::math::{bounds_diagonal, box_corners, finite_bounds};

/// Default vertical field of view (about 34°, a "normal" lens).
pub const DEFAULT_FOV_Y_RAD: f32 = 0.6;

/// Direction from the target towards the eye of the default framing: front-right, slightly
/// above (the three-quarter view a rig is usually inspected from); not of unit length.
pub const FRAMING_DIRECTION: Vec3 = Vec3::new(0.45, 0.3, 1.0);

/// The share of a view's limiting dimension a framed model fills: inside the 80–90 % that
/// Blender's "frame selected" and three.js editors leave, so nothing touches the edge and the
/// model is not a speck.
pub const FRAME_FILL: f32 = 0.85;

/// Passes of [`OrbitCamera::fit`]: under perspective, moving the target shifts near and far
/// points differently, so centre and distance are refined together (four passes leave the
/// centre within 0.5 % of the view on random point clouds; the last sets the fill exactly).
const FIT_PASSES: usize = 4;

/// Bisection steps of the distance in [`OrbitCamera::fit`]: 2^-40 of the bracket.
const FIT_BISECTIONS: usize = 40;

/// Pitch is kept inside ±(90° − this) so the view never flips over the pole.
const PITCH_MARGIN_RAD: f32 = 0.01;

/// An orbit camera; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    /// The point looked at and orbited around (world space, metres).
    pub target: Vec3,
    /// Rotation about +Y of the eye around the target (0 = eye on +Z).
    pub yaw_rad: f32,
    /// Elevation of the eye above the target's horizontal plane.
    pub pitch_rad: f32,
    /// Eye–target distance (metres).
    pub distance_m: f32,
    /// Vertical field of view.
    pub fov_y_rad: f32,
    /// Centre and radius of the scene's bounding sphere (near/far planes).
    pub scene_center: Vec3,
    /// Radius of the scene's bounding sphere.
    pub scene_radius_m: f32,
}

impl OrbitCamera {
    /// A camera framing the box `[min, max]` from the front-right, slightly above, so the
    /// bounding sphere fits the view at `aspect` (width / height).
    pub fn framing(min: Vec3, max: Vec3, aspect: f32) -> OrbitCamera {
        let d = FRAMING_DIRECTION.normalize();
        let mut c = OrbitCamera {
            target: Vec3::ZERO,
            yaw_rad: d.x.atan2(d.z),
            pitch_rad: d.y.asin(),
            distance_m: 1.0,
            fov_y_rad: DEFAULT_FOV_Y_RAD,
            scene_center: Vec3::ZERO,
            scene_radius_m: 1.0,
        };
        c.frame(min, max, aspect);
        c
    }

    /// A camera from the default direction (front-right, slightly above) framing `points`
    /// (a model's skinned vertices) as [`OrbitCamera::fit`] does. None when no point is finite.
    pub fn framing_points(points: &[Vec3], aspect: f32) -> Option<OrbitCamera> {
        let mut c = OrbitCamera::framing(Vec3::splat(-1.0), Vec3::splat(1.0), aspect);
        c.fit(points, aspect, FRAME_FILL).then_some(c)
    }

    /// Keep the direction; frame the corners of the box `[min, max]` (see
    /// [`OrbitCamera::fit`]).
    pub fn frame(&mut self, min: Vec3, max: Vec3, aspect: f32) {
        self.fit(&box_corners((min, max)), aspect, FRAME_FILL);
    }

    /// Keep the direction; move the target and the distance so that `points` seen at `aspect`
    /// (width / height) are centred and span `fill` of the view's limiting dimension (the
    /// wider of their extents across and up the view, in normalised device coordinates, is
    /// `2 · fill`). Returns false, changing nothing, when no point is finite.
    ///
    /// Method: with the target's lateral position fixed, a point's projected offset falls as
    /// the distance grows, so the distance that gives `fill` is found by bisection; the target
    /// is then moved to the projected centre, and the two refined together. Cost:
    /// O(points × 160).
    pub fn fit(&mut self, points: &[Vec3], aspect: f32, fill: f32) -> bool {
        let Some((lo, hi)) = finite_bounds(points.iter().copied()) else {
            return false;
        };
        let radius = (bounds_diagonal((lo, hi)) * 0.5).max(1e-4);
        let forward = -self.direction();
        let right = forward.cross(Vec3::Y).normalize_or_zero();
        let up = right.cross(forward);
        let tan_y = (self.fov_y_rad * 0.5).tan();
        let tan = [tan_y * aspect.max(1e-4), tan_y];
        let mut target = (lo + hi) * 0.5;
        let mut distance = radius;
        for pass in 0..FIT_PASSES {
            let view = |p: &Vec3| {
                let v = *p - target;
                [v.dot(right), v.dot(up), v.dot(forward)]
            };
            let extent = |d: f32| projected_extent(points, &view, d, tan);
            // Every point at least a tenth of the model's size in front of the eye.
            let nearest = points
                .iter()
                .filter(|p| p.is_finite())
                .map(|p| view(p)[2])
                .fold(f32::INFINITY, f32::min);
            let mut near = -nearest + radius * 0.1;
            let mut far = near.max(radius) * 2.0;
            while half_extent(&extent(far)) > fill && far < radius * 1e6 {
                far *= 2.0;
            }
            for _ in 0..FIT_BISECTIONS {
                let mid = 0.5 * (near + far);
                if half_extent(&extent(mid)) > fill {
                    near = mid;
                } else {
                    far = mid;
                }
            }
            distance = far;
            if pass + 1 == FIT_PASSES {
                break; // the last pass sets the fill exactly
            }
            // Move the target sideways so the extreme points project symmetrically: for
            // lateral offsets a, b at depths za, zb, (a − s)/za = −(b − s)/zb.
            let x = projected_extremes(points, &view, distance);
            let shift = |(a, za): (f32, f32), (b, zb): (f32, f32)| {
                (a / za + b / zb) / (1.0 / za + 1.0 / zb)
            };
            target += right * shift(x[0], x[1]) + up * shift(x[2], x[3]);
        }
        self.target = target;
        self.distance_m = distance;
        self.scene_center = (lo + hi) * 0.5;
        self.scene_radius_m = radius;
        true
    }

    /// Whether every point is inside the view at `aspect` (normalised device coordinates within
    /// ±1, in front of the eye): the viewer re-frames a model that walks out of view.
    pub fn sees_all(&self, points: &[Vec3], aspect: f32) -> bool {
        let clip_from_world = self.clip_from_world(aspect);
        points.iter().filter(|p| p.is_finite()).all(|p| {
            let c = clip_from_world * p.extend(1.0);
            c.w > 0.0 && c.x.abs() <= c.w && c.y.abs() <= c.w
        })
    }

    /// Unit vector from the target towards the eye.
    pub fn direction(&self) -> Vec3 {
        let (sy, cy) = self.yaw_rad.sin_cos();
        let (sp, cp) = self.pitch_rad.sin_cos();
        Vec3::new(cp * sy, sp, cp * cy)
    }

    /// Eye position (world space).
    pub fn eye(&self) -> Vec3 {
        self.target + self.direction() * self.distance_m
    }

    /// `clip_from_world` for a view of `aspect` (width / height).
    pub fn clip_from_world(&self, aspect: f32) -> Mat4 {
        let eye = self.eye();
        let view = glam::camera::rh::view::look_at_mat4(eye, self.target, Vec3::Y);
        // Planes around the scene's bounding sphere seen from the eye.
        let r = self.scene_radius_m.max(1e-4);
        let d = (eye - self.scene_center).length();
        let near = (d - r * 1.5).max(d * 0.01).max(1e-4);
        let far = (d + r * 1.5).max(near * 2.0);
        // wgpu clip space: NDC z in [0, 1], y up (glam calls it "directx").
        let proj = glam::camera::rh::proj::directx::perspective(
            self.fov_y_rad,
            aspect.max(1e-4),
            near,
            far,
        );
        proj * view
    }

    /// Orbit: turn the eye around the target by `yaw_rad` and `pitch_rad` (pitch is clamped
    /// short of the poles).
    pub fn orbit(&mut self, yaw_rad: f32, pitch_rad: f32) {
        let limit = std::f32::consts::FRAC_PI_2 - PITCH_MARGIN_RAD;
        self.yaw_rad = (self.yaw_rad + yaw_rad).rem_euclid(std::f32::consts::TAU);
        self.pitch_rad = (self.pitch_rad + pitch_rad).clamp(-limit, limit);
    }

    /// Pan: move the target (and the eye with it) in the view plane by fractions of the
    /// view's height (`dx` right, `dy` up), so the scene follows the pointer.
    pub fn pan(&mut self, dx: f32, dy: f32) {
        let forward = -self.direction();
        let right = forward.cross(Vec3::Y).normalize_or_zero();
        let up = right.cross(forward);
        let height_m = 2.0 * self.distance_m * (self.fov_y_rad * 0.5).tan();
        self.target += (right * dx + up * dy) * height_m;
    }

    /// Zoom: scale the distance by `factor` (< 1 moves in), kept within a range around the
    /// scene's size so the eye neither enters the target nor loses the model.
    pub fn zoom(&mut self, factor: f32) {
        let r = self.scene_radius_m.max(1e-4);
        if factor.is_finite() && factor > 0.0 {
            self.distance_m = (self.distance_m * factor).clamp(r * 0.05, r * 200.0);
        }
    }
}

/// `[min x, max x, min y, max y]` of the points projected in normalised device coordinates,
/// the eye `distance` behind the target; `view` gives a point's (right, up, forward) offsets
/// from the target, `tan` the half-angle tangents across and up.
fn projected_extent(
    points: &[Vec3],
    view: &dyn Fn(&Vec3) -> [f32; 3],
    distance: f32,
    tan: [f32; 2],
) -> [f32; 4] {
    let mut e = [
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    for p in points.iter().filter(|p| p.is_finite()) {
        let [x, y, z] = view(p);
        let depth = (distance + z).max(1e-9);
        let (u, v) = (x / (depth * tan[0]), y / (depth * tan[1]));
        e = [e[0].min(u), e[1].max(u), e[2].min(v), e[3].max(v)];
    }
    e
}

/// The points that project furthest left, right, down and up, the eye `distance` behind the
/// target: each as (its offset across or up from the target, its depth from the eye).
fn projected_extremes(
    points: &[Vec3],
    view: &dyn Fn(&Vec3) -> [f32; 3],
    distance: f32,
) -> [(f32, f32); 4] {
    let (low, high) = ((f32::INFINITY, (0.0, 1.0)), (f32::NEG_INFINITY, (0.0, 1.0)));
    let mut e = [low, high, low, high];
    for p in points.iter().filter(|p| p.is_finite()) {
        let [x, y, z] = view(p);
        let depth = (distance + z).max(1e-9);
        for (k, lateral) in [(0, x), (2, y)] {
            let v = lateral / depth;
            if v < e[k].0 {
                e[k] = (v, (lateral, depth));
            }
            if v > e[k + 1].0 {
                e[k + 1] = (v, (lateral, depth));
            }
        }
    }
    [e[0].1, e[1].1, e[2].1, e[3].1]
}

/// Half the larger of an extent's width and height.
fn half_extent(e: &[f32; 4]) -> f32 {
    0.5 * (e[1] - e[0]).max(e[3] - e[2])
}

/// Support points of `points`: the extreme point along each of the 13 directions of a
/// 26-sided discrete-orientation polytope, both ways (26 points, fewer when some coincide).
/// Framing a clip fits these of each sampled frame instead of every vertex of every frame.
pub fn support_points(points: &[Vec3], out: &mut Vec<Vec3>) {
    const DIRECTIONS: [Vec3; 13] = [
        Vec3::X,
        Vec3::Y,
        Vec3::Z,
        Vec3::new(1.0, 1.0, 0.0),
        Vec3::new(1.0, -1.0, 0.0),
        Vec3::new(1.0, 0.0, 1.0),
        Vec3::new(1.0, 0.0, -1.0),
        Vec3::new(0.0, 1.0, 1.0),
        Vec3::new(0.0, 1.0, -1.0),
        Vec3::new(1.0, 1.0, 1.0),
        Vec3::new(1.0, 1.0, -1.0),
        Vec3::new(1.0, -1.0, 1.0),
        Vec3::new(-1.0, 1.0, 1.0),
    ];
    let start = out.len();
    let mut best = [(f32::INFINITY, Vec3::ZERO, f32::NEG_INFINITY, Vec3::ZERO); 13];
    for p in points.iter().filter(|p| p.is_finite()) {
        for (b, d) in best.iter_mut().zip(DIRECTIONS) {
            let s = p.dot(d);
            if s < b.0 {
                (b.0, b.1) = (s, *p);
            }
            if s > b.2 {
                (b.2, b.3) = (s, *p);
            }
        }
    }
    for b in best.iter().filter(|b| b.0.is_finite()) {
        for p in [b.1, b.3] {
            if !out[start..].contains(&p) {
                out.push(p);
            }
        }
    }
}

/// The six planes of a view's `clip_from_world` matrix in wgpu's clip space (x, y in [−w, w],
/// z in [0, w]), as Gribb and Hartmann, "Fast Extraction of Viewing Frustum Planes from the
/// World-View-Projection Matrix" (2001), take them from its rows: what a crowd is culled
/// against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frustum {
    /// `(n, d)`: a point p is inside the plane when `n · p + d ≥ 0`.
    planes: [glam::Vec4; 6],
}

impl Frustum {
    /// The frustum of `clip_from_world`.
    pub fn new(clip_from_world: Mat4) -> Frustum {
        let r = |i| clip_from_world.row(i);
        Frustum {
            planes: [
                r(3) + r(0),
                r(3) - r(0),
                r(3) + r(1),
                r(3) - r(1),
                r(2),
                r(3) - r(2),
            ],
        }
    }

    /// False only when the box `lo..hi` lies wholly outside one plane (so it cannot be seen);
    /// a box that crosses a corner outside two planes counts as inside (culling is
    /// conservative). A non-finite box counts as inside.
    pub fn intersects(&self, lo: Vec3, hi: Vec3) -> bool {
        self.planes.iter().all(|p| {
            let n = p.truncate();
            // The corner furthest along the plane's normal.
            let far = Vec3::select(n.cmpge(Vec3::ZERO), hi, lo);
            let d = n.dot(far) + p.w;
            d >= 0.0 || d.is_nan()
        })
    }
}
