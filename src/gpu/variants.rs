//! Pipelines specialised per draw and made on first use.
//!
//! `skin()` (shaders/skin.wgsl) and the draw's vertex and fragment code (shaders/render.wgsl)
//! take the draw's skinning options, morph target count and colour mode, and whether they
//! capture, as pipeline-overridable constants, not from uniforms, for two reasons measured on
//! lavapipe (Mesa 22.3): it runs every side of a branch under a lane mask, so one pipeline for
//! every blend made each vertex pay for LBS, DQS and stitching (the draw-path capture of
//! CesiumMan ran 20 % faster with the DQS and stitch branches compiled out); and it recompiles
//! a shader for each draw whose branches hang on at most four uniforms it can inline, every
//! frame (the GPU view of an 84-draw model took 195 ms a frame against 56 ms specialised, and
//! 16 s without Mesa's shader cache). A real GPU branches on a uniform for free, and pays
//! nothing for specialised pipelines either. [`Variants`] makes each specialisation the first
//! time a draw asks for it, so a scene compiles only the pipelines it draws with.

use std::sync::{Mutex, PoisonError};

use super::influence_packing::InfluencePacking;
use super::scene_buffers::GpuDraw;

/// What a pipeline calling `skin()` is specialised on: the influence sets its vertex layout
/// and `skin()` read (`INFLUENCE_SETS`: 1 for JOINTS_0/WEIGHTS_0, 2 adds JOINTS_1/WEIGHTS_1)
/// and the draw's skinning options and morph target count (`SKIN_MODE`, `NORMAL_MODE`,
/// `RENORMALIZE`, `MORPH_TARGETS`: its [`super::DrawParams`] fields, which the shader does not
/// read), and how its joints and weights are stored (the vertex formats of its layout, and
/// `JOINT_BITS`, `WEIGHT_BITS` for the shaders that read them from storage).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SkinVariant {
    /// Influence sets, 1 or 2.
    pub sets: u32,
    /// The blend's shader code (0 LBS, 1 DQS, 2 stitch).
    pub blend: u32,
    /// 0 exact normals, 1 blend3x3.
    pub normals: u32,
    /// Unit normals and tangents.
    pub renormalize: bool,
    /// Morph targets of the draw's primitive.
    pub morph_targets: u32,
    /// The storage of the draw's joints and weights.
    pub packing: InfluencePacking,
}

impl SkinVariant {
    /// The variant that skins `d` as its parameters say.
    pub fn of(d: &GpuDraw) -> SkinVariant {
        let p = &d.params_data;
        SkinVariant {
            sets: d.influence_sets.clamp(1, 2),
            blend: p.skin_mode,
            normals: p.normal_mode,
            renormalize: p.renormalize != 0,
            morph_targets: p.morph_target_count,
            packing: d.packing,
        }
    }

    /// The variant a pipeline drawing `d` is made for: its own ([`SkinVariant::of`]) when
    /// the vertex shader skins, else (pre-skinned vertices, `skin()` skipped) only its
    /// influence sets with every other option at its default, so one pipeline serves all.
    pub fn drawn(d: &GpuDraw, pre_skinned: bool) -> SkinVariant {
        match pre_skinned {
            false => SkinVariant::of(d),
            true => SkinVariant {
                sets: d.influence_sets.clamp(1, 2),
                blend: 0,
                normals: 0,
                renormalize: true,
                morph_targets: 0,
                packing: d.packing,
            },
        }
    }

    /// Index of the 4-influence (0) or 8-influence (1) vertex layout.
    pub fn sets_slot(self) -> usize {
        (self.sets.clamp(1, 2) - 1) as usize
    }

    /// The pipeline-overridable constants of skin.wgsl that select this variant.
    pub fn constants(self) -> [(&'static str, f64); 7] {
        let [joint_bits, weight_bits] = self.packing.constants();
        [
            ("INFLUENCE_SETS", f64::from(self.sets)),
            ("SKIN_MODE", f64::from(self.blend)),
            ("NORMAL_MODE", f64::from(self.normals)),
            ("RENORMALIZE", f64::from(u8::from(self.renormalize))),
            ("MORPH_TARGETS", f64::from(self.morph_targets)),
            joint_bits,
            weight_bits,
        ]
    }
}

/// Pipelines (or anything cheap to clone, as wgpu's handles are) made on first use per key
/// and kept: a scene makes the few it draws with. Behind a lock so recording a pass (`&self`)
/// can make one.
pub struct Variants<K, P> {
    made: Mutex<Vec<(K, P)>>,
}

impl<K: Copy + PartialEq, P: Clone> Variants<K, P> {
    /// None made yet.
    pub fn new() -> Self {
        Variants {
            made: Mutex::new(Vec::new()),
        }
    }

    /// The one made for `key`, made by `make` the first time.
    pub fn get(&self, key: K, make: impl FnOnce(K) -> P) -> P {
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, p)) = made.iter().find(|(k, _)| *k == key) {
            return p.clone();
        }
        let p = make(key);
        made.push((key, p.clone()));
        p
    }

    /// Drop every one made (they are made again when next asked for).
    pub fn clear(&mut self) {
        self.made
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

impl<K: Copy + PartialEq, P: Clone> Default for Variants<K, P> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::Variants;

    /// Each key is made once and kept; a cleared cache makes them again.
    #[test]
    fn each_key_is_made_once_until_cleared() {
        let mut v: Variants<(u32, bool), String> = Variants::new();
        let mut made = 0;
        for key in [(1, false), (2, true), (1, false), (2, true), (1, true)] {
            let got = v.get(key, |k| {
                made += 1;
                format!("{k:?}")
            });
            assert_eq!(got, format!("{key:?}"));
        }
        assert_eq!(made, 3);
        v.clear();
        for _ in 0..2 {
            v.get((1, false), |_| {
                made += 1;
                String::new()
            });
        }
        assert_eq!(made, 4);
    }
}
