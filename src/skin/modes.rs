//! How a draw is skinned: the blend ([`SkinMode`]: linear blend, dual quaternion or
//! stitching), how normals follow it ([`NormalMode`]) and whether they are renormalised.
//! Every mode exists in the CPU job, the f64 reference and the WGSL `skin()` function.
//!
//! - **LBS** (linear blend skinning; Weber, "Run-Time Skin Deformation", and Ribeiro's
//!   gradient palette): `M = Σ wᵢ Mᵢ`, `p' = M p`. Weights are used as given, so weights that
//!   do not sum to 1 scale the vertex (Woodland's muscle bone: extra weight on a bone that is
//!   scaled to bulge the skin).
//! - **DQS** (Kavan et al., "Geometric Skinning with Approximate Dual Quaternion Blending",
//!   2008): each joint's matrix is split into a rigid part (a unit dual quaternion) and a
//!   symmetric scale/shear part `S` (polar decomposition, the paper's §"non-rigid
//!   transformations"); dual quaternions are blended in one hemisphere and normalised, `S` is
//!   blended linearly, `p' = R (S p) + t`. No candy-wrapper collapse at twisted joints.
//! - **Stitch** (Woodland, "Filling the Gaps: Advanced Animation Using Stitching and
//!   Skinning"): each vertex follows one bone, the one with its largest weight (the first
//!   such slot on ties), with weight 1.

use crate::scene::SkinWeights;

/// The skinning blend of a draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SkinMode {
    /// Linear blend skinning (matrix blend).
    #[default]
    Lbs,
    /// Dual quaternion skinning with blended scale/shear.
    Dqs,
    /// One bone per vertex: the largest weight's, with weight 1.
    Stitch,
}

impl SkinMode {
    /// Every mode, in the order they are listed to users.
    pub const ALL: [SkinMode; 3] = [SkinMode::Lbs, SkinMode::Dqs, SkinMode::Stitch];

    /// The mode's short name (`lbs`, `dqs`, `stitch`).
    pub fn name(self) -> &'static str {
        match self {
            SkinMode::Lbs => "lbs",
            SkinMode::Dqs => "dqs",
            SkinMode::Stitch => "stitch",
        }
    }

    /// Parse a short name (the [`crate::choice::Choice`] names).
    pub fn parse(s: &str) -> Option<SkinMode> {
        <SkinMode as crate::choice::Choice>::parse(s)
    }

    /// The value `DrawParams.skin_mode` carries to `skin()` (shaders/skin.wgsl).
    pub fn shader_code(self) -> u32 {
        match self {
            SkinMode::Lbs => 0,
            SkinMode::Dqs => 1,
            SkinMode::Stitch => 2,
        }
    }
}

/// How normals follow the blended transform `A` (the linear part of the blend).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NormalMode {
    /// The inverse-transpose of `A` (as its cofactor matrix with the sign of det A): exact for
    /// any linear map, non-uniform scale and mirroring included (Ribeiro; Marschner,
    /// "Real time geometric deformations", normals through the Jacobian).
    #[default]
    Exact,
    /// `A` itself applied to the normal: what most engines do (Weber §"vertex blending"),
    /// cheaper, and wrong where `A` is not a rotation times a uniform scale.
    Blend3x3,
}

impl NormalMode {
    /// Both modes.
    pub const ALL: [NormalMode; 2] = [NormalMode::Exact, NormalMode::Blend3x3];

    /// Short name (`exact`, `blend3x3`).
    pub fn name(self) -> &'static str {
        match self {
            NormalMode::Exact => "exact",
            NormalMode::Blend3x3 => "blend3x3",
        }
    }

    /// Parse a short name (the [`crate::choice::Choice`] names).
    pub fn parse(s: &str) -> Option<NormalMode> {
        <NormalMode as crate::choice::Choice>::parse(s)
    }
}

impl crate::choice::Choice for SkinMode {
    const ALL: &'static [SkinMode] = &SkinMode::ALL;

    fn name(self) -> &'static str {
        SkinMode::name(self)
    }

    fn help(self) -> &'static str {
        match self {
            SkinMode::Lbs => "Linear blend skinning",
            SkinMode::Dqs => "Dual quaternion skinning",
            SkinMode::Stitch => "One bone per vertex",
        }
    }
}

impl crate::choice::Choice for NormalMode {
    const ALL: &'static [NormalMode] = &NormalMode::ALL;

    fn name(self) -> &'static str {
        NormalMode::name(self)
    }

    fn help(self) -> &'static str {
        match self {
            NormalMode::Exact => "Inverse-transpose of the blend",
            NormalMode::Blend3x3 => "The blend's upper 3x3",
        }
    }
}

/// How one draw is skinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SkinOptions {
    /// The blend.
    pub mode: SkinMode,
    /// How normals follow it.
    pub normals: NormalMode,
    /// Scale skinned normals back to unit length (Weber times this as its own stage; without
    /// it, normals shorten where weights blend different rotations and lighting dims), and
    /// make skinned tangents unit and perpendicular to them. Off: both come as the blend gives
    /// them (ozz-animation's output; a shader that normalises per pixel needs no more).
    pub renormalize: bool,
}

impl Default for SkinOptions {
    fn default() -> Self {
        SkinOptions {
            mode: SkinMode::Lbs,
            normals: NormalMode::Exact,
            renormalize: true,
        }
    }
}

impl SkinOptions {
    /// `lbs`, or `dqs blend3x3 unnormalised` (what differs from the default, in words).
    pub fn describe(&self) -> String {
        let mut s = self.mode.name().to_string();
        if self.normals != NormalMode::Exact {
            s.push_str(&format!(", {} normals", self.normals.name()));
        }
        if !self.renormalize {
            s.push_str(", normals and tangents not renormalised");
        }
        s
    }
}

/// Stitching weights: each vertex keeps only its largest weight (the first such slot on
/// ties, slot order as stored), set to 1. A vertex with no non-zero weight keeps slot 0 at
/// weight 1 (the importer already binds such vertices to their first joint).
pub fn stitch_weights(w: &SkinWeights) -> SkinWeights {
    let n = w.vertex_count();
    let mut out = SkinWeights {
        width: 4,
        joints: vec![0; n * 4],
        weights: vec![0.0; n * 4],
    };
    for v in 0..n {
        let row = v * w.width..(v + 1) * w.width;
        let (best, _) = w.weights[row.clone()].iter().enumerate().fold(
            (0usize, f32::NEG_INFINITY),
            |(bi, bw), (i, &x)| {
                if x > bw { (i, x) } else { (bi, bw) }
            },
        );
        out.joints[v * 4] = w.joints.get(row.start + best).copied().unwrap_or(0);
        out.weights[v * 4] = 1.0;
    }
    out
}
