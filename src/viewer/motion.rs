//! Another character's motion on the model: the retargeting preview (the `view` command's motion
//! option, a dropped file's "Play its motion here"). The source's clips are written for the model
//! with the library's retargeting ([`crate::retarget`], what `skinview retarget` writes) and
//! added to its clips, so every panel plays, scrubs and plots them; the Motion panel shows the
//! bone map with its problems, lets the user change any pairing, save and load it as TOML, and
//! toggle the reference pose, the translations and root motion (each change writes the clips
//! again), and gives the playing clip's readouts.

use crate::error::Result;
use crate::retarget::{
    BoneMap, ClipReadouts, MapIssues, Reference, RetargetOptions, RetargetSetup, clip_readouts,
    retarget_clip,
};
use crate::scene::Scene;

use super::state::ViewerState;

/// The motion source and what its retargeting made.
pub struct MotionSource {
    /// The source as the user named it.
    pub label: String,
    /// Its scene (the clips played).
    pub scene: Scene,
    /// Per source node, and per model node: a joint (what the map pairs and the overlay draws).
    joints: (Vec<bool>, Vec<bool>),
    /// Which source joint drives each of the model's nodes.
    pub map: BoneMap,
    /// Reference pose, translations, root motion.
    pub options: RetargetOptions,
    /// The map's problems.
    pub issues: MapIssues,
    /// The model's own clip count: the retargeted clips follow them.
    pub own_clips: usize,
    /// Per retargeted clip (in source order): the model's clip index and its readouts.
    pub clips: Vec<(usize, ClipReadouts)>,
    /// The map file field (save / load).
    pub map_path: String,
    /// Target hip height over the source's.
    pub height_ratio: f32,
    /// What the last save or load did, for the panel.
    pub note: Option<String>,
    /// Draw the source's skeleton over the model ([`draw_source`]).
    pub show_source: bool,
    /// The (model, source) hips the retargeting moves ([`RetargetSetup::hips`]).
    pub hips: Option<(usize, usize)>,
    /// The source played at the model's time, for [`draw_source`].
    frame: Option<crate::frame::FrameState>,
    /// The model's set-up before the motion (a native rig's stage), put back by "stop".
    setup_before: crate::character::CharacterSetup,
    /// The page: the map asked for as a download (its TOML text), taken by the page.
    pub download: Option<String>,
    /// The page: where the "download map" button is (points; the report gives it to scripts),
    /// None while it is scrolled out of the panel.
    pub download_at: Option<[f32; 2]>,
}

impl MotionSource {
    /// The readouts of the model's clip `anim`, when it is a retargeted one.
    pub fn readouts(&self, anim: Option<usize>) -> Option<&ClipReadouts> {
        let a = anim?;
        self.clips.iter().find(|(i, _)| *i == a).map(|(_, r)| r)
    }
}

impl ViewerState {
    /// Play `source`'s clips on the model (labelled `label`), through the automatic bone map,
    /// and start on the first. On failure the model is as it was and the error is kept.
    pub fn use_motion(&mut self, label: &str, source: Scene) -> Result<()> {
        self.stop_motion();
        let map = BoneMap::auto(&source, &self.model.scene);
        let motion = MotionSource {
            label: label.to_string(),
            issues: map.issues(&source, &self.model.scene),
            joints: (source.joint_mask(), self.model.scene.joint_mask()),
            scene: source,
            map,
            options: RetargetOptions::default(),
            own_clips: self.model.scene.animations.len(),
            clips: Vec::new(),
            map_path: String::from("bone-map.toml"),
            height_ratio: 1.0,
            note: None,
            show_source: true,
            hips: None,
            frame: None,
            setup_before: self.setup.clone(),
            download: None,
            download_at: None,
        };
        self.motion = Some(motion);
        let result = self.retarget_motion();
        if let Err(e) = &result {
            self.error = Some(format!("{label}: {e}"));
            self.stop_motion();
        }
        result
    }

    /// Write the motion's clips again (after a change of map or options) and keep playing the
    /// same source clip.
    pub fn retarget_motion(&mut self) -> Result<()> {
        let Some(mut motion) = self.motion.take() else {
            return Ok(());
        };
        let playing = self
            .playback
            .anim
            .and_then(|a| motion.clips.iter().position(|(i, _)| *i == a));
        let result = write_clips(&mut self.model.scene, &mut motion)
            .and_then(|()| sync_rig_clips(&mut self.model));
        let first = motion.clips.first().map(|c| c.0);
        let resume = playing
            .and_then(|k| motion.clips.get(k))
            .map(|c| c.0)
            .or(first);
        self.motion = Some(motion);
        result?;
        self.play_model_clip(resume)
    }

    /// Pair the model's node `target` with source node `source` (None: it holds its rest
    /// pose), and write the clips again.
    pub fn set_motion_pairing(&mut self, target: usize, source: Option<usize>) -> Result<()> {
        let Some(motion) = &mut self.motion else {
            return Ok(());
        };
        if let Some(slot) = motion.map.source_of.get_mut(target) {
            *slot = source;
        }
        motion.issues = motion.map.issues(&motion.scene, &self.model.scene);
        self.retarget_motion()
    }

    /// Set the motion's options (reference, translations, root motion) and write the clips
    /// again.
    pub fn set_motion_options(&mut self, options: RetargetOptions) -> Result<()> {
        if let Some(motion) = &mut self.motion {
            motion.options = options;
        }
        self.retarget_motion()
    }

    /// Write the bone map to the map field's path (TOML). Desktop only: the page reads and
    /// writes no paths (and carries no TOML reader, which keeps it within its size budget).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn save_motion_map(&mut self) -> Result<std::path::PathBuf> {
        let Some(motion) = &self.motion else {
            return Err(crate::Error::Gpu("no motion source".into()));
        };
        let path = std::path::PathBuf::from(motion.map_path.trim());
        let text = motion.map.to_toml(&motion.scene, &self.model.scene);
        crate::io::output::write_file(&path, text.as_bytes())?;
        Ok(path)
    }

    /// Read the bone map from the map field's path and write the clips again (desktop only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn load_motion_map(&mut self) -> Result<()> {
        let Some(motion) = &self.motion else {
            return Ok(());
        };
        let path = std::path::PathBuf::from(motion.map_path.trim());
        let bytes =
            crate::io::files::read_regular(&path, crate::retarget::map::MAX_MAP_BYTES, None)?;
        let label = path.display().to_string();
        self.set_motion_map_file(&bytes, &label)
    }

    /// Use the bone map file `bytes` (TOML, named `label`: a path, or a file dropped on the
    /// page) and write the clips again.
    pub fn set_motion_map_file(&mut self, bytes: &[u8], label: &str) -> Result<()> {
        let Some(motion) = &mut self.motion else {
            return Err(crate::Error::invalid(
                label,
                "(bone map)",
                "a bone map is for a motion: play a file's clips on the model first",
            ));
        };
        motion.map = BoneMap::from_toml_bytes(bytes, label, &motion.scene, &self.model.scene)?;
        motion.issues = motion.map.issues(&motion.scene, &self.model.scene);
        motion.note = Some(format!("map read from {label}"));
        self.retarget_motion()
    }

    /// Stop playing the motion source: its clips removed, the model's set-up as it was.
    pub fn stop_motion(&mut self) {
        let Some(motion) = self.motion.take() else {
            return;
        };
        self.model.scene.animations.truncate(motion.own_clips);
        if let Err(e) = sync_rig_clips(&mut self.model) {
            self.error = Some(e.to_string());
        }
        self.setup = motion.setup_before;
        let first = (motion.own_clips > 0).then_some(0);
        self.playback.select(first);
        let result = self.rebuild();
        self.update_key_times();
        if let Err(e) = result {
            self.error = Some(e.to_string());
        }
    }

    /// Rebuild the character from the model's clips and play clip `anim` (on a stage: as its
    /// one layer, without the stage's fade, IK goals and orbit, its bone links kept).
    fn play_model_clip(&mut self, anim: Option<usize>) -> Result<()> {
        let motion = anim.map(|a| super::state::motion_ref(&self.model.scene, a));
        if let Some(stage) = self.setup.stage_spec_mut() {
            *stage = crate::character::CharacterSpec {
                links: stage.links,
                ..crate::character::CharacterSpec::single(motion)
            };
        } else {
            self.setup.motion = anim.map_or(
                crate::character::Motion::Rest,
                crate::character::Motion::Clip,
            );
        }
        self.playback.select(anim);
        self.rebuild()?;
        self.update_key_times();
        Ok(())
    }
}

/// A native rig plays from its own scene ([`crate::io::Model::character`]): it gets the model's
/// clips (the same nodes in the same order).
fn sync_rig_clips(model: &mut crate::io::Model) -> Result<()> {
    let Some(rig) = &mut model.rig else {
        return Ok(());
    };
    if rig.scene.scene.nodes.len() != model.scene.nodes.len() {
        return Err(crate::Error::invalid(
            &model.scene.name,
            "(rig)",
            "the rig's skeleton differs from the model's: its clips cannot be added",
        ));
    }
    rig.scene
        .scene
        .animations
        .clone_from(&model.scene.animations);
    Ok(())
}

/// The model's clips: its own, then each source clip retargeted with the motion's map and
/// options, named "CLIP from SOURCE".
fn write_clips(model: &mut Scene, motion: &mut MotionSource) -> Result<()> {
    model.animations.truncate(motion.own_clips);
    motion.clips.clear();
    let setup = RetargetSetup::new(&motion.scene, model, motion.map.clone(), motion.options)?;
    motion.height_ratio = setup.height_ratio;
    motion.hips = setup.hips;
    let source_name = crate::io::file_label(std::path::Path::new(&motion.label));
    let mut made = Vec::with_capacity(motion.scene.animations.len());
    for c in 0..motion.scene.animations.len() {
        let clip = crate::anim::ClipName::new(c, motion.scene.animations[c].name.as_deref());
        let name = format!("{} from {source_name}", clip.label());
        let retargeted = retarget_clip(&motion.scene, model, &setup, c, name)?;
        let readouts = clip_readouts(&motion.scene, model, &setup, c)?;
        made.push((retargeted.animation, readouts));
    }
    for (anim, readouts) in made {
        motion.clips.push((model.animations.len(), readouts));
        model.animations.push(anim);
    }
    Ok(())
}

/// The Motion panel (see the module documentation).
pub fn panel(ui: &mut egui::Ui, state: &mut ViewerState) {
    let Some(motion) = &state.motion else { return };
    let mapped = motion.map.pairs().count();
    let total = motion.joints.1.iter().filter(|j| **j).count();
    ui.label(format!(
        "{}: {mapped} of {total} joints mapped; height ratio {:.3}",
        motion.label, motion.height_ratio
    ));
    let mut options = motion.options;
    ui.horizontal_wrapped(|ui| {
        egui::ComboBox::from_id_salt("motion reference")
            .selected_text(format!("from the {} pose", reference_name(options.reference)))
            .show_ui(ui, |ui| {
                for r in [Reference::Bind, Reference::Rest] {
                    ui.selectable_value(&mut options.reference, r, reference_name(r));
                }
            })
            .response
            .on_hover_text("the pose each bone's turn is measured from");
        ui.checkbox(&mut options.translations, "translations")
            .on_hover_text("every bone follows the source's offset from its reference (else the hips alone move)");
        let mut in_place = !options.root_motion;
        ui.checkbox(&mut in_place, "in place")
            .on_hover_text("take the hips' travel over the clip away");
        options.root_motion = !in_place;
        ui.checkbox(&mut options.foot_lock, "lock feet")
            .on_hover_text("hold each foot where the source plants it, turning the leg with CCD IK");
    });
    if let Some(m) = &mut state.motion {
        ui.checkbox(&mut m.show_source, "source skeleton")
            .on_hover_text(
                "the source's bones (orange) on the model's hips, scaled by the hip heights",
            );
    }
    let Some(motion) = &state.motion else { return };
    if let Some(note) = &motion.note {
        ui.label(note);
    }
    issues_lines(ui, state);
    readouts_lines(ui, state);
    map_table(ui, state);
    let mut action = None;
    if let Some(motion) = &mut state.motion {
        ui.horizontal_wrapped(|ui| {
            if cfg!(target_arch = "wasm32") {
                let button = ui
                    .button("download map")
                    .on_hover_text("the bone map as TOML, for the retarget command");
                let shown = ui.clip_rect().contains(button.rect.center());
                motion.download_at = shown.then(|| button.rect.center().into());
                if button.clicked() {
                    action = Some(MapAction::Download);
                }
            } else {
                let label = ui.label("map file");
                ui.add(egui::TextEdit::singleline(&mut motion.map_path).desired_width(140.0))
                    .labelled_by(label.id);
                if ui.button("save map").clicked() {
                    action = Some(MapAction::Save);
                }
                if ui.button("load map").clicked() {
                    action = Some(MapAction::Load);
                }
            }
            if ui
                .button("stop")
                .on_hover_text("remove the motion's clips")
                .clicked()
            {
                action = Some(MapAction::Stop);
            }
        });
        if options != motion.options {
            action = Some(MapAction::Options(options));
        }
    }
    let result = match action {
        #[cfg(not(target_arch = "wasm32"))]
        Some(MapAction::Save) => state.save_motion_map().map(|p| {
            if let Some(m) = &mut state.motion {
                m.note = Some(format!("map saved to {}", p.display()));
            }
        }),
        #[cfg(not(target_arch = "wasm32"))]
        Some(MapAction::Load) => state.load_motion_map(),
        #[cfg(target_arch = "wasm32")]
        Some(MapAction::Save | MapAction::Load) => Ok(()),
        Some(MapAction::Stop) => {
            state.stop_motion();
            Ok(())
        }
        Some(MapAction::Download) => {
            if let Some(m) = &mut state.motion {
                m.download = Some(m.map.to_toml(&m.scene, &state.model.scene));
            }
            Ok(())
        }
        Some(MapAction::Options(o)) => state.set_motion_options(o),
        None => Ok(()),
    };
    if let Err(e) = result {
        state.error = Some(e.to_string());
    }
}

enum MapAction {
    Save,
    Load,
    Download,
    Stop,
    Options(RetargetOptions),
}

fn reference_name(r: Reference) -> &'static str {
    match r {
        Reference::Bind => "bind",
        Reference::Rest => "rest",
    }
}

/// The map's problems, one line each (red), or that it has none.
fn issues_lines(ui: &mut egui::Ui, state: &ViewerState) {
    let Some(motion) = &state.motion else { return };
    let names = |v: &[usize]| {
        v.iter()
            .map(|&n| state.node_label(n))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let red = egui::Color32::from_rgb(230, 110, 100);
    let issues = &motion.issues;
    if issues.is_empty() {
        ui.label("every weighted joint mapped; no duplicate, no parent mismatch");
    }
    if !issues.unmapped.is_empty() {
        ui.colored_label(
            red,
            format!(
                "unmapped (hold their rest pose): {}",
                names(&issues.unmapped)
            ),
        );
    }
    for (s, ts) in &issues.duplicated {
        let source = motion.scene.nodes[*s].name.clone().unwrap_or_default();
        ui.colored_label(red, format!("duplicated: {source} drives {}", names(ts)));
    }
    if !issues.parent_mismatch.is_empty() {
        ui.colored_label(
            red,
            format!("parent mismatch: {}", names(&issues.parent_mismatch)),
        );
    }
}

/// The playing clip's readouts: each hand and foot's reach error, the feet's sliding.
fn readouts_lines(ui: &mut egui::Ui, state: &ViewerState) {
    let Some(r) = state
        .motion
        .as_ref()
        .and_then(|m| m.readouts(state.playback.anim))
    else {
        return;
    };
    for e in &r.effectors {
        let sliding = match (e.contact_samples, e.target_sliding_m, e.source_sliding_m) {
            (Some(0), ..) => ", never planted".to_string(),
            (Some(_), Some(t), Some(s)) => format!(
                ", slides {:.1} cm planted (source {:.1} cm)",
                t * 100.0,
                s * 100.0
            ),
            _ => String::new(),
        };
        ui.label(format!(
            "{}: {:.1} cm from the source's (mean {:.1}){sliding}",
            e.bone,
            e.max_reach_error_m * 100.0,
            e.mean_reach_error_m * 100.0
        ));
    }
}

/// The bone map: each joint of the model and the source joint driving it, changeable.
fn map_table(ui: &mut egui::Ui, state: &mut ViewerState) {
    let Some(motion) = &state.motion else { return };
    let (source_joints, joints) = &motion.joints;
    let source_name = |s: usize| {
        motion.scene.nodes[s]
            .name
            .clone()
            .unwrap_or_else(|| format!("node {s}"))
    };
    let flagged = |t: usize| {
        let i = &motion.issues;
        i.unmapped.contains(&t)
            || i.parent_mismatch.contains(&t)
            || i.duplicated.iter().any(|(_, ts)| ts.contains(&t))
    };
    let mut change = None;
    egui::CollapsingHeader::new("bone map")
        .default_open(false)
        .show(ui, |ui| {
            egui::Grid::new("motion map").num_columns(2).show(ui, |ui| {
                for t in (0..joints.len()).filter(|&t| joints[t]) {
                    let label = state.node_label(t);
                    let row = match flagged(t) {
                        true => ui.colored_label(egui::Color32::from_rgb(230, 110, 100), label),
                        false => ui.label(label),
                    };
                    let now = motion.map.source_of[t];
                    let text = now.map_or("(none)".to_string(), source_name);
                    egui::ComboBox::from_id_salt(("motion source of", t))
                        .selected_text(text)
                        .show_ui(ui, |ui| {
                            if ui.selectable_label(now.is_none(), "(none)").clicked() {
                                change = Some((t, None));
                            }
                            for s in (0..source_joints.len()).filter(|&s| source_joints[s]) {
                                if ui
                                    .selectable_label(now == Some(s), source_name(s))
                                    .clicked()
                                {
                                    change = Some((t, Some(s)));
                                }
                            }
                        })
                        .response
                        .labelled_by(row.id);
                    ui.end_row();
                }
            });
        });
    if let Some((t, s)) = change
        && let Err(e) = state.set_motion_pairing(t, s)
    {
        state.error = Some(e.to_string());
    }
}

/// The source skeleton's colour over the model: orange, apart from the bones' blue and the
/// ghosts' cyan and violet.
pub const SOURCE_SKELETON_COLOR: [f32; 4] = [1.0, 0.55, 0.1, 1.0];

/// The source's skeleton at the model's clip time, its hips on the model's hips and scaled by
/// the hip heights: the pose the model follows, bone for bone (a line from each joint to its
/// parent joint).
pub fn draw_source(state: &mut ViewerState, g: &mut crate::gpu::OverlayGeometry) {
    let Some(m) = &mut state.motion else { return };
    let (Some(anim), Some((hips_t, hips_s)), true) = (state.playback.anim, m.hips, m.show_source)
    else {
        return;
    };
    let Some(clip) = m.clips.iter().position(|(i, _)| *i == anim) else {
        return;
    };
    let duration = m.scene.animations.get(clip).map_or(0.0, |a| a.duration_s());
    let t = match (state.playback.looping, duration > 0.0) {
        (true, true) => state.playback.time_s.rem_euclid(duration),
        _ => state.playback.time_s,
    };
    let frame = m
        .frame
        .get_or_insert_with(|| crate::frame::FrameState::new(&m.scene));
    if frame.evaluate(&m.scene, Some(clip), t).is_err() {
        return;
    }
    // The model's hips by name in the character's scene (a native rig's has bone links).
    let name = state
        .model
        .scene
        .nodes
        .get(hips_t)
        .and_then(|n| n.name.as_deref());
    let scene = &state.character.scene;
    let Some(hips_now) = name
        .and_then(|n| scene.find_node(n).ok())
        .and_then(|n| state.character.frame.model_from_node.get(n))
        .map(|m| m.w_axis.truncate())
    else {
        return;
    };
    let source_model = &frame.model_from_node;
    let origin = source_model[hips_s].w_axis.truncate();
    let place = |n: usize| hips_now + m.height_ratio * (source_model[n].w_axis.truncate() - origin);
    let joints = &m.joints.0;
    for (n, node) in m.scene.nodes.iter().enumerate().filter(|(n, _)| joints[*n]) {
        if let Some(p) = node.parent.filter(|p| joints[*p]) {
            g.line(place(p), place(n), SOURCE_SKELETON_COLOR, true);
        }
    }
}
