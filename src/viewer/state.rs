//! The viewer's state and what the panels do to it, with no window or GPU in it (the panel
//! tests drive it through egui_kittest): the loaded model, the character playing it, playback,
//! the native rig's animation stage (layers, cross-fade, IK, bone links), the view (mode,
//! colour, overlays, camera, selection), the picked vertex, live comparison results and the
//! stage timings. Loading a bad file keeps the previous model and shows the error.

use std::collections::VecDeque;

use glam::Vec3;

use crate::anim::CrossFade;
use crate::camera::OrbitCamera;
use crate::character::{
    Character, CharacterSpec, FadeDesc, IkGoal, LayerDesc, MaskSpec, Orbit, StageTimes,
};
use crate::error::Result;
use crate::gpu::{ColorMode, PaletteSource, Skinning};
use crate::ik::IkMode;
use crate::io::{Model, ModelSource};
use crate::partition::PartitionedScene;
use crate::skin::{SkinOptions, bounds};
use crate::view::ViewOptions;

/// What a failed rebuild restores: stage settings, influence limit, partition.
pub type Settings = (Option<StageSettings>, Option<usize>, PartitionSettings);

/// Frames of stage timings kept for the performance plot (4 s at 60 Hz).
pub const HISTORY_FRAMES: usize = 240;

/// Longest frame step the playback takes (s): after a stall (a file dialog, a debugger) the
/// animation resumes instead of jumping, and IK's velocity limit sees a sane `dt`.
pub const MAX_STEP_S: f32 = 0.1;

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
}

impl ViewMode {
    /// Every mode, in the order the UI lists them.
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
        }
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

/// Clip playback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Playback {
    /// The clip (glTF) or, for native rigs, the clip of the first layer; `None`: rest pose.
    pub anim: Option<usize>,
    /// Current time.
    pub time_s: f32,
    /// Advancing with the clock.
    pub playing: bool,
    /// Time scale (1 = real time).
    pub speed: f32,
    /// Wrap at the clip's end (else stop there).
    pub looping: bool,
}

/// The animation stage of a native rig, as the panels edit it.
#[derive(Clone, Debug, PartialEq)]
pub struct StageSettings {
    /// Motion layers on bone masks.
    pub layers: Vec<LayerDesc>,
    /// A cross-fade between two layers.
    pub fade: Option<FadeDesc>,
    /// One IK goal (end bone, chain, target, weight).
    pub ik: Option<IkGoal>,
    /// Reference-based or incremental IK.
    pub ik_mode: IkMode,
    /// Respect the rig's joint limits.
    pub ik_limits: bool,
    /// The target circles (the demo's driver) until the user drags it.
    pub ik_orbit: bool,
    /// Insert the bone links the rig asks for.
    pub links: bool,
}

impl StageSettings {
    /// One full-body layer of `motion` (none when the rig has no motions), links on (what a
    /// native rig opens with).
    pub fn single(motion: Option<usize>) -> StageSettings {
        StageSettings {
            layers: motion
                .map(|m| LayerDesc {
                    motion: m.to_string(),
                    mask: MaskSpec::All,
                    weight: 1.0,
                })
                .into_iter()
                .collect(),
            fade: None,
            ik: None,
            ik_mode: IkMode::Incremental,
            ik_limits: true,
            ik_orbit: false,
            links: true,
        }
    }

    /// The built-in humanoid's demo (walk→run on the lower body, throw above, left-hand IK
    /// circling its target, links).
    pub fn humanoid_demo() -> StageSettings {
        let spec = CharacterSpec::humanoid_demo();
        let mut ik = spec.ik.into_iter().next();
        // The demo circles this centre (CharacterSpec::humanoid_demo's orbit).
        if let (Some(goal), Some(orbit)) = (ik.as_mut(), spec.orbit) {
            goal.target_m = orbit.centre_m;
        }
        StageSettings {
            layers: spec.layers,
            fade: spec.fade,
            ik,
            ik_mode: spec.ik_settings.mode,
            ik_limits: true,
            ik_orbit: spec.orbit.is_some(),
            links: spec.links,
        }
    }

    fn spec(&self, size_m: f32) -> CharacterSpec {
        let mut spec = CharacterSpec::single("0");
        spec.layers = self.layers.clone();
        spec.fade = self.fade;
        spec.ik = self.ik.iter().cloned().collect();
        spec.ik_settings.mode = self.ik_mode;
        spec.links = self.links;
        spec.orbit = match (self.ik_orbit, &self.ik) {
            // Around the goal, a tenth of the model's size, a turn every ~3 s (the demo's pace).
            (true, Some(goal)) => Some(Orbit {
                centre_m: goal.target_m,
                radius_m: 0.1 * size_m,
                rate_rad_s: 2.0,
            }),
            _ => None,
        };
        spec
    }

    /// When the stage's timeline ends: the longest clip, or the cross-fade's end if later.
    fn loop_end_s(&self, clip_s: f32) -> f32 {
        let fade_end = self
            .fade
            .map_or(0.0, |f| f.fade.start_s + f.fade.duration_s);
        clip_s.max(fade_end)
    }
}

/// The mesh partition for a bounded palette (glTF models; native rigs rewrite their weights
/// with bone links every rebuild, so they are drawn whole).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionSettings {
    /// `Some(K)`: every skinned mesh split into submeshes of at most K bones.
    pub k: Option<usize>,
    /// Draw through the uniform palette (K matrices per draw) instead of the storage buffer.
    pub uniform: bool,
    /// Each submesh its own colour.
    pub colors: bool,
}

impl Default for PartitionSettings {
    fn default() -> Self {
        PartitionSettings {
            k: None,
            uniform: false,
            colors: true,
        }
    }
}

impl PartitionSettings {
    /// Where the GPU reads the palette with these settings.
    pub fn source(&self) -> PaletteSource {
        match (self.uniform, self.k) {
            (true, Some(k)) => PaletteSource::Uniform { bones: k as u32 },
            _ => PaletteSource::Storage,
        }
    }
}

/// What the last partition made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionSummary {
    /// Submesh draws.
    pub submeshes: usize,
    /// Their lower bound, summed over primitives (⌈bones used / K⌉).
    pub lower_bound: usize,
    /// Vertices before and after (border vertices are duplicated).
    pub vertices: (usize, usize),
    /// Influences dropped to fit faces into K bones.
    pub dropped: usize,
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
    /// Largest |GPU − CPU| (model units).
    pub max: f32,
    /// Mean over every vertex.
    pub mean: f32,
    /// Where the largest is: draw and vertex.
    pub worst: (usize, usize),
    /// The model's bounding-box diagonal (errors are read relative to it).
    pub diagonal: f32,
    /// Frames between the capture's submission and its result.
    pub latency_frames: u64,
    /// What the GPU side was read from.
    pub source: crate::gpu::AsyncSource,
}

/// Rolling timings for the performance panel.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Stage times of recent frames (oldest first).
    pub history: VecDeque<StageTimes>,
    /// Frames per second, smoothed.
    pub fps: f32,
    /// Whole frame time in ms, smoothed.
    pub frame_ms: f32,
    /// GPU submit and present time in ms (what the window measures).
    pub submit_ms: f32,
    /// Readback handling time in ms.
    pub readback_ms: f32,
    /// Frames drawn since the model was opened.
    pub frames: u64,
}

impl Stats {
    fn push(&mut self, t: StageTimes) {
        if self.history.len() == HISTORY_FRAMES {
            self.history.pop_front();
        }
        self.history.push_back(t);
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

/// Everything the viewer shows and edits.
pub struct ViewerState {
    /// The loaded model.
    pub model: Model,
    /// The character playing it (rebuilt when the stage settings change).
    pub character: Character,
    /// Clip playback.
    pub playback: Playback,
    /// Native rigs: the animation stage.
    pub stage: Option<StageSettings>,
    /// Colour mode, overlays, selected bone.
    pub view: ViewOptions,
    /// GPU, CPU, side by side or diff.
    pub mode: ViewMode,
    /// How the GPU skins: [`Skinning::Gpu`] (the vertex shader) or [`Skinning::Compute`] (a
    /// compute pass, drawn by a plain vertex shader; storage palette only).
    pub gpu_skinning: Skinning,
    /// The camera (orbit, pan, zoom).
    pub camera: OrbitCamera,
    /// Influence limit of both paths (`None`: every weight).
    pub max_influences: Option<usize>,
    /// The picked vertex.
    pub picked: Option<Picked>,
    /// The last load or setting error, shown until dismissed.
    pub error: Option<String>,
    /// The path field of the model panel.
    pub open_path: String,
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
    /// The mesh partition and palette path.
    pub partition: PartitionSettings,
    /// What the current partition made (`None`: drawn whole).
    pub partition_summary: Option<PartitionSummary>,
    /// The adapter can read storage buffers in the vertex stage (else the uniform palette is
    /// the only GPU path; set by the window).
    pub storage_palette: bool,
    /// How both paths skin (blend mode, normals); kept across rebuilds.
    pub skin: SkinOptions,
}

impl ViewerState {
    /// Open `model`; `demo` runs the built-in humanoid's demo set-up on a native humanoid.
    pub fn new(model: Model, demo: bool) -> Result<ViewerState> {
        let anim = (!model.scene.animations.is_empty()).then_some(0);
        let stage = model.rig.as_ref().map(|_| {
            if demo {
                StageSettings::humanoid_demo()
            } else {
                StageSettings::single(anim)
            }
        });
        let size = model_size(&model);
        let partition = PartitionSettings::default();
        let (character, partition_summary) =
            Self::make_character(&model, stage.as_ref(), anim, None, &partition, size)?;
        let mut state = ViewerState {
            open_path: model.source.label(),
            model,
            character,
            playback: Playback {
                anim,
                time_s: 0.0,
                playing: true,
                speed: 1.0,
                looping: true,
            },
            stage,
            view: ViewOptions {
                grid: true,
                ..Default::default()
            },
            mode: ViewMode::Gpu,
            camera: OrbitCamera::framing(Vec3::splat(-1.0), Vec3::splat(1.0), 1.0),
            max_influences: None,
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
            partition,
            partition_summary,
            storage_palette: true,
            skin: SkinOptions::default(),
            gpu_skinning: Skinning::Gpu,
        };
        state.after_rebuild(true)?;
        Ok(state)
    }

    fn make_character(
        model: &Model,
        stage: Option<&StageSettings>,
        anim: Option<usize>,
        max_influences: Option<usize>,
        partition: &PartitionSettings,
        size_m: f32,
    ) -> Result<(Character, Option<PartitionSummary>)> {
        let mut summary = None;
        let mut c = match (&model.rig, stage, partition.k) {
            (Some(rig), Some(s), _) => Character::from_rig(&rig.scene, &s.spec(size_m))?,
            (_, _, Some(k)) => {
                let mut part = PartitionedScene::new(&model.scene, k)?;
                if partition.colors {
                    part.color_submeshes();
                }
                let stats = part.primitives.iter().map(|p| &p.partition.stats);
                summary = Some(PartitionSummary {
                    submeshes: part.submesh_count(),
                    lower_bound: stats.clone().map(|s| s.lower_bound).sum(),
                    vertices: (
                        stats.clone().map(|s| s.vertices_in).sum(),
                        stats.map(|s| s.vertices_out).sum(),
                    ),
                    dropped: part.dropped_influences(),
                });
                Character::from_scene(part.scene, anim, true)?
            }
            _ => Character::from_scene(model.scene.clone(), anim, true)?,
        };
        if let (Some(s), Some(ik)) = (stage, c.ik.as_mut())
            && !s.ik_limits
        {
            ik.limits.iter_mut().for_each(|l| *l = None);
        }
        c.set_max_influences(max_influences);
        Ok((c, summary))
    }

    /// Rebuild the character from the current settings (a setting that changes the skeleton
    /// or the weights: layers, IK set-up, links, the influence limit, the clip of a glTF). The
    /// new character runs one frame before it replaces the old one: on failure nothing
    /// changes (the caller restores its settings or shows the error).
    pub fn rebuild(&mut self) -> Result<()> {
        let (mut next, summary) = Self::make_character(
            &self.model,
            self.stage.as_ref(),
            self.playback.anim,
            self.max_influences,
            &self.partition,
            model_size(&self.model),
        )?;
        next.set_skin_options(self.skin);
        next.update(self.playback.time_s, 0.0)?;
        self.character = next;
        self.partition_summary = summary;
        self.after_rebuild(false)
    }

    /// Skin with `options` from now on, both paths (no rebuild: the next frame uses them).
    pub fn set_skin_options(&mut self, options: SkinOptions) {
        self.skin = options;
        self.character.set_skin_options(options);
    }

    /// Ask for a rebuild at the end of this frame's UI (several edits, one rebuild).
    pub fn request_rebuild(&mut self) {
        self.rebuild_pending = true;
    }

    /// Rebuild if asked; a failure restores the previous stage settings and influence limit
    /// and shows the error.
    pub fn apply_pending(&mut self, previous: Option<Settings>) {
        if !std::mem::take(&mut self.rebuild_pending) {
            return;
        }
        if let Err(e) = self.rebuild() {
            self.error = Some(e.to_string());
            if let Some((stage, k, partition)) = previous {
                self.stage = stage;
                self.max_influences = k;
                self.partition = partition;
            }
        }
    }

    /// The settings [`ViewerState::apply_pending`] restores on failure.
    pub fn settings(&self) -> Settings {
        (self.stage.clone(), self.max_influences, self.partition)
    }

    /// Where the GPU reads the palette now: the partition's choice, except that native rigs
    /// (drawn whole) use the storage buffer wherever the adapter has one.
    pub fn palette_source(&self) -> PaletteSource {
        if self.stage.is_some() && self.storage_palette {
            PaletteSource::Storage
        } else {
            self.partition.source()
        }
    }

    /// Adapt to an adapter without vertex-stage storage buffers: the uniform palette of
    /// `max_k` matrices at most (64 by default), the mesh partitioned when it is a glTF
    /// model. Set-up time.
    pub fn use_uniform_palette_only(&mut self, max_k: usize) -> Result<()> {
        self.storage_palette = false;
        let k = crate::gpu::DEFAULT_UNIFORM_BONES as usize;
        if self.partition.k.is_some() && !self.partition.uniform {
            self.error = Some(
                "this adapter cannot read storage buffers in the vertex stage: the split is \
                 drawn through the uniform palette"
                    .into(),
            );
        }
        self.partition = PartitionSettings {
            k: Some(self.partition.k.unwrap_or(k).min(max_k)),
            uniform: true,
            colors: self.partition.colors && self.partition.k.is_some(),
        };
        self.rebuild()
    }

    /// Set a layer's weight in place (no rebuild: the weight is read every frame).
    pub fn set_layer_weight(&mut self, layer: usize, weight: f32) {
        if let (Some(s), Some(l)) = (self.stage.as_mut(), self.character.layers.get_mut(layer))
            && let Some(d) = s.layers.get_mut(layer)
            && weight.is_finite()
        {
            d.weight = weight.max(0.0);
            l.weight = d.weight;
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
        // A first frame (with CPU skinning) gives the bounds the camera and the grid use.
        let cpu = self.character.cpu_skinning;
        self.character.cpu_skinning = true;
        self.character.update(self.playback.time_s, 0.0)?;
        self.character.cpu_skinning = cpu;
        if new_model && let Some(b) = bounds(&self.character.outputs) {
            self.bounds = b;
            self.camera = OrbitCamera::framing(b.0, b.1, 16.0 / 9.0);
        }
        Ok(())
    }

    /// Open a model by path or `builtin:` name. On failure the current model stays and the
    /// error is kept for the window (and returned).
    pub fn open(&mut self, text: &str) -> Result<()> {
        let result = ModelSource::parse(text.trim())
            .and_then(|s| s.load())
            .and_then(|model| {
                let demo = false;
                let next = ViewerState::new(model, demo)?;
                Ok(next)
            });
        match result {
            Ok(next) => {
                let generation = self.generation;
                let (mode, gpu_skinning) = (self.mode, self.gpu_skinning);
                let (partition, storage) = (self.partition, self.storage_palette);
                *self = next;
                self.generation = generation + 1;
                self.mode = mode;
                self.gpu_skinning = gpu_skinning;
                // The partition and palette path carry over to the new model.
                self.storage_palette = storage;
                if partition != self.partition {
                    self.partition = partition;
                    if let Err(e) = self.rebuild() {
                        // Settings and character back in step: drawn whole (through the
                        // uniform palette only where nothing else runs).
                        self.error = Some(format!("{}: {e}", text.trim()));
                        self.partition = PartitionSettings {
                            uniform: !storage,
                            k: (!storage).then_some(partition.k).flatten(),
                            ..PartitionSettings::default()
                        };
                    }
                }
                Ok(())
            }
            Err(e) => {
                self.error = Some(format!("{}: {e}", text.trim()));
                Err(e)
            }
        }
    }

    /// Duration of the current clip (0 for the rest pose).
    pub fn duration_s(&self) -> f32 {
        let scene = &self.character.scene;
        match &self.stage {
            // Native rigs: the longest layer clip, or the end of the cross-fade.
            Some(stage) => stage.loop_end_s(
                self.character
                    .layers
                    .iter()
                    .filter_map(|l| scene.animations.get(l.anim))
                    .map(|a| a.duration_s())
                    .fold(0.0, f32::max),
            ),
            None => self
                .playback
                .anim
                .and_then(|a| scene.animations.get(a))
                .map_or(0.0, |a| a.duration_s()),
        }
    }

    fn update_key_times(&mut self) {
        self.key_times.clear();
        let scene = &self.character.scene;
        let anims: Vec<usize> = match &self.stage {
            Some(_) => self.character.layers.iter().map(|l| l.anim).collect(),
            None => self.playback.anim.into_iter().collect(),
        };
        for a in anims {
            if let Some(anim) = scene.animations.get(a) {
                for ch in &anim.channels {
                    self.key_times.extend_from_slice(&ch.sampler.times_s);
                }
            }
        }
        self.key_times.sort_by(f32::total_cmp);
        self.key_times.dedup();
    }

    /// Play clip `anim` (glTF models; native rigs set layers instead).
    pub fn set_anim(&mut self, anim: Option<usize>) {
        if self.playback.anim != anim {
            self.playback.anim = anim;
            self.playback.time_s = 0.0;
            if self.stage.is_none() {
                let looping = self.playback.looping;
                if let Err(e) = self.character.set_clip(anim, looping) {
                    self.error = Some(e.to_string());
                }
                self.update_key_times();
            }
        }
    }

    /// Jump to `time_s` (not before 0; glTF clips: not past their end).
    pub fn scrub(&mut self, time_s: f32) {
        let d = self.duration_s();
        let t = if time_s.is_finite() {
            time_s.max(0.0)
        } else {
            0.0
        };
        self.playback.time_s = if self.stage.is_none() {
            t.min(d.max(0.0))
        } else {
            t
        };
    }

    /// Play or pause.
    pub fn toggle_play(&mut self) {
        self.playback.playing = !self.playback.playing;
    }

    /// Advance the clock by `dt_s` (when playing) and run the animation stage; the CPU skins
    /// only when the view needs it.
    pub fn tick(&mut self, dt_s: f32) -> Result<()> {
        let dt = if dt_s.is_finite() {
            dt_s.clamp(0.0, MAX_STEP_S)
        } else {
            0.0
        };
        if self.playback.playing {
            let d = self.duration_s();
            let p = &mut self.playback;
            p.time_s = (p.time_s + dt * p.speed).max(0.0);
            if d > 0.0 && p.time_s > d {
                if p.looping {
                    p.time_s = p.time_s.rem_euclid(d);
                    // Back to the start: incremental IK must not blend from the loop's end.
                    self.character.restart();
                } else {
                    p.time_s = d;
                    p.playing = false;
                }
            }
        }
        self.character.cpu_skinning = self.mode.needs_cpu();
        let times = self.character.update(self.playback.time_s, dt.max(1e-4))?;
        self.stats.push(times);
        Ok(())
    }

    /// The view options this frame draws with.
    pub fn view_options(&self) -> ViewOptions {
        ViewOptions {
            color_mode: if self.mode == ViewMode::Diff {
                ColorMode::Errors
            } else {
                self.view.color_mode
            },
            skinning: if self.mode == ViewMode::Cpu {
                Skinning::Cpu
            } else {
                self.gpu_skinning
            },
            split: self.mode == ViewMode::SideBySide,
            ..self.view
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
        if let Some(s) = self.stage.as_mut() {
            s.ik_orbit = false;
            if let Some(goal) = s.ik.as_mut() {
                goal.target_m = target;
            }
        }
    }

    /// Add a cross-fade between the first two layers, change it, or remove it. Changing its
    /// times applies in place; turning it on or off rebuilds (at the end of the frame).
    pub fn set_fade(&mut self, on: bool, start_s: f32, duration_s: f32) {
        let Some(s) = self.stage.as_mut() else {
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
            (true, true) => {
                for l in self.character.layers.iter_mut().take(2) {
                    if let Some(f) = l.fade.as_mut() {
                        f.fade = fade;
                    }
                }
            }
            (false, false) => {}
            _ => self.request_rebuild(),
        }
    }

    /// Node names for lists (index order), unnamed nodes as `node N`.
    pub fn node_label(&self, n: usize) -> String {
        self.character
            .scene
            .nodes
            .get(n)
            .and_then(|node| node.name.clone())
            .unwrap_or_else(|| format!("node {n}"))
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
