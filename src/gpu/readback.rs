//! GPU skinning read back for comparison: a [`GpuScene`] with its compute capture and its
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

/// Which GPU code produces the vertices read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CapturePath {
    /// The compute shader `capture` (vertices loaded from storage buffers), calling `skin()`.
    Compute,
    /// The draw's own vertex stage (vertex buffers, `vs_skin4`/`vs_skin8`), calling `skin()`.
    Draw,
    /// The compute-skinning path as drawn: the `skin_vertices` pass (calling `skin()`) writes
    /// the skinned vertex buffer and the plain vertex shader draws it, read back through the
    /// draw (storage palette only).
    ComputeSkinning,
}

impl CapturePath {
    /// `compute` / `draw` / `compute skinning`.
    pub fn name(self) -> &'static str {
        match self {
            CapturePath::Compute => "compute",
            CapturePath::Draw => "draw",
            CapturePath::ComputeSkinning => "compute skinning",
        }
    }

    /// Whether it reads the storage palette only (no uniform-palette path).
    pub fn storage_only(self) -> bool {
        self != CapturePath::Draw
    }
}

/// A scene on the GPU with both captures (the compute capture on the storage palette path
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
            CapturePath::Compute => match &self.compute {
                Some(c) => c.run(ctx, &self.gpu, draws)?,
                None => {
                    return Err(Error::Gpu(format!(
                        "no compute capture on the {} path of {}: read back through the draw",
                        self.gpu.source.describe(),
                        ctx.info.name
                    )));
                }
            },
            CapturePath::Draw => self.draw.run(ctx, &self.gpu, draws)?,
            CapturePath::ComputeSkinning => {
                if self.gpu.compute_skinning().is_none() {
                    self.gpu.enable_compute_skinning(ctx)?;
                    // This frame's palette is written: skin it.
                    self.gpu.submit_compute_skinning(ctx);
                }
                let mut v = self
                    .draw
                    .run_with(ctx, &self.gpu, draws, Skinning::Compute, 1)?;
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
