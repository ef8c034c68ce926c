//! Cross-section estimation: each bone's elliptical cross-sections at its base and tip.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §10 and fig. 12 (a bone's flesh as an
//! ellipse at each end, tapering between).
//!
//! Method: the vertices that belong to a bone (its largest weight, or its nearest segment when
//! there are no usable weights) are expressed in the bone's frame — x along the segment, the
//! radial plane rotated to the principal axes of the vertices' radial offsets (a 2×2
//! covariance), so the ellipse is aligned with the limb whatever the joint's own axes are. The
//! vertices of the first half (x/L in [-0.1, 0.5]) and of the second half ([0.5, 1.1]) each
//! give a centre offset and semi-axes from a least-squares fit of a tapered ellipse (exact for
//! any arc of an ellipse, so for a bone half buried in its neighbour), or, where that fit is
//! ill-conditioned or strays, from the moments, `sqrt(2 · mean(y²))` (exact for points spread
//! evenly round an ellipse); the two half-means are extrapolated linearly to x = 0 and x = L
//! (exact for a linear taper). A bone with no vertices takes its parent's tip section (or, at
//! the root, a quarter of its length); a half with no vertices takes the other half's. Radii
//! are never below [`MIN_RADIUS_FRACTION`] of the bone's length, so every pseudo-cylinder has
//! thickness.
//!
//! Cost: O(V) after the assignment (a 6×6 solve per half bone); memory O(B).
//!
//! Limits: one ellipse per end and a linear taper between, so a bulge along the bone (a calf)
//! enters only through the two halves' means; the sections are only as good as the vertices
//! assigned to the bone, which is why regeneration alternates the two.

use glam::{Vec2, Vec3};

use super::{BoneAxis, Influences, WeightMesh, Work, rule};
use crate::error::Result;

/// Smallest semi-axis, as a fraction of the bone's length: a flat set of vertices (a fin)
/// still makes a pseudo-cylinder with some thickness to score against.
pub const MIN_RADIUS_FRACTION: f32 = 0.02;

/// Which of the distances from a bone's segment to the vertices beside it is its inscribed
/// radius ([`inscribed_sections`]): the 1st percentile (the minimum itself agrees 0.1% less
/// often with the true bones on the built-in humanoid, 5% agrees 2% less often).
pub const INSCRIBED_QUANTILE: f32 = 0.01;

/// Smallest semi-axis for a zero-length bone (metres in a metre-scaled model; scaled by the
/// mesh diagonal below).
const MIN_RADIUS_OF_DIAGONAL: f32 = 1e-4;

/// A bone's frame and its two cross-sections (a tapered elliptical pseudo-cylinder).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoneSection {
    /// Segment start (the joint).
    pub base: Vec3,
    /// Unit axis from base to tip (any unit vector for a zero-length bone).
    pub axis: Vec3,
    /// Segment length.
    pub length: f32,
    /// Unit radial axes of the ellipses (`y` the major one as estimated).
    pub y: Vec3,
    /// Second radial axis, `axis × y`.
    pub z: Vec3,
    /// Semi-axes along y and z at the base.
    pub base_radii: Vec2,
    /// Semi-axes at the tip.
    pub tip_radii: Vec2,
    /// Ellipse centre offsets (along y, z) at the base.
    pub base_offset: Vec2,
    /// Ellipse centre offsets at the tip.
    pub tip_offset: Vec2,
}

impl BoneSection {
    /// A pseudo-cylinder from authored data (a native rig's sections): frame, length, radii
    /// and offsets at base and tip.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        base: Vec3,
        axis: Vec3,
        y: Vec3,
        length: f32,
        base_radii: Vec2,
        tip_radii: Vec2,
        base_offset: Vec2,
        tip_offset: Vec2,
    ) -> BoneSection {
        let axis = axis.normalize_or(Vec3::X);
        let y = (y - axis * y.dot(axis)).normalize_or(axis.any_orthonormal_vector());
        BoneSection {
            base,
            axis,
            length,
            y,
            z: axis.cross(y),
            base_radii,
            tip_radii,
            base_offset,
            tip_offset,
        }
    }

    /// `p` in the bone's frame: (x along the axis, y, z).
    pub fn local(&self, p: Vec3) -> Vec3 {
        let d = p - self.base;
        Vec3::new(d.dot(self.axis), d.dot(self.y), d.dot(self.z))
    }

    /// Segment parameter (0 at the base, 1 at the tip; 0 for a zero-length bone) of a point
    /// in the bone's frame.
    pub fn param(&self, local: Vec3) -> f32 {
        if self.length > 0.0 {
            local.x / self.length
        } else {
            0.0
        }
    }

    /// Radii and centre offset at segment parameter `t` (clamped to [0, 1]).
    pub fn at(&self, t: f32) -> (Vec2, Vec2) {
        let t = t.clamp(0.0, 1.0);
        (
            self.base_radii.lerp(self.tip_radii, t),
            self.base_offset.lerp(self.tip_offset, t),
        )
    }

    /// Normalised radial distance (1 on the ellipse) and how far past either end `p` lies
    /// (0 between them), both for a point in the bone's frame.
    pub fn measure(&self, local: Vec3) -> (f32, f32) {
        let (r, o) = self.at(self.param(local));
        let q = (Vec2::new(local.y, local.z) - o) / r;
        let outside = (-local.x).max(local.x - self.length).max(0.0);
        (q.length(), outside)
    }

    /// Mean semi-axis at parameter `t`.
    pub fn mean_radius(&self, t: f32) -> f32 {
        let (r, _) = self.at(t);
        0.5 * (r.x + r.y)
    }
}

/// What [`SectionJob::run`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SectionStats {
    /// Vertices used per bone.
    pub vertices_per_bone: Vec<usize>,
    /// Bones with no vertices (sections inherited from the parent).
    pub bones_without_vertices: usize,
    /// Bones of zero length (treated as points).
    pub zero_length_bones: usize,
    /// The work it took.
    pub work: Work,
}

/// Estimate every bone's sections from the vertices assigned to it.
pub struct SectionJob<'a> {
    /// The mesh.
    pub mesh: &'a WeightMesh,
    /// The bones.
    pub bones: &'a [BoneAxis],
    /// The bone each vertex belongs to (`None`: not used).
    pub owner: &'a [Option<u32>],
}

impl SectionJob<'_> {
    /// Rules: 1. one owner entry per vertex; 2. owners name bones in the list; 3. bone
    /// segments are finite.
    pub fn validate(&self) -> Result<()> {
        const JOB: &str = "SectionJob";
        if self.owner.len() != self.mesh.positions.len() {
            return Err(rule(
                JOB,
                1,
                format!(
                    "{} owners for {} vertices",
                    self.owner.len(),
                    self.mesh.positions.len()
                ),
            ));
        }
        if let Some((v, b)) = self.owner.iter().enumerate().find_map(|(v, o)| {
            o.filter(|&b| b as usize >= self.bones.len())
                .map(|b| (v, b))
        }) {
            return Err(rule(
                JOB,
                2,
                format!("vertex {v} belongs to bone {b} of {}", self.bones.len()),
            ));
        }
        if let Some(b) = self
            .bones
            .iter()
            .find(|b| !(b.base.is_finite() && b.tip.is_finite()))
        {
            return Err(rule(JOB, 3, format!("bone \"{}\" is not finite", b.name)));
        }
        Ok(())
    }

    /// The sections, one per bone, and what was found.
    pub fn run(&self) -> Result<(Vec<BoneSection>, SectionStats)> {
        self.validate()?;
        let nb = self.bones.len();
        let mut members: Vec<Vec<Vec3>> = vec![Vec::new(); nb];
        for (v, o) in self.owner.iter().enumerate() {
            if let Some(b) = o {
                members[*b as usize].push(self.mesh.positions[v]);
            }
        }
        let floor = MIN_RADIUS_OF_DIAGONAL * self.mesh.diagonal().max(1e-6);
        let mut stats = SectionStats {
            vertices_per_bone: members.iter().map(Vec::len).collect(),
            ..Default::default()
        };
        let mut out: Vec<Option<BoneSection>> = vec![None; nb];
        // Parents come first in a skin only by convention: resolve in dependency order.
        let mut order: Vec<usize> = (0..nb).collect();
        let depth = super::depths(nb, |b| self.bones[b].parent, &mut stats.work);
        order.sort_by_key(|&b| depth[b]);
        // Validation, owners, member counts, the order, the sections and their defaults;
        // three passes over each bone's members (principal frame, halves).
        let members_total: usize = members.iter().map(Vec::len).sum();
        stats.work += Work::steps(3 * self.owner.len() + 4 * nb + 3 * members_total);
        for &b in &order {
            let section = self.bone_section(b, &members[b], floor, &out, &mut stats);
            out[b] = Some(section);
        }
        let sections = out
            .into_iter()
            .enumerate()
            .map(|(b, s)| {
                s.unwrap_or_else(|| {
                    let bone = &self.bones[b];
                    BoneSection::new(
                        bone.base,
                        Vec3::Y,
                        Vec3::X,
                        0.0,
                        Vec2::splat(floor),
                        Vec2::splat(floor),
                        Vec2::ZERO,
                        Vec2::ZERO,
                    )
                })
            })
            .collect();
        Ok((sections, stats))
    }

    /// Bone `b`'s section from its vertices `pts`: the principal radial axes, then each half's
    /// fit extrapolated to the ends; without vertices (or usable halves), its parent's tip
    /// section from `out` (resolved before it) or a quarter of its length. Radii are at least
    /// [`MIN_RADIUS_FRACTION`] of the length and `floor`.
    fn bone_section(
        &self,
        b: usize,
        pts: &[Vec3],
        floor: f32,
        out: &[Option<BoneSection>],
        stats: &mut SectionStats,
    ) -> BoneSection {
        let bone = &self.bones[b];
        let length = bone.length();
        if length <= 0.0 {
            stats.zero_length_bones += 1;
        }
        let axis = if length > 0.0 {
            (bone.tip - bone.base) / length
        } else {
            bone.parent
                .and_then(|p| out[p].map(|s| s.axis))
                .unwrap_or(Vec3::Y)
        };
        let min_r = (length * MIN_RADIUS_FRACTION).max(floor);
        let fallback = || {
            let inherited = bone.parent.and_then(|p| out[p]);
            match inherited {
                Some(s) => (s.tip_radii, s.tip_radii),
                None => {
                    let r = Vec2::splat((0.25 * length).max(min_r));
                    (r, r)
                }
            }
        };
        if pts.is_empty() {
            stats.bones_without_vertices += 1;
            let (r0, r1) = fallback();
            let y0 = axis.any_orthonormal_vector();
            return BoneSection::new(
                bone.base,
                axis,
                y0,
                length,
                r0.max(Vec2::splat(min_r)),
                r1.max(Vec2::splat(min_r)),
                Vec2::ZERO,
                Vec2::ZERO,
            );
        }
        let frame = principal_frame(bone.base, axis, length, pts);
        let halves = half_sections(&frame, length, pts);
        let (r0, r1, o0, o1) = match (halves[0], halves[1]) {
            (Some((t0, ra, oa)), Some((t1, rb, ob))) if t1 - t0 > 0.1 => {
                // Linear through the two half means, evaluated at t = 0 and 1.
                let lerp = |a: Vec2, b: Vec2, t: f32| a + (b - a) * ((t - t0) / (t1 - t0));
                let (r0, r1) = (lerp(ra, rb, 0.0), lerp(ra, rb, 1.0));
                // A taper never flips a radius below a quarter of the halves' mean.
                let keep = |r: Vec2| r.max((ra + rb) * 0.125);
                (keep(r0), keep(r1), lerp(oa, ob, 0.0), lerp(oa, ob, 1.0))
            }
            (Some((_, r, o)), None) | (None, Some((_, r, o))) | (Some((_, r, o)), Some(_)) => {
                (r, r, o, o)
            }
            (None, None) => {
                let (r0, r1) = fallback();
                (r0, r1, Vec2::ZERO, Vec2::ZERO)
            }
        };
        let mut sec = frame;
        sec.base_radii = r0.max(Vec2::splat(min_r));
        sec.tip_radii = r1.max(Vec2::splat(min_r));
        sec.base_offset = o0;
        sec.tip_offset = o1;
        sec
    }
}

/// The bone's frame (unit radii, no offsets) with its radial axes turned to the principal axes
/// of the radial offsets of `pts` (a 2×2 covariance).
fn principal_frame(base: Vec3, axis: Vec3, length: f32, pts: &[Vec3]) -> BoneSection {
    let y0 = axis.any_orthonormal_vector();
    let z0 = axis.cross(y0);
    let radial = |p: Vec3| {
        let d = p - base;
        Vec2::new(d.dot(y0), d.dot(z0))
    };
    let mean = pts.iter().map(|&p| radial(p)).sum::<Vec2>() / pts.len() as f32;
    let (mut sxx, mut syy, mut sxy) = (0.0f64, 0.0f64, 0.0f64);
    for &p in pts {
        let q = radial(p) - mean;
        sxx += (q.x * q.x) as f64;
        syy += (q.y * q.y) as f64;
        sxy += (q.x * q.y) as f64;
    }
    let angle = 0.5 * (2.0 * sxy).atan2(sxx - syy);
    let (s, c) = (angle.sin() as f32, angle.cos() as f32);
    let y = y0 * c + z0 * s;
    BoneSection::new(
        base,
        axis,
        y,
        length,
        Vec2::ONE,
        Vec2::ONE,
        Vec2::ZERO,
        Vec2::ZERO,
    )
}

/// Per half bone (`[-0.1, 0.5)` and `[0.5, 1.1]` of the segment in `frame`), from the vertices
/// in it: the mean segment parameter, the semi-axes and the centre offset (the ellipse fit, or
/// the moments where it fails); `None` for a half without vertices.
fn half_sections(frame: &BoneSection, length: f32, pts: &[Vec3]) -> [Option<(f32, Vec2, Vec2)>; 2] {
    // Half-bone moments: count, sum t, sum y, sum z, sum y², sum z²; and the normal
    // equations of the algebraic ellipse fit (`EllipseFit`).
    let mut acc = [[0.0f64; 6]; 2];
    let mut fit = [EllipseFit::EMPTY; 2];
    for &p in pts {
        let l = frame.local(p);
        let t = if length > 0.0 { l.x / length } else { 0.5 };
        let half = if (-0.1..0.5).contains(&t) {
            0
        } else if (0.5..=1.1).contains(&t) {
            1
        } else {
            continue;
        };
        let a = &mut acc[half];
        a[0] += 1.0;
        a[1] += t as f64;
        a[2] += l.y as f64;
        a[3] += l.z as f64;
        a[4] += (l.y * l.y) as f64;
        a[5] += (l.z * l.z) as f64;
        fit[half].add(l.y as f64, l.z as f64, t as f64 - HALF_CENTRE[half]);
    }
    [0, 1].map(|half| {
        let (a, fit) = (&acc[half], &fit[half]);
        (a[0] > 0.0).then(|| {
            let n = a[0];
            let (my, mz) = (a[2] / n, a[3] / n);
            let vy = (a[4] / n - my * my).max(0.0);
            let vz = (a[5] / n - mz * mz).max(0.0);
            let moments = (
                Vec2::new((2.0 * vy).sqrt() as f32, (2.0 * vz).sqrt() as f32),
                Vec2::new(my as f32, mz as f32),
            );
            let t_mean = a[1] / n;
            let (radii, offset) = fit
                .solve(moments.0, t_mean - HALF_CENTRE[half])
                .unwrap_or(moments);
            (t_mean as f32, radii, offset)
        })
    })
}

/// Fewest vertices in a half bone for the algebraic fit (it has six unknowns; fewer points
/// than twice that are left to the moments).
const MIN_FIT_POINTS: f64 = 12.0;

/// Segment parameter of each half bone's centre (the halves are [-0.1, 0.5) and [0.5, 1.1]):
/// the fit's taper terms are measured from there.
const HALF_CENTRE: [f64; 2] = [0.2, 0.8];

/// The fitted ellipse is kept only within these factors of the moments' semi-axes, and its
/// centre within this many of their mean radius: a short arc (a few vertices on one side)
/// fits a conic badly, and the moments are the safer answer there.
const FIT_AGREEMENT: f32 = 3.0;

/// Algebraic least-squares fit of a tapered axis-aligned elliptical tube to a half bone's
/// vertices: `(A₀ + A₁·dt) y² + (B₀ + B₁·dt) z² + C y + D z = 1`, with `dt` the segment
/// parameter's distance from the half's centre (a Fitzgibbon-style direct fit, restricted to
/// the principal axes found above, with the taper as two more unknowns). Unlike the moments
/// (`sqrt(2·mean(y²))`, exact only for points spread evenly round the whole ellipse) it
/// recovers the section from any arc of it, which is what a bone half buried in its
/// neighbour's flesh shows (a clavicle under the shoulder's top): on the built-in humanoid it
/// raises the share of vertices regenerated to their true bone from 97.99% to 98.4%
/// (`tests/core/weights.rs`). The taper terms matter on a partial arc: without them the narrowing
/// of the arc along the bone is read as a shift of its centre.
#[derive(Clone, Copy)]
struct EllipseFit {
    /// Σ f fᵀ over the rows f = (y², z², y, z, y²·dt, z²·dt).
    normal: [[f64; 6]; 6],
    /// Σ f.
    rhs: [f64; 6],
    count: f64,
}

impl EllipseFit {
    const EMPTY: EllipseFit = EllipseFit {
        normal: [[0.0; 6]; 6],
        rhs: [0.0; 6],
        count: 0.0,
    };

    /// One vertex at radial coordinates (y, z), `dt` along the bone from the half's centre.
    fn add(&mut self, y: f64, z: f64, dt: f64) {
        let f = [y * y, z * z, y, z, y * y * dt, z * z * dt];
        for (row, fi) in self.normal.iter_mut().zip(f) {
            for (m, fj) in row.iter_mut().zip(f) {
                *m += fi * fj;
            }
        }
        for (r, fi) in self.rhs.iter_mut().zip(f) {
            *r += fi;
        }
        self.count += 1.0;
    }

    /// Semi-axes and centre at `dt` from the half's centre, or `None` where the fit is not an
    /// ellipse there, is ill-conditioned, or disagrees with the moments' semi-axes `moments`
    /// by more than [`FIT_AGREEMENT`].
    fn solve(&self, moments: Vec2, dt: f64) -> Option<(Vec2, Vec2)> {
        if self.count < MIN_FIT_POINTS || moments.min_element() <= 0.0 {
            return None;
        }
        // Solve in coordinates divided by the moments' mean radius s, so the conditioning
        // test does not depend on the model's units: the rows become D f with
        // D = diag(1/s², 1/s², 1/s, 1/s, 1/s², 1/s²), and the unknowns x = D x'.
        let s = 0.5 * (moments.x + moments.y) as f64;
        let d = [
            1.0 / (s * s),
            1.0 / (s * s),
            1.0 / s,
            1.0 / s,
            1.0 / (s * s),
            1.0 / (s * s),
        ];
        let mut m = self.normal;
        let mut b = self.rhs;
        for i in 0..6 {
            for j in 0..6 {
                m[i][j] *= d[i] * d[j];
            }
            b[i] *= d[i];
        }
        let x = solve_symmetric(m, b)?;
        let a = (x[0] + x[4] * dt) * d[0];
        let bb = (x[1] + x[5] * dt) * d[1];
        let (c, dd) = (x[2] * d[2], x[3] * d[3]);
        if !(a > 0.0 && bb > 0.0) {
            return None;
        }
        let (y0, z0) = (-c / (2.0 * a), -dd / (2.0 * bb));
        let k = 1.0 + a * y0 * y0 + bb * z0 * z0;
        let radii = Vec2::new((k / a).sqrt() as f32, (k / bb).sqrt() as f32);
        let offset = Vec2::new(y0 as f32, z0 as f32);
        let agree = (radii / moments).max_element() <= FIT_AGREEMENT
            && (moments / radii).max_element() <= FIT_AGREEMENT
            && offset.length() <= FIT_AGREEMENT * 0.5 * (moments.x + moments.y);
        (radii.is_finite() && offset.is_finite() && agree).then_some((radii, offset))
    }
}

/// Smallest pivot, relative to its row's diagonal before elimination, that
/// [`solve_symmetric`] accepts: below it the unknown is not determined by the data (all the
/// vertices on one line, a taper with every vertex at one `dt`).
const MIN_RELATIVE_PIVOT: f64 = 1e-10;

/// Solve the normal equations `m x = b` (m symmetric positive semi-definite) by Gaussian
/// elimination with partial pivoting; `None` when a pivot falls below
/// [`MIN_RELATIVE_PIVOT`] of its diagonal.
fn solve_symmetric<const N: usize>(mut m: [[f64; N]; N], mut b: [f64; N]) -> Option<[f64; N]> {
    let mut diag: [f64; N] = std::array::from_fn(|i| m[i][i]);
    for c in 0..N {
        let p = (c..N).max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))?;
        m.swap(c, p);
        b.swap(c, p);
        diag.swap(c, p);
        // Written so that a NaN pivot fails too.
        let pivot_ok = m[c][c].abs() > MIN_RELATIVE_PIVOT * diag[c].abs().max(f64::MIN_POSITIVE);
        if !pivot_ok {
            return None;
        }
        let pivot_row = m[c];
        for r in c + 1..N {
            let f = m[r][c] / pivot_row[c];
            for (x, &p) in m[r][c..].iter_mut().zip(&pivot_row[c..]) {
                *x -= f * p;
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = [0.0; N];
    for c in (0..N).rev() {
        let tail: f64 = (c + 1..N).map(|k| m[c][k] * x[k]).sum();
        x[c] = (b[c] - tail) / m[c][c];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Each vertex's nearest bone segment (ties to the lower index).
pub fn nearest_bone(mesh: &WeightMesh, bones: &[BoneAxis], work: &mut Work) -> Vec<Option<u32>> {
    use rayon::prelude::*;
    *work += Work::pairs(mesh.positions.len(), bones.len());
    mesh.positions
        .par_iter()
        .map(|&p| {
            bones
                .iter()
                .enumerate()
                .map(|(i, b)| (i, b.distance(p).0))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| i as u32)
        })
        .collect()
}

/// Round pseudo-cylinders, one per bone, of its inscribed radius: the distance from the
/// segment to the nearest vertices whose closest point lies well inside it (the
/// [`INSCRIBED_QUANTILE`] of those distances, so one stray vertex does not decide it), at
/// least [`MIN_RADIUS_FRACTION`] of the bone's length.
///
/// The surface of a skin made of its bones' flesh lies outside every bone's pseudo-cylinder,
/// so this radius is a lower bound of the true one in every direction, and it is small for a
/// bone buried in its neighbour's flesh (a clavicle in the chest): scoring against these
/// cylinders, a vertex on the chest's front goes to the chest, not to the clavicle whose
/// segment happens to be nearer. Nearest segments alone give the buried bone every vertex
/// near it and a section as wide as the chest. Cost: O(V·B) and O(V) memory per bone.
pub fn inscribed_sections(
    mesh: &WeightMesh,
    bones: &[BoneAxis],
    work: &mut Work,
) -> Vec<BoneSection> {
    use rayon::prelude::*;
    // Every vertex against every bone, then one quantile selection per bone over its
    // inside vertices (at most V each: counted with the pairs).
    *work += Work::pairs(mesh.positions.len(), 2 * bones.len());
    let floor = MIN_RADIUS_OF_DIAGONAL * mesh.diagonal().max(1e-6);
    // One distance buffer per worker, bones in parallel (the result in bone order).
    bones
        .par_iter()
        .map_init(Vec::new, |d: &mut Vec<f32>, b| {
            let length = b.length();
            d.clear();
            d.extend(mesh.positions.iter().filter_map(|&p| {
                let (d, t) = b.distance(p);
                (length > 0.0 && (0.05..=0.95).contains(&t)).then_some(d)
            }));
            let quantile = ((d.len().saturating_sub(1)) as f32 * INSCRIBED_QUANTILE) as usize;
            let r = if d.is_empty() {
                0.25 * length
            } else {
                *d.select_nth_unstable_by(quantile, f32::total_cmp).1
            };
            let r = r.max(length * MIN_RADIUS_FRACTION).max(floor);
            let axis = if length > 0.0 {
                (b.tip - b.base) / length
            } else {
                Vec3::Y
            };
            BoneSection::new(
                b.base,
                axis,
                axis.any_orthonormal_vector(),
                length,
                Vec2::splat(r),
                Vec2::splat(r),
                Vec2::ZERO,
                Vec2::ZERO,
            )
        })
        .collect()
}

/// Each vertex's largest-weight bone (`None` for a vertex without weights).
pub fn dominant_bone(influences: &Influences) -> Vec<Option<u32>> {
    influences
        .iter()
        .map(|v| {
            v.iter()
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
                .map(|x| x.0)
        })
        .collect()
}
