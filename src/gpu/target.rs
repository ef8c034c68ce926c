//! An offscreen render target (MSAA colour, its single-sample resolve, depth) that a
//! [`super::Renderer`] draws into and that reads back as [`Rgba8`]: how `skinview render`,
//! the golden images and the viewer's screenshots get pixels. Textures are made once per size
//! and reused across frames.

use super::context::GpuContext;
use super::render::Target;
use crate::error::{Error, Result};
use crate::image::Rgba8;

/// Colour textures, depth and the size they were made for.
pub struct OffscreenTarget {
    target: Target,
    width: u32,
    height: u32,
    /// Multisampled colour (when `samples > 1`).
    msaa: Option<wgpu::TextureView>,
    /// Single-sample colour: the resolve target, read back or sampled by a UI.
    resolve: wgpu::Texture,
    resolve_view: wgpu::TextureView,
    /// The resolved colour viewed without sRGB decoding (for egui, which expects encoded
    /// values), when the target is sRGB and the device can reinterpret it.
    raw_view: Option<wgpu::TextureView>,
    depth: Option<wgpu::TextureView>,
    generation: u64,
}

/// Whether `ctx`'s device can view an sRGB texture as its plain format (GL cannot).
pub fn can_view_as_raw(ctx: &GpuContext) -> bool {
    ctx.adapter
        .get_downlevel_capabilities()
        .flags
        .contains(wgpu::DownlevelFlags::VIEW_FORMATS)
}

/// A target whose resolved colour egui can show: sRGB viewed raw where the device can, else a
/// plain RGBA8 target the shaders write sRGB-encoded values into.
pub fn display_target(ctx: &GpuContext) -> Target {
    let target = if can_view_as_raw(ctx) {
        Target::OFFSCREEN
    } else {
        Target {
            format: wgpu::TextureFormat::Rgba8Unorm,
            ..Target::OFFSCREEN
        }
    };
    // WebGL2 has no multisampled textures: wgpu makes MSAA attachments renderbuffers, which
    // ANGLE allocates lazily, and Chromium's software WebGL (SwiftShader) fails that
    // allocation and loses the context. The page's WebGL2 view draws without MSAA.
    if cfg!(target_arch = "wasm32") && ctx.info.backend == wgpu::Backend::Gl {
        return Target {
            samples: 1,
            ..target
        };
    }
    target
}

/// Check a render size against the adapter before any texture is made.
pub fn check_size(ctx: &GpuContext, width: u32, height: u32) -> Result<()> {
    let max = ctx.device.limits().max_texture_dimension_2d;
    if width == 0 || height == 0 || width > max || height > max {
        return Err(Error::RenderSize { width, height, max });
    }
    Ok(())
}

impl OffscreenTarget {
    /// Textures of `width × height` for `target`. Target formats must be readable as
    /// 4 bytes per pixel to use [`OffscreenTarget::read_rgba8`].
    pub fn new(ctx: &GpuContext, target: Target, width: u32, height: u32) -> Result<Self> {
        check_size(ctx, width, height)?;
        let device = &ctx.device;
        let size = wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        };
        let tex = |label, format, samples, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size,
                mip_level_count: 1,
                sample_count: samples,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let attach = wgpu::TextureUsages::RENDER_ATTACHMENT;
        let msaa = (target.samples > 1).then(|| {
            tex("msaa colour", target.format, target.samples, attach)
                .create_view(&Default::default())
        });
        // The resolved colour can also be viewed without sRGB decoding (egui samples user
        // textures as already-encoded values), where the device can reinterpret formats.
        let raw_format = target.format.remove_srgb_suffix();
        let reinterpret = raw_format != target.format && can_view_as_raw(ctx);
        let view_formats = [raw_format];
        let resolve = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("colour"),
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: target.format,
            usage: attach | wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: if reinterpret { &view_formats } else { &[] },
        });
        let resolve_view = resolve.create_view(&Default::default());
        let raw_view = reinterpret.then(|| {
            resolve.create_view(&wgpu::TextureViewDescriptor {
                format: Some(raw_format),
                ..Default::default()
            })
        });
        let depth = target
            .depth
            .map(|f| tex("depth", f, target.samples, attach).create_view(&Default::default()));
        ctx.check()?;
        Ok(OffscreenTarget {
            target,
            width,
            height,
            msaa,
            resolve,
            resolve_view,
            raw_view,
            depth,
            generation: 0,
        })
    }

    /// Make the textures again when the size changed (a window or panel resize).
    pub fn resize(&mut self, ctx: &GpuContext, width: u32, height: u32) -> Result<()> {
        if (width, height) != (self.width, self.height) {
            let generation = self.generation + 1;
            *self = OffscreenTarget::new(ctx, self.target, width, height)?;
            self.generation = generation;
        }
        Ok(())
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Width / height.
    pub fn aspect(&self) -> f32 {
        self.width as f32 / self.height as f32
    }

    /// The single-sample colour texture (after the pass: the resolved image).
    pub fn color_view(&self) -> &wgpu::TextureView {
        &self.resolve_view
    }

    /// The resolved colour as stored (sRGB-encoded bytes, no decoding on sampling): what egui
    /// displays as a user texture. Right for a non-sRGB target (the shaders encode) or an sRGB
    /// one viewed raw; see [`display_target`].
    pub fn display_view(&self) -> &wgpu::TextureView {
        self.raw_view.as_ref().unwrap_or(&self.resolve_view)
    }

    /// Begin a pass that clears to `clear` (linear RGB) and resolves into the colour texture.
    pub fn begin_pass<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        clear: [f64; 3],
    ) -> wgpu::RenderPass<'e> {
        self.begin_pass_timed(encoder, clear, None)
    }

    /// [`OffscreenTarget::begin_pass`] writing timestamps at the pass's start and end.
    pub fn begin_pass_timed<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        clear: [f64; 3],
        timestamps: Option<wgpu::RenderPassTimestampWrites<'_>>,
    ) -> wgpu::RenderPass<'e> {
        // A plain displayable target holds sRGB-encoded values, as its shaders write them
        // (`ENCODE_SRGB`): the clear colour is encoded the same way.
        let encode = |c: f64| {
            if super::render::stores_encoded_srgb(self.target.format) {
                crate::image::linear_to_srgb(c)
            } else {
                c
            }
        };
        let [r, g, b] = clear.map(encode);
        let (view, resolve_target, store) = match &self.msaa {
            Some(m) => (m, Some(&self.resolve_view), wgpu::StoreOp::Discard),
            None => (&self.resolve_view, None, wgpu::StoreOp::Store),
        };
        encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("offscreen"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a: 1.0 }),
                    store,
                },
            })],
            depth_stencil_attachment: self.depth.as_ref().map(|view| {
                wgpu::RenderPassDepthStencilAttachment {
                    view,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }
            }),
            timestamp_writes: timestamps,
            occlusion_query_set: None,
            multiview_mask: None,
        })
    }

    /// Submit `encoder` with a copy of the colour texture appended, wait, and return the
    /// pixels as RGBA8 (BGRA formats are swizzled). Blocking: for tools and tests.
    pub fn read_rgba8(&self, ctx: &GpuContext, encoder: wgpu::CommandEncoder) -> Result<Rgba8> {
        let pending = copy_texture_rgba8(ctx, encoder, &self.resolve)?;
        ctx.queue.submit([pending.0]);
        pending.1.read(ctx)
    }

    /// Bumped each time the textures are made again (views held elsewhere must be renewed).
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

/// A texture copy on its way to the CPU (see [`copy_texture_rgba8`]).
pub struct PendingImage {
    buffer: wgpu::Buffer,
    width: u32,
    height: u32,
    padded_row: u32,
    bgra: bool,
}

impl PendingImage {
    /// Wait for the copy (the command buffer must have been submitted) and unpack it.
    pub fn read(&self, ctx: &GpuContext) -> Result<Rgba8> {
        ctx.map_read_with(&self.buffer, |bytes| self.unpack(bytes))
    }

    /// The padded rows of the mapped copy as RGBA8 (BGRA swizzled).
    fn unpack(&self, bytes: &[u8]) -> Rgba8 {
        let (w, h) = (self.width as usize, self.height as usize);
        let mut pixels = Vec::with_capacity(w * h * 4);
        for y in 0..h {
            let start = y * self.padded_row as usize;
            let line = &bytes[start..start + w * 4];
            if self.bgra {
                pixels.extend(line.chunks_exact(4).flat_map(|p| [p[2], p[1], p[0], p[3]]));
            } else {
                pixels.extend_from_slice(line);
            }
        }
        Rgba8 {
            width: self.width,
            height: self.height,
            pixels,
        }
    }
}

/// Append a copy of `texture` (a 4-byte-per-pixel RGBA or BGRA format with `COPY_SRC`) into a
/// mappable buffer to `encoder`; returns the finished command buffer to submit and the pending
/// image to read after it.
pub fn copy_texture_rgba8(
    ctx: &GpuContext,
    mut encoder: wgpu::CommandEncoder,
    texture: &wgpu::Texture,
) -> Result<(wgpu::CommandBuffer, PendingImage)> {
    use wgpu::TextureFormat as F;
    let format = texture.format();
    let bgra = matches!(format, F::Bgra8Unorm | F::Bgra8UnormSrgb);
    if !bgra && !matches!(format, F::Rgba8Unorm | F::Rgba8UnormSrgb) {
        return Err(Error::Gpu(format!("cannot read {format:?} back as RGBA8")));
    }
    let (w, h) = (texture.width(), texture.height());
    // Rows padded to COPY_BYTES_PER_ROW_ALIGNMENT for the texture→buffer copy.
    let padded_row =
        (w * 4).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("image readback"),
        size: padded_row as u64 * h as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded_row),
                rows_per_image: Some(h),
            },
        },
        wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
    );
    Ok((
        encoder.finish(),
        PendingImage {
            buffer,
            width: w,
            height: h,
            padded_row,
            bgra,
        },
    ))
}
