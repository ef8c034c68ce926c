//! The motion trail: the selected bone's path over the clip, as animators draw it in Blender
//! (Motion Paths) and Maya (motion trails), sampled once per bone and clip and kept.

use glam::Vec3;

use crate::frame::FrameState;
use crate::gpu::OverlayGeometry;
use crate::scene::Scene;

/// Samples over the clip: smooth at 30 fps clips up to 4 s, and cheap (one hierarchy pass
/// each) to make again when the bone or clip changes.
pub const TRAIL_SAMPLES: usize = 121;
/// The trail's colour (linear RGBA): warm white, apart from bones and ghosts.
const TRAIL_COLOR: [f32; 4] = [1.0, 0.9, 0.6, 1.0];

/// The trail toggle and the last path made.
#[derive(Clone, Debug, Default)]
pub struct MotionTrail {
    /// Drawn (`T`).
    pub shown: bool,
    /// The path made for (character generation, node, clip): model-space joint positions at
    /// [`TRAIL_SAMPLES`] times from 0 to the clip's duration.
    path: Option<((u64, usize, usize), Vec<Vec3>)>,
}

impl MotionTrail {
    /// The path of `node` over clip `anim` of `scene` (made when the key changed). Sampling is
    /// the clip alone, without layers or IK; None when it does not evaluate.
    pub fn path(&mut self, scene: &Scene, generation: u64, node: usize, anim: usize) -> &[Vec3] {
        let key = (generation, node, anim);
        if self.path.as_ref().is_none_or(|(k, _)| *k != key) {
            self.path = Some((key, sample(scene, node, anim).unwrap_or_default()));
        }
        self.path.as_ref().map_or(&[], |(_, p)| p.as_slice())
    }
}

/// Node `node`'s model-space position at [`TRAIL_SAMPLES`] even times over clip `anim`.
fn sample(scene: &Scene, node: usize, anim: usize) -> Option<Vec<Vec3>> {
    let duration = scene.animations.get(anim)?.duration_s();
    let mut frame = FrameState::new(scene);
    let mut path = Vec::with_capacity(TRAIL_SAMPLES);
    for i in 0..TRAIL_SAMPLES {
        let t = duration * i as f32 / (TRAIL_SAMPLES - 1) as f32;
        frame.evaluate(scene, Some(anim), t).ok()?;
        path.push(frame.model_from_node.get(node)?.w_axis.truncate());
    }
    Some(path)
}

/// Add `path` to `g` as a polyline with a tick every tenth of the clip, `size` long.
pub fn draw(path: &[Vec3], size: f32, g: &mut OverlayGeometry) {
    for w in path.windows(2) {
        g.line(w[0], w[1], TRAIL_COLOR, true);
    }
    let step = (path.len() / 10).max(1);
    for p in path.iter().step_by(step) {
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            g.line(*p - axis * size, *p + axis * size, TRAIL_COLOR, true);
        }
    }
}
