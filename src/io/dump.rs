//! The `skinview dump` exchange format (JSON): world-space skinned/morphed positions and
//! normals per (node, primitive) at given times, in glTF accessor vertex order, so any other
//! engine can be compared with ours. `../shared/oracle_ref/` uses the same layout.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::scene::Scene;
use crate::skin::{RunningError, SkinnedVertices, position_error};

/// A whole dump: one entry per deformed draw, sampled at every time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Dump {
    /// Model name (the scene's name).
    pub model: String,
    /// Animation played (index into the scene's animations); `None` = rest pose.
    pub anim: Option<usize>,
    /// Sample times in seconds.
    pub times: Vec<f64>,
    /// One entry per deformed draw, in `Scene::deformed_draws` order.
    pub meshes: Vec<DumpMesh>,
}

/// Positions and normals of one deformed (node, primitive) pair over all times.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DumpMesh {
    /// Node index in the source file (glTF node index).
    pub node_index: usize,
    /// Node name, if any.
    pub node_name: Option<String>,
    /// Mesh index (glTF mesh index).
    pub mesh_index: usize,
    /// Primitive index within the mesh.
    pub primitive_index: usize,
    /// Vertices of the primitive.
    pub vertex_count: usize,
    /// Per time: x,y,z per vertex.
    pub positions_by_time: Vec<Vec<f32>>,
    /// Per time: unit normals, or null when the primitive has none.
    pub normals_by_time: Option<Vec<Vec<f32>>>,
}

impl Dump {
    /// Assemble from `frames[time][k]`, the skinned output of the k-th deformed draw
    /// (`Scene::deformed_draws` order) at `times[time]`.
    pub fn new(
        scene: &Scene,
        anim: Option<usize>,
        times: &[f32],
        frames: &[Vec<SkinnedVertices>],
    ) -> Dump {
        let mut meshes = Vec::new();
        for (k, d) in scene.deformed_draws().enumerate() {
            let node = &scene.nodes[d.node];
            let has_normals = scene.primitive(d).normals.is_some();
            let flat3 =
                |v: &[glam::Vec3]| v.iter().flat_map(|p| p.to_array()).collect::<Vec<f32>>();
            meshes.push(DumpMesh {
                node_index: node.source_index,
                node_name: node.name.clone(),
                mesh_index: d.mesh,
                primitive_index: d.primitive,
                vertex_count: scene.primitive(d).vertex_count(),
                positions_by_time: frames.iter().map(|f| flat3(&f[k].positions)).collect(),
                normals_by_time: has_normals.then(|| {
                    frames
                        .iter()
                        .map(|f| f[k].normals.as_deref().map(flat3).unwrap_or_default())
                        .collect()
                }),
            });
        }
        Dump {
            model: scene.name.clone(),
            anim,
            times: times.iter().map(|&t| t as f64).collect(),
            meshes,
        }
    }

    /// Read a dump from a JSON file.
    pub fn read(path: &Path) -> Result<Dump> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_str(&text)
            .map_err(|e| Error::invalid(&path.display().to_string(), "json", e.to_string()))
    }

    /// Write the dump as JSON to `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string(self).map_err(|e| Error::Output {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        super::output::write_file(path, text.as_bytes())
    }

    /// Bounding-box diagonal of all finite positions at the first time (the error scale; 0
    /// without any).
    pub fn diagonal(&self) -> f64 {
        let first = self
            .meshes
            .iter()
            .filter_map(|m| m.positions_by_time.first());
        let points = first.flat_map(|p| p.chunks_exact(3).map(glam::Vec3::from_slice));
        crate::math::finite_bounds(points).map_or(0.0, crate::math::bounds_diagonal_f64)
    }
}

/// Writes a dump as its frames come, so memory stays flat in the number of times: each mesh
/// entry's arrays go to spill files in a folder beside the output (the layout is mesh-major,
/// the frames come time-major), and [`DumpWriter::finish`] streams the header and the spill
/// files into the output (through a temporary file renamed into place) and removes the
/// folder. The bytes are those `serde_json` writes for the same [`Dump`].
pub struct DumpWriter {
    out: std::path::PathBuf,
    spill: std::path::PathBuf,
    model: String,
    anim: Option<usize>,
    times: Vec<f64>,
    meshes: Vec<SpillMesh>,
    pushed: usize,
}

/// One mesh entry's metadata and spill files (positions, normals when it has them).
struct SpillMesh {
    meta: DumpMesh,
    positions: std::io::BufWriter<std::fs::File>,
    normals: Option<std::io::BufWriter<std::fs::File>>,
}

impl DumpWriter {
    /// Start a dump of `scene`'s deformed draws at `times` of `anim`, to be written to `out`.
    pub fn create(
        out: &Path,
        scene: &Scene,
        anim: Option<usize>,
        times: &[f32],
    ) -> Result<DumpWriter> {
        let io = |source: std::io::Error, path: &Path| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let dir = match out.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut name = std::ffi::OsString::from(".");
        name.push(out.file_name().unwrap_or_default());
        name.push(format!(".{}.parts", std::process::id()));
        let spill = dir.join(name);
        // A stale folder of the same name (a crashed run with this process id) goes first.
        if spill.symlink_metadata().is_ok() {
            let _ = std::fs::remove_dir_all(&spill);
            let _ = std::fs::remove_file(&spill);
        }
        std::fs::create_dir(&spill).map_err(|e| io(e, &spill))?;
        let mut writer = DumpWriter {
            out: out.to_path_buf(),
            spill,
            model: scene.name.clone(),
            anim,
            times: times.iter().map(|&t| t as f64).collect(),
            meshes: Vec::new(),
            pushed: 0,
        };
        for (k, d) in scene.deformed_draws().enumerate() {
            let node = &scene.nodes[d.node];
            let prim = scene.primitive(d);
            let file = |suffix: &str| -> Result<std::io::BufWriter<std::fs::File>> {
                let path = writer.spill.join(format!("{k}.{suffix}"));
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path)
                    .map(std::io::BufWriter::new)
                    .map_err(|e| io(e, &path))
            };
            let positions = file("positions")?;
            let normals = match prim.normals.is_some() {
                true => Some(file("normals")?),
                false => None,
            };
            writer.meshes.push(SpillMesh {
                meta: DumpMesh {
                    node_index: node.source_index,
                    node_name: node.name.clone(),
                    mesh_index: d.mesh,
                    primitive_index: d.primitive,
                    vertex_count: prim.vertex_count(),
                    positions_by_time: Vec::new(),
                    normals_by_time: None,
                },
                positions,
                normals,
            });
        }
        Ok(writer)
    }

    /// Add the next time's frame: `frame[k]` is the k-th deformed draw's skinned output.
    pub fn push(&mut self, frame: &[SkinnedVertices]) -> Result<()> {
        if frame.len() != self.meshes.len() || self.pushed >= self.times.len() {
            return Err(Error::Output {
                path: self.out.clone(),
                message: format!(
                    "frame {} of {} with {} draws for {} mesh entries",
                    self.pushed + 1,
                    self.times.len(),
                    frame.len(),
                    self.meshes.len()
                ),
            });
        }
        let first = self.pushed == 0;
        let spill = self.spill.clone();
        let err = |e: std::io::Error| Error::Io {
            path: spill.clone(),
            source: e,
        };
        for (m, f) in self.meshes.iter_mut().zip(frame) {
            write_array(&mut m.positions, first, &f.positions).map_err(err)?;
            if let Some(w) = &mut m.normals {
                write_array(w, first, f.normals.as_deref().unwrap_or_default()).map_err(err)?;
            }
        }
        self.pushed += 1;
        Ok(())
    }

    /// Write the output (every time must have been pushed) and remove the spill files.
    pub fn finish(mut self) -> Result<()> {
        if self.pushed != self.times.len() {
            return Err(Error::Output {
                path: self.out.clone(),
                message: format!("{} of {} frames written", self.pushed, self.times.len()),
            });
        }
        let mut parts = Vec::with_capacity(self.meshes.len());
        for (k, m) in std::mem::take(&mut self.meshes).into_iter().enumerate() {
            let flush = |w: std::io::BufWriter<std::fs::File>| {
                w.into_inner().map(drop).map_err(|e| Error::Io {
                    path: self.spill.clone(),
                    source: e.into_error(),
                })
            };
            flush(m.positions)?;
            let has_normals = match m.normals {
                Some(w) => {
                    flush(w)?;
                    true
                }
                None => false,
            };
            parts.push((k, m.meta, has_normals));
        }
        let spill = &self.spill;
        let (model, anim, times) = (&self.model, self.anim, &self.times);
        super::output::write_file_with(&self.out, |w| {
            w.write_all(b"{\"model\":")?;
            json(w, model)?;
            w.write_all(b",\"anim\":")?;
            json(w, &anim)?;
            w.write_all(b",\"times\":")?;
            json(w, times)?;
            w.write_all(b",\"meshes\":[")?;
            for (i, (k, meta, has_normals)) in parts.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                w.write_all(b"{\"node_index\":")?;
                json(w, &meta.node_index)?;
                w.write_all(b",\"node_name\":")?;
                json(w, &meta.node_name)?;
                w.write_all(b",\"mesh_index\":")?;
                json(w, &meta.mesh_index)?;
                w.write_all(b",\"primitive_index\":")?;
                json(w, &meta.primitive_index)?;
                w.write_all(b",\"vertex_count\":")?;
                json(w, &meta.vertex_count)?;
                w.write_all(b",\"positions_by_time\":[")?;
                copy_file(&spill.join(format!("{k}.positions")), w)?;
                w.write_all(b"],\"normals_by_time\":")?;
                if *has_normals {
                    w.write_all(b"[")?;
                    copy_file(&spill.join(format!("{k}.normals")), w)?;
                    w.write_all(b"]")?;
                } else {
                    w.write_all(b"null")?;
                }
                w.write_all(b"}")?;
            }
            w.write_all(b"]}")
        })
    }
}

impl Drop for DumpWriter {
    fn drop(&mut self) {
        self.meshes.clear();
        let _ = std::fs::remove_dir_all(&self.spill);
    }
}

/// One time's array, `x,y,z,...` as serde_json writes it, after a comma unless it is the first.
fn write_array(w: &mut impl std::io::Write, first: bool, v: &[glam::Vec3]) -> std::io::Result<()> {
    if !first {
        w.write_all(b",")?;
    }
    let flat: &[f32] = bytemuck::cast_slice(v);
    serde_json::to_writer(&mut *w, flat).map_err(std::io::Error::other)
}

fn copy_file(path: &Path, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut f = std::fs::File::open(path)?;
    std::io::copy(&mut f, w).map(drop)
}

/// `v` as JSON into `w`.
fn json<T: Serialize + ?Sized>(w: &mut dyn std::io::Write, v: &T) -> std::io::Result<()> {
    serde_json::to_writer(w, v).map_err(std::io::Error::other)
}

/// Largest position and normal differences between two dumps of the same model and times.
#[derive(Clone, Debug, Default)]
pub struct DumpDiff {
    /// Largest Euclidean position difference (NaN counts as infinite).
    pub max_position: f64,
    /// Largest Euclidean normal difference (NaN counts as infinite), where both dumps have normals.
    pub max_normal: f64,
    /// (mesh entry, time index, vertex) of the largest position difference.
    pub worst: (usize, usize, usize),
}

/// Compare two dumps vertex by vertex; `Err` describes the first structural mismatch
/// (entry count, node/mesh/primitive/vertex count, time count or array length).
pub fn diff(a: &Dump, b: &Dump) -> std::result::Result<DumpDiff, String> {
    if a.meshes.len() != b.meshes.len() {
        return Err(format!(
            "{} mesh entries vs {}",
            a.meshes.len(),
            b.meshes.len()
        ));
    }
    let mut d = DumpDiff::default();
    let mut positions = RunningError::default();
    for (mi, (ma, mb)) in a.meshes.iter().zip(&b.meshes).enumerate() {
        if (
            ma.node_index,
            ma.mesh_index,
            ma.primitive_index,
            ma.vertex_count,
        ) != (
            mb.node_index,
            mb.mesh_index,
            mb.primitive_index,
            mb.vertex_count,
        ) {
            return Err(format!(
                "entry {mi}: node/mesh/primitive/count differ: {:?} vs {:?}",
                (
                    ma.node_index,
                    ma.mesh_index,
                    ma.primitive_index,
                    ma.vertex_count
                ),
                (
                    mb.node_index,
                    mb.mesh_index,
                    mb.primitive_index,
                    mb.vertex_count
                )
            ));
        }
        if ma.positions_by_time.len() != mb.positions_by_time.len() {
            return Err(format!("entry {mi}: time counts differ"));
        }
        for (ti, (pa, pb)) in ma
            .positions_by_time
            .iter()
            .zip(&mb.positions_by_time)
            .enumerate()
        {
            if pa.len() != pb.len() {
                return Err(format!(
                    "entry {mi} time {ti}: {} vs {} floats",
                    pa.len(),
                    pb.len()
                ));
            }
            for (v, (x, y)) in pa.chunks_exact(3).zip(pb.chunks_exact(3)).enumerate() {
                positions.add(distance(x, y), (mi, ti, v));
            }
        }
        if let (Some(na), Some(nb)) = (&ma.normals_by_time, &mb.normals_by_time) {
            for (xa, xb) in na.iter().zip(nb) {
                for (x, y) in xa.chunks_exact(3).zip(xb.chunks_exact(3)) {
                    d.max_normal = d.max_normal.max(distance(x, y));
                }
            }
        }
    }
    d.max_position = positions.max;
    d.worst = positions.worst.unwrap_or_default();
    Ok(d)
}

/// The distance between two x,y,z triples ([`position_error`]: NaN counts as infinite).
fn distance(x: &[f32], y: &[f32]) -> f64 {
    position_error(glam::Vec3::from_slice(x), glam::Vec3::from_slice(y))
}
