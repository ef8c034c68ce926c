//! The two choices every GPU comparison makes, side by side: who skins what a draw shows
//! ([`Skinning`]) and which GPU code is read back to check it ([`CapturePath`]). Plain enums:
//! the pipelines that act on them import this file, never the other way round.

/// Who skins what a draw shows: one of the choices of the GPU paths (the other: which readback
/// checks it, [`CapturePath`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Skinning {
    /// The draw's WGSL vertex shader skins from the palette.
    VertexShader,
    /// A compute pass skinned the vertices into a buffer once per frame
    /// ([`super::GpuScene::enable_compute_skinning`]); a plain vertex shader draws them.
    ComputePass,
    /// The CPU reference, uploaded with [`super::SceneBuffers::upload_skinned`].
    Cpu,
}

impl Skinning {
    /// How a user names it: "GPU (vertex shader)", "GPU (compute pass)", "CPU".
    pub fn describe(self) -> &'static str {
        match self {
            Skinning::VertexShader => "GPU (vertex shader)",
            Skinning::ComputePass => "GPU (compute pass)",
            Skinning::Cpu => "CPU",
        }
    }

    /// The vertices come skinned in a buffer (compute pass or CPU upload): the draw runs the
    /// plain vertex shader (`CPU_SKINNED`).
    pub fn pre_skinned(self) -> bool {
        self != Skinning::VertexShader
    }
}

/// Which readback checks the GPU's vertices: the GPU code that produces the vertices read
/// back (who skins is [`Skinning`]). Every path runs the one WGSL `skin()`. In JSON
/// reports the names are the format's own (`compute`, `draw`, `compute_skinning`), kept
/// for the files already written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub enum CapturePath {
    /// The capture shader: a compute pass runs the draw's `skin()` over storage buffers and
    /// writes the vertices for readback (storage palette only).
    #[default]
    #[serde(rename = "compute")]
    CaptureShader,
    /// The draw's own vertex stage (vertex buffers, `vs_skin4`/`vs_skin8`), calling `skin()`.
    #[serde(rename = "draw")]
    Draw,
    /// What compute skinning draws: the `skin_vertices` pass (calling `skin()`) writes the
    /// skinned vertex buffer the plain vertex shader draws, and that is read back (storage
    /// palette only).
    #[serde(rename = "compute_skinning")]
    ComputePass,
}

impl CapturePath {
    /// `capture shader` / `draw` / `compute pass`.
    pub fn name(self) -> &'static str {
        match self {
            CapturePath::CaptureShader => "capture shader",
            CapturePath::Draw => "draw",
            CapturePath::ComputePass => "compute pass",
        }
    }

    /// In words, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            CapturePath::CaptureShader => "the capture shader",
            CapturePath::Draw => "the draw's vertex stage",
            CapturePath::ComputePass => "the compute-skinned buffer as drawn",
        }
    }

    /// Whether it reads the storage palette only (no uniform-palette path).
    pub fn storage_only(self) -> bool {
        self != CapturePath::Draw
    }
}

/// `vertex` (also `gpu`: the name `render` and `dump` gave the GPU side), `compute`, `cpu`.
impl crate::choice::Choice for Skinning {
    const ALL: &'static [Skinning] =
        &[Skinning::VertexShader, Skinning::ComputePass, Skinning::Cpu];

    fn name(self) -> &'static str {
        match self {
            Skinning::VertexShader => "vertex",
            Skinning::ComputePass => "compute",
            Skinning::Cpu => "cpu",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Skinning::VertexShader => "The GPU, in the draw's vertex shader",
            Skinning::ComputePass => {
                "The GPU, once a frame in a compute pass whose buffer a plain vertex shader \
                 draws (storage palette only)"
            }
            Skinning::Cpu => "The CPU reference",
        }
    }

    fn aliases(self) -> &'static [&'static str] {
        match self {
            Skinning::VertexShader => &["gpu"],
            _ => &[],
        }
    }
}

/// `shader` (also `compute`, its first name), `draw`, `compute-pass`.
impl crate::choice::Choice for CapturePath {
    const ALL: &'static [CapturePath] = &[
        CapturePath::CaptureShader,
        CapturePath::Draw,
        CapturePath::ComputePass,
    ];

    fn name(self) -> &'static str {
        match self {
            CapturePath::CaptureShader => "shader",
            CapturePath::Draw => "draw",
            CapturePath::ComputePass => "compute-pass",
        }
    }

    fn help(self) -> &'static str {
        match self {
            CapturePath::CaptureShader => "The capture shader: the draw's skin() in a compute pass",
            CapturePath::Draw => "The draw's own vertex stage",
            CapturePath::ComputePass => {
                "The compute-skinned buffer as drawn (storage palette only)"
            }
        }
    }

    fn aliases(self) -> &'static [&'static str] {
        match self {
            CapturePath::CaptureShader => &["compute"],
            _ => &[],
        }
    }
}
