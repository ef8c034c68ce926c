//! How a draw's joints and weights are stored for the GPU: the narrowest form that holds them
//! exactly.
//!
//! Joint indices take one byte when every index is under 256 (skins of up to 256 joints), two
//! under 65,536, four otherwise. Weights are 8- or 16-bit normalized integers when every
//! weight is exactly `c / 255` or `c / 65535` as an f32 (what the importer makes of a file's
//! `UNSIGNED_BYTE` or `UNSIGNED_SHORT` weights, and what quantisers such as gltfpack write), f32
//! otherwise: packing never changes what is skinned beyond the GPU's own conversion of a code
//! to a float, so the CPU reference and every GPU path read the same weights. Four influences then take 8 + 4 bytes (u16 + unorm8) instead of
//! 16 + 16, which is what the compute-skinning pass reads a vertex besides its position and
//! normal (Bevy's and Unreal's skinned vertices store joints and weights the same way).
//!
//! The vertex path reads the packed buffers through vertex formats (`Uint16x4`, `Unorm8x4`,
//! `Unorm16x4`); the capture and compute shaders read them as `array<u32>` and unpack them in
//! `load_influences()` (shaders/capture.wgsl) by the constants `JOINT_BITS` and `WEIGHT_BITS`.

use crate::scene::SkinWeights;
use crate::skin::weights::{JointEncoding, WeightEncoding};

/// A draw's joint and weight storage ([`InfluencePacking::of`] picks it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InfluencePacking {
    /// Joint indices: one or two bytes each, or `None` for four (an index past 65,535, which
    /// no file encoding holds).
    pub joints: Option<JointEncoding>,
    /// Weights.
    pub weights: WeightEncoding,
}

/// Bits of one joint index stored as `e` (the shader's `JOINT_BITS`).
fn joint_bits(e: Option<JointEncoding>) -> u32 {
    match e {
        Some(JointEncoding::U8) => 8,
        Some(JointEncoding::U16) => 16,
        None => 32,
    }
}

/// Bits of one weight stored as `e` (the shader's `WEIGHT_BITS`).
fn weight_bits(e: WeightEncoding) -> u32 {
    match e {
        WeightEncoding::Unorm8 => 8,
        WeightEncoding::Unorm16 => 16,
        WeightEncoding::F32 => 32,
    }
}

/// The largest code of a normalized weight encoding (None for f32).
fn unorm_max(e: WeightEncoding) -> Option<f32> {
    match e {
        WeightEncoding::Unorm8 => Some(255.0),
        WeightEncoding::Unorm16 => Some(65535.0),
        WeightEncoding::F32 => None,
    }
}

/// Whether encoding `e` holds `w` exactly: `w` is bit-equal (-0.0 is not the code 0's +0.0)
/// to the f32 quotient `c / max` of its nearest code, or to the f64 one rounded to f32 (the
/// importer's normalisation, src/io/accessor.rs). f32 holds anything.
fn holds_exactly(e: WeightEncoding, w: f32) -> bool {
    let Some(max) = unorm_max(e) else {
        return true;
    };
    if !(0.0..=1.0).contains(&w) {
        return false;
    }
    let code = (w * max).round() as u32;
    let narrow = code as f32 / max;
    let wide = (f64::from(code) / f64::from(max)) as f32;
    narrow.to_bits() == w.to_bits() || wide.to_bits() == w.to_bits()
}

impl Default for InfluencePacking {
    /// The widest form (holds anything).
    fn default() -> Self {
        InfluencePacking {
            joints: None,
            weights: WeightEncoding::F32,
        }
    }
}

impl InfluencePacking {
    /// The narrowest packing that holds `w` exactly.
    pub fn of(w: &SkinWeights) -> InfluencePacking {
        let widest = w.joints.iter().copied().max().unwrap_or(0);
        let joints = [JointEncoding::U8, JointEncoding::U16]
            .into_iter()
            .find(|&e| widest < 1 << joint_bits(Some(e)));
        let weights = [WeightEncoding::Unorm8, WeightEncoding::Unorm16]
            .into_iter()
            .find(|&e| w.weights.iter().all(|&x| holds_exactly(e, x)))
            .unwrap_or(WeightEncoding::F32);
        InfluencePacking { joints, weights }
    }

    /// Bytes of one influence set (four joints, or four weights) in each buffer.
    pub fn set_bytes(self) -> (u64, u64) {
        (
            4 * u64::from(joint_bits(self.joints)) / 8,
            4 * u64::from(weight_bits(self.weights)) / 8,
        )
    }

    /// Bytes of joints and weights a vertex with `sets` influence sets takes.
    pub fn bytes_per_vertex(self, sets: u32) -> u64 {
        let (j, w) = self.set_bytes();
        u64::from(sets) * (j + w)
    }

    /// The vertex formats of one influence set: joints, weights.
    pub fn vertex_formats(self) -> (wgpu::VertexFormat, wgpu::VertexFormat) {
        use wgpu::VertexFormat as F;
        let joints = match self.joints {
            Some(JointEncoding::U8) => F::Uint8x4,
            Some(JointEncoding::U16) => F::Uint16x4,
            None => F::Uint32x4,
        };
        let weights = match self.weights {
            WeightEncoding::Unorm8 => F::Unorm8x4,
            WeightEncoding::Unorm16 => F::Unorm16x4,
            WeightEncoding::F32 => F::Float32x4,
        };
        (joints, weights)
    }

    /// The pipeline-overridable constants of capture.wgsl that read this packing.
    pub fn constants(self) -> [(&'static str, f64); 2] {
        [
            ("JOINT_BITS", f64::from(joint_bits(self.joints))),
            ("WEIGHT_BITS", f64::from(weight_bits(self.weights))),
        ]
    }

    /// `w`'s joints and weights in this packing, little-endian as the GPU reads them. A
    /// weight this packing cannot hold exactly is stored as its nearest code (never the case
    /// for the packing [`InfluencePacking::of`] chose for `w`).
    pub fn pack(self, w: &SkinWeights) -> (Vec<u8>, Vec<u8>) {
        let joints = match self.joints {
            Some(JointEncoding::U8) => w.joints.iter().map(|&j| j.min(255) as u8).collect(),
            Some(JointEncoding::U16) => w
                .joints
                .iter()
                .flat_map(|&j| (j.min(u32::from(u16::MAX)) as u16).to_le_bytes())
                .collect(),
            None => w.joints.iter().flat_map(|&j| j.to_le_bytes()).collect(),
        };
        let nearest = |x: f32, max: f32| (x.clamp(0.0, 1.0) * max).round();
        let weights = match self.weights {
            WeightEncoding::Unorm8 => w.weights.iter().map(|&x| nearest(x, 255.0) as u8).collect(),
            WeightEncoding::Unorm16 => w
                .weights
                .iter()
                .flat_map(|&x| (nearest(x, 65535.0) as u16).to_le_bytes())
                .collect(),
            WeightEncoding::F32 => w.weights.iter().flat_map(|&x| x.to_le_bytes()).collect(),
        };
        (joints, weights)
    }

    /// A short name: `u8 joints, unorm8 weights`.
    pub fn describe(self) -> String {
        use crate::choice::Choice;
        format!(
            "u{} joints, {} weights",
            joint_bits(self.joints),
            self.weights.name()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::InfluencePacking;
    use crate::scene::SkinWeights;
    use crate::skin::weights::{JointEncoding, WeightEncoding};

    /// Unpacks as the shader does (the f32 division `c / max`).
    fn unpack(p: InfluencePacking, joints: &[u8], weights: &[u8]) -> (Vec<u32>, Vec<f32>) {
        let j = match p.joints {
            Some(JointEncoding::U8) => joints.iter().map(|&b| u32::from(b)).collect(),
            Some(JointEncoding::U16) => joints
                .chunks_exact(2)
                .map(|b| u32::from(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
            None => joints
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        };
        let w = match p.weights {
            WeightEncoding::Unorm8 => weights.iter().map(|&c| f32::from(c) / 255.0).collect(),
            WeightEncoding::Unorm16 => weights
                .chunks_exact(2)
                .map(|b| f32::from(u16::from_le_bytes([b[0], b[1]])) / 65535.0)
                .collect(),
            WeightEncoding::F32 => weights
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        };
        (j, w)
    }

    /// Each form is chosen only when it holds every weight and index exactly, and what is
    /// packed unpacks to the same bits; the narrowest such form wins.
    #[test]
    fn the_narrowest_exact_packing_is_chosen_and_round_trips() {
        // Seeded xorshift: codes of every size, and indices on both sides of u8 and u16.
        let mut s = 0x9e37_79b9_u32;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        let n = 400;
        let joints8: Vec<u32> = (0..n).map(|_| next() % 256).collect();
        let mut joints16 = joints8.clone();
        joints16[5] = 256;
        joints16[6] = 65_535;
        let mut joints32 = joints16.clone();
        joints32[7] = 65_536;
        let w8: Vec<f32> = (0..n).map(|_| (next() % 256) as f32 / 255.0).collect();
        let w16: Vec<f32> = (0..n).map(|_| (next() % 65_536) as f32 / 65535.0).collect();
        let mut wf = w8.clone();
        wf[3] = 0.3;
        let (u8_, u16_) = (Some(JointEncoding::U8), Some(JointEncoding::U16));
        let cases = [
            (&joints8, &w8, u8_, WeightEncoding::Unorm8),
            (&joints16, &w16, u16_, WeightEncoding::Unorm16),
            (&joints32, &wf, None, WeightEncoding::F32),
            (&joints32, &w8, None, WeightEncoding::Unorm8),
        ];
        for (j, w, jf, wf) in cases {
            let sw = SkinWeights {
                width: 4,
                joints: j.clone(),
                weights: w.clone(),
            };
            let p = InfluencePacking::of(&sw);
            assert_eq!((p.joints, p.weights), (jf, wf), "{}", p.describe());
            let (jb, wb) = p.pack(&sw);
            let (jset, wset) = p.set_bytes();
            assert_eq!(jb.len() as u64, jset * (n as u64 / 4));
            assert_eq!(wb.len() as u64, wset * (n as u64 / 4));
            let (ju, wu) = unpack(p, &jb, &wb);
            assert_eq!(&ju, j);
            let same = wu
                .iter()
                .zip(w.iter())
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{} changed a weight", p.describe());
        }
        // 1/255 is not a 16-bit code, 1/65535 not an 8-bit one, 0.5 neither; NaN, -0.0,
        // negative and > 1 only as f32.
        for (x, want) in [
            (1.0 / 255.0, WeightEncoding::Unorm8),
            (1.0 / 65535.0, WeightEncoding::Unorm16),
            (0.5, WeightEncoding::F32),
            (f32::NAN, WeightEncoding::F32),
            (-0.0, WeightEncoding::F32),
            (-1.0 / 255.0, WeightEncoding::F32),
            (1.5, WeightEncoding::F32),
        ] {
            let sw = SkinWeights {
                width: 4,
                joints: vec![0; 4],
                weights: vec![x, 0.0, 0.0, 0.0],
            };
            assert_eq!(InfluencePacking::of(&sw).weights, want, "{x}");
        }
        assert_eq!(InfluencePacking::default().bytes_per_vertex(2), 64);
        let small = InfluencePacking {
            joints: u8_,
            weights: WeightEncoding::Unorm8,
        };
        assert_eq!(small.bytes_per_vertex(1), 8);
    }
}
