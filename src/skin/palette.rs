//! The gradient palette: per joint, the matrix that carries a bind-pose vertex straight to its
//! posed position, for every skin and every unskinned draw of a frame.
//!
//! Based on: Ribeiro, "Mesh Skinning", §The Gradient Matrix to §Weighted Vertex Transformation;
//! Weber, "Run-Time Skin Deformation", §Hardware Compatibility; Woodland, "Filling the Gaps"
//! (stitching as a subset of skinning).
//!
//! Method: per joint, `model_from_bind[j] = model_from_joint[j] * joint_from_bind[j]`. One
//! frame palette holds every skin's joints back to back, then one slot per unskinned
//! (morph-only or static) draw holding that node's `model_from_node`, so every draw skins with
//! "joints + weights" (a rigid draw is a one-joint skin with weight 1).
//!
//! Cost: one 4x4 multiply per joint of every skin (on CPUs with AVX-512F, one 512-bit register
//! a product: `palette_wide`, the same bits). No joint cap: the GPU side stores it in a
//! storage buffer sized to the frame palette.
//!
//! Limits: a joint listed by several skins gets one entry per skin (each with that skin's
//! inverse bind matrix), computed each time.
//!
//! Upload form: [`MatrixRows`], an entry's top three rows (48 bytes instead of 64), what the
//! GPU's storage palette holds for linear blending and stitching.

use bytemuck::{Pod, Zeroable};
use glam::{DMat4, Mat4, Vec4};

use crate::error::{Error, Result};
use crate::scene::Scene;

/// A palette matrix's top three rows: the 3×4 form a GPU reads for linear blending and
/// stitching (Unreal's and ozz-animation's samples upload skinning matrices the same way). The
/// last row of a palette matrix is never read by those blends: positions take `(M p).xyz`,
/// normals and tangents the upper 3×3, so dropping it changes no skinned vertex, whatever the
/// matrix (an inverse bind matrix with a projective last row included). Mirrored by
/// `palette_matrix()` in shaders/palette_storage.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct MatrixRows(pub [Vec4; 3]);

impl MatrixRows {
    /// Rows 0, 1 and 2 of `m` (each `(m.x_axis[i], m.y_axis[i], m.z_axis[i], m.w_axis[i])`).
    pub fn of(m: &Mat4) -> MatrixRows {
        MatrixRows([m.row(0), m.row(1), m.row(2)])
    }

    /// The matrix with these rows and `(0, 0, 0, 1)` below them.
    pub fn to_mat4(self) -> Mat4 {
        let [x, y, z] = self.0;
        Mat4::from_cols(
            Vec4::new(x.x, y.x, z.x, 0.0),
            Vec4::new(x.y, y.y, z.y, 0.0),
            Vec4::new(x.z, y.z, z.z, 0.0),
            Vec4::new(x.w, y.w, z.w, 1.0),
        )
    }
}

/// A palette's matrices as [`MatrixRows`], into `out` (cleared first; kept between frames so a
/// warm frame allocates nothing). The one place a palette is put in row form, as
/// [`crate::skin::dqs::pack_palette`] is for the DQS form.
pub fn rows_of_palette(palette: &[Mat4], out: &mut Vec<MatrixRows>) {
    out.clear();
    out.extend(palette.iter().map(MatrixRows::of));
}

/// Where each skin's and each draw's palette starts in the frame palette.
#[derive(Clone, Debug)]
pub struct PaletteLayout {
    /// Per skin (same order as `Scene::skins`): palette entry of its joint 0.
    pub skin_base: Vec<u32>,
    /// Per draw (same order as `Scene::draws`): first palette entry it indexes from.
    pub draw_base: Vec<u32>,
    /// Total entries.
    pub len: usize,
}

impl PaletteLayout {
    /// True when this layout is the one [`PaletteLayout::new`] makes for `scene`: the same
    /// bases for every skin and draw and the same length (checked without allocating).
    pub fn fits(&self, scene: &Scene) -> bool {
        if self.skin_base.len() != scene.skins.len() || self.draw_base.len() != scene.draws.len() {
            return false;
        }
        let mut len = 0usize;
        for (s, &base) in scene.skins.iter().zip(&self.skin_base) {
            if base as usize != len {
                return false;
            }
            len += s.joints.len();
        }
        for (d, &base) in scene.draws.iter().zip(&self.draw_base) {
            let expected = match d.skin {
                Some(s) => self.skin_base[s] as usize,
                None => {
                    len += 1;
                    len - 1
                }
            };
            if base as usize != expected {
                return false;
            }
        }
        len == self.len
    }

    /// Lay out `scene`: every skin's joints back to back, then one slot per unskinned draw.
    pub fn new(scene: &Scene) -> PaletteLayout {
        let mut len = 0usize;
        let mut skin_base = Vec::with_capacity(scene.skins.len());
        for s in &scene.skins {
            skin_base.push(len as u32);
            len += s.joints.len();
        }
        let mut draw_base = Vec::with_capacity(scene.draws.len());
        for d in &scene.draws {
            match d.skin {
                Some(s) => draw_base.push(skin_base[s]),
                None => {
                    draw_base.push(len as u32);
                    len += 1;
                }
            }
        }
        PaletteLayout {
            skin_base,
            draw_base,
            len,
        }
    }
}

/// Builds the frame palette from `model_from_node`.
///
/// Validation rules:
/// 1. `model_from_node` has one matrix per scene node;
/// 2. `layout` was made for this scene.
pub struct PaletteJob<'a> {
    /// The scene whose skins and draws are laid out.
    pub scene: &'a Scene,
    /// Layout made for this scene by [`PaletteLayout::new`].
    pub layout: &'a PaletteLayout,
    /// Model matrix of every node (index into `scene.nodes`).
    pub model_from_node: &'a [Mat4],
    /// Receives the frame palette (`model_from_bind`), `layout.len` entries (cleared and refilled).
    pub palette: &'a mut Vec<Mat4>,
}

impl PaletteJob<'_> {
    /// Check the numbered rules above.
    pub fn validate(&self) -> Result<()> {
        if self.model_from_node.len() != self.scene.nodes.len() {
            return Err(Error::job(
                "PaletteJob",
                1,
                "model_from_node does not match the scene's node count",
            ));
        }
        if !self.layout.fits(self.scene) {
            return Err(Error::job(
                "PaletteJob",
                2,
                "layout was made for another scene",
            ));
        }
        Ok(())
    }

    /// Validate, then write every skin's `model_from_bind` matrices and every unskinned draw's
    /// `model_from_node` to `palette`.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        self.palette.resize(self.layout.len, Mat4::IDENTITY);
        write_palette(self.scene, self.model_from_node, self.palette);
        Ok(())
    }
}

/// The frame palette of `scene` from `model_from_node` into `out`, in [`PaletteLayout`]'s
/// order (the body of [`PaletteJob::run`], for callers that keep many palettes in one buffer:
/// the crowd). The caller has checked [`PaletteJob`]'s rules and that `out` holds the layout's
/// `len` entries; entries past either end are left alone.
pub(crate) fn write_palette(scene: &Scene, model_from_node: &[Mat4], out: &mut [Mat4]) {
    let mut at = 0;
    for skin in &scene.skins {
        let Some(slots) = out.get_mut(at..) else {
            return;
        };
        joint_products(&skin.joints, &skin.joint_from_bind, model_from_node, slots);
        at += skin.joints.len().min(skin.joint_from_bind.len());
    }
    for d in scene.draws.iter().filter(|d| d.skin.is_none()) {
        let Some(slot) = out.get_mut(at) else { return };
        *slot = model_of(model_from_node, d.node);
        at += 1;
    }
}

/// Node `node`'s model matrix, identity past the end of `model_from_node` (the palette's rule
/// for every entry, also in [`super::palette_wide`]).
#[inline]
pub(super) fn model_of(model_from_node: &[Mat4], node: usize) -> Mat4 {
    model_from_node.get(node).copied().unwrap_or(Mat4::IDENTITY)
}

/// `out[i] = model_from_node[joints[i]] · joint_from_bind[i]` over the shortest of the three
/// (a joint past `model_from_node` reads as identity): glam's product, or the same bits four
/// columns at once where the CPU has AVX-512F ([`super::palette_wide`]). This runs every frame
/// for every character.
fn joint_products(
    joints: &[usize],
    joint_from_bind: &[Mat4],
    model_from_node: &[Mat4],
    out: &mut [Mat4],
) {
    #[cfg(target_arch = "x86_64")]
    if super::simd::avx512f() {
        #[allow(unsafe_code)]
        // SAFETY: the CPU has AVX-512F (checked just above).
        unsafe {
            super::palette_wide::joint_products_avx512(
                joints,
                joint_from_bind,
                model_from_node,
                out,
            );
        }
        return;
    }
    for ((slot, &node), joint_from_bind) in out.iter_mut().zip(joints).zip(joint_from_bind) {
        *slot = model_of(model_from_node, node) * *joint_from_bind;
    }
}

/// f64 mirror of [`PaletteJob`] for one draw: the palette that draw indexes from 0.
pub fn draw_palette_f64(scene: &Scene, model_from_node: &[DMat4], draw: usize) -> Vec<DMat4> {
    let d = &scene.draws[draw];
    match d.skin {
        Some(s) => {
            let skin = &scene.skins[s];
            skin.joints
                .iter()
                .zip(&skin.joint_from_bind)
                .map(|(&n, ibm)| model_from_node[n] * ibm.as_dmat4())
                .collect()
        }
        None => vec![model_from_node[d.node]],
    }
}
