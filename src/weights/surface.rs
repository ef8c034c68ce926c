//! One connected skin around a skeleton: naive surface nets over the smooth union of the
//! bones' pseudo-cylinders.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §10 and §11, for the bones' tapered
//! elliptical pseudo-cylinders; Gibson, "Constrained Elastic Surface Nets", 1998, for the
//! surface nets (here without the relaxation); Quílez's polynomial smooth minimum for the
//! fillets.
//!
//! Method: every bone's tapered elliptical pseudo-cylinder ([`BoneSection`], rounded at its
//! ends) gives an approximate signed distance `d_b(p) = |(ρ·r̄, a·r̄/c)| − r̄` (ρ the normalised
//! elliptical radius, r̄ the mean radius at the nearest point of the segment, a the distance
//! past an end, c the depth of the rounded end, [`CAP_OF_MINOR_RADIUS`] of the minor radius).
//! The skin is the zero set of their union, smoothed (polynomial smooth minimum of width
//! `blend_m`) between pseudo-cylinders that meet at an angle or with different radii, so
//! limbs meet the torso in a fillet instead of a crease, and a plain union where a child
//! continues its parent (a smooth minimum of two coincident surfaces would swell the joint in
//! a ring); sampled on a regular grid of `cell_m`. Naive surface nets put one vertex in every
//! cell the surface crosses, at the mean of its edges' zero crossings, and one quad (two
//! triangles, wound counter-clockwise seen from outside) across every grid edge the surface
//! crosses. Normals are the field's normalised gradient.
//!
//! Cost: O(G·B) field samples for G grid points and B bones (parallel over slices), O(G) for
//! the nets; memory O(G).
//!
//! Limits: thin parts need cells smaller than their thickness: a limb thinner than about two
//! cells can break into pieces ([`SurfaceStats::components`] says so).

use glam::{UVec3, Vec3};
use rayon::prelude::*;

use super::sections::BoneSection;
use super::{Adjacency, WeightMesh, rule};
use crate::error::Result;

/// Most grid points one surface may sample (64 M points: 256 MB of field values).
pub const MAX_GRID_POINTS: usize = 64 << 20;

/// What [`SurfaceJob::run`] made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SurfaceStats {
    /// Grid points per axis.
    pub grid: [u32; 3],
    /// Vertices.
    pub vertices: usize,
    /// Triangles.
    pub triangles: usize,
    /// Connected components of the result (1 for one skin).
    pub components: usize,
}

/// The skin: mesh and normals.
#[derive(Clone, Debug, Default)]
pub struct Surface {
    /// Positions and triangles.
    pub mesh: WeightMesh,
    /// Unit normals, one per vertex.
    pub normals: Vec<Vec3>,
    /// Counts.
    pub stats: SurfaceStats,
}

/// Build the skin around `sections`.
pub struct SurfaceJob<'a> {
    /// One pseudo-cylinder per bone.
    pub sections: &'a [BoneSection],
    /// Grid cell size (model units).
    pub cell_m: f32,
    /// Smooth-union blend width (0: a plain union with creases).
    pub blend_m: f32,
    /// Parent of each pseudo-cylinder (empty: none known). A child that continues its
    /// parent (axes within [`CONTINUOUS_COS`], radii at the joint within `blend_m`) joins it
    /// by a plain union: blending two coincident surfaces would swell the joint by
    /// `blend_m / 4` in a ring.
    pub parents: &'a [Option<usize>],
}

/// A child whose axis is within this cosine of its parent's continues the limb (about 25°).
pub const CONTINUOUS_COS: f32 = 0.9;

impl SurfaceJob<'_> {
    /// Rules: 1. at least one section; 2. cell size finite and > 0, blend finite and ≥ 0;
    /// 3. the grid has at most [`MAX_GRID_POINTS`] points.
    pub fn validate(&self) -> Result<()> {
        const JOB: &str = "SurfaceJob";
        if self.sections.is_empty() {
            return Err(rule(JOB, 1, "no pseudo-cylinders to wrap"));
        }
        if !(self.cell_m.is_finite() && self.cell_m > 0.0 && self.blend_m.is_finite())
            || self.blend_m < 0.0
        {
            return Err(rule(
                JOB,
                2,
                format!(
                    "cell {} must be finite and > 0, blend {} finite and >= 0",
                    self.cell_m, self.blend_m
                ),
            ));
        }
        let (_, dims) = self.grid();
        let points = dims.iter().product::<f64>();
        if points.is_nan() || points > MAX_GRID_POINTS as f64 {
            return Err(rule(
                JOB,
                3,
                format!(
                    "a {}x{}x{} grid ({points} points) is over {MAX_GRID_POINTS}: use larger \
                     cells",
                    dims[0], dims[1], dims[2]
                ),
            ));
        }
        Ok(())
    }

    /// Grid origin and points per axis.
    fn grid(&self) -> (Vec3, [f64; 3]) {
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for s in self.sections {
            let r = s.base_radii.max(s.tip_radii).max_element().max(0.0)
                + s.base_offset.abs().max(s.tip_offset.abs()).max_element();
            for p in [s.base, s.base + s.axis * s.length] {
                lo = lo.min(p - Vec3::splat(r));
                hi = hi.max(p + Vec3::splat(r));
            }
        }
        let margin = Vec3::splat(2.0 * self.cell_m + self.blend_m);
        let (lo, hi) = (lo - margin, hi + margin);
        let dims = ((hi - lo) / self.cell_m).ceil() + Vec3::ONE;
        (lo, [dims.x as f64, dims.y as f64, dims.z as f64])
    }

    /// Pairs joined by a plain union (see [`SurfaceJob::parents`]), as (child, parent).
    fn continuous_pairs(&self) -> Vec<(usize, usize)> {
        self.parents
            .iter()
            .enumerate()
            .filter_map(|(c, p)| {
                let p = (*p)?;
                let (sc, sp) = (self.sections.get(c)?, self.sections.get(p)?);
                let coaxial = sc.axis.dot(sp.axis) > CONTINUOUS_COS;
                let radii = (sc.mean_radius(0.0) - sp.mean_radius(1.0)).abs() < self.blend_m;
                (coaxial && radii).then_some((c, p))
            })
            .collect()
    }

    /// The field at `p` (negative inside): the plain union of the pseudo-cylinders, with a
    /// smooth union of width `blend_m` between the nearest few that do not continue each
    /// other.
    pub fn field(&self, p: Vec3) -> f32 {
        self.field_with(p, &self.continuous_pairs())
    }

    fn field_with(&self, p: Vec3, continuous: &[(usize, usize)]) -> f32 {
        // The four nearest surfaces decide the blend (a fillet joins two of them).
        const NEAREST: usize = 4;
        let mut near = [(f32::INFINITY, usize::MAX); NEAREST];
        for (i, s) in self.sections.iter().enumerate() {
            let d = distance(s, p);
            if d < near[NEAREST - 1].0 {
                near[NEAREST - 1] = (d, i);
                near.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
        }
        let mut f = near[0].0;
        for a in 0..NEAREST {
            for b in a + 1..NEAREST {
                let (ia, ib) = (near[a].1, near[b].1);
                if ia == usize::MAX || ib == usize::MAX {
                    continue;
                }
                if continuous.contains(&(ia, ib)) || continuous.contains(&(ib, ia)) {
                    continue;
                }
                f = f.min(smooth_min(near[a].0, near[b].0, self.blend_m));
            }
        }
        f
    }

    /// Validate, then build the surface.
    pub fn run(&self) -> Result<Surface> {
        self.validate()?;
        let (origin, dims) = self.grid();
        let [nx, ny, nz] = dims.map(|d| d as usize);
        let h = self.cell_m;
        let at =
            |i: usize, j: usize, k: usize| origin + Vec3::new(i as f32, j as f32, k as f32) * h;
        let continuous = self.continuous_pairs();
        let continuous = &continuous;
        let field: Vec<f32> = (0..nz)
            .into_par_iter()
            .flat_map_iter(|k| {
                (0..ny).flat_map(move |j| {
                    (0..nx).map(move |i| self.field_with(at(i, j, k), continuous))
                })
            })
            .collect();
        let idx = |i: usize, j: usize, k: usize| i + nx * (j + ny * k);
        // One vertex per crossed cell.
        let cells = (nx - 1) * (ny - 1) * (nz - 1);
        let mut vertex_of = vec![u32::MAX; cells];
        let cell = |i: usize, j: usize, k: usize| i + (nx - 1) * (j + (ny - 1) * k);
        let mut positions = Vec::new();
        const CORNERS: [UVec3; 8] = [
            UVec3::new(0, 0, 0),
            UVec3::new(1, 0, 0),
            UVec3::new(0, 1, 0),
            UVec3::new(1, 1, 0),
            UVec3::new(0, 0, 1),
            UVec3::new(1, 0, 1),
            UVec3::new(0, 1, 1),
            UVec3::new(1, 1, 1),
        ];
        const EDGES: [(usize, usize); 12] = [
            (0, 1),
            (2, 3),
            (4, 5),
            (6, 7),
            (0, 2),
            (1, 3),
            (4, 6),
            (5, 7),
            (0, 4),
            (1, 5),
            (2, 6),
            (3, 7),
        ];
        for k in 0..nz - 1 {
            for j in 0..ny - 1 {
                for i in 0..nx - 1 {
                    let mut f = [0f32; 8];
                    let mut inside = 0;
                    for (c, o) in CORNERS.iter().enumerate() {
                        f[c] = field[idx(i + o.x as usize, j + o.y as usize, k + o.z as usize)];
                        inside += (f[c] < 0.0) as u32;
                    }
                    if inside == 0 || inside == 8 {
                        continue;
                    }
                    let mut sum = Vec3::ZERO;
                    let mut count = 0.0;
                    for &(a, b) in &EDGES {
                        if (f[a] < 0.0) != (f[b] < 0.0) {
                            let t = f[a] / (f[a] - f[b]);
                            let pa = CORNERS[a].as_vec3();
                            let pb = CORNERS[b].as_vec3();
                            sum += pa + (pb - pa) * t;
                            count += 1.0;
                        }
                    }
                    vertex_of[cell(i, j, k)] = positions.len() as u32;
                    positions.push(at(i, j, k) + sum / count * h);
                }
            }
        }
        // One quad across every crossed grid edge whose four cells exist.
        let mut triangles: Vec<[u32; 3]> = Vec::new();
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let f0 = field[idx(i, j, k)];
                    for axis in 0..3 {
                        let p = [i, j, k];
                        let mut q = p;
                        q[axis] += 1;
                        if q[0] >= nx || q[1] >= ny || q[2] >= nz {
                            continue;
                        }
                        let f1 = field[idx(q[0], q[1], q[2])];
                        if (f0 < 0.0) == (f1 < 0.0) {
                            continue;
                        }
                        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
                        if p[u] == 0 || p[v] == 0 {
                            continue;
                        }
                        let c = |du: usize, dv: usize| {
                            let mut c = p;
                            c[u] = c[u] + du - 1;
                            c[v] = c[v] + dv - 1;
                            if c[0] >= nx - 1 || c[1] >= ny - 1 || c[2] >= nz - 1 {
                                return u32::MAX;
                            }
                            vertex_of[cell(c[0], c[1], c[2])]
                        };
                        let quad = [c(0, 0), c(1, 0), c(1, 1), c(0, 1)];
                        if quad.contains(&u32::MAX) {
                            continue;
                        }
                        // Counter-clockwise about +axis; outward is +axis when p is inside.
                        let [a, b, cc, d] = if f0 < 0.0 {
                            quad
                        } else {
                            [quad[0], quad[3], quad[2], quad[1]]
                        };
                        triangles.push([a, b, cc]);
                        triangles.push([a, cc, d]);
                    }
                }
            }
        }
        let normals: Vec<Vec3> = positions
            .par_iter()
            .map(|&p| {
                let e = 0.5 * h;
                let f = |q: Vec3| self.field_with(q, continuous);
                let g = Vec3::new(
                    f(p + Vec3::X * e) - f(p - Vec3::X * e),
                    f(p + Vec3::Y * e) - f(p - Vec3::Y * e),
                    f(p + Vec3::Z * e) - f(p - Vec3::Z * e),
                );
                g.normalize_or(Vec3::Y)
            })
            .collect();
        let mesh = WeightMesh {
            positions,
            triangles,
        };
        let components = Adjacency::new(&mesh).component_count;
        Ok(Surface {
            stats: SurfaceStats {
                grid: [nx as u32, ny as u32, nz as u32],
                vertices: mesh.positions.len(),
                triangles: mesh.triangles.len(),
                components,
            },
            mesh,
            normals,
        })
    }
}

/// Approximate signed distance from `p` to a rounded pseudo-cylinder (negative inside).
pub fn distance(s: &BoneSection, p: Vec3) -> f32 {
    let local = s.local(p);
    let (rho, outside) = s.measure(local);
    let t = s.param(local);
    let (radii, _) = s.at(t);
    let r = 0.5 * (radii.x + radii.y);
    // The end cap is a half ellipsoid CAP_OF_MINOR_RADIUS of the minor radius deep.
    let cap = CAP_OF_MINOR_RADIUS * radii.min_element();
    Vec3::new(rho * r, outside * r / cap.max(f32::MIN_POSITIVE), 0.0).length() - r
}

/// Depth of a pseudo-cylinder's rounded end, as a fraction of its minor radius: a wide torso
/// ends in a shallow dome (the shoulders stay above it), a limb in a short round end.
pub const CAP_OF_MINOR_RADIUS: f32 = 0.5;

/// Polynomial smooth minimum of width `k` (Quílez): equals `min(a, b)` when they differ by
/// more than `k`, and rounds the crease below it by at most `k / 4`.
pub fn smooth_min(a: f32, b: f32, k: f32) -> f32 {
    if k <= 0.0 || !a.is_finite() || !b.is_finite() {
        return a.min(b);
    }
    let h = (k - (a - b).abs()).max(0.0) / k;
    a.min(b) - h * h * k * 0.25
}
