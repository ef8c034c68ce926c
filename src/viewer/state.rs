//! The viewer's state and what the panels do to it, with no window or GPU in it (the panel
//! tests drive it through egui_kittest): the loaded model, the character playing it, playback
//! (its clock in [`super::playback`]), the native rig's animation stage (layers, cross-fade,
//! IK, bone links), the view (mode, colour, overlays, selection), the camera (its framing in
//! [`super::framing`]), the picked vertex, live comparison results and the stage timings.
//! Loading a bad file keeps the previous model and shows the error.

use std::collections::VecDeque;

use glam::Vec3;

use crate::anim::CrossFade;
use crate::character::{
    Character, CharacterSetup, CharacterSpec, FadeDesc, IkGoal, Motion, Orbit, SplitSpec,
    StageTimes,
};
use crate::error::Result;
use crate::gpu::{ColorMode, PaletteSource, Skinning};
use crate::io::{Model, ModelSource};
use crate::skin::{SkinOptions, bounds};

pub use super::framing::Framing;
pub use super::playback::{BEHIND_REAL_TIME, MAX_STEP_S, Playback, STEP_S};
use crate::view::ViewOptions;

/// Frames of stage timings kept for the performance plot (4 s at 60 Hz).
pub const HISTORY_FRAMES: usize = 240;

/// What the viewport shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewMode {
    /// GPU skinning (the vertex shader).
    Gpu,
    /// The CPU reference, uploaded.
    Cpu,
    /// CPU reference left, GPU right, one camera.
    SideBySide,
    /// |GPU − CPU| per vertex as a heatmap on the GPU-skinned mesh.
    Diff,
    /// The model (left) and another file of the same character (right), both CPU-skinned at
    /// the same time, coloured by the distance between them ([`ViewerState::compare_with`]).
    AgainstFile,
}

/// The colours the viewport draws the surface in, as the colour buttons light them and the
/// status bar names them: the chosen colour mode, unless the view overrides it (the
/// difference views) or the split paints each submesh its own colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SurfaceColours {
    /// The model's own materials.
    Material,
    /// Each submesh of the split its own colour.
    Submesh,
    /// The selected bone's weights.
    Weights,
    /// Every bone its own colour, blended by weight.
    Bones,
    /// |GPU − CPU| per vertex (the difference view).
    Error,
    /// The distance to the other file ("A | B").
    Distance,
}

impl SurfaceColours {
    /// The ones a user picks (the others come with a view).
    pub const CHOSEN: [SurfaceColours; 4] = [
        SurfaceColours::Material,
        SurfaceColours::Submesh,
        SurfaceColours::Weights,
        SurfaceColours::Bones,
    ];

    /// Label in the UI.
    pub fn label(self) -> &'static str {
        match self {
            SurfaceColours::Material => "material",
            SurfaceColours::Submesh => "submesh",
            SurfaceColours::Weights => "weights",
            SurfaceColours::Bones => "bone colours",
            SurfaceColours::Error => "|GPU - CPU| error",
            SurfaceColours::Distance => "distance to B",
        }
    }
}

impl ViewMode {
    /// The modes of any model, in the order the UI lists and `V` cycles them ("A | B" is
    /// offered while another file is open, [`ViewerState::compare_with`]).
    pub const ALL: [ViewMode; 4] = [
        ViewMode::Gpu,
        ViewMode::Cpu,
        ViewMode::SideBySide,
        ViewMode::Diff,
    ];

    /// Label in the UI.
    pub fn label(self) -> &'static str {
        match self {
            ViewMode::Gpu => "GPU",
            ViewMode::Cpu => "CPU",
            ViewMode::SideBySide => "CPU | GPU",
            ViewMode::Diff => "|GPU - CPU|",
            ViewMode::AgainstFile => "A | B",
        }
    }

    /// The surface is drawn from the CPU's vertices alone (no GPU skinning to upload for).
    pub fn cpu_drawn(self) -> bool {
        matches!(self, ViewMode::Cpu | ViewMode::AgainstFile)
    }

    /// The CPU reference must be computed every frame.
    pub fn needs_cpu(self) -> bool {
        self != ViewMode::Gpu
    }

    /// The GPU result is read back every frame and compared.
    pub fn compares(self) -> bool {
        matches!(self, ViewMode::SideBySide | ViewMode::Diff)
    }
}

/// The layout the window starts in: `gpu`, `cpu`, `split` (CPU | GPU) or `diff`; "A | B"
/// needs another file and is not named.
impl crate::choice::Choice for ViewMode {
    const ALL: &'static [ViewMode] = &ViewMode::ALL;

    fn name(self) -> &'static str {
        match self {
            ViewMode::Gpu => "gpu",
            ViewMode::Cpu => "cpu",
            ViewMode::SideBySide => "split",
            ViewMode::Diff => "diff",
            ViewMode::AgainstFile => "against-file",
        }
    }

    fn help(self) -> &'static str {
        match self {
            ViewMode::Gpu => "GPU skinning",
            ViewMode::Cpu => "The CPU reference",
            ViewMode::SideBySide => "CPU | GPU side by side",
            ViewMode::Diff => "|GPU - CPU| heatmap",
            ViewMode::AgainstFile => "The model and another file of the character side by side",
        }
    }
}

/// Rate of the IK target's circle in the viewer (rad/s): a turn every ~3 s, the demo's pace.
pub const ORBIT_RATE_RAD_S: f32 = 2.0;

/// The split the viewer offers first: K of the default uniform palette, coloured by submesh.
pub fn default_split() -> SplitSpec {
    SplitSpec {
        max_bones: crate::gpu::DEFAULT_UNIFORM_BONES as usize,
        uniform_palette: false,
        color_submeshes: true,
    }
}

/// The vertex last picked in the viewport (positions read back from the GPU).
#[derive(Clone, Debug, PartialEq)]
pub struct Picked {
    /// Draw (index in the scene's draw list).
    pub draw: usize,
    /// Vertex in the draw.
    pub vertex: usize,
    /// Its GPU-skinned position (world).
    pub position: Vec3,
    /// (node, weight) of its influences, largest first.
    pub influences: Vec<(usize, f32)>,
}

/// The last finished CPU-vs-GPU comparison of a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LiveErrors {
    /// |GPU − CPU| per vertex: largest, mean, where, against the model's bounding-box
    /// diagonal at opening.
    pub errors: crate::skin::VertexErrors,
    /// Frames between the capture's submission and its result.
    pub latency_frames: u64,
    /// What the GPU side was read from.
    pub source: crate::gpu::CapturePath,
}

/// Rolling timings for the performance panel.
#[derive(Clone, Debug)]
pub struct Stats {
    /// Stage times of recent frames (oldest first).
    pub history: VecDeque<StageTimes>,
    /// Frames per second, smoothed.
    pub fps: f32,
    /// Whole frame time in ms, smoothed.
    pub frame_ms: f32,
    /// GPU submit and present time in ms (what the window measures).
    pub submit_ms: f32,
    /// Readback handling time in ms (the last frame's: the capture's draw and copies when
    /// one is submitted, reading it back when one lands).
    pub readback_ms: f32,
    /// [`Stats::readback_ms`] smoothed as [`Stats::frame_ms`] is.
    pub readback_smoothed_ms: f32,
    /// Frames drawn since the model was opened.
    pub frames: u64,
    /// Clip time advanced per wall-clock time while playing, smoothed (1: real time).
    pub real_time_share: f32,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            history: VecDeque::new(),
            fps: 0.0,
            frame_ms: 0.0,
            submit_ms: 0.0,
            readback_ms: 0.0,
            readback_smoothed_ms: 0.0,
            frames: 0,
            real_time_share: 1.0,
        }
    }
}

impl Stats {
    fn push(&mut self, t: StageTimes) {
        if self.history.len() == HISTORY_FRAMES {
            self.history.pop_front();
        }
        self.history.push_back(t);
    }

    /// Blend a playing frame's step into [`Stats::real_time_share`]: `step_s` advanced over
    /// `wall_s` of wall clock.
    pub fn real_time(&mut self, step_s: f32, wall_s: f32) {
        if wall_s > 0.0 {
            let share = (step_s / wall_s).clamp(0.0, 1.0);
            self.real_time_share = self.real_time_share * 0.8 + share * 0.2;
        }
    }

    /// A frame's readback handling time, blended into [`Stats::readback_smoothed_ms`].
    pub fn readback(&mut self, ms: f32) {
        self.readback_ms = ms;
        self.readback_smoothed_ms = self.readback_smoothed_ms * 0.9 + ms * 0.1;
    }

    /// Blend a frame time into the smoothed figures.
    pub fn frame(&mut self, dt_s: f32) {
        self.frames += 1;
        if dt_s > 0.0 && dt_s.is_finite() {
            let ms = dt_s * 1000.0;
            self.frame_ms = if self.frame_ms == 0.0 {
                ms
            } else {
                self.frame_ms * 0.9 + ms * 0.1
            };
            self.fps = 1000.0 / self.frame_ms;
        }
    }
}

/// Joints an effector turns when ticked (Blender's and Maya's two-bone default: an arm's upper
/// arm and forearm for a hand).
pub const DEFAULT_IK_CHAIN: usize = 2;

/// Joints an effector turns at most from the IK panel (CCD spreads a turn over a long chain
/// unevenly; the command line's IK effectors are not capped).
pub const MAX_IK_CHAIN: usize = 8;

/// Everything the viewer shows and edits.
pub struct ViewerState {
    /// The loaded model.
    pub model: Model,
    /// The character playing it (rebuilt when the stage settings change).
    pub character: Character,
    /// Clip playback.
    pub playback: Playback,
    /// How the character is set up: what plays (a clip, or a native rig's animation stage as
    /// the panels edit it), the split, the influence limit and the blend of both paths. The
    /// character is rebuilt from it when a set-up setting changes.
    pub setup: CharacterSetup,
    /// Colour mode, overlays, selected bone.
    pub view: ViewOptions,
    /// GPU, CPU, side by side, diff, or the model beside another file.
    pub mode: ViewMode,
    /// How the GPU skins: [`Skinning::VertexShader`] (the vertex shader) or [`Skinning::ComputePass`] (a
    /// compute pass, drawn by a plain vertex shader; storage palette only).
    pub gpu_skinning: Skinning,
    /// The camera and when it frames the model again.
    pub framing: Framing,
    /// The picked vertex.
    pub picked: Option<Picked>,
    /// The last load or setting error, shown until dismissed.
    pub error: Option<String>,
    /// The path field of the model panel (the web page's URL field): the model shown.
    pub open_path: String,
    /// The web page: a URL the model panel asked to open (the page fetches it and hands the
    /// model back, or its error).
    pub url_requested: Option<String>,
    /// A file dropped on the desktop window, waiting for the user's choice: open it, or compare
    /// the model with it ([`super::panels::drop_prompt`]).
    pub dropped: Option<String>,
    /// A model dropped on the web page (read there), waiting for the same choice.
    pub dropped_model: Option<(String, crate::io::Model)>,
    /// Where the drop prompt's "Open it", "Compare with it" and "Play its motion here" buttons
    /// are (points; the page's report gives them to scripts).
    pub prompt_buttons_at: Option<[[f32; 2]; 3]>,
    /// The web page: the URL field's centre in points (the page's report gives it to scripts).
    pub url_field_at: Option<[f32; 2]>,
    /// Timings.
    pub stats: Stats,
    /// The last live comparison.
    pub live: Option<LiveErrors>,
    /// Bumped when the character (and so the GPU scene) is rebuilt.
    pub generation: u64,
    /// Bounds of the model when it was opened (grid, camera framing).
    pub bounds: (Vec3, Vec3),
    /// Per node: its children (hierarchy tree).
    pub children: Vec<Vec<usize>>,
    /// Key times of the current clip (timeline markers).
    pub key_times: Vec<f32>,
    /// A screenshot was asked for (the window saves the next frame).
    pub screenshot_requested: bool,
    /// A setting changed that needs [`ViewerState::rebuild`]; done once, at the end of the
    /// frame's UI.
    pub rebuild_pending: bool,
    /// The adapter can read storage buffers in the vertex stage (else the uniform palette is
    /// the only GPU path; set by the window).
    pub storage_palette: bool,
    /// Without vertex-stage storage buffers: the uniform palette's size a model drawn whole
    /// uses (a native rig's stage).
    pub uniform_bones: u32,
    /// The hierarchy panel's filter: nodes whose label holds it (any case), flat.
    pub hierarchy_filter: String,
    /// The selection the hierarchy last opened and scrolled to (a new one, by a click in the
    /// viewport or on the command line, is revealed once).
    pub hierarchy_revealed: Option<usize>,
    /// Another file of the same character, compared with the model ([`ViewMode::AgainstFile`]).
    pub other: Option<crate::diff::against::OtherFile>,
    /// The path field of "compare with".
    pub compare_path: String,
    /// Another file's curves drawn over the model's, where its vertices cannot be compared
    /// (this adapter, or the model's animation stage): curves are CPU data.
    pub curves_file: Option<super::curves::CurvesFile>,
    /// The selected bone's influence, and the character generation it was made for.
    influence: Option<(u64, crate::info::BoneInfluence)>,
    /// The crowd view: this many copies of the model (None: the one character).
    pub crowd: Option<u32>,
    /// The crowd's last frame (characters, in view, stage, upload).
    pub crowd_stats: Option<crate::view::crowd_field::FieldStats>,
    /// The crowd's GPU passes from timestamps (None: the adapter writes none, or not yet).
    pub crowd_gpu_ms: Option<super::crowd::CrowdGpuMs>,
    /// The crowd's animation level of detail: characters small on screen or out of view are
    /// animated less often ([`crate::view::crowd_field::lod_period`]).
    pub crowd_lod: bool,
    /// The curves panel: open or not, its bones, forms and last views.
    pub curves: super::curves::CurvesPanel,
    /// The key help overlay is open (`?`).
    pub help: bool,
    /// The side panels shown: left (model, animation, hierarchy) and right (bone, settings,
    /// performance); `H` hides or shows both.
    pub side_panels: [bool; 2],
    /// While the window is too narrow for side panels beside the viewport: which panels were
    /// shown when it became so ([`ViewerState::fit_side_panels`] hid them; they come back
    /// when it widens). `None` while it is wide enough.
    pub side_panels_narrowed: Option<[bool; 2]>,
    /// The selected bone's motion trail (`T`).
    pub trail: super::trail::MotionTrail,
    /// Draw the IK chains with their weights and each limited joint's box (`L`).
    pub show_limits: bool,
    /// The character's rest and bind poses (the bone panel's figures; None when the rest pose
    /// does not evaluate).
    pub poses: Option<crate::poses::ReferencePoses>,
    /// The IK panel's end-bone filter.
    pub ik_bone_filter: String,
    /// Another character's motion played on the model (the Motion panel).
    pub motion: Option<super::motion::MotionSource>,
}

impl ViewerState {
    /// Open `model`; `demo` runs the built-in humanoid's demo set-up on a native humanoid
    /// (the built-in humanoid always opens with it, however it is named).
    pub fn new(model: Model, demo: bool) -> Result<ViewerState> {
        model.scene.require_draws()?;
        let anim = (!model.scene.animations.is_empty()).then_some(0);
        let demo = demo || model.source == ModelSource::Builtin(crate::builtin::Builtin::Humanoid);
        let setup = CharacterSetup {
            looping: true,
            ..match (&model.rig, demo) {
                (Some(_), true) => CharacterSetup::humanoid_demo(),
                (Some(_), false) => CharacterSetup::stage(CharacterSpec::single(
                    anim.map(|a| motion_ref(&model.scene, a)),
                )),
                (None, _) => CharacterSetup::clip(anim),
            }
        };
        let character = model.character(&setup)?;
        let mut state = ViewerState {
            open_path: model.source.label(),
            url_requested: None,
            dropped: None,
            dropped_model: None,
            prompt_buttons_at: None,
            url_field_at: None,
            model,
            character,
            playback: Playback::new(anim),
            setup,
            view: ViewOptions {
                grid: true,
                ..Default::default()
            },
            mode: ViewMode::Gpu,
            framing: Framing::default(),
            picked: None,
            error: None,
            stats: Stats::default(),
            live: None,
            generation: 0,
            bounds: (Vec3::splat(-1.0), Vec3::splat(1.0)),
            children: Vec::new(),
            key_times: Vec::new(),
            screenshot_requested: false,
            rebuild_pending: false,
            storage_palette: true,
            uniform_bones: crate::gpu::DEFAULT_UNIFORM_BONES,
            gpu_skinning: Skinning::VertexShader,
            hierarchy_filter: String::new(),
            hierarchy_revealed: None,
            other: None,
            compare_path: String::new(),
            curves_file: None,
            influence: None,
            crowd: None,
            crowd_stats: None,
            crowd_gpu_ms: None,
            crowd_lod: true,
            curves: super::curves::CurvesPanel::default(),
            help: false,
            side_panels: [true, true],
            side_panels_narrowed: None,
            trail: super::trail::MotionTrail::default(),
            show_limits: false,
            poses: None,
            ik_bone_filter: String::new(),
            motion: None,
        };
        state.after_rebuild(true)?;
        Ok(state)
    }

    /// Whether anything plays: a clip in the file, or a native rig's stage (a model with no
    /// animation shows no clock and no Play button).
    pub fn has_clock(&self) -> bool {
        self.stage().is_some() || !self.character.scene.animations.is_empty()
    }

    /// The length of `node`'s bone (a native rig's; 0 for a glTF joint, whose tip is its origin).
    pub fn bone_length_m(&self, node: usize) -> f32 {
        self.character
            .bones
            .as_ref()
            .and_then(|b| b.get(node))
            .map_or(0.0, |b| b.length_m)
    }

    /// The most joints an effector on `end` can turn: its ancestors, and itself when it has a
    /// length (at most [`MAX_IK_CHAIN`]).
    pub fn ik_chain_max(&self, end: usize) -> usize {
        let ancestors = self.character.scene.depth(end);
        (ancestors + usize::from(self.bone_length_m(end) > 0.0)).min(MAX_IK_CHAIN)
    }

    /// The effector "effector" adds: on the selected joint (else the deepest leaf joint),
    /// turning [`DEFAULT_IK_CHAIN`] joints (fewer near the root), its target where its tip is
    /// now, so ticking the box moves nothing. None when the model has no joint that can turn.
    pub fn effector_goal(&self) -> Option<IkGoal> {
        let scene = &self.character.scene;
        let is_joint = crate::view::skeleton::joint_flags(scene);
        let end = self
            .view
            .selected_node
            .filter(|&n| is_joint.get(n) == Some(&true))
            .or_else(|| deepest_leaf_joint(scene))?;
        let max = self.ik_chain_max(end);
        let tip = Vec3::new(self.bone_length_m(end), 0.0, 0.0);
        let target_m = self
            .character
            .frame
            .model_from_node
            .get(end)?
            .transform_point3(tip);
        (max > 0).then(|| IkGoal {
            end_bone: scene.node_label(end),
            chain_length: DEFAULT_IK_CHAIN.min(max),
            target_m,
            weight: 1.0,
        })
    }

    /// The IK panel's end-bone list: the skeleton's joints whose label holds the filter (any
    /// case), in node order.
    pub fn ik_bone_choices(&self) -> Vec<String> {
        let scene = &self.character.scene;
        let is_joint = crate::view::skeleton::joint_flags(scene);
        let filter = self.ik_bone_filter.trim().to_lowercase();
        (0..scene.nodes.len())
            .filter(|&n| is_joint[n])
            .map(|n| scene.node_label(n))
            .filter(|l| filter.is_empty() || l.to_lowercase().contains(&filter))
            .collect()
    }

    /// The native rig's animation stage, when one plays.
    pub fn stage(&self) -> Option<&CharacterSpec> {
        self.setup.stage_spec()
    }

    /// The animation stage, to edit (a rebuild applies the edit).
    pub fn stage_mut(&mut self) -> Option<&mut CharacterSpec> {
        self.setup.stage_spec_mut()
    }

    /// Rebuild the character from the set-up (a setting that changes the skeleton or the
    /// weights: layers, IK set-up, links, the influence limit, the split, the clip of a glTF).
    /// The new character runs one frame before it replaces the old one: on failure nothing
    /// changes (the caller restores its set-up or shows the error).
    pub fn rebuild(&mut self) -> Result<()> {
        let mut next = self.model.character(&self.setup)?;
        next.update(self.playback.time_s, 0.0)?;
        self.character = next;
        self.after_rebuild(false)
    }

    /// Skin with `options` from now on, both paths (no rebuild: the next frame uses them).
    pub fn set_skin_options(&mut self, options: SkinOptions) {
        self.setup.skin = options;
        self.character.set_skin_options(options);
    }

    /// Ask for a rebuild at the end of this frame's UI (several edits, one rebuild).
    pub fn request_rebuild(&mut self) {
        self.rebuild_pending = true;
    }

    /// Rebuild if asked; a failure restores `previous` (the set-up before this frame's edits)
    /// and shows the error.
    pub fn apply_pending(&mut self, previous: Option<CharacterSetup>) {
        if !std::mem::take(&mut self.rebuild_pending) {
            return;
        }
        if let Err(e) = self.rebuild() {
            self.error = Some(e.to_string());
            if let Some(setup) = previous {
                self.setup = setup;
            }
        }
    }

    /// Where the GPU reads the palette now: the split's choice (native rigs are drawn whole,
    /// through the storage buffer).
    pub fn palette_source(&self) -> PaletteSource {
        match self.setup.split {
            Some(s) if s.uniform_palette => PaletteSource::Uniform {
                bones: s.max_bones as u32,
            },
            _ if self.storage_palette => PaletteSource::Storage,
            // Drawn whole where the vertex stage has no storage buffers (a native rig's stage).
            _ => PaletteSource::Uniform {
                bones: self.uniform_bones,
            },
        }
    }

    /// Adapt to an adapter without vertex-stage storage buffers: the uniform palette of
    /// `max_k` matrices at most (64 by default), the mesh partitioned when it is a glTF
    /// model. Set-up time.
    pub fn use_uniform_palette_only(&mut self, max_k: usize) -> Result<()> {
        self.storage_palette = false;
        self.uniform_bones = crate::gpu::DEFAULT_UNIFORM_BONES.min(max_k as u32);
        if self.setup.stage_spec().is_some() {
            // The stage rewrites the weights every frame: drawn whole (rule 7 of the set-up).
            return self.rebuild();
        }
        if self.setup.split.is_some_and(|s| !s.uniform_palette) {
            self.error = Some(
                "this adapter cannot read storage buffers in the vertex stage: the split is \
                 drawn through the uniform palette"
                    .into(),
            );
        }
        let split = self.setup.split;
        self.setup.split = Some(SplitSpec {
            max_bones: split
                .map_or(default_split().max_bones, |s| s.max_bones)
                .min(max_k),
            uniform_palette: true,
            color_submeshes: split.is_some_and(|s| s.color_submeshes),
        });
        self.rebuild()
    }

    /// Set a layer's weight in place (no rebuild: the weight is read every frame).
    pub fn set_layer_weight(&mut self, layer: usize, weight: f32) {
        if let Some(d) = self
            .setup
            .stage_spec_mut()
            .and_then(|s| s.layers.get_mut(layer))
            && weight.is_finite()
        {
            d.weight = weight.max(0.0);
            self.character.set_layer_weight(layer, d.weight);
        }
    }

    fn after_rebuild(&mut self, new_model: bool) -> Result<()> {
        self.generation += 1;
        self.picked = None;
        self.live = None;
        let scene = &self.character.scene;
        self.children = vec![Vec::new(); scene.nodes.len()];
        for (i, n) in scene.nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                self.children[p].push(i);
            }
        }
        if self
            .view
            .selected_node
            .is_some_and(|n| n >= scene.nodes.len())
        {
            self.view.selected_node = None;
        }
        self.update_key_times();
        self.poses = crate::poses::ReferencePoses::new(&self.character.scene).ok();
        // A first frame (with CPU skinning) gives the bounds the camera and the grid use.
        let cpu = self.character.cpu_skinning;
        self.character.cpu_skinning = true;
        self.character.update(self.playback.time_s, 0.0)?;
        self.character.cpu_skinning = cpu;
        if new_model && let Some(b) = bounds(&self.character.outputs) {
            self.bounds = b;
            let clip_points = self.clip_frame_points()?;
            self.framing.open(b, clip_points);
        }
        Ok(())
    }

    /// The points the playing clip reaches over its whole length (CPU-skinned, at 30 samples
    /// a second: [`crate::view::clip_frame_points`]), what opening frames; None for a native
    /// rig's stage or without a clip. The character is left at the playback time.
    fn clip_frame_points(&mut self) -> Result<Option<Vec<glam::Vec3>>> {
        let (Some(anim), None) = (self.playback.anim, self.setup.stage_spec()) else {
            return Ok(None);
        };
        let Some(clip) = self.character.scene.animations.get(anim) else {
            return Ok(None);
        };
        let duration = clip.duration_s();
        let cpu = self.character.cpu_skinning;
        self.character.cpu_skinning = true;
        let points = crate::view::clip_frame_points(&mut self.character, duration, false);
        let back = self.character.update(self.playback.time_s, 0.0);
        self.character.cpu_skinning = cpu;
        back?;
        Ok(Some(points?))
    }

    /// The selected bone's influence on the skin ([`crate::info::BoneInfluence`]), made once
    /// per selection and model.
    pub fn selected_influence(&mut self) -> Option<&crate::info::BoneInfluence> {
        let node = self.view.selected_node?;
        let fresh = self
            .influence
            .as_ref()
            .is_some_and(|(g, b)| *g == self.generation && b.node == node);
        if !fresh {
            let b = crate::info::BoneInfluence::of(&self.character.scene, node);
            self.influence = Some((self.generation, b));
        }
        self.influence.as_ref().map(|(_, b)| b)
    }

    /// Frame the current frame at `aspect` ([`Framing::frame`]): the selected bone's vertices
    /// (and its joint) when the framing asks for the selection, else the whole model.
    pub fn frame_view(&mut self, aspect: f32) {
        let bone = match self.framing.frame_selection {
            true => self.selected_influence().cloned(),
            false => None,
        };
        self.framing.frame(&self.character, bone.as_ref(), aspect);
    }

    /// Whether the model walked out of the view at `aspect` ([`Framing::left_view`]).
    pub fn model_left_view(&self, aspect: f32) -> bool {
        self.framing.left_view(&self.character, aspect)
    }

    /// Open a model by path or `builtin:` name. On failure the current model stays and the
    /// error is kept for the window (and returned).
    pub fn open(&mut self, text: &str) -> Result<()> {
        let loaded = ModelSource::parse(text.trim()).and_then(|s| s.load());
        self.open_loaded(loaded, text.trim())
    }

    /// Show `loaded` (a model read elsewhere: the web page's files) as [`ViewerState::open`]
    /// does, or its error prefixed by `label`, keeping the current model.
    pub fn open_loaded(&mut self, loaded: Result<Model>, label: &str) -> Result<()> {
        let result = loaded.and_then(|model| {
            let demo = false;
            let next = ViewerState::new(model, demo)?;
            Ok(next)
        });
        match result {
            Ok(next) => {
                let generation = self.generation;
                let (mode, gpu_skinning) = (self.mode, self.gpu_skinning);
                let (split, storage) = (self.setup.split, self.storage_palette);
                let uniform_bones = self.uniform_bones;
                let (side_panels, narrowed) = (self.side_panels, self.side_panels_narrowed);
                let (trail_shown, show_limits) = (self.trail.shown, self.show_limits);
                *self = next;
                self.show_limits = show_limits;
                self.generation = generation + 1;
                self.side_panels = side_panels;
                self.side_panels_narrowed = narrowed;
                self.trail.shown = trail_shown;
                // A comparison belongs to the model it was made for.
                self.mode = match mode {
                    ViewMode::AgainstFile => ViewMode::Gpu,
                    m => m,
                };
                self.gpu_skinning = gpu_skinning;
                // The split and palette path carry over to the new model (not to a native
                // rig's stage, drawn whole).
                self.storage_palette = storage;
                self.uniform_bones = uniform_bones;
                let drawn_whole = self.setup.stage_spec().is_some();
                let result = if split.is_some() && !drawn_whole {
                    self.setup.split = split;
                    self.rebuild()
                } else if !storage && !drawn_whole {
                    // From a native rig (drawn whole) to a glTF model on an adapter without
                    // vertex-stage storage buffers: split it for the uniform palette.
                    self.use_uniform_palette_only(uniform_bones as usize)
                } else {
                    Ok(())
                };
                if let Err(e) = result {
                    // Set-up and character back in step: drawn whole.
                    self.error = Some(format!("{}: {e}", label.trim()));
                    self.setup.split = None;
                }
                Ok(())
            }
            Err(e) => {
                self.error = Some(load_error(label.trim(), &e));
                Err(e)
            }
        }
    }

    /// Compare the model with another file of the same character (a path or `builtin:`
    /// name): both play side by side, coloured by the distance between them. The model must
    /// play a clip (a native rig's animation stage has nothing to pair), and the adapter must
    /// read storage buffers in the vertex stage. On failure the view stays as it was and the
    /// error is kept (and returned).
    pub fn compare_with(&mut self, text: &str) -> Result<()> {
        let label = text.trim();
        if self.compare_refusal().is_some() {
            return self.compare_curves_with(label);
        }
        let loaded = ModelSource::parse(label)
            .and_then(|s| s.load())
            .and_then(|model| {
                crate::diff::against::OtherFile::new(
                    label,
                    model.scene,
                    &self.character,
                    &self.setup,
                    self.playback.anim,
                )
            });
        let before = (self.other.take(), self.mode);
        let result = loaded.and_then(|other| {
            self.other = Some(other);
            self.mode = ViewMode::AgainstFile;
            self.tick(0.0)
        });
        if let Err(e) = &result {
            (self.other, self.mode) = before;
            self.error = Some(load_error(label, e));
        }
        result
    }

    /// Draw another file's curves over the model's in the curves panel (opened), without its
    /// vertices: what [`ViewerState::compare_with`] does where those cannot be compared.
    pub fn compare_curves_with(&mut self, label: &str) -> Result<()> {
        match ModelSource::parse(label).and_then(|s| s.load()) {
            Ok(model) => {
                let file =
                    super::curves::CurvesFile::new(label, model.scene, &self.character.scene);
                self.curves_file = Some(file);
                self.curves.open = true;
                Ok(())
            }
            Err(e) => {
                self.error = Some(load_error(label, &e));
                Err(e)
            }
        }
    }

    /// Why the model cannot be compared with another file now (None: it can).
    pub fn compare_refusal(&self) -> Option<&'static str> {
        if self.stage().is_some() {
            Some("the model plays its animation stage (layers, IK); comparing pairs clips")
        } else if !self.storage_palette {
            Some(
                "this adapter has no storage buffers in the vertex stage, which the other file is drawn with",
            )
        } else {
            None
        }
    }

    /// Stop comparing with another file: back to the GPU view.
    pub fn stop_comparing(&mut self) {
        self.other = None;
        self.curves_file = None;
        if self.mode == ViewMode::AgainstFile {
            self.mode = ViewMode::Gpu;
        }
    }

    /// Duration of the current clip (0 for the rest pose).
    pub fn duration_s(&self) -> f32 {
        self.playback.duration_s(&self.character, self.stage())
    }

    pub(super) fn update_key_times(&mut self) {
        self.key_times = self.key_times_of(None);
    }

    /// The key times (sorted, each once) of the clips playing: of every channel, or of the
    /// channels that drive `node` only.
    pub fn key_times_of(&self, node: Option<usize>) -> Vec<f32> {
        self.playback.key_times(&self.character, self.stage(), node)
    }

    /// The selected bone's key times (empty when none is selected or it has no keys).
    pub fn selected_key_times(&self) -> Vec<f32> {
        self.view
            .selected_node
            .map_or_else(Vec::new, |n| self.key_times_of(Some(n)))
    }

    /// Play clip `anim` (glTF models; native rigs set layers instead).
    pub fn set_anim(&mut self, anim: Option<usize>) {
        let chosen = self.playback.select(anim);
        // A glTF model on the stage for IK: its one layer plays the clip chosen.
        if chosen && self.model.rig.is_none() {
            let motion = anim.map(|a| motion_ref(&self.model.scene, a));
            if let Some(stage) = self.setup.stage_spec_mut() {
                stage.layers = CharacterSpec::single(motion).layers;
                if let Err(e) = self.rebuild() {
                    self.error = Some(e.to_string());
                }
                self.update_key_times();
                return;
            }
        }
        // A native rig's stage plays its layers: only the clock follows the choice.
        if chosen && self.stage().is_none() {
            let looping = self.playback.looping;
            self.setup.motion = anim.map_or(Motion::Rest, Motion::Clip);
            if let Err(e) = self.character.set_clip(anim, looping) {
                self.error = Some(e.to_string());
            }
            self.update_key_times();
        }
    }

    /// Jump to `time_s` (not before 0; glTF clips: not past their end).
    pub fn scrub(&mut self, time_s: f32) {
        let end_s = self.stage().is_none().then(|| self.duration_s());
        self.playback.scrub(time_s, end_s);
    }

    /// Step `frames` frames of [`STEP_S`] forward (negative: back), or with `by_key` to the
    /// next (previous) key time of the clip instead; playback pauses, as in Blender.
    pub fn step(&mut self, frames: i32, by_key: bool) {
        // The selected bone's keys when it has some (Blender's jump to keyframe), else every
        // key.
        let own = match by_key {
            true => self.selected_key_times(),
            false => Vec::new(),
        };
        let keys = if own.is_empty() {
            &self.key_times
        } else {
            &own
        };
        let target = self
            .playback
            .step_to(frames, by_key.then_some(keys.as_slice()));
        self.scrub(target);
    }

    /// Play or pause. Playing hands the morph weights held by hand back to the clip.
    pub fn toggle_play(&mut self) {
        self.playback.toggle();
        if self.clip_drives_morphs() {
            self.character.release_morph_overrides();
        }
    }

    /// Whether a playing clip sets the morph weights (a weight dragged then is held only while
    /// dragged; paused, or with no clip, it stays where it is put).
    pub fn clip_drives_morphs(&self) -> bool {
        self.playback.playing && self.playback.anim.is_some() && self.has_clock()
    }

    /// Advance the clock by `dt_s` (when playing) and run the animation stage; the CPU skins
    /// only when the view needs it.
    pub fn tick(&mut self, dt_s: f32) -> Result<()> {
        let step = self.playback.advance(dt_s, self.duration_s());
        if step.played {
            self.stats.real_time(step.dt_s, step.wall_s);
        }
        if step.wrapped {
            // Back to the start: incremental IK must not blend from the loop's end.
            self.character.restart();
        }
        self.character.cpu_skinning = self.mode.needs_cpu();
        let times = self
            .character
            .update(self.playback.time_s, step.dt_s.max(1e-4))?;
        self.stats.push(times);
        if self.mode == ViewMode::AgainstFile
            && let Some(other) = self.other.as_mut()
            && let Err(e) = other.follow(
                &self.character,
                &self.setup,
                self.generation,
                self.playback.anim,
                self.playback.time_s,
            )
        {
            // Once: the comparison stops and says why (a clip B lacks, a file that fails).
            let label = other.label.clone();
            self.stop_comparing();
            self.error = Some(format!("{label}: {e}"));
        }
        Ok(())
    }

    /// The view options this frame draws with.
    pub fn view_options(&self) -> ViewOptions {
        let against = self.mode == ViewMode::AgainstFile;
        ViewOptions {
            color_mode: if self.mode == ViewMode::Diff || against {
                ColorMode::Errors
            } else {
                self.view.color_mode
            },
            skinning: if self.mode == ViewMode::Cpu || against {
                Skinning::Cpu
            } else {
                self.gpu_skinning
            },
            split: self.split_view(),
            ..self.view
        }
    }

    /// The colours the surface is drawn in now ([`SurfaceColours`]).
    pub fn surface_colours(&self) -> SurfaceColours {
        if self.mode == ViewMode::AgainstFile {
            return SurfaceColours::Distance;
        }
        // The colour mode the frame draws with (the difference view's override included).
        match self.view_options().color_mode {
            ColorMode::Errors => SurfaceColours::Error,
            ColorMode::Weights => SurfaceColours::Weights,
            ColorMode::Bones => SurfaceColours::Bones,
            ColorMode::Material if self.setup.split.is_some_and(|s| s.color_submeshes) => {
                SurfaceColours::Submesh
            }
            ColorMode::Material => SurfaceColours::Material,
        }
    }

    /// Draw the surface in `colours`: a difference view gives way to the GPU view, and the
    /// submesh colours turn on or off with the split's own switch (a rebuild). Submesh colours
    /// without a split, and the colours that come with a view, change nothing.
    pub fn choose_colours(&mut self, colours: SurfaceColours) {
        let color_mode = match colours {
            SurfaceColours::Material | SurfaceColours::Submesh => ColorMode::Material,
            SurfaceColours::Weights => ColorMode::Weights,
            SurfaceColours::Bones => ColorMode::Bones,
            SurfaceColours::Error | SurfaceColours::Distance => return,
        };
        if colours == SurfaceColours::Submesh && self.setup.split.is_none() {
            return;
        }
        if matches!(self.mode, ViewMode::Diff | ViewMode::AgainstFile) {
            self.mode = ViewMode::Gpu;
        }
        self.view.color_mode = color_mode;
        if let Some(split) = self.setup.split.as_mut()
            && matches!(colours, SurfaceColours::Material | SurfaceColours::Submesh)
            && split.color_submeshes != (colours == SurfaceColours::Submesh)
        {
            split.color_submeshes = colours == SurfaceColours::Submesh;
            self.request_rebuild();
        }
    }

    /// What plays: the clip's name, "rest pose", or the animation stage's layers.
    pub fn motion_label(&self) -> String {
        if let Some(spec) = self.stage() {
            let layers = crate::info::count(spec.layers.len(), "layer", "layers");
            return format!("animation stage ({layers})");
        }
        let animations = &self.character.scene.animations;
        match self.playback.anim.and_then(|a| animations.get(a)) {
            Some(a) => a.name.clone().unwrap_or_else(|| "(unnamed clip)".into()),
            None => "rest pose".into(),
        }
    }

    /// The viewport shows two halves (CPU | GPU, or the model | the other file).
    pub fn split_view(&self) -> bool {
        matches!(self.mode, ViewMode::SideBySide | ViewMode::AgainstFile)
    }

    /// Hide the side panels when the window becomes too narrow for them beside the viewport
    /// (`narrow`, from the layout each frame), and show those that were shown again when it
    /// widens, with any the user opened meanwhile. On a narrow window a panel still opens by
    /// hand (`H`, the status bar's `«` and `»`), taking room from the viewport.
    pub fn fit_side_panels(&mut self, narrow: bool) {
        match (narrow, self.side_panels_narrowed) {
            (true, None) => {
                self.side_panels_narrowed = Some(self.side_panels);
                self.side_panels = [false; 2];
            }
            (false, Some(shown)) => {
                self.side_panels_narrowed = None;
                self.side_panels = [0, 1].map(|i| shown[i] || self.side_panels[i]);
            }
            _ => {}
        }
    }

    /// Select a bone (node), or none.
    pub fn select(&mut self, node: Option<usize>) {
        self.view.selected_node = node.filter(|&n| n < self.character.scene.nodes.len());
    }

    /// The IK target, when the rig has an effector.
    pub fn ik_target(&self) -> Option<Vec3> {
        self.character
            .ik
            .as_ref()
            .and_then(|ik| ik.effectors.first())
            .map(|e| e.target_model)
    }

    /// Move the IK target (stops the demo's orbit); the settings keep it for rebuilds.
    pub fn set_ik_target(&mut self, target: Vec3) {
        if !target.is_finite() {
            return;
        }
        if let Some(ik) = self.character.ik.as_mut() {
            ik.orbit = None;
            for e in &mut ik.effectors {
                e.target_model = target;
            }
        }
        if let Some(s) = self.stage_mut() {
            s.orbit = None;
            if let Some(goal) = s.ik.first_mut() {
                goal.target_m = target;
            }
        }
    }

    /// Add a cross-fade between the first two layers, change it, or remove it. Changing its
    /// times applies in place; turning it on or off rebuilds (at the end of the frame).
    pub fn set_fade(&mut self, on: bool, start_s: f32, duration_s: f32) {
        let Some(s) = self.setup.stage_spec_mut() else {
            return;
        };
        let was_on = s.fade.is_some();
        let fade = CrossFade {
            start_s: if start_s.is_finite() { start_s } else { 0.0 },
            duration_s: if duration_s.is_finite() {
                duration_s.max(0.0)
            } else {
                0.0
            },
        };
        s.fade = (on && s.layers.len() >= 2).then_some(FadeDesc {
            from: 0,
            to: 1,
            fade,
        });
        match (was_on, s.fade.is_some()) {
            (true, true) => self.character.set_fade_times(fade),
            (false, false) => {}
            _ => self.request_rebuild(),
        }
    }

    /// The joints in words, as `info` counts them: the model's own joints, and the bone
    /// links inserted at set-up apart ("18 joints + 16 bone links").
    pub fn joint_summary(&self) -> String {
        let all = self.character.scene.joint_count();
        match self.character.links.as_ref().map_or(0, |l| l.links.len()) {
            0 => crate::info::count(all, "joint", "joints"),
            links => format!(
                "{} + {}",
                crate::info::count(all.saturating_sub(links), "joint", "joints"),
                crate::info::count(links, "bone link", "bone links")
            ),
        }
    }

    /// Node names for lists (index order), unnamed nodes as `node N` (N: the file's index,
    /// what the command line and `info` take): [`crate::scene::Scene::node_label`].
    pub fn node_label(&self, n: usize) -> String {
        self.character.scene.node_label(n)
    }
}

/// A file's load error for the panel, the label once (most errors name the file already).
fn load_error(label: &str, e: &crate::error::Error) -> String {
    let message = e.to_string();
    let name = crate::io::file_label(std::path::Path::new(label));
    if message.starts_with(&format!("{name}: ")) {
        message
    } else {
        format!("{label}: {message}")
    }
}

/// Animation `a` of `scene` as the panels show it: by name when it has one (a name of digits
/// alone would read as an index: such a clip is named by its index).
pub fn motion_ref(scene: &crate::scene::Scene, a: usize) -> crate::character::MotionRef {
    use crate::character::MotionRef;
    scene
        .animations
        .get(a)
        .and_then(|c| c.name.clone())
        .filter(|n| !n.is_empty() && n.parse::<usize>().is_err())
        .map_or(MotionRef::Index(a), MotionRef::Name)
}

/// The deepest leaf of the skeleton (a joint with no joint below it; ties: the first), the
/// end bone an effector takes when no joint is selected.
pub fn deepest_leaf_joint(scene: &crate::scene::Scene) -> Option<usize> {
    let n = scene.nodes.len();
    let is_joint = crate::view::skeleton::joint_flags(scene);
    // A glTF joint may carry meshes: only joints below count.
    let mut has_child = vec![false; n];
    for (c, node) in scene.nodes.iter().enumerate() {
        if let Some(p) = node.parent
            && is_joint[c]
        {
            has_child[p] = true;
        }
    }
    let depth = scene.depths();
    (0..n)
        .filter(|&i| is_joint[i] && !has_child[i] && depth[i] > 0)
        .max_by(|&a, &b| depth[a].cmp(&depth[b]).then(b.cmp(&a)))
}

/// The IK target's circle around `centre_m` in the viewer: a tenth of the model's size.
pub fn orbit_around(model: &Model, centre_m: Vec3) -> Orbit {
    Orbit {
        centre_m,
        radius_m: 0.1 * model_size(model),
        rate_rad_s: ORBIT_RATE_RAD_S,
    }
}

/// The diagonal of the model's rest-pose bounds (0.1 for an empty one): the scale of default
/// distances such as the IK target's circle.
fn model_size(model: &Model) -> f32 {
    let mut lo = Vec3::splat(f32::INFINITY);
    let mut hi = Vec3::splat(f32::NEG_INFINITY);
    for d in &model.scene.draws {
        for p in &model.scene.primitive(d).positions {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
    }
    let size = (hi - lo).length();
    if size.is_finite() && size > 0.0 {
        size
    } else {
        0.1
    }
}
