//! GPU skinning read back for comparison: a [`GpuScene`] with its capture shader and its
//! draw-path capture, fed one frame (palette and morph weights) at a time. Attributes a
//! primitive lacks come back as `None`, as on the CPU path.

use super::capture::Capture;
use super::context::GpuContext;
use super::draw_capture::DrawCapture;
use super::palette_source::PaletteSource;
use super::render::Skinning;
use super::scene_buffers::GpuScene;
use crate::error::{Error, Result};
use crate::frame::FrameState;
use crate::scene::Scene;
use crate::skin::SkinnedVertices;

/// Which readback checks the GPU's vertices: the GPU code that produces the vertices read
/// back (who skins is [`super::Skinning`]). Every path runs the one WGSL `skin()`. In JSON
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

/// A scene on the GPU with both captures (the capture shader on the storage palette path
/// only).
pub struct GpuReadback {
    /// The uploaded scene.
    pub gpu: GpuScene,
    compute: Option<Capture>,
    draw: DrawCapture,
}

impl GpuReadback {
    /// Upload `scene` (reduced to `max_influences` when given) and build both captures.
    pub fn new(
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        max_influences: Option<usize>,
    ) -> Result<GpuReadback> {
        Self::with_draw_capture(ctx, scene, frame, max_influences, DrawCapture::new(ctx)?)
    }

    /// As [`GpuReadback::new`] for a palette source; on the uniform path every draw of `scene`
    /// must use at most K joints (a partitioned scene) and only the draw path reads back.
    pub fn with_palette(
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        max_influences: Option<usize>,
        source: PaletteSource,
    ) -> Result<GpuReadback> {
        let gpu = GpuScene::with_palette(ctx, scene, frame, max_influences, source)?;
        let compute = match source {
            PaletteSource::Storage if ctx.compute_capture() => Some(Capture::new(ctx, &gpu)?),
            _ => None,
        };
        let mut draw = DrawCapture::new(ctx)?;
        draw.prepare(ctx, source)?;
        Ok(GpuReadback { gpu, compute, draw })
    }

    /// As [`GpuReadback::new`] with a given draw capture (tests plant layout faults in it).
    pub fn with_draw_capture(
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        max_influences: Option<usize>,
        draw: DrawCapture,
    ) -> Result<GpuReadback> {
        let gpu = GpuScene::new(ctx, scene, frame, max_influences)?;
        let compute = ctx
            .compute_capture()
            .then(|| Capture::new(ctx, &gpu))
            .transpose()?;
        Ok(GpuReadback { gpu, compute, draw })
    }

    /// Upload `frame` and read back `draws` through `path`.
    pub fn read(
        &mut self,
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        path: CapturePath,
        draws: &[usize],
    ) -> Result<Vec<SkinnedVertices>> {
        self.gpu.update(ctx, scene, frame);
        let mut out = match path {
            CapturePath::CaptureShader => match &self.compute {
                Some(c) => c.run(ctx, &self.gpu, draws)?,
                None => {
                    return Err(Error::Gpu(format!(
                        "no capture shader on the {} path of {}: read back through the draw",
                        self.gpu.source.describe(),
                        ctx.info.name
                    )));
                }
            },
            CapturePath::Draw => self.draw.run(ctx, &self.gpu, draws)?,
            CapturePath::ComputePass => {
                if self.gpu.compute_skinning().is_none() {
                    self.gpu.enable_compute_skinning(ctx)?;
                    // This frame's palette is written: skin it.
                    self.gpu.submit_compute_skinning(ctx);
                }
                let mut v = self
                    .draw
                    .run_with(ctx, &self.gpu, draws, Skinning::ComputePass, 1)?;
                v.pop().unwrap_or_default()
            }
        };
        for (v, &d) in out.iter_mut().zip(draws) {
            let prim = scene.primitive(&scene.draws[d]);
            if prim.normals.is_none() {
                v.normals = None;
            }
            if prim.tangents.is_none() {
                v.tangents = None;
            }
        }
        Ok(out)
    }
}
