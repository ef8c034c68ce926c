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
//!
//! Whether an adapter can run a source is the context's to say (`check_source`,
//! `choose_source` in context.rs); the uniform block's byte layout is in shader_types.rs.

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

/// By name: `storage`, or `uniform` with [`DEFAULT_UNIFORM_BONES`] matrices (a user gives
/// another K apart, as the command line's bone limit does).
impl crate::choice::Choice for PaletteSource {
    const ALL: &'static [PaletteSource] = &[
        PaletteSource::Storage,
        PaletteSource::Uniform {
            bones: DEFAULT_UNIFORM_BONES,
        },
    ];

    fn name(self) -> &'static str {
        match self {
            PaletteSource::Storage => "storage",
            PaletteSource::Uniform { .. } => "uniform",
        }
    }

    fn help(self) -> &'static str {
        match self {
            PaletteSource::Storage => "One storage buffer per frame",
            PaletteSource::Uniform { .. } => {
                "K matrices per draw in a uniform buffer, the mesh partitioned"
            }
        }
    }
}
