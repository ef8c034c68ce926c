//! What a viewport shows, drawn headless: a [`Character`]'s current frame, skinned on the GPU
//! or taken from its CPU reference, through an [`OrbitCamera`], into an offscreen target read
//! back as an image. `skinview render`, the golden-image tests and the viewer's screenshots go
//! through here, so what the window shows can be tested without one.

use crate::camera::OrbitCamera;
use crate::character::Character;
use crate::error::{Error, Result};
use crate::gpu::{Camera, GpuContext, GpuScene, OffscreenTarget, Renderer, Skinning, Target};
use crate::gpu::{GPU_MAX_INFLUENCES, ViewUniform};
use crate::image::Rgba8;
use crate::skin::bounds;

/// Background colour of every view (linear RGB): a dark blue-grey that neither hides dark
/// textures nor glares.
pub const BACKGROUND: [f64; 3] = [0.045, 0.05, 0.06];

/// A renderer, an offscreen target and a camera uniform, reused frame after frame.
pub struct HeadlessView {
    renderer: Renderer,
    target: OffscreenTarget,
    camera: Camera,
}

impl HeadlessView {
    /// A `width × height` view with 4× MSAA (checked against the adapter's limits first).
    pub fn new(ctx: &GpuContext, width: u32, height: u32) -> Result<HeadlessView> {
        let target = OffscreenTarget::new(ctx, Target::OFFSCREEN, width, height)?;
        Ok(HeadlessView {
            renderer: Renderer::new(ctx, Target::OFFSCREEN)?,
            target,
            camera: Camera::new(ctx),
        })
    }

    /// Draw `scene` (its palette, and its CPU upload for [`Skinning::Cpu`], already written)
    /// through `camera` and read the image back.
    pub fn render(
        &mut self,
        ctx: &GpuContext,
        scene: &GpuScene,
        camera: &OrbitCamera,
        skinning: Skinning,
    ) -> Result<Rgba8> {
        self.camera
            .set(ctx, &ViewUniform::from_camera(camera, self.target.aspect()));
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("headless view"),
            });
        {
            let mut pass = self.target.begin_pass(&mut enc, BACKGROUND);
            self.renderer
                .draw_skinning(&mut pass, &self.camera, scene, skinning);
        }
        self.target.read_rgba8(ctx, enc)
    }

    /// Width / height of the image.
    pub fn aspect(&self) -> f32 {
        self.target.aspect()
    }
}

/// The influence limit to upload a character's scene with: its own, or, when only the CPU
/// result is drawn and some vertex has more influences than the GPU blends, the GPU's (the
/// GPU weights are then unused).
pub fn upload_influences(character: &Character, skinning: Skinning) -> Option<usize> {
    let k = character.max_influences();
    let widest = character.scene.max_influences();
    match skinning {
        Skinning::Cpu if k.unwrap_or(widest) > GPU_MAX_INFLUENCES => Some(GPU_MAX_INFLUENCES),
        _ => k,
    }
}

/// Render `character`'s current frame (after [`Character::update`], with CPU skinning on: the
/// camera frames the CPU-skinned bounds) at `width × height`.
pub fn render_character(
    ctx: &GpuContext,
    character: &Character,
    skinning: Skinning,
    width: u32,
    height: u32,
) -> Result<Rgba8> {
    let mut view = HeadlessView::new(ctx, width, height)?;
    let (lo, hi) = bounds(&character.outputs).ok_or_else(|| Error::NothingToRender {
        model: character.scene.name.clone(),
    })?;
    let camera = OrbitCamera::framing(lo, hi, view.aspect());
    let mut gpu = GpuScene::new(
        ctx,
        &character.scene,
        &character.frame,
        upload_influences(character, skinning),
    )?;
    gpu.update(ctx, &character.scene, &character.frame);
    if skinning == Skinning::Cpu {
        gpu.upload_skinned(ctx, &character.outputs);
    }
    view.render(ctx, &gpu, &camera, skinning)
}
