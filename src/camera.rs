//! An orbit camera (Blender / three.js OrbitControls style): a target point, yaw and pitch
//! around it, a distance, a vertical field of view. It frames a bounding box, orbits, pans and
//! zooms, and gives the `clip_from_world` matrix in wgpu's clip space (NDC z in [0, 1], y up).
//! Near and far planes follow the scene's bounding sphere so depth precision stays useful
//! whatever the zoom.

use glam::{Mat4, Vec3};

/// Default vertical field of view (about 34°, a "normal" lens).
pub const DEFAULT_FOV_Y_RAD: f32 = 0.6;

/// Direction from the target towards the eye of the default framing: front-right, slightly
/// above (the three-quarter view a rig is usually inspected from).
const FRAMING_DIRECTION: Vec3 = Vec3::new(0.45, 0.3, 1.0);

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

    /// Keep the direction, look at the centre of `[min, max]` from far enough to see all of
    /// its bounding sphere at `aspect`.
    pub fn frame(&mut self, min: Vec3, max: Vec3, aspect: f32) {
        let center = (min + max) * 0.5;
        let radius = ((max - min).length() * 0.5).max(1e-4);
        // With a portrait view the horizontal field of view is the narrower one.
        let fov = if aspect < 1.0 {
            2.0 * ((self.fov_y_rad * 0.5).tan() * aspect).atan()
        } else {
            self.fov_y_rad
        };
        self.target = center;
        self.scene_center = center;
        self.scene_radius_m = radius;
        self.distance_m = radius / (fov * 0.5).sin() * 1.05;
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
