//! Arguments several commands share, and the parsers of the animation-stage flags. Every
//! flag name of the program lives in `src/cli/`.

use std::path::{Path, PathBuf};

use clap::Args;
use glam::Vec3;
use skinview::anim::CrossFade;
use skinview::character::{CharacterSpec, FadeDesc, IkGoal, LayerDesc, MaskSpec, MotionRef};
use skinview::gpu::{DEFAULT_UNIFORM_BONES, PaletteSource, Skinning};
use skinview::info::count;
use skinview::io::{ImportOptions, Model, ModelSource};
use skinview::partition::{MAX_BONES, MIN_BONES};
use skinview::skin::{NormalMode, SkinMode, SkinOptions};
use skinview::view::skeleton::BoneStyle;

use super::CliError;
use super::choice::choice;

/// Help shared by every MODEL argument.
pub const MODEL_HELP: &str = "Model: .gltf/.glb, .fbx, native .rig.json, or builtin:arm / \
    builtin:humanoid (default: the built-in arm)";

/// Largest influence limit accepted by `--max-influences` (the CPU path takes any number;
/// real rigs use up to 8, a few tools write 16).
pub const MAX_INFLUENCES_ARG: u64 = 64;

/// How vertices are skinned (`--blend`, `--normals`, `--no-renormalize`), on both paths.
#[derive(Args, Clone, Copy, Default)]
pub struct SkinArgs {
    /// The skinning blend: lbs (linear blend: blended matrices), dqs (dual quaternion: no
    /// collapse at twisted joints; Kavan et al., "Geometric Skinning with Approximate Dual
    /// Quaternion Blending", 2008) or stitch (each vertex follows the bone of its largest
    /// weight alone; Woodland, "Filling the Gaps: Advanced Animation Using Stitching and
    /// Skinning").
    #[arg(long, alias = "mode", value_parser = choice::<SkinMode>(), default_value = "lbs")]
    pub blend: SkinMode,
    /// How normals follow the blend: exact (the inverse-transpose, right under any scale) or
    /// blend3x3 (the blended matrix itself, as most engines do: cheaper, wrong under
    /// non-uniform scale).
    #[arg(long, value_parser = choice::<NormalMode>(), default_value = "exact")]
    pub normals: NormalMode,
    /// Leave skinned normals and tangents as the blend makes them (normals shorter where
    /// rotations blend, tangents not made perpendicular to them) instead of scaling them back
    /// to unit length.
    #[arg(long)]
    pub no_renormalize: bool,
}

impl SkinArgs {
    /// The options these flags name.
    pub fn options(&self) -> SkinOptions {
        SkinOptions {
            mode: self.blend,
            normals: self.normals,
            renormalize: !self.no_renormalize,
        }
    }
}

/// The skeleton flags `render` and `view` share: the skeleton's style, the bones left out, and
/// the rest and bind ghosts.
#[derive(Args, Clone, Debug, Default)]
pub struct SkeletonArgs {
    /// Draw the skeleton in front of the mesh (the viewer: start with it drawn), one bone per
    /// joint with its axes, in a style: octahedral (the default, as Blender), stick, or spheres
    /// (joints as spheres, as Babylon's skeleton viewer); e.g. --skeleton or --skeleton=stick.
    #[arg(long, value_parser = super::choice::choice::<BoneStyle>(), num_args = 0..=1, require_equals = true, default_missing_value = "octahedral")]
    pub skeleton: Option<BoneStyle>,
    /// With --skeleton: leave out the bones that move no vertex (control and end bones).
    #[arg(long)]
    pub hide_unweighted_bones: bool,
    /// Draw the rest pose (the nodes' own transforms) as a ghost skeleton, each joint with its
    /// axes (X red, Y green, Z blue).
    #[arg(long)]
    pub rest_pose: bool,
    /// Draw the bind pose (where the inverse bind matrices put the joints) as a ghost
    /// skeleton with axes; joints whose bind and rest disagree (as `check` reports) are red.
    #[arg(long)]
    pub bind_pose: bool,
}

impl SkeletonArgs {
    /// Checks `--hide-unweighted-bones`: it leaves bones out of the skeleton, so it asks for
    /// `--skeleton`.
    pub fn check(&self) -> Result<(), CliError> {
        match self.hide_unweighted_bones && self.skeleton.is_none() {
            true => Err(CliError::Usage(
                "--hide-unweighted-bones leaves bones out of the skeleton: add --skeleton (the \
                 viewer's Shift + K toggles it too)"
                    .into(),
            )),
            false => Ok(()),
        }
    }

    /// Each flag given, by name (what a view without a skeleton, the crowd's, refuses).
    pub fn given(&self) -> [(bool, &'static str); 4] {
        [
            (self.skeleton.is_some(), "--skeleton"),
            (self.hide_unweighted_bones, "--hide-unweighted-bones"),
            (self.rest_pose, "--rest-pose"),
            (self.bind_pose, "--bind-pose"),
        ]
    }
}

/// Checks a GPU skinning choice (`--skin`, or its alias `--skinning`, where only the GPU's ways
/// make sense): the CPU is refused with `cpu_hint`, and the compute pass on the uniform palette
/// (the pass reads the storage palette).
pub fn check_gpu_skinning(
    skinning: Skinning,
    palette: PaletteSource,
    cpu_hint: &str,
) -> Result<(), CliError> {
    match skinning {
        Skinning::Cpu => Err(CliError::Usage(format!(
            "--skin cpu: this command skins on the GPU (vertex or compute); {cpu_hint}"
        ))),
        Skinning::ComputePass if palette != PaletteSource::Storage => {
            Err(CliError::Usage(format!(
                "--skin compute reads the storage palette; the {} skins in the vertex shader \
                 (--skin vertex)",
                palette.describe()
            )))
        }
        _ => Ok(()),
    }
}

/// Where the GPU skinning reads its palette (`--palette`, `--max-bones`).
#[derive(Args, Clone, Copy, Default)]
pub struct PaletteArgs {
    /// Where the GPU skinning reads the joint matrices: storage (one buffer for the frame, any
    /// number of joints per draw) or uniform (an array of K matrices per draw, each mesh split
    /// into submeshes of at most K bones: what GL ES / WebGL2-class adapters can run).
    /// Default: storage where the adapter reads storage buffers in the vertex stage, else
    /// uniform.
    #[arg(long, value_parser = choice::<PaletteSource>())]
    pub palette: Option<PaletteSource>,
    /// K, the uniform palette's size: bones per submesh, 4..=1024 (default 64; at most what
    /// the adapter's uniform buffers hold). Without --palette it means --palette uniform.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(MIN_BONES as u64..=MAX_BONES as u64))]
    pub max_bones: Option<u64>,
}

impl PaletteArgs {
    /// The palette source asked for (`None`: the adapter's choice). `--max-bones` with
    /// `--palette storage` is refused.
    pub fn requested(&self) -> Result<Option<PaletteSource>, CliError> {
        match (self.palette, self.max_bones) {
            (Some(PaletteSource::Storage), Some(_)) => Err(CliError::Usage(
                "--max-bones is the uniform palette's size; --palette storage has no bone limit"
                    .into(),
            )),
            (Some(PaletteSource::Storage), None) => Ok(Some(PaletteSource::Storage)),
            (Some(PaletteSource::Uniform { .. }), k) | (None, k @ Some(_)) => {
                Ok(Some(PaletteSource::Uniform {
                    bones: k.map_or(DEFAULT_UNIFORM_BONES, |k| k as u32),
                }))
            }
            (None, None) => Ok(None),
        }
    }
}

/// The CPU animation stage for a native rig (layers, cross-fade, IK); see
/// `skinview::character`.
#[derive(Args, Clone, Default)]
pub struct StageArgs {
    /// Motion layer MOTION[:MASK[:WEIGHT]] (repeatable): MOTION is a name or index, MASK is
    /// `all`, BONE (its subtree) or !BONE (all but its subtree). E.g. --layer run:!spine
    /// --layer throw:spine
    #[arg(long = "layer", allow_hyphen_values = true, value_parser = parse_layer)]
    pub layers: Vec<LayerDesc>,
    /// Cross-fade FROM_LAYER:TO_LAYER:START_S:DURATION_S between two --layer entries
    /// (0-based).
    #[arg(long, allow_hyphen_values = true, value_parser = parse_fade)]
    pub fade: Option<FadeDesc>,
    /// IK effector END_BONE:CHAIN_LENGTH:X,Y,Z[:WEIGHT] (repeatable): the end bone's tip
    /// reaches the model-space target, within the rig's joint limits.
    #[arg(long = "ik", allow_hyphen_values = true, value_parser = parse_ik)]
    pub ik: Vec<IkGoal>,
}

impl StageArgs {
    /// Any stage flag given.
    pub fn is_set(&self) -> bool {
        !self.layers.is_empty() || self.fade.is_some() || !self.ik.is_empty()
    }

    /// The spec for a native rig: the given layers, or one full-body layer of `anim`.
    pub fn spec(&self, anim: Option<usize>, links: bool) -> CharacterSpec {
        let mut spec = CharacterSpec::single(anim.map(MotionRef::Index));
        if !self.layers.is_empty() {
            spec.layers = self.layers.clone();
        }
        spec.fade = self.fade;
        spec.ik = self.ik.clone();
        spec.links = links;
        spec
    }
}

/// `--layer MOTION[:MASK[:WEIGHT]]`.
pub fn parse_layer(s: &str) -> Result<LayerDesc, String> {
    let mut parts = s.split(':');
    let motion = parts
        .next()
        .filter(|m| !m.is_empty())
        .ok_or("layer needs a motion: MOTION[:MASK[:WEIGHT]]")?
        .parse::<MotionRef>()?;
    let mask = match parts.next() {
        None => MaskSpec::All,
        Some(m) => m.parse::<MaskSpec>()?,
    };
    let weight = match parts.next() {
        None => 1.0,
        Some(w) => w
            .parse::<f32>()
            .ok()
            .filter(|w| w.is_finite() && *w >= 0.0)
            .ok_or(format!("layer weight {w:?} is not a finite number >= 0"))?,
    };
    if parts.next().is_some() {
        return Err(format!("{s:?}: too many ':' (MOTION[:MASK[:WEIGHT]])"));
    }
    Ok(LayerDesc {
        motion,
        mask,
        weight,
    })
}

/// `--fade FROM:TO:START_S:DURATION_S`.
pub fn parse_fade(s: &str) -> Result<FadeDesc, String> {
    let p: Vec<&str> = s.split(':').collect();
    let bad = || format!("{s:?}: expected FROM_LAYER:TO_LAYER:START_S:DURATION_S");
    if p.len() != 4 {
        return Err(bad());
    }
    let from = p[0].parse().map_err(|_| bad())?;
    let to = p[1].parse().map_err(|_| bad())?;
    let start_s: f32 = p[2].parse().map_err(|_| bad())?;
    let duration_s: f32 = p[3].parse().map_err(|_| bad())?;
    if !start_s.is_finite() || !duration_s.is_finite() || duration_s < 0.0 {
        return Err(bad());
    }
    Ok(FadeDesc {
        from,
        to,
        fade: CrossFade {
            start_s,
            duration_s,
        },
    })
}

/// `--ik END_BONE:CHAIN_LENGTH:X,Y,Z[:WEIGHT]`.
pub fn parse_ik(s: &str) -> Result<IkGoal, String> {
    let p: Vec<&str> = s.split(':').collect();
    let bad = |why: &str| format!("{s:?}: {why} (END_BONE:CHAIN_LENGTH:X,Y,Z[:WEIGHT])");
    if p.len() < 3 || p.len() > 4 || p[0].is_empty() {
        return Err(bad("wrong number of parts"));
    }
    let chain_length: usize = p[1]
        .parse()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| bad("chain length must be >= 1"))?;
    let xyz: Vec<f32> = p[2]
        .split(',')
        .map(|v| v.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad("target must be X,Y,Z"))?;
    if xyz.len() != 3 || xyz.iter().any(|v| !v.is_finite()) {
        return Err(bad("target must be three finite numbers"));
    }
    let weight = match p.get(3) {
        None => 1.0,
        Some(w) => w
            .parse::<f32>()
            .ok()
            .filter(|w| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| bad("weight must be >= 0"))?,
    };
    Ok(IkGoal {
        end_bone: p[0].to_string(),
        chain_length,
        target_m: Vec3::new(xyz[0], xyz[1], xyz[2]),
        weight,
    })
}

/// `--anim N|NAME|none` (default: animation 0 when the model has one).
pub fn parse_anim(model: &Model, arg: Option<&str>) -> Result<Option<usize>, CliError> {
    let scene = &model.scene;
    match arg {
        None => Ok(if scene.animations.is_empty() {
            None
        } else {
            Some(0)
        }),
        Some("none") => Ok(None),
        Some(s) => scene.find_animation(s).map(Some).map_err(|e| {
            let closest = match &e {
                skinview::Error::UnknownAnimation { closest, .. } => closest.as_slice(),
                _ => &[],
            };
            CliError::Usage(format!(
                "--anim {s}: {} has {}{}; give an index, a name, or \"none\"{}",
                scene.name,
                count(scene.animations.len(), "animation", "animations"),
                animation_names(model),
                skinview::error::did_you_mean(closest)
            ))
        }),
    }
}

fn animation_names(model: &Model) -> String {
    let names: Vec<String> = model
        .scene
        .animations
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{i} {}", a.name.as_deref().unwrap_or("(unnamed)")))
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!(" ({})", names.join(", "))
    }
}

/// `--size WxH`.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("must look like 640x480, not {s:?}");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    );
    if !(1..=MAX_SIDE_PX).contains(&w) || !(1..=MAX_SIDE_PX).contains(&h) {
        return Err(format!("{w}x{h}: each side 1..={MAX_SIDE_PX} pixels"));
    }
    if w as u64 * h as u64 > MAX_PIXELS {
        return Err(format!(
            "{w}x{h}: {} pixels, more than {MAX_PIXELS} (4096x2048)",
            w as u64 * h as u64
        ));
    }
    Ok((w, h))
}

/// Longest image side accepted by `--size` (the common GPU texture limit; a smaller adapter
/// limit is checked when the target is made).
pub const MAX_SIDE_PX: u32 = 8192;

/// Most pixels accepted by `--size`: 8 Mpx (4096x2048; 4K UHD fits). At 4× MSAA with depth
/// that is ~0.3 GiB of GPU memory; the software rasteriser (lavapipe) renders the largest
/// split, heatmap and wireframe views of it within a 2 GB address space (`ulimit -v`), where
/// 4096x4096 ran out of memory.
pub const MAX_PIXELS: u64 = 4096 * 2048;

/// The model argument of a command.
#[derive(Args, Clone)]
pub struct ModelArg {
    #[doc = "Model: .gltf/.glb, .fbx, native .rig.json, or builtin:arm / builtin:humanoid"]
    #[arg(help = MODEL_HELP)]
    pub model: Option<PathBuf>,
    /// Follow buffer and image URIs that lead outside the model's folder (absolute paths,
    /// `..`, symlinks, hidden files). Off by default: a model file cannot make skinview read
    /// other files.
    #[arg(long)]
    pub allow_external_uris: bool,
}

/// Load the model at `path` (a file or `builtin:` name), and refuse any of `outputs` that is one
/// of the files it was read from (the commands that take two models: `diff`, `retarget`).
pub fn load_path(
    path: &Path,
    import: ImportOptions,
    outputs: &[Option<&Path>],
) -> Result<Model, CliError> {
    load_refusing(|| Ok(ModelSource::from_arg(Some(path))?), import, outputs)
}

/// The outputs checked first (none naming one file, every folder there), then the model
/// loaded from `source` and each output refused that is one of the files it was read from.
fn load_refusing(
    source: impl FnOnce() -> Result<ModelSource, CliError>,
    import: ImportOptions,
    outputs: &[Option<&Path>],
) -> Result<Model, CliError> {
    let written: Vec<&Path> = outputs.iter().flatten().copied().collect();
    skinview::io::output::check_outputs(&written)?;
    let model = source()?.load_with(import)?;
    for out in written {
        model.refuse_as_output(out)?;
    }
    Ok(model)
}

impl ModelArg {
    /// Where it comes from (the built-in arm when absent).
    pub fn source(&self) -> Result<ModelSource, CliError> {
        Ok(ModelSource::from_arg(self.model.as_deref())?)
    }

    /// How external files may be read.
    pub fn import_options(&self) -> ImportOptions {
        ImportOptions {
            allow_external_uris: self.allow_external_uris,
        }
    }

    /// Load it, and refuse any of `outputs` that is one of the files it was read from (first of
    /// all, outputs that name one file or a folder that does not exist).
    pub fn load_writing(&self, outputs: &[Option<&Path>]) -> Result<Model, CliError> {
        self.load_writing_or(ModelSource::DEFAULT, outputs)
    }

    /// [`ModelArg::load_writing`] with `default` when no model is given (`render --crowd`
    /// shows a crowd of the humanoid, as `view` does).
    pub fn load_writing_or(
        &self,
        default: ModelSource,
        outputs: &[Option<&Path>],
    ) -> Result<Model, CliError> {
        let source = || Ok(ModelSource::from_arg_or(self.model.as_deref(), default)?);
        load_refusing(source, self.import_options(), outputs)
    }
}

/// An animation in words: `animation 0 "walk" (2.000 s)`, or `the rest pose` for none.
pub fn describe_anim(scene: &skinview::scene::Scene, anim: Option<usize>) -> String {
    match anim.and_then(|i| scene.animations.get(i).map(|a| (i, a))) {
        Some((i, a)) => format!("{} ({:.3} s)", scene.clip_name(i).indexed(), a.duration_s()),
        None => "the rest pose".into(),
    }
}

/// A note for times outside animation `anim`'s keys: glTF holds the first and last values
/// there, so the pose is the clip's first or last one.
pub fn note_time_outside(scene: &skinview::scene::Scene, anim: usize, times_s: &[f32]) {
    let Some(a) = scene.animations.get(anim) else {
        return;
    };
    let end = a.duration_s();
    let after = times_s.iter().filter(|&&t| t > end).count();
    let before = times_s.iter().filter(|&&t| t < 0.0).count();
    // The clip's span, not `describe_anim`'s length alone: "before the start of walk (2 s)"
    // read as if the clip started at 2 s.
    let what = format!("{} (0 to {end:.3} s)", scene.clip_name(anim).indexed());
    let times = |n: usize, one: f32| {
        if times_s.len() == 1 {
            format!("t = {one} s is")
        } else {
            format!("{n} of the times are")
        }
    };
    if after > 0 {
        let first = times_s.iter().copied().find(|&t| t > end).unwrap_or(end);
        eprintln!(
            "note: {} past the end of {what}: the clip's last pose is shown (glTF holds the last \
             keys)",
            times(after, first)
        );
    }
    if before > 0 {
        let first = times_s.iter().copied().find(|&t| t < 0.0).unwrap_or(0.0);
        eprintln!(
            "note: {} before the start of {what}: the clip's first pose is shown (glTF holds the \
             first keys)",
            times(before, first)
        );
    }
}

/// An IK outcome in words: every effector on its target, or how far the worst one is off.
pub fn describe_ik(r: &skinview::ik::IkResult) -> String {
    let worst = r.residual_m.iter().copied().fold(0.0f32, f32::max);
    if r.residual_m.is_empty() {
        "has no effector".into()
    } else if r.reached {
        format!("on target (within {:.2} mm)", worst * 1000.0)
    } else {
        format!("target out of reach by {:.2} mm", worst * 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Command-line specs parse as documented and reject malformed parts with a reason.
    #[test]
    fn stage_specs_parse_and_reject_bad_input() {
        let l = parse_layer("run:!spine:0.5").expect("a valid layer spec");
        assert_eq!(
            (l.motion.clone(), l.mask.clone(), l.weight),
            (
                MotionRef::Name("run".into()),
                MaskSpec::Except("spine".into()),
                0.5
            )
        );
        let l = parse_layer("2").expect("a valid layer spec");
        assert_eq!(
            (l.motion, l.mask, l.weight),
            (MotionRef::Index(2), MaskSpec::All, 1.0)
        );
        assert_eq!(
            parse_layer("throw:spine").expect("a valid layer spec").mask,
            MaskSpec::Subtree("spine".into())
        );
        for bad in ["", "run:spine:-1", "run:spine:x", "a:b:1:2"] {
            assert!(parse_layer(bad).is_err(), "{bad:?} parsed");
        }
        let ik = parse_ik("l_hand:3:0.1,1.2,-0.3:0.5").expect("a valid IK spec");
        assert_eq!(
            (
                ik.end_bone.as_str(),
                ik.chain_length,
                ik.target_m,
                ik.weight
            ),
            ("l_hand", 3, glam::Vec3::new(0.1, 1.2, -0.3), 0.5)
        );
        for bad in [
            "l_hand",
            "l_hand:0:1,2,3",
            "l_hand:2:1,2",
            "l_hand:2:1,2,nan",
            ":2:1,2,3",
            "l_hand:2:1,2,3:-1",
        ] {
            assert!(parse_ik(bad).is_err(), "{bad:?} parsed");
        }
        let f = parse_fade("0:1:0.5:0.25").expect("a valid fade spec");
        assert_eq!(
            (f.from, f.to, f.fade.start_s, f.fade.duration_s),
            (0, 1, 0.5, 0.25)
        );
        assert!(parse_fade("0:1:0.5").is_err() && parse_fade("0:1:0.5:-1").is_err());
    }

    #[test]
    fn sizes_parse_and_reject_bad_input() {
        assert_eq!(parse_size("640x480"), Ok((640, 480)));
        assert_eq!(parse_size("64X32"), Ok((64, 32)));
        for bad in ["banana", "640", "x480", "-1x2", "1.5x2"] {
            assert!(parse_size(bad).is_err(), "{bad:?} parsed");
        }
    }
}
