//! Small math layer over glam: the TRS transform, the normal matrix and f64 mirrors used by
//! the reference path. Matrices follow the `a_from_b` naming: `model_from_joint` maps joint
//! space into model space (column vectors, `p_model = model_from_joint * p_joint`).

use glam::{DMat3, DMat4, DQuat, DVec3, Mat4, Quat, Vec3};

/// Local transform of a node: translation, rotation, scale (applied scale first).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trs {
    /// Translation in the parent's space (metres for our rigs).
    pub translation: Vec3,
    /// Rotation (unit quaternion).
    pub rotation: Quat,
    /// Scale per local axis.
    pub scale: Vec3,
}

impl Default for Trs {
    fn default() -> Self {
        Trs::IDENTITY
    }
}

impl Trs {
    /// No translation, no rotation, unit scale.
    pub const IDENTITY: Trs = Trs {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// `parent_from_local` as a matrix: T * R * S.
    #[inline]
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// The same matrix computed in f64 (rotation normalised in f64 first).
    pub fn to_dmat4(&self) -> DMat4 {
        let q = DQuat::from_xyzw(
            self.rotation.x as f64,
            self.rotation.y as f64,
            self.rotation.z as f64,
            self.rotation.w as f64,
        );
        let q = if q.length_squared() > 0.0 {
            q.normalize()
        } else {
            DQuat::IDENTITY
        };
        DMat4::from_scale_rotation_translation(
            self.scale.as_dvec3(),
            q,
            self.translation.as_dvec3(),
        )
    }
}

/// Matrix that maps normals under `m` (f64): the inverse-transpose of its upper 3x3, as
/// cofactor / determinant, so it is exact for non-uniform scale and keeps the sign for
/// mirrored matrices. `None` for singular input.
pub fn dnormal_matrix(m: &DMat3) -> Option<DMat3> {
    let det = m.determinant();
    if !det.is_finite() || det.abs() < f64::MIN_POSITIVE {
        return None;
    }
    let c0 = m.y_axis.cross(m.z_axis);
    let c1 = m.z_axis.cross(m.x_axis);
    let c2 = m.x_axis.cross(m.y_axis);
    Some(DMat3::from_cols(c0 / det, c1 / det, c2 / det))
}

/// Re-orthogonalise a skinned tangent against the skinned normal (Gram-Schmidt), unit length;
/// any perpendicular unit vector when the two are parallel.
pub fn dorthogonalize_tangent(t: DVec3, n: DVec3) -> DVec3 {
    let t = t - n * n.dot(t);
    let len = t.length();
    if len > 1e-300 {
        t / len
    } else {
        n.any_orthonormal_vector()
    }
}

/// Element-wise finite check for matrices coming from files.
pub fn mat4_is_finite(m: &Mat4) -> bool {
    m.to_cols_array().iter().all(|x| x.is_finite())
}
