//! The viewer's crowd view (the view command's crowd option, the page's `?crowd=N`): a field of N
//! copies of the model ([`CrowdField`]), each cycling through its clips at its own phase,
//! culled to the view, uploaded in one write and drawn by the GPU path the viewer skins with.
//! `[` halves N and `]` doubles it; the crowd panel shows the frame's figures.

use crate::camera::{FRAME_FILL, Frustum};
use crate::error::Result;
use crate::gpu::context::MapsInFlight;
use crate::gpu::{ColorMode, GpuContext, MAX_INSTANCES, PaletteSource, Skinning};
use crate::view::crowd_field::{CrowdField, LodView};
use crate::view::pass_stamps::PassStamps;
use crate::view::{BACKGROUND, ViewRenderer};

use super::state::ViewerState;

/// What a crowd's GPU side was made for: characters, character generation, palette source
/// and who skins. A change makes it again.
type CrowdKey = (u32, u64, PaletteSource, Skinning);

/// The crowd's GPU side in the viewport.
pub struct CrowdGpu {
    key: CrowdKey,
    field: CrowdField,
    /// The GPU passes' timestamps, where the adapter writes them.
    timer: Option<PassTimer>,
    /// The aspect the field was last framed at (a view the user left alone is framed again
    /// when the window's shape changes).
    framed_aspect: f32,
}

/// A crowd of `n` doubled (`up`) or halved, within 1..=[`MAX_INSTANCES`].
pub fn resized(n: u32, up: bool) -> u32 {
    match up {
        true => n.saturating_mul(2).min(MAX_INSTANCES),
        false => (n / 2).max(1),
    }
}

/// Draw the crowd frame into `target`: make the field when what it was made for changed
/// (framing it), pose every character at the clip time, cull to the camera, upload, draw.
/// The frame's figures go to `state.crowd_stats`.
pub fn frame(
    ctx: &GpuContext,
    crowd: &mut Option<CrowdGpu>,
    view: &mut ViewRenderer,
    target: &crate::gpu::OffscreenTarget,
    state: &mut ViewerState,
) -> Result<()> {
    let Some(n) = state.crowd else {
        *crowd = None;
        return Ok(());
    };
    // The crowd is the GPU's picture: the view selector stays on it.
    state.mode = super::state::ViewMode::Gpu;
    let aspect = target.aspect();
    let source = state.palette_source();
    let key = (n, state.generation, source, state.gpu_skinning);
    if crowd.as_ref().map(|c| c.key) != Some(key) {
        *crowd = None;
        let skinning = state.gpu_skinning;
        let field = CrowdField::new(ctx, &mut state.character, n, source, skinning)?;
        view.prepare_palette(ctx, source)?;
        state.framing.reframe = true;
        let timer = PassTimer::new(ctx);
        // Some: timestamps are on their way; None: the adapter writes none.
        state.crowd_gpu_ms = timer.as_ref().map(|_| CrowdGpuMs::default());
        *crowd = Some(CrowdGpu {
            key,
            field,
            timer,
            framed_aspect: aspect,
        });
    }
    let Some(c) = crowd.as_mut() else {
        return Ok(());
    };
    let field_bounds = c.field.field_bounds();
    let reshaped = c.framed_aspect != aspect && !state.framing.user_framed;
    if state.framing.reframe || reshaped {
        c.framed_aspect = aspect;
        state
            .framing
            .camera
            .fit(c.field.framing_points(), aspect, FRAME_FILL);
        state.framing.reframe = false;
        state.framing.user_framed = false;
    }
    let camera = state.framing.camera;
    let frustum = Frustum::new(camera.clip_from_world(aspect));
    // Paused or scrubbed, every character shows the time on screen.
    let lod =
        (state.crowd_lod && state.playback.playing).then(|| LodView::of(&camera, target.size().1));
    c.field.set_lod(lod);
    state.crowd_stats = Some(c.field.update(ctx, state.playback.time_s, Some(&frustum))?);
    if let Some(t) = c.timer.as_mut()
        && let Some(ms) = t.poll(ctx)?
    {
        state.crowd_gpu_ms = Some(ms);
    }
    let mut options = state.view_options();
    options.skeleton = false;
    options.split = false;
    // Weights and errors are one character's; the crowd shows its material or its bones.
    if !matches!(options.color_mode, ColorMode::Bones) {
        options.color_mode = ColorMode::Material;
    }
    view.prepare(
        ctx,
        &state.character,
        &camera,
        aspect,
        field_bounds,
        &options,
    );
    view.upload_overlay(ctx);
    let mut enc = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("crowd viewport"),
        });
    // Timestamps when the last ones have been read.
    let timer = c.timer.as_ref().filter(|t| !t.maps.in_flight());
    c.field
        .gpu()
        .record_compute_skinning(&mut enc, timer.map(PassTimer::compute));
    {
        let mut pass = target.begin_pass_timed(&mut enc, BACKGROUND, timer.map(PassTimer::render));
        view.record_crowd(&mut pass, c.field.gpu(), state.gpu_skinning, &options);
    }
    if let Some(t) = timer {
        t.stamps.resolve(&mut enc);
    }
    ctx.queue.submit([enc.finish()]);
    if timer.is_some()
        && let Some(t) = c.timer.as_mut()
    {
        t.maps.map_all([t.stamps.staging()]);
    }
    Ok(())
}

/// Timestamps of the crowd's compute pass and of its draw, read back without waiting (a
/// frame or two late), as the viewer's readbacks are.
struct PassTimer {
    stamps: PassStamps,
    maps: MapsInFlight,
}

impl PassTimer {
    /// None where the adapter writes no timestamps.
    fn new(ctx: &GpuContext) -> Option<PassTimer> {
        Some(PassTimer {
            stamps: PassStamps::new(ctx, 2, "crowd view timestamps")?,
            maps: MapsInFlight::default(),
        })
    }

    fn compute(&self) -> wgpu::ComputePassTimestampWrites<'_> {
        self.stamps.compute(0)
    }

    fn render(&self) -> wgpu::RenderPassTimestampWrites<'_> {
        self.stamps.render(2)
    }

    /// The passes' times once their stamps have landed (never waiting).
    fn poll(&mut self, ctx: &GpuContext) -> Result<Option<CrowdGpuMs>> {
        if !self.maps.landed(ctx, "crowd timestamps")? {
            return Ok(None);
        }
        let staging = self.stamps.staging();
        let ms = {
            let view = staging
                .get_mapped_range(..)
                .map_err(|e| crate::error::Error::Gpu(format!("get_mapped_range: {e}")))?;
            self.stamps.durations_ms(&view)
        };
        staging.unmap();
        Ok(Some(CrowdGpuMs {
            skinning_pass: ms.first().copied().flatten(),
            draw: ms.get(1).copied().flatten(),
        }))
    }
}

/// The GPU row of the crowd panel: the passes' times, or why there are none.
pub fn gpu_ms_text(ms: Option<CrowdGpuMs>) -> String {
    let Some(ms) = ms else {
        return "no timestamps on this adapter".into();
    };
    let mut parts = Vec::new();
    if let Some(d) = ms.skinning_pass {
        parts.push(format!("skinning pass {d:.2} ms"));
    }
    if let Some(d) = ms.draw {
        parts.push(format!("draw {d:.2} ms"));
    }
    match parts.is_empty() {
        true => "waiting for timestamps".into(),
        false => parts.join(" · "),
    }
}

/// The crowd's GPU passes from their timestamps (ms; None: not written this frame, as the
/// compute pass on the vertex-shader path).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CrowdGpuMs {
    /// The compute-skinning pass.
    pub skinning_pass: Option<f64>,
    /// The draw.
    pub draw: Option<f64>,
}
