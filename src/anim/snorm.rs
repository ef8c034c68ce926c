//! Animation outputs stored as normalised integers, which glTF 2.0 allows (§3.11,
//! "Animations"): rotations as signed shorts, morph weights as unsigned shorts or bytes. What
//! a code reads as, the nearest code of a value, and whether a value is exactly one code's (so
//! a writer can store it as that code and a reader gets the same bits back). Every byte code's
//! value is also a short code's (65535 = 255 × 257), so a writer checks bytes first.
//!
//! Based on: the glTF 2.0 specification's normalisation rules, `max(c / 32767, -1)` for signed
//! shorts, `c / 65535` for unsigned shorts and `c / 255` for unsigned bytes, computed in f64
//! and rounded to f32 as the importer computes them. Cost: O(1) per value. Limits: values outside [-1, 1] (signed; CUBICSPLINE
//! tangents) or [0, 1] (unsigned; negative morph weights) have no code.

/// The largest code: 2¹⁵ − 1.
pub const SNORM16_MAX: f64 = 32767.0;

/// How far from unit length a quaternion of codes may be, at most (its 4-vector moved by at
/// most 1/32767 from a unit one): such keys are read as stored, not renormalised.
pub const SNORM16_LENGTH_ROUNDING: f32 = 2.0 / 32767.0;

/// The value code `c` reads as.
pub fn snorm16_value(c: i16) -> f32 {
    (f64::from(c) / SNORM16_MAX).max(-1.0) as f32
}

/// The code nearest `v` (clamped to ±32767).
pub fn snorm16_nearest(v: f32) -> i16 {
    (f64::from(v) * SNORM16_MAX)
        .round()
        .clamp(-SNORM16_MAX, SNORM16_MAX) as i16
}

/// `v` rounded to the nearest code's value.
pub fn snorm16_round(v: f32) -> f32 {
    snorm16_value(snorm16_nearest(v))
}

/// The codes of `values` when every one reads back exactly as it is (a zero of either sign
/// counts), else None.
pub fn snorm16_codes(values: &[f32]) -> Option<Vec<i16>> {
    exact_codes(values, snorm16_nearest, snorm16_value)
}

/// The codes `nearest` gives `values` when every one reads back (through `value`) exactly as
/// it is, else None.
fn exact_codes<C: Copy>(
    values: &[f32],
    nearest: fn(f32) -> C,
    value: fn(C) -> f32,
) -> Option<Vec<C>> {
    values
        .iter()
        .map(|&v| {
            let c = nearest(v);
            (value(c) == v).then_some(c)
        })
        .collect()
}

/// The largest code of normalised unsigned shorts: 2¹⁶ − 1 (morph weight outputs).
pub const UNORM16_MAX: f64 = 65535.0;

/// The value unsigned code `c` reads as (glTF: c / 65535).
pub fn unorm16_value(c: u16) -> f32 {
    (f64::from(c) / UNORM16_MAX) as f32
}

/// The unsigned code nearest `v` (clamped to 0..=65535).
pub fn unorm16_nearest(v: f32) -> u16 {
    (f64::from(v) * UNORM16_MAX).round().clamp(0.0, UNORM16_MAX) as u16
}

/// `v` rounded to the nearest unsigned code's value (values outside [0, 1] clamp).
pub fn unorm16_round(v: f32) -> f32 {
    unorm16_value(unorm16_nearest(v))
}

/// The unsigned codes of `values` when every one reads back exactly as it is, else None.
pub fn unorm16_codes(values: &[f32]) -> Option<Vec<u16>> {
    exact_codes(values, unorm16_nearest, unorm16_value)
}

/// The largest code of normalised unsigned bytes: 2⁸ − 1 (morph weight outputs).
pub const UNORM8_MAX: f64 = 255.0;

/// The value unsigned byte code `c` reads as (glTF: c / 255).
pub fn unorm8_value(c: u8) -> f32 {
    (f64::from(c) / UNORM8_MAX) as f32
}

/// The unsigned byte code nearest `v` (clamped to 0..=255).
pub fn unorm8_nearest(v: f32) -> u8 {
    (f64::from(v) * UNORM8_MAX).round().clamp(0.0, UNORM8_MAX) as u8
}

/// `v` rounded to the nearest unsigned byte code's value (values outside [0, 1] clamp).
pub fn unorm8_round(v: f32) -> f32 {
    unorm8_value(unorm8_nearest(v))
}

/// The unsigned byte codes of `values` when every one reads back exactly as it is, else None.
pub fn unorm8_codes(values: &[f32]) -> Option<Vec<u8>> {
    exact_codes(values, unorm8_nearest, unorm8_value)
}

/// A channel's output values as the writers store them when every one is exactly a code's:
/// rotations as signed shorts, morph weights as unsigned bytes, else unsigned shorts (the one
/// place that choice is made: the writers and `optimize`'s byte count follow it).
#[derive(Clone, Debug, PartialEq)]
pub enum OutputCodes {
    /// Rotations (xyzw) as normalised signed shorts.
    Snorm16(Vec<i16>),
    /// Morph weights as normalised unsigned bytes.
    Unorm8(Vec<u8>),
    /// Morph weights as normalised unsigned shorts.
    Unorm16(Vec<u16>),
}

impl OutputCodes {
    /// The codes of `values`, outputs of a `path` channel, when every value is exactly one;
    /// None: floats (translations and scales always).
    pub fn of(path: super::Path, values: &[f32]) -> Option<OutputCodes> {
        match path {
            super::Path::Rotation => snorm16_codes(values).map(OutputCodes::Snorm16),
            super::Path::Weights => (unorm8_codes(values).map(OutputCodes::Unorm8))
                .or_else(|| unorm16_codes(values).map(OutputCodes::Unorm16)),
            _ => None,
        }
    }

    /// Bytes a value takes.
    pub fn bytes_per_value(&self) -> usize {
        match self {
            OutputCodes::Unorm8(_) => 1,
            OutputCodes::Snorm16(_) | OutputCodes::Unorm16(_) => 2,
        }
    }

    /// glTF's `componentType` of the accessor holding them (normalised).
    pub fn component_type(&self) -> u32 {
        match self {
            OutputCodes::Unorm8(_) => 5121,
            OutputCodes::Snorm16(_) => 5122,
            OutputCodes::Unorm16(_) => 5123,
        }
    }

    /// The codes as little-endian bytes.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            OutputCodes::Snorm16(c) => c.iter().flat_map(|x| x.to_le_bytes()).collect(),
            OutputCodes::Unorm8(c) => c.clone(),
            OutputCodes::Unorm16(c) => c.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }
}
