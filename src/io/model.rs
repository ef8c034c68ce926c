//! What a model argument names — a `.gltf`/`.glb` file, an `.fbx` file, a native `.rig.json`,
//! or a built-in
//! (`builtin:arm`, `builtin:humanoid`) — and loading it once into everything the commands,
//! the tests and the viewer need: the scene, and for native rigs the rig with its per-bone
//! metadata (lengths, joint limits, sections, links) that the animation stage uses.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::files::{FileSet, ImportOptions};
use crate::builtin::Builtin;
use crate::character::{Character, CharacterSetup};
use crate::error::Result;
use crate::rig::{RigScene, WeberRig};
use crate::scene::Scene;

/// Where a model comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSource {
    /// A rig generated in code.
    Builtin(Builtin),
    /// A `.gltf` / `.glb` file, an `.fbx` file, or a native rig file (`.json`, e.g.
    /// `*.rig.json`).
    File(PathBuf),
    /// The model `main` among files held in memory (the web page's dropped or fetched files;
    /// its buffers and images come from the same set).
    Memory {
        /// The model file's name in the set.
        main: String,
        /// The files.
        set: Arc<FileSet>,
    },
}

impl ModelSource {
    /// The default model: the built-in Woodland arm.
    pub const DEFAULT: ModelSource = ModelSource::Builtin(Builtin::Arm);

    /// `builtin:NAME` or a file path; an unknown `builtin:` name is an error listing the known
    /// ones.
    pub fn parse(text: &str) -> Result<ModelSource> {
        Ok(match Builtin::parse(text)? {
            Some(b) => ModelSource::Builtin(b),
            None => ModelSource::File(PathBuf::from(text)),
        })
    }

    /// A path argument as given on a command line (`None` = [`ModelSource::DEFAULT`]).
    pub fn from_arg(arg: Option<&Path>) -> Result<ModelSource> {
        Self::from_arg_or(arg, Self::DEFAULT)
    }

    /// [`ModelSource::from_arg`] with another default (`view` and `bench` play the humanoid).
    pub fn from_arg_or(arg: Option<&Path>, default: ModelSource) -> Result<ModelSource> {
        match arg {
            None => Ok(default),
            Some(p) => match p.to_str() {
                Some(s) => Self::parse(s),
                None => Ok(ModelSource::File(p.to_path_buf())),
            },
        }
    }

    /// Built-ins and `.json` files are native Weber rigs.
    pub fn is_native(&self) -> bool {
        match self {
            ModelSource::Builtin(_) => true,
            ModelSource::File(p) => is_rig_json(p),
            ModelSource::Memory { main, .. } => is_rig_json(Path::new(main)),
        }
    }

    /// An `.fbx` file (read by `io::fbx`; `export` writes it from its scene).
    pub fn is_fbx(&self) -> bool {
        match self {
            ModelSource::Builtin(_) => false,
            ModelSource::File(p) => is_fbx(p),
            ModelSource::Memory { main, .. } => is_fbx(Path::new(main)),
        }
    }

    /// How the source is named in messages.
    pub fn label(&self) -> String {
        match self {
            ModelSource::Builtin(b) => b.name().to_string(),
            ModelSource::File(p) => p.display().to_string(),
            ModelSource::Memory { main, .. } => main.clone(),
        }
    }

    /// Load the source (one import, one conversion for native rigs); external URIs only
    /// inside the model's folder.
    pub fn load(&self) -> Result<Model> {
        self.load_with(ImportOptions::default())
    }

    /// Load the source under `options`.
    pub fn load_with(&self, options: ImportOptions) -> Result<Model> {
        let (scene, rig, files) = match self {
            ModelSource::Builtin(b) => {
                let weber = b.rig()?;
                let rs = weber.to_scene()?;
                (b.scene()?, Some(NativeRig { weber, scene: rs }), Vec::new())
            }
            ModelSource::File(p) if is_rig_json(p) => {
                let weber = super::rig_json::read(p)?;
                let rs = weber.to_scene()?;
                let canonical = p.canonicalize().unwrap_or_else(|_| p.clone());
                (
                    rs.scene.clone(),
                    Some(NativeRig { weber, scene: rs }),
                    vec![canonical],
                )
            }
            ModelSource::File(p) if is_fbx(p) => {
                let (scene, files) = import_fbx(p, options)?;
                (scene, None, files)
            }
            ModelSource::File(p) => {
                let (scene, files) = super::gltf_import::import_file_with(p, options)?;
                (scene, None, files)
            }
            ModelSource::Memory { main, set } if is_rig_json(Path::new(main)) => {
                let weber = super::rig_json::parse_bytes(set.file(main)?, main)?;
                let rs = weber.to_scene()?;
                (
                    rs.scene.clone(),
                    Some(NativeRig { weber, scene: rs }),
                    vec![PathBuf::from(main)],
                )
            }
            ModelSource::Memory { main, set } if is_fbx(Path::new(main)) => {
                let (scene, files) = import_fbx_memory(main, set.clone(), options)?;
                (scene, None, files)
            }
            ModelSource::Memory { main, set } => {
                let (scene, files) = super::gltf_import::import_memory(main, set.clone(), options)?;
                (scene, None, files)
            }
        };
        Ok(Model {
            source: self.clone(),
            scene,
            rig,
            files,
        })
    }
}

fn is_fbx(p: &Path) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case("fbx"))
}

#[cfg(any(not(target_arch = "wasm32"), feature = "web"))]
fn import_fbx(path: &Path, options: ImportOptions) -> Result<(Scene, Vec<PathBuf>)> {
    super::fbx::import_file_with(path, options)
}

#[cfg(any(not(target_arch = "wasm32"), feature = "web"))]
fn import_fbx_memory(
    main: &str,
    set: Arc<FileSet>,
    options: ImportOptions,
) -> Result<(Scene, Vec<PathBuf>)> {
    super::fbx::import_memory(main, set, options)
}

/// The lean wasm library (no `web` feature) has no FBX reader: ufbx is C, built only for the
/// page.
#[cfg(all(target_arch = "wasm32", not(feature = "web")))]
fn import_fbx(path: &Path, _options: ImportOptions) -> Result<(Scene, Vec<PathBuf>)> {
    Err(fbx_on_the_web(&super::file_label(path)))
}

#[cfg(all(target_arch = "wasm32", not(feature = "web")))]
fn import_fbx_memory(
    main: &str,
    _set: Arc<FileSet>,
    _options: ImportOptions,
) -> Result<(Scene, Vec<PathBuf>)> {
    Err(fbx_on_the_web(main))
}

#[cfg(all(target_arch = "wasm32", not(feature = "web")))]
fn fbx_on_the_web(file: &str) -> crate::error::Error {
    crate::error::Error::invalid(
        file,
        "file type",
        "FBX is not read by this build (its reader, ufbx, is C, built only with the `web` \
         feature); convert it on the desktop with `skinview export FILE.fbx` to a .glb",
    )
}

fn is_rig_json(p: &Path) -> bool {
    p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

/// A native rig in both of its forms.
#[derive(Clone, Debug)]
pub struct NativeRig {
    /// The rig as its file holds it (what `export FILE.rig.json` writes).
    pub weber: WeberRig,
    /// The rig converted to the internal skeleton, with per-node bone metadata.
    pub scene: RigScene,
}

/// A loaded model.
#[derive(Clone, Debug)]
pub struct Model {
    /// Where it came from.
    pub source: ModelSource,
    /// The scene every path draws and skins.
    pub scene: Scene,
    /// Native rigs (built-ins and `.rig.json`): the rig, for layers, IK limits and bone links.
    pub rig: Option<NativeRig>,
    /// Every file the model was read from (canonical; the model file first, then external
    /// buffers and images): what no command may write over.
    pub files: Vec<PathBuf>,
}

impl Model {
    /// Refuse `output` when it is one of the files the model was read from (same canonical
    /// path, or the same file through another name): a command never overwrites its input.
    pub fn refuse_as_output(&self, output: &Path) -> Result<()> {
        super::output::refuse_inputs(output, &self.files)
    }

    /// A character playing `setup` on this model: the animation stage on a native rig, a clip
    /// on any scene ([`CharacterSetup::build_rig`], [`CharacterSetup::build`]).
    pub fn character(&self, setup: &CharacterSetup) -> Result<Character> {
        match &self.rig {
            Some(rig) => setup.build_rig(&rig.scene),
            None => setup.build(&self.scene),
        }
    }
}

/// Load a model argument (`None` = the built-in arm).
pub fn load(arg: Option<&Path>) -> Result<Model> {
    ModelSource::from_arg(arg)?.load()
}
