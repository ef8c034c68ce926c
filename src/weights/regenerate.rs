//! Weight regeneration: one bone per vertex from tapered elliptical pseudo-cylinders.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §11 (each bone a pseudo-cylinder; a vertex
//! goes to the bone it fits best), with the sections of §10 ([`super::sections`]).
//!
//! Method: every bone is a pseudo-cylinder along its segment whose elliptical cross-section
//! tapers from the base section to the tip section. Each vertex is scored against every
//! cylinder — lower is better:
//!
//! `cost = ρ + END_FALLOFF · (distance past either end) / (mean radius there)`
//!
//! where ρ is the vertex's normalised elliptical radius at the nearest point of the segment
//! (1 on the surface of the cylinder). Inside a cylinder the cost is below 1 and better the
//! closer to the bone; radially it grows mildly (linearly, so bumps and projections beyond
//! the radial limits still find their bone), past the ends quickly (a vertex one radius past
//! the tip costs as much as one [`END_FALLOFF`] radii out to the side: the next bone is
//! probably the better choice). Each vertex takes the bone of lowest cost with weight 1;
//! smoothing ([`super::smooth`]) then blends the joints.
//!
//! Sections are the rig's own when it has them; otherwise they are estimated from the mesh
//! ([`super::sections`]) and the vertices reassigned, alternately, until no vertex changes
//! bone (at most [`MAX_ESTIMATION_PASSES`]). The first estimate starts from each bone's
//! inscribed cylinder ([`inscribed_sections`]), not from the nearest segment: a bone buried
//! in its neighbour's flesh (a clavicle inside the chest) would otherwise take the
//! neighbour's surface and keep it, pass after pass.
//!
//! Cost: O(V·B) per pass (every vertex against every bone), parallel over vertices; memory
//! O(V).
//!
//! Limits: a bone with no vertices beside its segment starts a quarter of its length thick;
//! boundaries between overlapping cylinders (clavicle, chest and neck) are where estimated and
//! true sections disagree most.

use rayon::prelude::*;

use super::sections::{BoneSection, SectionJob, SectionStats, inscribed_sections};
use super::{BoneAxis, Influences, WeightMesh, Work, rule};
use crate::error::Result;

/// How much faster the score falls off past a cylinder's ends than radially (per radius).
/// Estimated against true sections on the built-in humanoid (`tests/core/weights.rs`, both sides
/// scored with the same fall-off): 4: 97.5%, 6: 98.2%, 8: 98.4%, 10: 98.3%, 16: 97.3% of
/// vertices agree.
pub const END_FALLOFF: f32 = 8.0;

/// A vertex whose best cost is above this lies two radii or more from every bone's surface.
pub const FAR_COST: f32 = 3.0;

/// Most estimation passes when the sections are not given: the first from the assignment to
/// the bones' inscribed cylinders, each next one from the previous pass's assignment, until
/// no vertex changes bone. The built-in humanoid settles after 10 (98.4% of its vertices on
/// their true bones).
pub const MAX_ESTIMATION_PASSES: usize = 16;

/// What [`RegenerateJob::run`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RegenerateStats {
    /// Vertices assigned to each bone.
    pub vertices_per_bone: Vec<usize>,
    /// Vertices more than [`FAR_COST`] from every cylinder (bumps, projections, or bones
    /// that do not fit the mesh).
    pub far_from_every_cylinder: usize,
    /// Section passes run (0 when the sections were given; [`MAX_ESTIMATION_PASSES`] when
    /// the assignment had not settled).
    pub estimation_passes: usize,
    /// What the last section estimate found (default when the sections were given).
    pub sections: SectionStats,
    /// The work it took (every pass's sections and scores).
    pub work: Work,
}

/// Score every vertex against every bone's pseudo-cylinder and keep the best.
pub struct RegenerateJob<'a> {
    /// The mesh.
    pub mesh: &'a WeightMesh,
    /// The bones (at least one).
    pub bones: &'a [BoneAxis],
    /// Authored sections, one per bone (`None`: estimated from the mesh).
    pub sections: Option<&'a [BoneSection]>,
}

/// The result: each vertex's bone and its cost, and the sections scored against.
#[derive(Clone, Debug, Default)]
pub struct Regenerated {
    /// Best bone per vertex.
    pub bone: Vec<u32>,
    /// Its cost (see the module documentation).
    pub cost: Vec<f32>,
    /// The pseudo-cylinders used.
    pub sections: Vec<BoneSection>,
    /// Counts.
    pub stats: RegenerateStats,
}

impl Regenerated {
    /// One influence of weight 1 per vertex.
    pub fn influences(&self) -> Influences {
        self.bone.iter().map(|&b| vec![(b, 1.0)]).collect()
    }
}

impl RegenerateJob<'_> {
    /// Rules: 1. at least one bone; 2. at most [`super::MAX_VERTICES`] vertices; 3. given
    /// sections, one per bone with finite positive radii.
    pub fn validate(&self) -> Result<()> {
        const JOB: &str = "RegenerateJob";
        if self.bones.is_empty() {
            return Err(rule(JOB, 1, "no bones to assign vertices to"));
        }
        super::check_vertex_count(JOB, 2, self.mesh.positions.len())?;
        if let Some(s) = self.sections {
            if s.len() != self.bones.len() {
                return Err(rule(
                    JOB,
                    3,
                    format!("{} sections for {} bones", s.len(), self.bones.len()),
                ));
            }
            if let Some(b) = s.iter().position(|s| {
                let r = s.base_radii.min(s.tip_radii);
                !(r.x > 0.0 && r.y > 0.0 && s.base_radii.is_finite() && s.tip_radii.is_finite())
            }) {
                return Err(rule(
                    JOB,
                    3,
                    format!(
                        "bone \"{}\" has a section without a positive radius",
                        self.bones[b].name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Validate, then assign every vertex.
    pub fn run(&self) -> Result<Regenerated> {
        self.validate()?;
        let mut stats = RegenerateStats::default();
        let (sections, assigned) = match self.sections {
            Some(s) => {
                let (bone, cost) = score(self.mesh, s, &mut stats.work);
                (s.to_vec(), (bone, cost))
            }
            None => {
                // Start from the bones' inscribed cylinders (a buried bone starts thin).
                let inscribed = inscribed_sections(self.mesh, self.bones, &mut stats.work);
                let (start, _) = score(self.mesh, &inscribed, &mut stats.work);
                let mut owner: Vec<Option<u32>> = start.into_iter().map(Some).collect();
                let mut result = None;
                for _ in 0..MAX_ESTIMATION_PASSES {
                    let (sections, sstats) = SectionJob {
                        mesh: self.mesh,
                        bones: self.bones,
                        owner: &owner,
                    }
                    .run()?;
                    stats.work += sstats.work;
                    let (bone, cost) = score(self.mesh, &sections, &mut stats.work);
                    // The settled test and the new owners.
                    stats.work += Work::steps(2 * bone.len());
                    let settled = owner.iter().zip(&bone).all(|(o, b)| *o == Some(*b));
                    owner = bone.iter().map(|&b| Some(b)).collect();
                    stats.estimation_passes += 1;
                    stats.sections = sstats;
                    result = Some((sections, (bone, cost)));
                    if settled {
                        break;
                    }
                }
                result.unwrap_or_default()
            }
        };
        let (bone, cost) = assigned;
        // Validation, the counts per bone and the far vertices.
        stats.work += Work::steps(3 * bone.len() + 2 * self.bones.len());
        stats.vertices_per_bone = vec![0; self.bones.len()];
        for &b in &bone {
            stats.vertices_per_bone[b as usize] += 1;
        }
        stats.far_from_every_cylinder = cost.iter().filter(|&&c| c > FAR_COST).count();
        Ok(Regenerated {
            bone,
            cost,
            sections,
            stats,
        })
    }
}

/// Cost of `p` against one pseudo-cylinder (module documentation).
pub fn cost(s: &BoneSection, p: glam::Vec3) -> f32 {
    let local = s.local(p);
    let (rho, outside) = s.measure(local);
    let t = s.param(local);
    rho + END_FALLOFF * outside / s.mean_radius(t).max(f32::MIN_POSITIVE)
}

/// Best bone and cost per vertex (ties to the lower bone index).
fn score(mesh: &WeightMesh, sections: &[BoneSection], work: &mut Work) -> (Vec<u32>, Vec<f32>) {
    *work += Work::pairs(mesh.positions.len(), sections.len());
    mesh.positions
        .par_iter()
        .map(|&p| {
            let mut best = (0u32, f32::INFINITY);
            for (i, s) in sections.iter().enumerate() {
                let c = cost(s, p);
                if c < best.1 {
                    best = (i as u32, c);
                }
            }
            best
        })
        .unzip()
}
