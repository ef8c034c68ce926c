//! Where the viewer's camera looks and when it frames the model again: on opening (over the
//! whole clip, so nothing it reaches leaves the view), on `F` (the current pose; the selected
//! bone's vertices when one is selected, as Blender's "frame selected"), and, in a view the
//! user has not panned or zoomed, when the model walks out of it or the view changes shape (the
//! window resized, the side panels laid out, a split view joined or parted). No window in it: the
//! viewport asks at its own aspect ([`Framing::due`], [`super::state::ViewerState::frame_view`]).

use glam::Vec3;

use crate::camera::OrbitCamera;
use crate::character::Character;
use crate::info::BoneInfluence;
use crate::skin::bounds;

/// The camera and when it frames the model.
#[derive(Clone, Debug)]
pub struct Framing {
    /// The camera (orbit, pan, zoom).
    pub camera: OrbitCamera,
    /// Frame the model on the next drawn frame, at the view's own aspect: set on load and by
    /// `F` ([`Framing::request`]).
    pub reframe: bool,
    /// The user panned or zoomed since the last framing: the view then stays where they put
    /// it, even if the model walks out of it, until `F`.
    pub user_framed: bool,
    /// The next framing frames the selected bone (`F` with a bone selected), not the model.
    pub frame_selection: bool,
    /// The aspect of the view last framed (0 before the first framing).
    pub framed_aspect: f32,
    /// The points the clip reaches ([`crate::view::clip_frame_points`]), set on opening:
    /// every framing but `F`'s holds them beside the current pose.
    pub clip_points: Option<Vec<Vec3>>,
    /// The next framing is `F`'s: the current pose alone.
    pub current_pose: bool,
}

/// A change of the view's aspect by more than this fraction frames the model again (when the
/// user has not framed it): a window resized by a pixel or two keeps the camera still.
pub const RESHAPE_TOLERANCE: f32 = 0.02;

impl Default for Framing {
    /// A unit box framed at a common window shape, to be framed again on the first frame.
    fn default() -> Self {
        Framing {
            camera: OrbitCamera::framing(Vec3::splat(-1.0), Vec3::splat(1.0), 1.0),
            reframe: true,
            user_framed: false,
            frame_selection: false,
            framed_aspect: 0.0,
            clip_points: None,
            current_pose: false,
        }
    }
}

impl Framing {
    /// A model opened with bounds `lo..hi`: a first framing at a common window shape (16:9);
    /// the viewport frames again at its own on the first frame, over `clip_points` when given
    /// (what the clip reaches) rather than the current pose.
    pub fn open(&mut self, (lo, hi): (Vec3, Vec3), clip_points: Option<Vec<Vec3>>) {
        self.camera = OrbitCamera::framing(lo, hi, 16.0 / 9.0);
        self.reframe = true;
        self.user_framed = false;
        self.clip_points = clip_points.filter(|p| p.len() >= 2);
        self.current_pose = false;
    }

    /// Frame on the next drawn frame (`F`): the selected bone when `selection`.
    pub fn request(&mut self, selection: bool) {
        self.reframe = true;
        self.frame_selection = selection;
        self.current_pose = true;
    }

    /// Whether to frame `character` now at `aspect`: asked for, or, in a view the user left
    /// alone, the view changed shape or the model walked out of it.
    pub fn due(&self, character: &Character, aspect: f32) -> bool {
        self.reframe
            || (!self.user_framed && (self.reshaped(aspect) || self.left_view(character, aspect)))
    }

    /// Whether `aspect` differs from the last framed view's by more than
    /// [`RESHAPE_TOLERANCE`].
    pub fn reshaped(&self, aspect: f32) -> bool {
        (aspect / self.framed_aspect.max(1e-6) - 1.0).abs() > RESHAPE_TOLERANCE
    }

    /// Orbit by (`yaw`, `pitch`) radians (the view still follows the model).
    pub fn orbit(&mut self, yaw: f32, pitch: f32) {
        self.camera.orbit(yaw, pitch);
    }

    /// Pan by (`dx` right, `dy` up) view heights: the user's framing from now on.
    pub fn pan(&mut self, dx: f32, dy: f32) {
        self.camera.pan(dx, dy);
        self.user_framed = true;
    }

    /// Zoom by `factor` (< 1: closer): the user's framing from now on.
    pub fn zoom(&mut self, factor: f32) {
        self.camera.zoom(factor);
        self.user_framed = true;
    }

    /// Frame `character`'s current skinned vertices at `aspect` (one view's width / height)
    /// so they fill [`crate::camera::FRAME_FILL`] of it ([`OrbitCamera::fit`]): those `bone`
    /// moves (and its joint) when given. The CPU skins them for this when it does not run
    /// every frame.
    pub fn frame(&mut self, character: &Character, bone: Option<&BoneInfluence>, aspect: f32) {
        let c = character;
        let skinned;
        let outputs = if c.cpu_skinning {
            &c.outputs
        } else {
            match c.skin_current_with(c.skin_options(0)) {
                Ok(o) => {
                    skinned = o;
                    &skinned
                }
                Err(_) => &c.outputs,
            }
        };
        let mut points: Vec<Vec3> = Vec::new();
        if let Some(b) = bone {
            // A selected bone: the vertices it moves, and its joint.
            for (d, vertices) in &b.draw_vertices {
                let Some(out) = outputs.get(*d) else { continue };
                points.extend(
                    vertices
                        .iter()
                        .filter_map(|&v| out.positions.get(v as usize)),
                );
            }
            points.extend(
                c.frame
                    .model_from_node
                    .get(b.node)
                    .map(|m| m.w_axis.truncate()),
            );
        }
        let close_up = points.len() >= 2;
        if !close_up {
            points = outputs
                .iter()
                .flat_map(|o| o.positions.iter().copied())
                .collect();
            // The joints too: the view then holds every point the walk-out check tests.
            points.extend(joint_positions(c));
            // But for `F`, everything the clip reaches too.
            if let (false, Some(clip)) = (self.current_pose, &self.clip_points) {
                points.extend(clip.iter().copied());
            }
        }
        let whole = bounds(outputs);
        self.camera.fit(&points, aspect, crate::camera::FRAME_FILL);
        if close_up && let Some((lo, hi)) = whole {
            // Depth planes and zoom limits for the whole model, not the bone's vertices.
            self.camera.scene_center = (lo + hi) * 0.5;
            self.camera.scene_radius_m = ((hi - lo).length() * 0.5).max(1e-4);
        }
        self.reframe = false;
        self.frame_selection = false;
        self.framed_aspect = aspect;
        self.current_pose = false;
        // A close-up of a bone stays put (the rest of the model is meant to be out of view).
        self.user_framed = close_up;
    }

    /// Whether a joint of `character`'s current pose is outside the view at `aspect`: the
    /// model walked out of it (joints, not vertices, so the check costs nothing when the CPU
    /// does not skin).
    pub fn left_view(&self, character: &Character, aspect: f32) -> bool {
        let joints: Vec<Vec3> = joint_positions(character).collect();
        !self.camera.sees_all(&joints, aspect)
    }
}

/// Where every skin's joints are in `character`'s current pose (model space).
fn joint_positions(character: &Character) -> impl Iterator<Item = Vec3> + '_ {
    let m = &character.frame.model_from_node;
    character
        .scene
        .skins
        .iter()
        .flat_map(|s| s.joints.iter().filter_map(|&j| m.get(j)))
        .map(|m| m.w_axis.truncate())
}
