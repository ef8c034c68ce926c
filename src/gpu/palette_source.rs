//! Where the skinning shader reads its palette from — the only difference between the two GPU
//! skinning paths (`shaders/palette_storage.wgsl`, `shaders/palette_uniform.wgsl`):
//!
//! - [`PaletteSource::Storage`]: the whole frame palette in one read-only storage buffer, any
//!   number of joints per draw (the default wherever the vertex stage can read storage
//!   buffers);
//! - [`PaletteSource::Uniform`]: a fixed array of `K` matrices per draw in a uniform buffer
//!   (Ribeiro, "Mesh Skinning", §GPU Skinning), for adapters without vertex-stage storage
//!   buffers (GL ES 3.0 / WebGL2 class); every draw must use at most `K` joints, which the
//!   partitioner ([`crate::partition::PartitionedScene`]) arranges.

use super::context::GpuContext;
use crate::error::{Error, Result};

/// Most morph targets one draw may have on the uniform path (its weights live in the draw's
/// uniform block, four per `vec4`; glTF files rarely exceed 8, MorphStressTest has 8).
pub const UNIFORM_MORPH_SLOTS: u32 = 64;

/// K when the uniform path is chosen without one: 64 matrices (Ribeiro, "Mesh Skinning", §GPU
/// Skinning suggests 32–128; 64 keeps every shared model in one or two submeshes and needs 4.5 KiB
/// of the 16 KiB a WebGL2-class adapter allows per uniform binding).
pub const DEFAULT_UNIFORM_BONES: u32 = 64;

/// Where `skin()` reads the palette from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PaletteSource {
    /// One storage buffer for the frame; draws index it from their `palette_base`.
    Storage,
    /// A uniform array of `bones` matrices per draw.
    Uniform {
        /// K: the array size, and the most joints a draw may use.
        bones: u32,
    },
}

impl PaletteSource {
    /// The source in words, for messages and reports: `"storage buffer"` for
    /// [`PaletteSource::Storage`], `"uniform array of K matrices"` with K the number of
    /// `bones` for [`PaletteSource::Uniform`] (e.g. `"uniform array of 64 matrices"`).
    pub fn describe(self) -> String {
        match self {
            PaletteSource::Storage => "storage buffer".into(),
            PaletteSource::Uniform { bones } => format!("uniform array of {bones} matrices"),
        }
    }
}

/// Byte layout of the uniform path's per-draw block (`BonePalette` in
/// shaders/palette_uniform.wgsl; checked against it by tests/gpu/gpu_layout.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BonePaletteLayout {
    /// K.
    pub bones: u32,
}

impl BonePaletteLayout {
    /// Offset of `matrices` (K `mat4x4<f32>`).
    pub const MATRICES: u64 = 0;

    /// Offset of `nodes` (one `u32` per matrix, four per `vec4<u32>`).
    pub fn nodes_offset(self) -> u64 {
        64 * self.bones as u64
    }

    /// Offset of `morph_weights` ([`UNIFORM_MORPH_SLOTS`] `f32`, four per `vec4<f32>`).
    pub fn morph_offset(self) -> u64 {
        self.nodes_offset() + 16 * self.bones.div_ceil(4) as u64
    }

    /// Size of the block.
    pub fn size(self) -> u64 {
        self.morph_offset() + 4 * UNIFORM_MORPH_SLOTS as u64
    }
}

/// The largest K whose block fits the device's uniform binding size.
pub fn max_uniform_bones(ctx: &GpuContext) -> u32 {
    let limit = ctx.device.limits().max_uniform_buffer_binding_size;
    // size(K) = 64 K + 16 ⌈K/4⌉ + 4 · slots ≤ 68 K + 12 + 4 · slots.
    let room = limit.saturating_sub(12 + 4 * UNIFORM_MORPH_SLOTS as u64) / 68;
    room.min(u32::MAX as u64) as u32
}

/// Check that `source` can run on `ctx`: the storage path needs vertex-stage storage buffers,
/// the uniform path a K from 1 up to [`max_uniform_bones`].
pub fn check_source(ctx: &GpuContext, source: PaletteSource) -> Result<()> {
    match source {
        PaletteSource::Storage if ctx.layouts.storage.is_none() => Err(Error::Gpu(format!(
            "adapter {} cannot read storage buffers in the vertex stage; use the uniform palette \
             path",
            ctx.info.name
        ))),
        PaletteSource::Storage => Ok(()),
        PaletteSource::Uniform { bones } => {
            let max = max_uniform_bones(ctx);
            if bones == 0 || bones > max {
                return Err(Error::Gpu(format!(
                    "a uniform palette of {bones} matrices: this adapter's uniform buffers hold \
                     1 to {max}"
                )));
            }
            Ok(())
        }
    }
}

/// The palette source to run: `requested` when given (checked against the adapter), else the
/// storage path where the vertex stage can read storage buffers, else a uniform array of
/// [`DEFAULT_UNIFORM_BONES`] (or as many as the adapter's uniform buffers hold).
pub fn choose_source(ctx: &GpuContext, requested: Option<PaletteSource>) -> Result<PaletteSource> {
    let source = match requested {
        Some(s) => s,
        None if ctx.storage_palette() => PaletteSource::Storage,
        None => PaletteSource::Uniform {
            bones: DEFAULT_UNIFORM_BONES.min(max_uniform_bones(ctx)),
        },
    };
    check_source(ctx, source)?;
    Ok(source)
}
