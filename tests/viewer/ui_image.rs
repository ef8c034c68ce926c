//! A panel drawn to pixels: egui run headless for a few passes (layout settles), tessellated
//! and drawn by egui-wgpu (the viewer's own renderer) into an RGBA8 texture on the test
//! adapter, then read back. For golden images of panels.

use skinview::gpu::GpuContext;
use skinview::image::Rgba8;

/// Passes egui runs before the image is taken (the first lays out grids and plots).
const PASSES: usize = 4;

/// `ui` drawn at `size` points (one pixel a point) on `ctx`.
pub fn render(ctx: &GpuContext, size: (u32, u32), mut ui: impl FnMut(&mut egui::Ui)) -> Rgba8 {
    let (w, h) = size;
    let egui_ctx = egui::Context::default();
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(w as f32, h as f32),
        )),
        ..Default::default()
    };
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let mut renderer =
        egui_wgpu::Renderer::new(&ctx.device, format, egui_wgpu::RendererOptions::default());
    let mut shapes = Vec::new();
    for _ in 0..PASSES {
        let mut out = egui_ctx.run_ui(input.clone(), |root| {
            egui::CentralPanel::default().show(root, |panel| ui(panel));
        });
        for (id, deltas) in &out.textures_delta.set {
            for delta in deltas {
                renderer.update_texture(&ctx.device, &ctx.queue, *id, delta);
            }
        }
        for id in &out.textures_delta.free {
            renderer.free_texture(id);
        }
        out.textures_delta.clear();
        shapes = out.shapes;
    }
    let primitives = egui_ctx.tessellate(shapes, 1.0);
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("panel image"),
        size: wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = texture.create_view(&Default::default());
    let (enc, user) =
        skinview::viewer::record_egui_pass(ctx, &mut renderer, &view, [w, h], &primitives, 1.0);
    ctx.queue.submit(user);
    let (commands, pending) =
        skinview::gpu::target::copy_texture_rgba8(ctx, enc, &texture).expect("copy the panel");
    ctx.queue.submit([commands]);
    pending.read(ctx).expect("read the panel back")
}
