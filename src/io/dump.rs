//! The `skinview dump` exchange format (JSON): world-space skinned/morphed positions and
//! normals per (node, primitive) at given times, in glTF accessor vertex order, so any other
//! engine can be compared with ours. `../shared/oracle_ref/` uses the same layout.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::scene::Scene;
use crate::skin::SkinnedVertices;

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

    /// Bounding-box diagonal of all positions at the first time (the error scale).
    pub fn diagonal(&self) -> f64 {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for m in &self.meshes {
            if let Some(p) = m.positions_by_time.first() {
                for c in p.chunks_exact(3) {
                    for i in 0..3 {
                        lo[i] = lo[i].min(c[i] as f64);
                        hi[i] = hi[i].max(c[i] as f64);
                    }
                }
            }
        }
        if lo[0] > hi[0] {
            return 0.0;
        }
        ((hi[0] - lo[0]).powi(2) + (hi[1] - lo[1]).powi(2) + (hi[2] - lo[2]).powi(2)).sqrt()
    }
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
                let e = (0..3)
                    .map(|i| (x[i] as f64 - y[i] as f64).powi(2))
                    .sum::<f64>()
                    .sqrt();
                if e > d.max_position || e.is_nan() {
                    d.max_position = if e.is_nan() { f64::INFINITY } else { e };
                    d.worst = (mi, ti, v);
                }
            }
        }
        if let (Some(na), Some(nb)) = (&ma.normals_by_time, &mb.normals_by_time) {
            for (xa, xb) in na.iter().zip(nb) {
                for (x, y) in xa.chunks_exact(3).zip(xb.chunks_exact(3)) {
                    let e = (0..3)
                        .map(|i| (x[i] as f64 - y[i] as f64).powi(2))
                        .sum::<f64>()
                        .sqrt();
                    d.max_normal = d.max_normal.max(if e.is_nan() { f64::INFINITY } else { e });
                }
            }
        }
    }
    Ok(d)
}
