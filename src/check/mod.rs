//! `skinview check`: every character under some folders through a fixed list of checks — a
//! finding each with an id, a severity and a one-line reason — for asset pipelines that gate
//! characters in CI. Reports: [`CheckReport`] (JSON, schema [`SCHEMA`]) and JUnit XML
//! ([`junit`]).
//!
//! The checks ([`Check`], in the order they run): the import and its repairs; influences past
//! the target engine's limit, with what dropping them costs; joints that influence nothing;
//! inverse bind matrices that are singular, ill-conditioned, mirrored, or do not match the
//! bind pose of the hierarchy; joints with non-uniform rest scale; clips whose skinned bounds
//! leave the rest bounds (the culling problem); joints whose blend zone loses ring radius or
//! volume (`quality::joint_zones`); and GPU readback against the CPU reference. Each model's
//! result also holds its clips' bounds and every joint's bounds in its own space.
//! Each model is checked on its own: one model's failure never stops the rest.

mod checks;
pub mod html;
pub mod junit;
pub mod marks;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::io::ModelSource;

/// The JSON report's schema name and version.
pub const SCHEMA: &str = "skinview-check/1";

/// Most model files one run checks: a million (a studio's whole library; the sharding
/// spreads more over machines).
pub const MAX_FILES: usize = 1_000_000;

/// Most `[[overrides]]` tables in a config: each is matched against every file.
pub const MAX_OVERRIDES: usize = 1000;

/// Deepest folder nesting searched for models (a symlink loop stops here).
pub const MAX_DEPTH: usize = 64;

/// Largest `timeout_s`: a day. A model's check costs in proportion to vertices × frames
/// sampled (27 ms for the shared models, BENCHMARKS.md), so even a huge character with
/// `frames` at its limit is far inside it; a longer wait outlasts any CI job, and the bound
/// keeps the time arithmetic far from overflow.
pub const MAX_TIMEOUT_S: f64 = 86_400.0;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; never fails.
    Info,
    /// Likely a problem; fails nothing.
    Warning,
    /// Fails the check (exit 1).
    Error,
}

impl Severity {
    /// In words.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// The checks, by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Check {
    /// The file imports under every rule (an error otherwise); its repairs.
    #[serde(rename = "import")]
    Import,
    /// Vertices with more influences than the target engine takes.
    #[serde(rename = "weights.influences")]
    Influences,
    /// Skin joints that influence no vertex.
    #[serde(rename = "weights.unused_joints")]
    UnusedJoints,
    /// Inverse bind matrices that cannot be inverted or lose precision.
    #[serde(rename = "bind.invertible")]
    Invertible,
    /// Inverse bind matrices that mirror (negative determinant).
    #[serde(rename = "bind.mirrored")]
    Mirrored,
    /// Inverse bind matrices that do not match the hierarchy's rest pose.
    #[serde(rename = "bind.rest_pose")]
    BindRestPose,
    /// Joints whose rest scale is not uniform.
    #[serde(rename = "joints.scale")]
    JointScale,
    /// Clips whose skinned bounds leave the rest bounds.
    #[serde(rename = "anim.bounds")]
    ClipBounds,
    /// Joints whose blend zone loses ring radius or volume over the clips.
    #[serde(rename = "deform.joints")]
    Deformation,
    /// GPU readback against the CPU reference.
    #[serde(rename = "gpu.readback")]
    GpuReadback,
    /// Clips whose keys could be reduced within a distance on the skin (`skinview optimize`'s
    /// reduction). Not one of [`Check::ALL`]: it costs a reduction of every clip, so it runs
    /// (and is listed as run) only when [`CheckConfig::clip_reduction`] asks for it.
    #[serde(rename = "anim.reducible")]
    ClipReduction,
    /// The model's check passed `timeout_s` (a hang): its worker process was ended. Not one
    /// of [`Check::ALL`]: the worker's watch over the checks, listed as run only when it
    /// fires.
    #[serde(rename = "worker.timeout")]
    WorkerTimeout,
}

impl Check {
    /// Every check, in the order they run.
    pub const ALL: [Check; 10] = [
        Check::Import,
        Check::Influences,
        Check::UnusedJoints,
        Check::Invertible,
        Check::Mirrored,
        Check::BindRestPose,
        Check::JointScale,
        Check::ClipBounds,
        Check::Deformation,
        Check::GpuReadback,
    ];

    /// Its id (`weights.influences`).
    pub fn id(self) -> &'static str {
        match self {
            Check::Import => "import",
            Check::Influences => "weights.influences",
            Check::UnusedJoints => "weights.unused_joints",
            Check::Invertible => "bind.invertible",
            Check::Mirrored => "bind.mirrored",
            Check::BindRestPose => "bind.rest_pose",
            Check::JointScale => "joints.scale",
            Check::ClipBounds => "anim.bounds",
            Check::Deformation => "deform.joints",
            Check::GpuReadback => "gpu.readback",
            Check::ClipReduction => "anim.reducible",
            Check::WorkerTimeout => "worker.timeout",
        }
    }
}

/// The stages of one model's check (and drawing), in order: what a worker process reports
/// as it enters each, so a model that passes `timeout_s` is reported with the stage it hung
/// in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// Setting up the GPU device (a fresh worker's first model that wants it).
    #[serde(rename = "gpu.setup")]
    GpuSetup,
    /// Reading and importing the files.
    #[serde(rename = "import")]
    Import,
    /// Skinning the rest pose and every sampled frame (influences, bounds, deformation).
    #[serde(rename = "frames")]
    Frames,
    /// The checks on the bind matrices and joints, and the findings of the frames.
    #[serde(rename = "findings")]
    Findings,
    /// Splitting the skinned meshes for the uniform palette.
    #[serde(rename = "split")]
    Split,
    /// The GPU readback on both palettes.
    #[serde(rename = "gpu.readback")]
    GpuReadback,
    /// Drawing the check page's pictures.
    #[serde(rename = "draw")]
    Draw,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 7] = [
        Stage::GpuSetup,
        Stage::Import,
        Stage::Frames,
        Stage::Findings,
        Stage::Split,
        Stage::GpuReadback,
        Stage::Draw,
    ];

    /// Its name (`gpu.readback`), as the reports and the worker's progress lines give it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::GpuSetup => "gpu.setup",
            Stage::Import => "import",
            Stage::Frames => "frames",
            Stage::Findings => "findings",
            Stage::Split => "split",
            Stage::GpuReadback => "gpu.readback",
            Stage::Draw => "draw",
        }
    }

    /// The stage named `name`.
    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Thresholds, from the config file (`skinview.toml`; every field optional, these defaults
/// otherwise).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckConfig {
    /// Influences a vertex may have in the target engine (4 or 8).
    pub max_influences: usize,
    /// Dropping the extra influences moves a vertex by more than this share of the
    /// diagonal: a warning (below: info).
    pub influence_cost_rel: f64,
    /// Largest condition number of an inverse bind matrix's 3×3 part before it is
    /// ill-conditioned (a warning; f32 loses log10 of it in digits).
    pub max_condition: f64,
    /// A joint whose bind matrix and rest transform disagree by more than this share of the
    /// diagonal at the vertices it moves: a warning.
    pub bind_rest_rel: f64,
    /// A clip's skinned vertices past the rest bounds' sphere (centre the rest box's, radius
    /// half its diagonal) by more than this share of the diagonal: a warning (culling with the
    /// rest bounds would cut the model); a clip leaving the rest box within that is an info
    /// finding (every walking character does). Default 5 %: on a humanoid about a palm's
    /// length (5 % of a standing figure's box diagonal is about 7 % of its height); less pops
    /// out of view only at the screen's edge.
    pub bounds_margin_rel: f64,
    /// A ring of a joint's blend zone (README, "Deformation at a joint") whose radius falls
    /// under this share of its rest radius in a sampled frame: a warning (the candy-wrapper).
    pub min_ring_radius_ratio: f64,
    /// A joint's blend zone whose enclosed volume falls under this share of its rest volume
    /// in a sampled frame: a warning (the collapsing elbow).
    pub min_volume_ratio: f64,
    /// K: the joint matrices a draw may use on the uniform palette path (engines without
    /// storage buffers in the vertex stage): the skinned meshes are split into submeshes of
    /// at most K joints, read back on the GPU, and the split reported.
    pub uniform_bones: usize,
    /// Frames sampled per clip (the influence cost, the bounds, the deformation and the GPU
    /// readback).
    pub frames: usize,
    /// Skip the GPU readback (CPU checks only).
    pub no_gpu: bool,
    /// The GPU readback's tolerance: the largest distance between a GPU-skinned and the CPU
    /// reference vertex, relative to the diagonal ([`crate::compare::CompareOptions`]'s; default
    /// [`crate::compare::CPU_GPU_TOLERANCE_REL`]); a GPU of lower precision may need more.
    pub gpu_tolerance_rel: f64,
    /// Run `anim.reducible`: each clip's keys reduced as `skinview optimize` does, an info
    /// finding for a clip whose animation data would shrink by a tenth or more (off by default:
    /// it costs two CPU skinnings per evaluation time and attempt).
    pub clip_reduction: bool,
    /// The tolerance of `anim.reducible`, relative to the rest diagonal (`optimize`'s default).
    pub clip_reduction_rel: f64,
    /// Seconds a model's worker may take over it (its check and pictures, and a fresh
    /// worker's GPU set-up) before the worker is ended and the model reported as timed out
    /// (`worker.timeout`, an error naming the stage it was in).
    pub timeout_s: f64,
    /// Thresholds for some files only, in order (a later match wins): `[[overrides]]` tables
    /// with `paths` (globs) and any of the fields above.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<ConfigOverride>,
}

/// A config with its overrides' globs compiled, for choosing each file's thresholds.
#[derive(Clone, Debug)]
pub struct PathConfigs {
    base: CheckConfig,
    overrides: Vec<(globset::GlobSet, ConfigOverride)>,
}

impl PathConfigs {
    /// `config`'s overrides compiled (errors name the bad glob; `file` names the config).
    pub fn new(config: &CheckConfig, file: &str) -> Result<PathConfigs> {
        let overrides = config
            .overrides
            .iter()
            .enumerate()
            .map(|(i, o)| Ok((o.matcher(file, i)?, o.clone())))
            .collect::<Result<Vec<_>>>()?;
        Ok(PathConfigs {
            base: CheckConfig {
                overrides: Vec::new(),
                ..config.clone()
            },
            overrides,
        })
    }

    /// The config for the file at `relative` (its path relative to the config file's folder,
    /// `/`-separated): every override whose globs match it applied in order, no overrides
    /// left.
    pub fn for_path(&self, relative: &str) -> CheckConfig {
        let mut config = self.base.clone();
        for (set, o) in &self.overrides {
            if set.is_match(relative) {
                o.apply(&mut config);
            }
        }
        config
    }
}

/// Thresholds for the files whose path matches one of `paths`: globs (`*` within a folder,
/// `**` across folders, `?`, `[abc]`, `{a,b}`) against the path relative to the config file's
/// folder (the folder given when there is no config file), `/`-separated.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConfigOverride {
    /// The globs.
    pub paths: Vec<String>,
    /// [`CheckConfig::max_influences`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_influences: Option<usize>,
    /// [`CheckConfig::influence_cost_rel`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub influence_cost_rel: Option<f64>,
    /// [`CheckConfig::max_condition`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_condition: Option<f64>,
    /// [`CheckConfig::bind_rest_rel`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind_rest_rel: Option<f64>,
    /// [`CheckConfig::bounds_margin_rel`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds_margin_rel: Option<f64>,
    /// [`CheckConfig::min_ring_radius_ratio`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ring_radius_ratio: Option<f64>,
    /// [`CheckConfig::min_volume_ratio`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_volume_ratio: Option<f64>,
    /// [`CheckConfig::uniform_bones`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uniform_bones: Option<usize>,
    /// [`CheckConfig::frames`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<usize>,
    /// [`CheckConfig::no_gpu`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_gpu: Option<bool>,
    /// [`CheckConfig::gpu_tolerance_rel`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_tolerance_rel: Option<f64>,
    /// [`CheckConfig::clip_reduction`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip_reduction: Option<bool>,
    /// [`CheckConfig::clip_reduction_rel`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip_reduction_rel: Option<f64>,
    /// [`CheckConfig::timeout_s`] for these files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
}

impl ConfigOverride {
    /// `config` with this override's fields set.
    fn apply(&self, config: &mut CheckConfig) {
        fn set<T: Copy>(field: &mut T, value: Option<T>) {
            if let Some(v) = value {
                *field = v;
            }
        }
        set(&mut config.max_influences, self.max_influences);
        set(&mut config.influence_cost_rel, self.influence_cost_rel);
        set(&mut config.max_condition, self.max_condition);
        set(&mut config.bind_rest_rel, self.bind_rest_rel);
        set(&mut config.bounds_margin_rel, self.bounds_margin_rel);
        set(
            &mut config.min_ring_radius_ratio,
            self.min_ring_radius_ratio,
        );
        set(&mut config.min_volume_ratio, self.min_volume_ratio);
        set(&mut config.uniform_bones, self.uniform_bones);
        set(&mut config.frames, self.frames);
        set(&mut config.no_gpu, self.no_gpu);
        set(&mut config.gpu_tolerance_rel, self.gpu_tolerance_rel);
        set(&mut config.clip_reduction, self.clip_reduction);
        set(&mut config.clip_reduction_rel, self.clip_reduction_rel);
        set(&mut config.timeout_s, self.timeout_s);
    }

    /// Its globs as one matcher (an error names the bad glob).
    fn matcher(&self, file: &str, index: usize) -> Result<globset::GlobSet> {
        let mut set = globset::GlobSetBuilder::new();
        for p in &self.paths {
            let glob = globset::GlobBuilder::new(p)
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    Error::invalid(file, format!("overrides[{index}].paths"), e.to_string())
                })?;
            set.add(glob);
        }
        set.build()
            .map_err(|e| Error::invalid(file, format!("overrides[{index}].paths"), e.to_string()))
    }
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            max_influences: 4,
            influence_cost_rel: 1e-3,
            max_condition: 1e4,
            bind_rest_rel: crate::poses::BIND_REST_REL,
            bounds_margin_rel: 5e-2,
            // Under a twist a ring weighted half and half keeps cos(θ/2) of its radius: 60 %
            // is a twist of about 106°, well past what a forearm twist bone is for.
            min_ring_radius_ratio: 0.6,
            // LBS keeps 74 % of the built-in arm's elbow volume at a 120° bend (`skinview
            // quality`), 69 % at a 90° twist, and CesiumMan's knees 66 % in its walk: what a
            // plain rig shows. Under 60 % the joint has collapsed.
            min_volume_ratio: 0.6,
            uniform_bones: crate::gpu::DEFAULT_UNIFORM_BONES as usize,
            frames: 9,
            no_gpu: false,
            gpu_tolerance_rel: crate::compare::CPU_GPU_TOLERANCE_REL,
            clip_reduction: false,
            clip_reduction_rel: 1e-4,
            // The shared models check in about 27 ms each with the GPU readback on lavapipe
            // (BENCHMARKS.md), in proportion to vertices × frames: a character 100 times as
            // large stays in seconds, so 120 s is room for a slow machine and a debug build,
            // while a hang costs a CI run two minutes, not its whole time limit.
            timeout_s: 120.0,
            overrides: Vec::new(),
        }
    }
}

impl CheckConfig {
    /// Parse a config file's text (TOML); `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<CheckConfig> {
        let config: CheckConfig = toml::from_str(text).map_err(|e| Error::toml(file, text, &e))?;
        config.validate(file)?;
        Ok(config)
    }

    /// Rules: 1. `max_influences` in 1..=64; 2. the shares in (0, 1]; 3. `max_condition` ≥ 1;
    /// 4. `frames` in 1..=10,000; 5. `uniform_bones` in the partitioner's range;
    /// 6. `timeout_s` finite, over 0 and at most [`MAX_TIMEOUT_S`]; 7. each override has at
    /// least one glob, every glob parses, and the config with it applied keeps rules 1–6; at
    /// most [`MAX_OVERRIDES`] overrides.
    pub fn validate(&self, file: &str) -> Result<()> {
        if self.overrides.len() > MAX_OVERRIDES {
            return Err(Error::invalid(
                file,
                "overrides",
                format!(
                    "{} overrides, at most {MAX_OVERRIDES}",
                    self.overrides.len()
                ),
            ));
        }
        for (i, o) in self.overrides.iter().enumerate() {
            if o.paths.is_empty() {
                return Err(Error::invalid(
                    file,
                    format!("overrides[{i}].paths"),
                    "no glob: say which files the override is for",
                ));
            }
            o.matcher(file, i)?;
            let mut applied = CheckConfig {
                overrides: Vec::new(),
                ..self.clone()
            };
            o.apply(&mut applied);
            applied.validate_fields(file).map_err(|e| match e {
                Error::Invalid { field, message, .. } => {
                    Error::invalid(file, format!("overrides[{i}].{field}"), message)
                }
                other => other,
            })?;
        }
        self.validate_fields(file)
    }

    /// Rules 1–6 of [`CheckConfig::validate`].
    fn validate_fields(&self, file: &str) -> Result<()> {
        let bad = |field: &str, what: String| Err(Error::invalid(file, field, what));
        if !(1..=64).contains(&self.max_influences) {
            return bad(
                "max_influences",
                format!("{} is not in 1..=64", self.max_influences),
            );
        }
        for (field, v) in [
            ("influence_cost_rel", self.influence_cost_rel),
            ("bind_rest_rel", self.bind_rest_rel),
            ("bounds_margin_rel", self.bounds_margin_rel),
            ("min_ring_radius_ratio", self.min_ring_radius_ratio),
            ("min_volume_ratio", self.min_volume_ratio),
            ("gpu_tolerance_rel", self.gpu_tolerance_rel),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                return bad(field, format!("{v} is not in (0, 1]"));
            }
        }
        if self.max_condition.is_nan() || self.max_condition < 1.0 {
            return bad(
                "max_condition",
                format!("{} is below 1", self.max_condition),
            );
        }
        if !(1..=10_000).contains(&self.frames) {
            return bad("frames", format!("{} is not in 1..=10000", self.frames));
        }
        let bones = crate::partition::MIN_BONES..=crate::partition::MAX_BONES;
        if !bones.contains(&self.uniform_bones) {
            return bad(
                "uniform_bones",
                format!(
                    "{} is not in {}..={}",
                    self.uniform_bones,
                    bones.start(),
                    bones.end()
                ),
            );
        }
        if !(self.timeout_s > 0.0 && self.timeout_s <= MAX_TIMEOUT_S) {
            return bad(
                "timeout_s",
                format!(
                    "{} is not in (0, {MAX_TIMEOUT_S}] seconds (a day)",
                    self.timeout_s
                ),
            );
        }
        Ok(())
    }

    /// [`CheckConfig::timeout_s`] as a duration ([`MAX_TIMEOUT_S`] when out of range: a
    /// config read back from a report is not validated).
    pub fn timeout(&self) -> std::time::Duration {
        let s = if self.timeout_s > 0.0 && self.timeout_s <= MAX_TIMEOUT_S {
            self.timeout_s
        } else {
            MAX_TIMEOUT_S
        };
        std::time::Duration::from_secs_f64(s)
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Which check.
    pub check: Check,
    /// How bad.
    pub severity: Severity,
    /// One line a technical artist understands.
    pub message: String,
    /// The sampled frame it was found at, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<FrameRef>,
    /// The last lines its worker process wrote on standard error, oldest first: on a model
    /// whose check crashed or timed out (a panic's message, a driver's complaint).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr: Vec<String>,
    /// Where the problem is, for its picture to mark (at its frame; the rest pose without
    /// one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark: Option<Mark>,
}

/// What a finding's picture marks, in model space at the finding's frame: the pictures are
/// drawn from the report (a merged shard report's page too), so the report carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mark {
    /// A clip leaving its rest bounds (`anim.bounds`): the rest box, and the box of the
    /// skinned vertices at the frame.
    Bounds {
        /// The rest box's smallest corner.
        rest_min: [f32; 3],
        /// Its largest corner.
        rest_max: [f32; 3],
        /// The frame's box's smallest corner.
        frame_min: [f32; 3],
        /// Its largest corner.
        frame_max: [f32; 3],
    },
    /// A joint whose blend zone shrinks (`deform.joints`): the joint, and the zone's ring
    /// that keeps the least of its rest radius at the frame (a circle round its centroid of
    /// the radius the check measures, across the bone from the parent joint to this one).
    Ring {
        /// The joint's name.
        joint: String,
        /// The joint's node (index in the file's nodes).
        joint_node: usize,
        /// The joint's origin.
        joint_position: [f32; 3],
        /// The ring's centroid.
        centre: [f32; 3],
        /// Unit normal of the circle drawn: the bone's direction at the frame.
        axis: [f32; 3],
        /// The ring's radius at the frame (its vertices' mean distance from the centroid).
        radius: f32,
        /// Its radius at rest.
        rest_radius: f32,
    },
    /// A vertex (`weights.influences`): the one dropping the extra influences moves most at
    /// the frame (with none moved, the one with the most influences, at rest); for an
    /// importer's weight repair (`import`), the vertex it names, at rest.
    Vertex {
        /// The draw (index in the scene's draws).
        draw: usize,
        /// The vertex in its primitive.
        vertex: usize,
        /// Where it is.
        position: [f32; 3],
        /// Its influences (nonzero weights).
        influences: usize,
    },
}

impl Finding {
    /// A finding about the model as a whole.
    pub fn new(check: Check, severity: Severity, message: String) -> Finding {
        Finding {
            check,
            severity,
            message,
            frame: None,
            stderr: Vec::new(),
            mark: None,
        }
    }
}

/// A sampled frame a finding is about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrameRef {
    /// The clip's name (`animation N` when unnamed); None: the rest pose.
    pub clip: Option<String>,
    /// The clip's index in the file.
    pub clip_index: Option<usize>,
    /// Seconds into the clip.
    pub time_s: f32,
}

/// The split of the skinned meshes into submeshes of at most K joints (the uniform palette
/// path), summed over the primitives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UniformSplit {
    /// K.
    pub k: usize,
    /// Skinned primitives split.
    pub primitives: usize,
    /// Submeshes made.
    pub submeshes: usize,
    /// Vertices over all submeshes / vertices of the primitives (border vertices repeat).
    pub duplication_ratio: f64,
    /// (vertex, joint) influences dropped to fit a face's joints into K.
    pub dropped_influences: usize,
}

/// The box one joint's weighted vertices fill in the joint's own space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JointBounds {
    /// The skin (index in the file).
    pub skin: usize,
    /// The joint's name.
    pub joint: String,
    /// Smallest corner, in the joint's space.
    pub min: [f32; 3],
    /// Largest corner.
    pub max: [f32; 3],
}

/// A clip's skinned bounds over its sampled frames.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClipBounds {
    /// The clip's name (`animation N` when unnamed).
    pub clip: String,
    /// Smallest corner, model units.
    pub min: [f32; 3],
    /// Largest corner.
    pub max: [f32; 3],
}

/// A file a model was read from, and its content hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    /// The file (the model first, then its buffers and images).
    pub path: String,
    /// FNV-1a 64 of its bytes, hex ([`content_hash`]); empty when it could not be read.
    pub hash: String,
}

/// One model's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelResult {
    /// The file.
    pub path: String,
    /// Every file it was read from, hashed: what a later run compares to reuse this result.
    pub inputs: Vec<Input>,
    /// Taken from an earlier report ([`reuse`]: its inputs, the config and skinview's
    /// version unchanged), not checked again.
    pub reused: bool,
    /// The worst severity found (None: nothing found).
    pub worst: Option<Severity>,
    /// Every finding, in check order.
    pub findings: Vec<Finding>,
    /// The rest bounds (model units), when it imported.
    pub rest_bounds: Option<([f32; 3], [f32; 3])>,
    /// Per clip, the skinned bounds over its sampled frames.
    pub clip_bounds: Vec<ClipBounds>,
    /// Per skin joint that moves a vertex, the box its vertices fill in its own space: moved
    /// by the joints each frame, their union bounds the skinned mesh (for culling).
    #[serde(default)]
    pub joint_bounds: Vec<JointBounds>,
    /// The split at the config's `uniform_bones` (None: nothing skinned, or it failed: a
    /// finding says why).
    #[serde(default)]
    pub uniform_split: Option<UniformSplit>,
    /// Which checks ran.
    pub checks_run: Vec<Check>,
}

impl ModelResult {
    /// The result of a model not checked yet: the import alone listed as run.
    pub fn new(path: &Path) -> ModelResult {
        ModelResult {
            path: path.display().to_string(),
            inputs: Vec::new(),
            reused: false,
            worst: None,
            findings: Vec::new(),
            rest_bounds: None,
            clip_bounds: Vec::new(),
            joint_bounds: Vec::new(),
            uniform_split: None,
            checks_run: vec![Check::Import],
        }
    }

    /// The result of a model whose check crashed (a panic, or a worker process that died on
    /// it, with the last lines it wrote on standard error): one import error asking for a
    /// report.
    pub fn crashed(path: &Path, stderr: Vec<String>) -> ModelResult {
        let mut r = ModelResult::new(path);
        r.worst = Some(Severity::Error);
        r.findings.push(Finding {
            stderr,
            ..Finding::new(
                Check::Import,
                Severity::Error,
                "the check crashed (a bug in skinview or the GPU driver: please report it with \
                 the file)"
                    .into(),
            )
        });
        r
    }

    /// The result of a model whose worker passed `timeout_s` seconds on it, in `stage` (None:
    /// before its first), and was ended: one `worker.timeout` error, with the last lines the
    /// worker wrote on standard error.
    pub fn timed_out(
        path: &Path,
        timeout_s: f64,
        stage: Option<Stage>,
        stderr: Vec<String>,
    ) -> ModelResult {
        let mut r = ModelResult::new(path);
        let at = stage.map_or("before its first stage".to_string(), |s| {
            format!("in stage \"{}\"", s.name())
        });
        r.worst = Some(Severity::Error);
        r.checks_run = vec![Check::WorkerTimeout];
        r.findings.push(Finding {
            stderr,
            ..Finding::new(
                Check::WorkerTimeout,
                Severity::Error,
                format!(
                    "the check timed out after {timeout_s} s {at} and its worker was ended (a \
                     hang in skinview or the GPU driver: please report it with the file; \
                     timeout_s sets the limit)"
                ),
            )
        });
        r
    }

    /// No error.
    pub fn passed(&self) -> bool {
        self.worst != Some(Severity::Error)
    }
}

/// The whole run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// [`SCHEMA`].
    pub schema: String,
    /// skinview's version.
    pub version: String,
    /// The thresholds used.
    pub config: CheckConfig,
    /// This run's shard (`[i, n]`: the i-th of n, from 1), when sharded.
    pub shard: Option<[usize; 2]>,
    /// Per model, in path order.
    pub models: Vec<ModelResult>,
    /// Models with an error.
    pub failed: usize,
    /// Models with a warning and no error.
    pub warned: usize,
}

impl CheckReport {
    /// The report of `models` checked under `config`.
    pub fn new(config: CheckConfig, shard: Option<[usize; 2]>, models: Vec<ModelResult>) -> Self {
        let count = |s: Severity| models.iter().filter(|m| m.worst == Some(s)).count();
        CheckReport {
            schema: SCHEMA.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            failed: count(Severity::Error),
            warned: count(Severity::Warning),
            config,
            shard,
            models,
        }
    }
}

/// Whether `path` names a model `check` reads: `.glb`, `.gltf`, `.rig.json`, and `.fbx` on
/// the desktop.
pub fn is_model_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let fbx = cfg!(not(target_arch = "wasm32")) && name.ends_with(".fbx");
    name.ends_with(".glb") || name.ends_with(".gltf") || name.ends_with(".rig.json") || fbx
}

/// Every model file under `paths` (files as given, folders searched to [`MAX_DEPTH`],
/// hidden entries skipped), sorted and without repeats; more than [`MAX_FILES`] is an error.
pub fn find_models(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, 0, &mut found)?;
        } else if p.is_file() {
            found.push(p.clone());
        } else {
            return Err(Error::invalid(
                &p.display().to_string(),
                "path",
                "is neither a file nor a folder",
            ));
        }
    }
    found.sort();
    found.dedup();
    Ok(found)
}

fn walk(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) -> Result<()> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| Error::Io {
        path: dir.to_path_buf(),
        source: e,
    })?;
    for e in entries.flatten() {
        let p = e.path();
        if e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if p.is_dir() {
            walk(&p, depth + 1, found)?;
        } else if is_model_file(&p) {
            if found.len() >= MAX_FILES {
                return Err(Error::invalid(
                    &dir.display().to_string(),
                    "files",
                    format!("more than {MAX_FILES} models: check them in shards"),
                ));
            }
            found.push(p);
        }
    }
    Ok(())
}

/// The `i`-th of `n` shards of `files` (from 1): every n-th file from the i-th, so each
/// shard gets a deterministic share and the shards together are every file once.
pub fn shard(files: Vec<PathBuf>, i: usize, n: usize) -> Vec<PathBuf> {
    files
        .into_iter()
        .enumerate()
        .filter(|(k, _)| n > 0 && k % n == i.wrapping_sub(1))
        .map(|(_, p)| p)
        .collect()
}

/// Check one model file under `config`; `gpu` runs the readback (None: skipped, an info
/// finding); `stage` is called as the check enters each [`Stage`] (from [`Stage::Import`] to
/// [`Stage::GpuReadback`]; `&mut |_| {}` when nobody watches). Never fails: a file that does
/// not import is an error finding.
pub fn check_model(
    path: &Path,
    config: &CheckConfig,
    gpu: Option<&GpuContext>,
    stage: &mut dyn FnMut(Stage),
) -> ModelResult {
    let mut result = ModelResult {
        inputs: vec![hashed(path)],
        ..ModelResult::new(path)
    };
    stage(Stage::Import);
    match ModelSource::from_arg(Some(path)).and_then(|s| s.load()) {
        Ok(model) => {
            // The model file as named, then the other files it was read from.
            let others = model.files.iter().skip(1).map(|f| hashed(f));
            result.inputs.extend(others);
            checks::run(&model.scene, config, gpu, &mut result, stage);
        }
        Err(e) => result
            .findings
            .push(Finding::new(Check::Import, Severity::Error, e.to_string())),
    }
    result.worst = result.findings.iter().map(|f| f.severity).max();
    result
}

/// [`check_model`] with a panic in it caught: that model's error
/// ([`ModelResult::crashed`], with the panic's message), never the end of the run that
/// checks it.
pub fn check_model_guarded(
    path: &Path,
    config: &CheckConfig,
    gpu: Option<&GpuContext>,
    stage: &mut dyn FnMut(Stage),
) -> ModelResult {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_model(path, config, gpu, stage)
    }))
    .unwrap_or_else(|payload| {
        // The panic's message, as the default hook also writes it on standard error.
        let message = payload
            .downcast_ref::<&str>()
            .map(|m| m.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned());
        let lines = message.map(|m| format!("panicked: {m}"));
        ModelResult::crashed(path, lines.into_iter().collect())
    })
}

/// FNV-1a 64 of `bytes`, hex: a content fingerprint for change detection (not a security
/// hash: nobody gains by forging one here).
pub fn content_hash(bytes: &[u8]) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let h = bytes
        .iter()
        .fold(OFFSET, |h, &b| (h ^ u64::from(b)).wrapping_mul(PRIME));
    format!("{h:016x}")
}

/// `path` with its content hash (empty when it cannot be read within the import's limit).
fn hashed(path: &Path) -> Input {
    let bytes = crate::io::files::read_regular(path, crate::io::files::MAX_FILE_BYTES, None);
    Input {
        path: path.display().to_string(),
        hash: bytes.map(|b| content_hash(&b)).unwrap_or_default(),
    }
}

/// `path`'s result in `previous` when it still holds: the same skinview version and config,
/// and every input file unchanged (marked `reused`).
pub fn reuse(previous: &CheckReport, config: &CheckConfig, path: &Path) -> Option<ModelResult> {
    if previous.version != env!("CARGO_PKG_VERSION") || previous.config != *config {
        return None;
    }
    let name = path.display().to_string();
    let old = previous.models.iter().find(|m| m.path == name)?;
    // A result from before a check was added lacks it (an import failure runs no other).
    let import_failed = old
        .findings
        .iter()
        .any(|f| f.check == Check::Import && f.severity == Severity::Error);
    if !import_failed && !Check::ALL.iter().all(|c| old.checks_run.contains(c)) {
        return None;
    }
    let same = !old.inputs.is_empty()
        && old
            .inputs
            .iter()
            .all(|i| !i.hash.is_empty() && hashed(Path::new(&i.path)).hash == i.hash);
    same.then(|| ModelResult {
        reused: true,
        ..old.clone()
    })
}

/// The reports of several shards (or runs) as one: the same schema, version and config, each
/// model once (in path order); the shard is dropped.
pub fn merge(reports: Vec<(String, CheckReport)>) -> Result<CheckReport> {
    let Some((_, first)) = reports.first() else {
        return Err(Error::invalid("merge", "reports", "no report given"));
    };
    let (version, config) = (first.version.clone(), first.config.clone());
    let mut models: Vec<ModelResult> = Vec::new();
    for (file, r) in reports {
        if r.schema != SCHEMA || r.version != version || r.config != config {
            return Err(Error::invalid(
                &file,
                "schema, version, config",
                format!(
                    "{} of skinview {} differs from the first report's (skinview {version}): \
                     reports merge only when made alike",
                    r.schema, r.version
                ),
            ));
        }
        models.extend(r.models);
    }
    models.sort_by(|a, b| a.path.cmp(&b.path));
    models.dedup_by(|a, b| a.path == b.path);
    Ok(CheckReport::new(config, None, models))
}
