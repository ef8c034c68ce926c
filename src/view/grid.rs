//! The ground grid: lines on the plane under the model (its lowest point), spaced by a power
//! of ten so about ten to a hundred cells cover it, every tenth line stronger, the X axis red
//! and the Z axis blue where they cross the grid (as in Blender and three.js's GridHelper).

use glam::Vec3;

use crate::gpu::OverlayGeometry;

/// Grid line colour (linear RGBA, blended).
const MINOR: [f32; 4] = [0.5, 0.5, 0.55, 0.18];
const MAJOR: [f32; 4] = [0.6, 0.6, 0.65, 0.4];

/// Add a grid under the box `[min, max]` to `g` (depth-tested: the model hides it).
pub fn draw(min: Vec3, max: Vec3, g: &mut OverlayGeometry) {
    let size = crate::math::bounds_diagonal((min, max)).max(1e-3);
    let half = size * 1.5;
    // Cell: the power of ten giving 10 to 100 cells across the grid.
    let cell = 10f32.powf((2.0 * half / 10.0).log10().floor());
    let y = min.y;
    let c = (min + max) * 0.5;
    let (x0, x1) = ((c.x - half) / cell, (c.x + half) / cell);
    let (z0, z1) = ((c.z - half) / cell, (c.z + half) / cell);
    let (xa, xb) = (c.x - half, c.x + half);
    let (za, zb) = (c.z - half, c.z + half);
    for i in x0.ceil() as i64..=x1.floor() as i64 {
        let x = i as f32 * cell;
        let color = match i {
            0 => [0.25, 0.45, 1.0, 0.8],
            _ if i % 10 == 0 => MAJOR,
            _ => MINOR,
        };
        g.line(Vec3::new(x, y, za), Vec3::new(x, y, zb), color, false);
    }
    for i in z0.ceil() as i64..=z1.floor() as i64 {
        let z = i as f32 * cell;
        let color = match i {
            0 => [0.95, 0.25, 0.25, 0.8],
            _ if i % 10 == 0 => MAJOR,
            _ => MINOR,
        };
        g.line(Vec3::new(xa, y, z), Vec3::new(xb, y, z), color, false);
    }
}
