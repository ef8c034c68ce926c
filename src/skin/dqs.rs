//! Dual quaternion skinning, with non-rigid joints handled as the paper's scale/shear extension
//! does.
//!
//! Based on: Kavan, Collins, Žára, O'Sullivan, "Geometric Skinning with Approximate Dual
//! Quaternion Blending", ACM TOG 2008 (the blend, and its §"non-rigid transformations" for
//! scale and shear); the polar decomposition by Newton's iteration as in Higham, "Computing the
//! Polar Decomposition — with Applications", 1986.
//!
//! Method: each palette matrix `M = [A | t]` is split once per frame by the polar
//! decomposition `A = R S` (R a rotation, S symmetric; Newton's iteration `X ← (X + X⁻ᵀ)/2`
//! in f64, a mirrored `A` taken as `(−R)(−S)` so R stays a rotation) into a unit dual
//! quaternion `(q₀, q_ε)` for `[R | t]` and `S`. Per vertex, the dual quaternions are summed
//! by weight after flipping each into the hemisphere of the largest-weight influence's (the
//! first such slot on ties), then normalised; `S` is summed by weight. The vertex is scaled
//! by the blended `S`, then rotated and translated by the blended dual quaternion:
//! `p' = R_b (S_b p) + t_b`. Normals: exact `R_b · sign(det S_b) cof(S_b) · n` (the
//! inverse-transpose of `R_b S_b`), or `R_b S_b n` (blend3x3). Tangents: `R_b S_b t`,
//! re-orthogonalised against the normal.
//!
//! The packed form ([`pack`]) puts one joint in the 16 floats of a palette matrix (real
//! quaternion, dual quaternion, the six entries of S), so the GPU reads DQS joints from the
//! same palette buffer and uniform block as matrices.
//!
//! Cost: per joint and frame one polar decomposition (a few 3×3 inverses); per vertex and
//! influence 8 + 6 multiply-adds (vs 12 for a 3×4 matrix blend), then a normalisation, one
//! 3×3 product and one quaternion rotation.
//!
//! Limits: a singular `A` (a zero scale) keeps R = identity and S = A; weights that do not sum
//! to 1 scale S but not the rigid part (the dual quaternion is normalised).

use glam::{DMat3, DQuat, DVec3, Mat3, Mat4, Quat, Vec3, Vec3A, Vec4};

use super::modes::NormalMode;
use super::weights::{Influence, Influences4, VertexWeights, WeightLayout};
use crate::error::Result;

/// One joint of a DQS palette.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DqJoint {
    /// Rotation part (unit quaternion, x y z w).
    pub real: Vec4,
    /// Translation part: `0.5 · (t, 0) ⊗ real`.
    pub dual: Vec4,
    /// Symmetric scale/shear: xx, yy, zz, xy, xz, yz.
    pub scale_shear: [f32; 6],
}

impl DqJoint {
    /// The identity joint.
    pub const IDENTITY: DqJoint = DqJoint {
        real: Vec4::new(0.0, 0.0, 0.0, 1.0),
        dual: Vec4::ZERO,
        scale_shear: [1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
    };
}

/// Polar decomposition `a = r s` in f64 (r a rotation, s symmetric), as described in the
/// module documentation.
pub fn polar_decompose(a: DMat3) -> (DMat3, DMat3) {
    let det = a.determinant();
    if !det.is_finite() || det.abs() < 1e-30 {
        return (DMat3::IDENTITY, a);
    }
    let sign = if det < 0.0 { -1.0 } else { 1.0 };
    let mut x = a * sign;
    for _ in 0..40 {
        let inv_t = x.inverse().transpose();
        let next = (x + inv_t) * 0.5;
        let diff = (next - x)
            .to_cols_array()
            .iter()
            .map(|v| v * v)
            .sum::<f64>();
        x = next;
        if diff < 1e-28 {
            break;
        }
    }
    let r = x;
    let s = r.transpose() * a;
    // Symmetrise (rounding).
    let s = (s + s.transpose()) * 0.5;
    (r, s)
}

/// Split a palette matrix into its DQS joint.
pub fn decompose(m: &Mat4) -> DqJoint {
    let dm = m.as_dmat4();
    let a = DMat3::from_mat4(dm);
    let t = dm.w_axis.truncate();
    let (r, s) = polar_decompose(a);
    let q = DQuat::from_mat3(&r).normalize();
    let dual = DQuat::from_xyzw(t.x, t.y, t.z, 0.0) * q * 0.5;
    DqJoint {
        real: Vec4::new(q.x as f32, q.y as f32, q.z as f32, q.w as f32),
        dual: Vec4::new(dual.x as f32, dual.y as f32, dual.z as f32, dual.w as f32),
        scale_shear: [
            s.x_axis.x as f32,
            s.y_axis.y as f32,
            s.z_axis.z as f32,
            s.y_axis.x as f32,
            s.z_axis.x as f32,
            s.z_axis.y as f32,
        ],
    }
}

/// The joint in a palette matrix's 16 floats: columns (real), (dual), (xx, yy, zz, xy),
/// (xz, yz, 0, 0). Read back by `dq_joint()` in shaders/skin.wgsl and [`unpack`].
pub fn pack(j: &DqJoint) -> Mat4 {
    let s = j.scale_shear;
    Mat4::from_cols(
        j.real,
        j.dual,
        Vec4::new(s[0], s[1], s[2], s[3]),
        Vec4::new(s[4], s[5], 0.0, 0.0),
    )
}

/// A palette's matrices as packed DQS joints ([`decompose`] then [`pack`] each), into `out`
/// (cleared first; kept between frames so a warm frame allocates nothing). The one place a
/// palette is packed: the GPU uploads these for draws that skin with DQS.
pub fn pack_palette(palette: &[Mat4], out: &mut Vec<Mat4>) {
    out.clear();
    out.extend(palette.iter().map(|m| pack(&decompose(m))));
}

/// Inverse of [`pack`].
pub fn unpack(m: &Mat4) -> DqJoint {
    DqJoint {
        real: m.x_axis,
        dual: m.y_axis,
        scale_shear: [
            m.z_axis.x, m.z_axis.y, m.z_axis.z, m.z_axis.w, m.w_axis.x, m.w_axis.y,
        ],
    }
}

/// Decompose every matrix of `palette` into `out` (resized; no allocation once warm).
pub fn decompose_palette(palette: &[Mat4], out: &mut Vec<DqJoint>) {
    out.clear();
    out.extend(palette.iter().map(decompose));
}

/// A blended DQS transform of one vertex.
#[derive(Clone, Copy, Debug)]
pub struct DqBlend {
    /// Unit rotation.
    pub rotation: Quat,
    /// Translation.
    pub translation: Vec3A,
    /// Blended scale/shear (symmetric).
    pub scale_shear: Mat3,
}

impl DqBlend {
    /// Blend `(joint, weight)` pairs: hemisphere of the largest weight (first on ties), then
    /// normalise. All-zero weights give the zero transform.
    #[inline]
    pub fn of(pairs: impl Iterator<Item = (DqJoint, f32)> + Clone) -> DqBlend {
        let pivot = pairs
            .clone()
            .fold((Vec4::ZERO, f32::NEG_INFINITY), |(q, bw), (j, w)| {
                if w > bw { (j.real, w) } else { (q, bw) }
            })
            .0;
        let mut real = Vec4::ZERO;
        let mut dual = Vec4::ZERO;
        let mut s = [0.0f32; 6];
        for (j, w) in pairs {
            let w_signed = if j.real.dot(pivot) < 0.0 { -w } else { w };
            real += j.real * w_signed;
            dual += j.dual * w_signed;
            for (acc, x) in s.iter_mut().zip(j.scale_shear) {
                *acc += x * w;
            }
        }
        let len = real.length();
        let (real, dual) = if len > 0.0 {
            (real / len, dual / len)
        } else {
            (Vec4::ZERO, Vec4::ZERO)
        };
        let v0 = Vec3A::new(real.x, real.y, real.z);
        let ve = Vec3A::new(dual.x, dual.y, dual.z);
        let translation = (ve * real.w - v0 * dual.w + v0.cross(ve)) * 2.0;
        DqBlend {
            rotation: Quat::from_vec4(real),
            translation,
            scale_shear: Mat3::from_cols(
                Vec3::new(s[0], s[3], s[4]),
                Vec3::new(s[3], s[1], s[5]),
                Vec3::new(s[4], s[5], s[2]),
            ),
        }
    }

    /// Rotate `v` by the blended unit rotation: `v + w c + u × c` with `c = 2 u × v`, the
    /// same operations as `dq_rotate()` in shaders/skin.wgsl. (All-zero weights blend S to
    /// zero, so every output is zero then.)
    #[inline]
    fn rotate(&self, v: Vec3A) -> Vec3A {
        let q = self.rotation;
        let u = Vec3A::new(q.x, q.y, q.z);
        let c = u.cross(v) * 2.0;
        v + c * q.w + u.cross(c)
    }

    /// The skinned point.
    #[inline]
    pub fn point(&self, p: Vec3) -> Vec3 {
        (self.rotate(Vec3A::from(self.scale_shear * p)) + self.translation).into()
    }

    /// The skinned normal (unit when `renormalize`; zero for a degenerate blend).
    #[inline]
    pub fn normal(&self, n: Vec3, mode: NormalMode, renormalize: bool) -> Vec3A {
        let s = self.scale_shear;
        let linear = match mode {
            NormalMode::Exact => {
                let (x, y, z) = (s.x_axis, s.y_axis, s.z_axis);
                let c0 = y.cross(z);
                let r = c0 * n.x + z.cross(x) * n.y + x.cross(y) * n.z;
                if x.dot(c0) < 0.0 { -r } else { r }
            }
            NormalMode::Blend3x3 => s * n,
        };
        let r = self.rotate(Vec3A::from(linear));
        if renormalize { unit_or_zero(r) } else { r }
    }

    /// The skinned tangent (xyz), orthogonalised against the unit `normal` when it is not
    /// zero, unit length.
    #[inline]
    pub fn tangent(&self, t: Vec4, normal: Vec3A) -> Vec4 {
        let r = self.tangent_raw(t);
        let r = if normal != Vec3A::ZERO {
            r - normal * normal.dot(r)
        } else {
            r
        };
        unit_or_zero(r).extend(t.w)
    }

    /// The skinned tangent's direction as the blend gives it (not unit, not made
    /// perpendicular to the normal).
    #[inline]
    pub fn tangent_raw(&self, t: Vec4) -> Vec3A {
        self.rotate(Vec3A::from(self.scale_shear * t.truncate()))
    }
}

#[inline]
fn unit_or_zero(v: Vec3A) -> Vec3A {
    let l2 = v.length_squared();
    if l2 > 0.0 && l2.is_finite() {
        v * (1.0 / l2.sqrt())
    } else {
        Vec3A::ZERO
    }
}

/// DqsSkinningJob: the CPU path of dual quaternion skinning.
///
/// Validation rules:
/// 1. `weights` has one entry per input position;
/// 2. every joint index `weights` uses is below `palette.len()`;
/// 3. each present input/output attribute array has the same length as `positions`, and an
///    output is given exactly when its input is.
pub struct DqsSkinningJob<'a> {
    /// The draw's palette as DQS joints ([`decompose_palette`]).
    pub palette: &'a [DqJoint],
    /// Joint influences of each vertex.
    pub weights: &'a VertexWeights,
    /// Input (bind-pose, morphed) positions.
    pub positions: &'a [Vec3],
    /// Input normals, if any.
    pub normals: Option<&'a [Vec3]>,
    /// Input tangents, if any.
    pub tangents: Option<&'a [Vec4]>,
    /// Receives the skinned positions.
    pub out_positions: &'a mut [Vec3],
    /// Receives the skinned normals; given exactly when `normals` is.
    pub out_normals: Option<&'a mut [Vec3]>,
    /// Receives the skinned tangents; given exactly when `tangents` is.
    pub out_tangents: Option<&'a mut [Vec4]>,
    /// How normals follow the blend.
    pub normal_mode: NormalMode,
    /// Renormalise skinned normals.
    pub renormalize: bool,
    /// Make skinned tangents perpendicular to the unit normal and unit length, or write
    /// them as the blend gives them (as [`super::SkinningJob::orthonormalize_tangents`]).
    pub orthonormalize_tangents: bool,
}

impl DqsSkinningJob<'_> {
    /// Check the numbered rules above.
    pub fn validate(&self) -> Result<()> {
        super::cpu::validate_skinning(
            "DqsSkinningJob",
            self.weights,
            self.palette.len(),
            self.positions.len(),
            [
                self.normals.map(|v| v.len()),
                self.tangents.map(|v| v.len()),
            ],
            [
                Some(self.out_positions.len()),
                self.out_normals.as_ref().map(|v| v.len()),
                self.out_tangents.as_ref().map(|v| v.len()),
            ],
        )
    }

    /// Validate, then skin every vertex.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let palette = self.palette;
        let blend_of = |v: usize| -> DqBlend {
            match &self.weights.layout {
                WeightLayout::Fixed4(w) => {
                    let i: Influences4 = w.get(v);
                    DqBlend::of((0..4).map(|k| (palette[i.joints[k] as usize], i.weights[k])))
                }
                WeightLayout::Csr {
                    offsets,
                    influences,
                } => {
                    let row: &[Influence] =
                        &influences[offsets[v] as usize..offsets[v + 1] as usize];
                    DqBlend::of(
                        row.iter()
                            .map(|inf| (palette[inf.joint as usize], inf.weight)),
                    )
                }
            }
        };
        let (positions, normals, tangents) = (self.positions, self.normals, self.tangents);
        let (normal_mode, renormalize, ortho) = (
            self.normal_mode,
            self.renormalize,
            self.orthonormalize_tangents,
        );
        let skin_range = |start: usize,
                          out_p: &mut [Vec3],
                          mut out_n: Option<&mut [Vec3]>,
                          mut out_t: Option<&mut [Vec4]>| {
            for i in 0..out_p.len() {
                let v = start + i;
                let b = blend_of(v);
                out_p[i] = b.point(positions[v]);
                let mut unit_n = Vec3A::ZERO;
                if let (Some(on), Some(ns)) = (out_n.as_deref_mut(), normals) {
                    let n = b.normal(ns[v], normal_mode, renormalize);
                    unit_n = unit_or_zero(n);
                    on[i] = n.into();
                }
                if let (Some(ot), Some(ts)) = (out_t.as_deref_mut(), tangents) {
                    ot[i] = if ortho {
                        b.tangent(ts[v], unit_n)
                    } else {
                        b.tangent_raw(ts[v]).extend(ts[v].w)
                    };
                }
            }
        };
        super::cpu::for_each_chunk(
            &mut *self.out_positions,
            self.out_normals.as_deref_mut(),
            self.out_tangents.as_deref_mut(),
            skin_range,
        );
        Ok(())
    }
}

/// The f64 DQS transform of one vertex, for the reference path: `(rotation, translation,
/// scale_shear)` blended from `(matrix, weight)` pairs with the same pivot rule.
pub fn blend_f64(pairs: &[(glam::DMat4, f64)]) -> (DQuat, DVec3, DMat3) {
    let parts: Vec<(DQuat, DQuat, DMat3, f64)> = pairs
        .iter()
        .map(|(m, w)| {
            let (r, s) = polar_decompose(DMat3::from_mat4(*m));
            let q = DQuat::from_mat3(&r).normalize();
            let t = m.w_axis.truncate();
            let d = DQuat::from_xyzw(t.x, t.y, t.z, 0.0) * q * 0.5;
            (q, d, s, *w)
        })
        .collect();
    let pivot = parts
        .iter()
        .fold((DQuat::IDENTITY, f64::NEG_INFINITY), |(q, bw), p| {
            if p.3 > bw { (p.0, p.3) } else { (q, bw) }
        })
        .0;
    let mut real = glam::DVec4::ZERO;
    let mut dual = glam::DVec4::ZERO;
    let mut s = DMat3::ZERO;
    for (q, d, sj, w) in &parts {
        let ws = if q.dot(pivot) < 0.0 { -w } else { *w };
        real += glam::DVec4::from(*q) * ws;
        dual += glam::DVec4::from(*d) * ws;
        s += *sj * *w;
    }
    let len = real.length();
    if len == 0.0 {
        return (DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0), DVec3::ZERO, s);
    }
    let q = DQuat::from_vec4(real / len);
    let d = DQuat::from_vec4(dual / len);
    let t = (d * q.conjugate()) * 2.0;
    (q, DVec3::new(t.x, t.y, t.z), s)
}
