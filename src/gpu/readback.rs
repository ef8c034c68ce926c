//! GPU skinning read back for comparison: a [`GpuScene`] with its capture shader and its
//! draw-path capture, fed one frame (palette and morph weights) at a time. Attributes a
//! primitive lacks come back as `None`, as on the CPU path.

use super::capture::Capture;
use super::context::GpuContext;
use super::draw_capture::DrawCapture;
use super::palette_source::PaletteSource;
use super::scene::GpuScene;
use super::skinning::{CapturePath, Skinning};
use crate::error::{Error, Result};
use crate::frame::FrameState;
use crate::scene::Scene;
use crate::skin::SkinnedVertices;

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

    /// As [`GpuReadback::new`] with room for `frames` frames read back together
    /// ([`GpuReadback::read_frames`]): a crowd upload of that many instances on the storage
    /// palette, each a frame's palette (morph weights are shared: for scenes without morph
    /// targets, or one frame).
    pub fn batched(
        ctx: &GpuContext,
        scene: &Scene,
        frame: &FrameState,
        max_influences: Option<usize>,
        frames: u32,
    ) -> Result<GpuReadback> {
        let gpu = GpuScene::crowd_with_palette(
            ctx,
            scene,
            frame,
            max_influences,
            frames,
            PaletteSource::Storage,
        )?;
        let compute = ctx
            .compute_capture()
            .then(|| Capture::new(ctx, &gpu))
            .transpose()?;
        Ok(GpuReadback {
            gpu,
            compute,
            draw: DrawCapture::new(ctx)?,
        })
    }

    /// How many frames [`GpuReadback::read_frames`] takes at once.
    pub fn batch(&self) -> usize {
        self.gpu.instances() as usize
    }

    /// Upload `palettes` (at most [`GpuReadback::batch`], one per frame) into the upload's
    /// instances, skin them in one pass per path and read them back together: `[frame][k]`
    /// for `draws[k]`, each as [`GpuReadback::read`] gives it. `frame`: the one frame whose
    /// palette is `palettes[0]` when there is one (its morph weights are uploaded too, as
    /// [`GpuReadback::read`] does); without it the scene must have no morph targets, which the
    /// instances could not each have.
    pub fn read_frames(
        &mut self,
        ctx: &GpuContext,
        scene: &Scene,
        frame: Option<&FrameState>,
        palettes: &[Vec<glam::Mat4>],
        path: CapturePath,
        draws: &[usize],
    ) -> Result<Vec<Vec<SkinnedVertices>>> {
        let mut each = self.read_frames_each(ctx, scene, frame, palettes, &[path], draws)?;
        Ok(each.pop().unwrap_or_default())
    }

    /// [`GpuReadback::read_frames`] through each of `paths` (`[path][frame][k]`), the
    /// capture shader's pass submitted before the draw's so the GPU runs the draw while this
    /// thread reads the capture shader's vertices.
    pub fn read_frames_each(
        &mut self,
        ctx: &GpuContext,
        scene: &Scene,
        frame: Option<&FrameState>,
        palettes: &[Vec<glam::Mat4>],
        paths: &[CapturePath],
        draws: &[usize],
    ) -> Result<Vec<Vec<Vec<SkinnedVertices>>>> {
        let n = palettes.len();
        if n == 0 {
            return Ok(paths.iter().map(|_| Vec::new()).collect());
        }
        match (n, frame) {
            (1, Some(frame)) => self.gpu.write_frame(ctx, scene, frame),
            _ => self.write_palettes(ctx, scene, palettes)?,
        }
        self.capture(ctx, scene, paths, draws, n as u32)
    }

    /// Write one frame's palette into each instance's block (no morph weights: refused for
    /// scenes with morph targets).
    fn write_palettes(
        &mut self,
        ctx: &GpuContext,
        scene: &Scene,
        palettes: &[Vec<glam::Mat4>],
    ) -> Result<()> {
        let n = palettes.len();
        if n > self.batch() {
            return Err(Error::Gpu(format!(
                "{n} frames read together; the upload holds {}",
                self.batch()
            )));
        }
        if scene
            .draws
            .iter()
            .any(|d| !scene.primitive(d).morph_targets.is_empty())
        {
            return Err(Error::Gpu(format!(
                "{}: frames read together share one set of morph weights; read a scene with \
                 morph targets one frame at a time",
                scene.name
            )));
        }
        for (j, p) in palettes.iter().enumerate() {
            self.gpu.write_instance_palette(ctx, j as u32, p)?;
        }
        Ok(())
    }

    /// Skin the first `instances` instances as last written (the compute pass run first when
    /// it is on, or turned on for a path) and read `draws` back through each of `paths`:
    /// `[path][instance][k]`. The capture shader is submitted first and read after the first
    /// draw capture is submitted (the draw captures share their targets, so each of those
    /// is read before the next is submitted).
    fn capture(
        &mut self,
        ctx: &GpuContext,
        scene: &Scene,
        paths: &[CapturePath],
        draws: &[usize],
        instances: u32,
    ) -> Result<Vec<Vec<Vec<SkinnedVertices>>>> {
        if paths.contains(&CapturePath::ComputePass) && self.gpu.compute_skinning().is_none() {
            self.gpu.enable_compute_skinning(ctx)?;
        }
        self.gpu.submit_compute_skinning(ctx);
        let shader_at = paths.iter().position(|&p| p == CapturePath::CaptureShader);
        if shader_at.is_some() {
            match &mut self.compute {
                Some(c) => c.submit_instances(ctx, &self.gpu, draws, instances)?,
                None => return Err(self.no_capture_shader(ctx)),
            }
        }
        let mut out: Vec<Vec<Vec<SkinnedVertices>>> = paths.iter().map(|_| Vec::new()).collect();
        let mut shader_read = false;
        for (slot, &path) in paths.iter().enumerate() {
            let skinning = match path {
                CapturePath::CaptureShader => continue,
                CapturePath::Draw => Skinning::VertexShader,
                CapturePath::ComputePass => Skinning::ComputePass,
            };
            self.draw
                .submit_with(ctx, &self.gpu, draws, skinning, instances)?;
            if let (Some(k), false) = (shader_at, shader_read) {
                out[k] = self.collect_shader(ctx, draws, instances)?;
                shader_read = true;
            }
            out[slot] = self.draw.collect(ctx, &self.gpu, draws, instances)?;
        }
        if let (Some(k), false) = (shader_at, shader_read) {
            out[k] = self.collect_shader(ctx, draws, instances)?;
        }
        for frames in &mut out {
            for frame in frames.iter_mut() {
                drop_missing_attributes(scene, draws, frame);
            }
        }
        Ok(out)
    }

    /// The capture shader's submitted vertices (`[instance][k]`).
    fn collect_shader(
        &self,
        ctx: &GpuContext,
        draws: &[usize],
        instances: u32,
    ) -> Result<Vec<Vec<SkinnedVertices>>> {
        match &self.compute {
            Some(c) => c.collect_instances(ctx, &self.gpu, draws, instances),
            None => Err(self.no_capture_shader(ctx)),
        }
    }

    fn no_capture_shader(&self, ctx: &GpuContext) -> Error {
        Error::Gpu(format!(
            "no capture shader on the {} path of {}: read back through the draw",
            self.gpu.source.describe(),
            ctx.info.name
        ))
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
        self.gpu.write_frame(ctx, scene, frame);
        Ok(self
            .capture(ctx, scene, &[path], draws, 1)?
            .pop()
            .and_then(|mut frames| frames.pop())
            .unwrap_or_default())
    }
}

/// Attributes a primitive lacks come back as `None`, as on the CPU path.
fn drop_missing_attributes(scene: &Scene, draws: &[usize], out: &mut [SkinnedVertices]) {
    for (v, &d) in out.iter_mut().zip(draws) {
        let prim = scene.primitive(&scene.draws[d]);
        if prim.normals.is_none() {
            v.normals = None;
        }
        if prim.tangents.is_none() {
            v.tangents = None;
        }
    }
}
