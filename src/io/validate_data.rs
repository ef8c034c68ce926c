//! The glTF 2.0 rules on the data in the buffers, checked once the buffers are read and
//! before anything is built from them, on every accessor whose data the file holds (as the
//! Khronos glTF-Validator does: an accessor without a `bufferView` or `sparse`, or in a buffer
//! the file does not carry, is not checked). Its codes are named in each message:
//!
//! Rules 18–20 (about a use) run before 16 and 17 (about any accessor), so the first error
//! names the use when there is one.
//!
//! 16. Float accessors hold no NaN or infinity (glTF 2.0 §3.6.2; `ACCESSOR_INVALID_FLOAT`).
//! 17. An accessor's `min` and `max`, when given, are its data's least and greatest value of
//!     each component (floats compared at single precision, normalised integers as stored)
//!     (§3.6.2.5; `ACCESSOR_MIN_MISMATCH`, `ACCESSOR_MAX_MISMATCH`).
//! 18. An animation sampler's input times are non-negative and strictly increasing
//!     (§3.11; `ACCESSOR_ANIMATION_INPUT_NEGATIVE`, `…_NON_INCREASING`).
//! 19. Rotation outputs are unit quaternions to within 0.00769, the validator's threshold
//!     (§3.11; `ACCESSOR_ANIMATION_SAMPLER_OUTPUT_NON_NORMALIZED_QUATERNION`); for CUBICSPLINE
//!     the values, not the tangents.
//! 20. Inverse bind matrices are affine: their last row is exactly (0, 0, 0, 1) (§3.7.3;
//!     `ACCESSOR_INVALID_IBM`).
//!
//! Cost: each checked accessor is read once more than the import reads it (O(data)).

use std::collections::HashMap;

use gltf::json;
use json::validation::Checked;

use super::accessor::{AccessorData, read, read_stored};
use super::validate_use::used_as;
use crate::error::{Error, Result};

/// The validator's tolerance on a rotation's length: `unitLengthThresholdVec4` in its
/// `errors.dart` (a quaternion stored as normalised shorts is within 1e-4 of unit).
const UNIT_QUATERNION_TOLERANCE: f64 = 0.00769;

/// Check rules 16–20 on `document`'s data; `absent[b]` is Some (why) for a buffer the file
/// does not carry, whose accessors are not checked.
pub fn validate_data(
    document: &gltf::Document,
    buffers: &[gltf::buffer::Data],
    absent: &[Option<String>],
    file: &str,
) -> Result<()> {
    let mut data = Data {
        document,
        buffers,
        absent,
        file,
        stored: HashMap::new(),
    };
    // The rules about a use first: their messages say more than an accessor's.
    for anim in document.animations() {
        data.check_animation(&anim)?;
    }
    for skin in document.skins() {
        data.check_skin(&skin)?;
    }
    for a in 0..document.as_json().accessors.len() {
        data.check_accessor(a)?;
    }
    Ok(())
}

/// The document, its buffers, and each checked accessor's values as stored.
struct Data<'a> {
    document: &'a gltf::Document,
    buffers: &'a [gltf::buffer::Data],
    absent: &'a [Option<String>],
    file: &'a str,
    stored: HashMap<usize, AccessorData>,
}

impl Data<'_> {
    /// Whether accessor `a` has data in the file: valid format, a view or sparse values, in
    /// buffers the file carries.
    fn has_data(&self, a: usize) -> bool {
        let root = self.document.as_json();
        let Some(acc) = root.accessors.get(a) else {
            return false;
        };
        let valid = matches!(acc.type_, Checked::Valid(_))
            && matches!(acc.component_type, Checked::Valid(_));
        let carried = |view: usize| {
            root.buffer_views.get(view).is_some_and(|v| {
                self.absent
                    .get(v.buffer.value())
                    .is_some_and(Option::is_none)
            })
        };
        let mut views = acc
            .buffer_view
            .iter()
            .map(|v| v.value())
            .collect::<Vec<_>>();
        if let Some(s) = &acc.sparse {
            views.extend([s.indices.buffer_view.value(), s.values.buffer_view.value()]);
        }
        valid && acc.count.0 > 0 && !views.is_empty() && views.into_iter().all(carried)
    }

    /// Accessor `a`'s values as stored (read once), or None when it has no data to check.
    fn stored(&mut self, a: usize) -> Result<Option<&AccessorData>> {
        if !self.has_data(a) {
            return Ok(None);
        }
        if !self.stored.contains_key(&a) {
            let Some(acc) = self.document.accessors().nth(a) else {
                return Ok(None);
            };
            let values = read_stored(&acc, self.buffers, self.file, &format!("accessors[{a}]"))?;
            self.stored.insert(a, values);
        }
        Ok(self.stored.get(&a))
    }

    /// Rules 16 and 17 on accessor `a`.
    fn check_accessor(&mut self, a: usize) -> Result<()> {
        let file = self.file;
        let root = self.document.as_json();
        let json = &root.accessors[a];
        let (min, max) = (json.min.clone(), json.max.clone());
        let Some(values) = self.stored(a)? else {
            return Ok(());
        };
        let float = values.data_type == gltf::accessor::DataType::F32;
        if float && let Some(i) = values.values.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                file,
                format!("accessors[{a}]"),
                format!(
                    "element {} component {} is {}{} (glTF 2.0 §3.6.2: float data are finite; \
                     ACCESSOR_INVALID_FLOAT)",
                    i / values.components,
                    i % values.components,
                    values.values[i],
                    used_as(root, a)
                ),
            ));
        }
        for (key, declared, least) in [("min", &min, true), ("max", &max, false)] {
            let Some(declared) = declared.as_ref().and_then(|v| v.as_array()) else {
                continue;
            };
            for (c, d) in declared.iter().enumerate().take(values.components) {
                let Some(d) = d.as_f64() else { continue };
                // The validator reads a float accessor's bounds at single precision.
                let d = if float { d as f32 as f64 } else { d };
                let column = values.values.iter().skip(c).step_by(values.components);
                let actual = if least {
                    column.fold(f64::INFINITY, |m, &v| m.min(v))
                } else {
                    column.fold(f64::NEG_INFINITY, |m, &v| m.max(v))
                };
                if actual != d {
                    return Err(Error::invalid(
                        file,
                        format!("accessors[{a}].{key}[{c}]"),
                        format!(
                            "declares {d} but the data's {} is {actual}{} (glTF 2.0 §3.6.2.5: \
                             min and max are the data's bounds; ACCESSOR_{}_MISMATCH)",
                            if least { "least" } else { "greatest" },
                            used_as(root, a),
                            key.to_uppercase()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Rules 18 and 19 on one animation.
    fn check_animation(&mut self, anim: &gltf::Animation) -> Result<()> {
        let file = self.file;
        let ai = anim.index();
        for s in anim.samplers() {
            let field = format!("animations[{ai}].samplers[{}].input", s.index());
            let Some(times) = self.stored(s.input().index())? else {
                continue;
            };
            let times = &times.values;
            if let Some(k) = times.iter().position(|&t| t < 0.0) {
                return Err(Error::invalid(
                    file,
                    field,
                    format!(
                        "key {k} is at {} s, before 0 (glTF 2.0 §3.11: times are \
                         non-negative; ACCESSOR_ANIMATION_INPUT_NEGATIVE)",
                        times[k]
                    ),
                ));
            }
            if let Some(k) = times.windows(2).position(|w| w[1] <= w[0]) {
                return Err(Error::invalid(
                    file,
                    field,
                    format!(
                        "key {} at {} s does not come after key {k} at {} s (glTF 2.0 §3.11: \
                         times are strictly increasing; \
                         ACCESSOR_ANIMATION_INPUT_NON_INCREASING)",
                        k + 1,
                        times[k + 1],
                        times[k]
                    ),
                ));
            }
        }
        for (ci, ch) in anim.channels().enumerate() {
            if ch.target().property() != gltf::animation::Property::Rotation {
                continue;
            }
            let output = ch.sampler().output();
            if !self.has_data(output.index()) {
                continue;
            }
            let quats = read(&output, self.buffers, file, "output")?;
            if quats.components != 4 {
                continue; // rule 14 names the format
            }
            let cubic = ch.sampler().interpolation() == gltf::animation::Interpolation::CubicSpline;
            let (step, first) = if cubic { (3, 1) } else { (1, 0) };
            for e in (first..quats.count).step_by(step) {
                let q = &quats.values[e * 4..e * 4 + 4];
                let len = q.iter().map(|v| v * v).sum::<f64>().sqrt();
                if (len - 1.0).abs() > UNIT_QUATERNION_TOLERANCE {
                    return Err(Error::invalid(
                        file,
                        format!("animations[{ai}].channels[{ci}].sampler"),
                        format!(
                            "output element {e} is a rotation of length {len} (glTF 2.0 §3.11: \
                             unit quaternions, to within {UNIT_QUATERNION_TOLERANCE}; \
                             ACCESSOR_ANIMATION_SAMPLER_OUTPUT_NON_NORMALIZED_QUATERNION)"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Rule 20 on one skin.
    fn check_skin(&mut self, skin: &gltf::Skin) -> Result<()> {
        let file = self.file;
        let Some(ibm) = skin.inverse_bind_matrices() else {
            return Ok(());
        };
        let Some(m) = self.stored(ibm.index())? else {
            return Ok(());
        };
        if m.components != 16 {
            return Ok(()); // the document rules name the format
        }
        for (k, matrix) in m.values.chunks_exact(16).enumerate() {
            // Column-major: the last row is components 3, 7, 11 and 15.
            let row = [matrix[3], matrix[7], matrix[11], matrix[15]];
            if row != [0.0, 0.0, 0.0, 1.0] {
                return Err(Error::invalid(
                    file,
                    format!("skins[{}].inverseBindMatrices", skin.index()),
                    format!(
                        "matrix {k} has the last row {row:?}, not (0, 0, 0, 1) (glTF 2.0 \
                         §3.7.3: inverse bind matrices are affine; ACCESSOR_INVALID_IBM)"
                    ),
                ));
            }
        }
        Ok(())
    }
}
