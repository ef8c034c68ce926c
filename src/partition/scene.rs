//! A scene made drawable with a `K`-matrix palette: every skinned draw is replaced by one draw
//! per submesh of its primitive ([`super::partition`]), each with its own skin listing the
//! submesh's bones (at most `K` joints, inverse binds copied), so every later stage — the
//! palette job, the CPU reference, the GPU draw — runs on it unchanged and each draw's palette
//! has at most `K` matrices. A joint's palette matrix does not depend on which skin lists it
//! (`model_from_node[joint] · joint_from_bind`), so skinning a submesh gives bit-for-bit the
//! original vertex's result when no influence was dropped.
//!
//! [`PartitionedScene::scatter`] maps the partitioned draws' outputs back onto the original
//! draws' vertices, which is how the uniform-palette path is compared with the unpartitioned
//! reference. Vertices no face uses are in no submesh (they are never drawn) and are left as
//! they were in the destination.

use crate::error::{Error, Result};
use crate::frame::{CpuSkinner, FrameState};
use crate::math::bounds_diagonal;
use crate::scene::{Draw, MorphTarget, Primitive, Scene, Skin, SkinWeights};
use crate::skin::{SkinnedVertices, bounds, nan_as_infinite};

use super::split::{MIN_BONES, Partition, partition};

/// Most bones a palette may be limited to (far above any uniform array: 64 KiB of uniforms
/// hold 1024 matrices), so a typo cannot ask for a useless split.
pub const MAX_BONES: usize = 1024;

/// One partitioned primitive of the source scene.
#[derive(Clone, Debug)]
pub struct PrimitivePartition {
    /// Mesh index (same in both scenes).
    pub mesh: usize,
    /// Primitive index in the source mesh.
    pub primitive: usize,
    /// The split.
    pub partition: Partition,
    /// Index in the partitioned scene's `meshes[mesh].primitives` of submesh 0 (the others
    /// follow).
    pub first_primitive: usize,
}

/// Where one draw of the partitioned scene comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubmeshDraw {
    /// The source scene's draw.
    pub origin: usize,
    /// `(index into PartitionedScene::primitives, submesh)`; `None` for a draw copied as it
    /// was (unskinned).
    pub submesh: Option<(usize, usize)>,
}

/// A scene whose every skinned draw uses at most `k` joints (module documentation). It is a
/// drawing and comparison form, not an export one: its nodes still point at the source's
/// meshes and skins, while its draws use the submesh primitives and skins.
#[derive(Clone, Debug)]
pub struct PartitionedScene {
    /// The bone budget.
    pub k: usize,
    /// The partitioned scene: same nodes and animations; submesh primitives appended to their
    /// meshes, submesh skins appended to the skins, draws replaced.
    pub scene: Scene,
    /// Per draw of `scene`: its origin.
    pub draws: Vec<SubmeshDraw>,
    /// Every partitioned (mesh, primitive), in order of first use.
    pub primitives: Vec<PrimitivePartition>,
    /// Draws in the source scene.
    pub source_draws: usize,
}

impl PartitionedScene {
    /// Partition every skinned primitive of `source` into submeshes of at most `k` bones.
    /// Errors name the model and primitive: `k` outside [`MIN_BONES`]..=[`MAX_BONES`], a
    /// primitive whose weights or indices do not fit its vertices.
    pub fn new(source: &Scene, k: usize) -> Result<PartitionedScene> {
        if !(MIN_BONES..=MAX_BONES).contains(&k) {
            return Err(Error::invalid(
                &source.name,
                "max bones",
                format!("{k} bones per submesh; must be {MIN_BONES}..={MAX_BONES}"),
            ));
        }
        let mut scene = source.clone();
        scene.draws.clear();
        let mut draws = Vec::new();
        let mut primitives: Vec<PrimitivePartition> = Vec::new();
        // Submesh skins already made, keyed by (source skin, partition).
        let mut skins_made: Vec<((usize, usize), usize)> = Vec::new();
        for (origin, d) in source.draws.iter().enumerate() {
            let prim = source.primitive(d);
            let (Some(skin), Some(_)) = (d.skin, prim.skin_weights.as_ref()) else {
                scene.draws.push(*d);
                draws.push(SubmeshDraw {
                    origin,
                    submesh: None,
                });
                continue;
            };
            let pi = match primitives
                .iter()
                .position(|p| p.mesh == d.mesh && p.primitive == d.primitive)
            {
                Some(pi) => pi,
                None => {
                    let part = partition(prim, k).map_err(|e| match e {
                        Error::Invalid { field, message, .. } => Error::invalid(
                            &source.name,
                            format!("meshes[{}].primitives[{}]: {field}", d.mesh, d.primitive),
                            message,
                        ),
                        other => other,
                    })?;
                    let first_primitive = scene.meshes[d.mesh].primitives.len();
                    for s in &part.submeshes {
                        let sub = submesh_primitive(prim, &part, s);
                        scene.meshes[d.mesh].primitives.push(sub);
                    }
                    primitives.push(PrimitivePartition {
                        mesh: d.mesh,
                        primitive: d.primitive,
                        partition: part,
                        first_primitive,
                    });
                    primitives.len() - 1
                }
            };
            let pp = &primitives[pi];
            let first_skin = match skins_made.iter().find(|(key, _)| *key == (skin, pi)) {
                Some(&(_, s)) => s,
                None => {
                    let first = scene.skins.len();
                    let src = &source.skins[skin];
                    for (si, s) in pp.partition.submeshes.iter().enumerate() {
                        let bones = pp.partition.bones_of(s);
                        // A submesh of unweighted vertices lists no bone; it still gets one
                        // joint so its (zero-weight) index 0 names a palette entry.
                        let bones = if bones.is_empty() { &[0u32][..] } else { bones };
                        let mut joints = Vec::with_capacity(bones.len());
                        let mut joint_from_bind = Vec::with_capacity(bones.len());
                        for &b in bones {
                            let b = b as usize;
                            let (Some(&j), Some(&m)) =
                                (src.joints.get(b), src.joint_from_bind.get(b))
                            else {
                                return Err(Error::invalid(
                                    &source.name,
                                    format!(
                                        "meshes[{}].primitives[{}].attributes.JOINTS",
                                        d.mesh, d.primitive
                                    ),
                                    format!(
                                        "joint {b} but skin {skin} has {} joints",
                                        src.joints.len()
                                    ),
                                ));
                            };
                            joints.push(j);
                            joint_from_bind.push(m);
                        }
                        scene.skins.push(Skin {
                            name: Some(format!(
                                "{}#submesh{si}",
                                src.name.as_deref().unwrap_or("skin")
                            )),
                            joints,
                            joint_from_bind,
                        });
                    }
                    skins_made.push(((skin, pi), first));
                    first
                }
            };
            for si in 0..pp.partition.submeshes.len() {
                scene.draws.push(Draw {
                    node: d.node,
                    mesh: d.mesh,
                    primitive: pp.first_primitive + si,
                    skin: Some(first_skin + si),
                });
                draws.push(SubmeshDraw {
                    origin,
                    submesh: Some((pi, si)),
                });
            }
        }
        // Source primitives no draw uses any more are emptied (they are never drawn).
        for pp in &primitives {
            if !scene
                .draws
                .iter()
                .any(|d| d.mesh == pp.mesh && d.primitive == pp.primitive)
            {
                scene.meshes[pp.mesh].primitives[pp.primitive] = Primitive {
                    topology: source.meshes[pp.mesh].primitives[pp.primitive].topology,
                    ..Primitive::default()
                };
            }
        }
        Ok(PartitionedScene {
            k,
            scene,
            draws,
            primitives,
            source_draws: source.draws.len(),
        })
    }

    /// The partition of draw `draw` of the partitioned scene and its submesh, if it is one.
    pub fn submesh_of(&self, draw: usize) -> Option<(&Partition, usize)> {
        let (pi, si) = self.draws.get(draw)?.submesh?;
        Some((&self.primitives[pi].partition, si))
    }

    /// Give every submesh its own flat colour (material base colour; textures and vertex
    /// colours dropped) so a render shows the split: the qualitative palette
    /// ([`crate::image::qualitative`]) in submesh order, so neighbours never look alike;
    /// unskinned draws turn grey.
    pub fn color_submeshes(&mut self) {
        let mut painted: Vec<(usize, usize)> = Vec::new();
        let mut next = 0usize;
        for (d, sd) in self.scene.draws.iter().zip(&self.draws) {
            let key = (d.mesh, d.primitive);
            if painted.contains(&key) {
                continue;
            }
            painted.push(key);
            let color = match sd.submesh {
                Some(_) => {
                    next += 1;
                    crate::image::qualitative(next - 1)
                }
                None => [0.3, 0.3, 0.3],
            };
            let prim = &mut self.scene.meshes[d.mesh].primitives[d.primitive];
            prim.base_color = [color[0], color[1], color[2], 1.0];
            prim.base_color_texture = None;
            prim.colors = None;
        }
    }

    /// `source` with every partitioned primitive's weights replaced by the fitted ones (what
    /// the submeshes skin with): the unpartitioned reference for the partitioned draws, equal
    /// to `source` when no influence was dropped.
    pub fn fitted_source(&self, source: &Scene) -> Scene {
        let mut fitted = source.clone();
        for pp in &self.primitives {
            if let Some(prim) = fitted
                .meshes
                .get_mut(pp.mesh)
                .and_then(|m| m.primitives.get_mut(pp.primitive))
            {
                prim.skin_weights = Some(pp.partition.reduced.clone());
            }
        }
        fitted
    }

    /// Influences the fitting dropped, over every partitioned primitive.
    pub fn dropped_influences(&self) -> usize {
        self.primitives
            .iter()
            .map(|p| p.partition.stats.dropped_influences)
            .sum()
    }

    /// Submesh draws in the partitioned scene.
    pub fn submesh_count(&self) -> usize {
        self.draws.iter().filter(|d| d.submesh.is_some()).count()
    }

    /// Write the partitioned draws' outputs (`skinned[i]` for draw `i` of [`Self::scene`])
    /// onto the source draws' vertices in `out` (`out[j]` for source draw `j`, already sized
    /// and filled, e.g. with the reference). Unskinned draws are copied whole; a submesh
    /// writes each of its vertices to the source vertex it copies. Errors when the lengths
    /// do not match the scenes.
    pub fn scatter(&self, skinned: &[SkinnedVertices], out: &mut [SkinnedVertices]) -> Result<()> {
        if skinned.len() != self.draws.len() || out.len() != self.source_draws {
            return Err(Error::job(
                "PartitionedScene::scatter",
                1,
                format!(
                    "{} outputs for {} partitioned draws, {} destinations for {} source draws",
                    skinned.len(),
                    self.draws.len(),
                    out.len(),
                    self.source_draws
                ),
            ));
        }
        for (sd, src) in self.draws.iter().zip(skinned) {
            let dst = &mut out[sd.origin];
            let Some((pi, si)) = sd.submesh else {
                *dst = src.clone();
                continue;
            };
            let part = &self.primitives[pi].partition;
            let remap = part.vertices_of(&part.submeshes[si]);
            let bad = || {
                Error::job(
                    "PartitionedScene::scatter",
                    2,
                    "a submesh output does not match its vertices or destination",
                )
            };
            if src.positions.len() != remap.len()
                || dst.normals.is_some() != src.normals.is_some()
                || (src.tangents.is_some() && dst.tangents.is_none())
            {
                return Err(bad());
            }
            // Outputs without tangents (the draw-path capture has none) leave the draw without.
            if src.tangents.is_none() {
                dst.tangents = None;
            }
            for (local, &v) in remap.iter().enumerate() {
                let v = v as usize;
                *dst.positions.get_mut(v).ok_or_else(bad)? = src.positions[local];
                if let (Some(d), Some(s)) = (dst.normals.as_mut(), src.normals.as_ref()) {
                    *d.get_mut(v).ok_or_else(bad)? = *s.get(local).ok_or_else(bad)?;
                }
                if let (Some(d), Some(s)) = (dst.tangents.as_mut(), src.tangents.as_ref()) {
                    *d.get_mut(v).ok_or_else(bad)? = *s.get(local).ok_or_else(bad)?;
                }
            }
        }
        Ok(())
    }
}

/// How far the partitioned scene's skinning lands from the source's (what dropped influences
/// cost), from [`PartitionedScene::skinning_error`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinningError {
    /// Per source draw: the largest position distance (model units) or normal difference
    /// over the frames.
    pub max_error: Vec<f32>,
    /// Diagonal of the source's skinned bounds over the frames (what errors are relative to).
    pub diagonal: f32,
    /// Frames compared.
    pub frames: usize,
}

impl PartitionedScene {
    /// CPU-skin the source and the partitioned scene at `times_s` of animation `anim`, scatter
    /// the partitioned result back, and measure the largest position distance per source draw
    /// (zero when no influence was dropped: the skinning is bit-identical).
    pub fn skinning_error(
        &self,
        source: &Scene,
        anim: Option<usize>,
        times_s: &[f32],
    ) -> Result<SkinningError> {
        let mut frame_src = FrameState::new(source);
        let mut frame_part = FrameState::new(&self.scene);
        let mut skin_src = CpuSkinner::new(source, None);
        let mut skin_part = CpuSkinner::new(&self.scene, None);
        let mut out = SkinningError {
            max_error: vec![0.0; source.draws.len()],
            diagonal: 0.0,
            frames: times_s.len(),
        };
        let mut all: Option<(glam::Vec3, glam::Vec3)> = None;
        for &t in times_s {
            frame_src.evaluate(source, anim, t)?;
            frame_part.evaluate(&self.scene, anim, t)?;
            let reference = skin_src.skin_all(source, &frame_src)?;
            let parts = skin_part.skin_all(&self.scene, &frame_part)?;
            let mut scattered = reference.clone();
            self.scatter(&parts, &mut scattered)?;
            for (d, (r, s)) in reference.iter().zip(&scattered).enumerate() {
                let normals = r.normals.iter().flatten().zip(s.normals.iter().flatten());
                for (a, b) in r.positions.iter().zip(&s.positions).chain(normals) {
                    // Equal bits are no error (even NaN: the same broken pose both ways).
                    if a.to_array().map(f32::to_bits) == b.to_array().map(f32::to_bits) {
                        continue;
                    }
                    // NaN (a broken pose) counts as an infinite error, never as none.
                    let e = nan_as_infinite(f64::from(a.distance(*b))) as f32;
                    out.max_error[d] = out.max_error[d].max(e);
                }
            }
            if let Some((l, h)) = bounds(&reference) {
                all = Some(all.map_or((l, h), |(lo, hi)| (lo.min(l), hi.max(h))));
            }
        }
        out.diagonal = all.map_or(0.0, bounds_diagonal);
        Ok(out)
    }
}

/// Gather `values` by `remap`.
fn pick<T: Copy>(values: &[T], remap: &[u32]) -> Vec<T> {
    remap.iter().map(|&v| values[v as usize]).collect()
}

/// The primitive of one submesh: its vertices' attributes and morph deltas, its local index
/// list, its local joint indices; material as the source.
fn submesh_primitive(prim: &Primitive, part: &Partition, s: &super::split::Submesh) -> Primitive {
    let remap = part.vertices_of(s);
    let w = part.width;
    let range = s.vertex_offset as usize * w..(s.vertex_offset + s.vertex_count) as usize * w;
    Primitive {
        positions: pick(&prim.positions, remap),
        normals: prim.normals.as_deref().map(|v| pick(v, remap)),
        tangents: prim.tangents.as_deref().map(|v| pick(v, remap)),
        indices: part.indices_of(s).to_vec(),
        topology: prim.topology,
        skin_weights: Some(SkinWeights {
            width: w,
            joints: part.local_joints[range.clone()].to_vec(),
            weights: part.weights[range].to_vec(),
        }),
        morph_targets: prim
            .morph_targets
            .iter()
            .map(|t| MorphTarget {
                positions: t.positions.as_deref().map(|v| pick(v, remap)),
                normals: t.normals.as_deref().map(|v| pick(v, remap)),
                tangents: t.tangents.as_deref().map(|v| pick(v, remap)),
            })
            .collect(),
        base_color: prim.base_color,
        base_color_texture: prim.base_color_texture,
        uvs: prim.uvs.as_deref().map(|v| pick(v, remap)),
        colors: prim.colors.as_deref().map(|v| pick(v, remap)),
    }
}
