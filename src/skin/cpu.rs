//! SkinningJob: the CPU reference path of linear blend skinning.
//!
//! Based on: Weber, "Run-Time Skin Deformation", §Basic Vertex Blending, §Caching and
//! Performance; Ribeiro, "Mesh Skinning", §Weighted Vertex Transformation.
//!
//! Method: for each vertex, blend its joints' palette matrices by weight into one matrix `M`,
//! then `p' = M p`, `n' = normalize(cof(M3) n)` with the sign of det(M3) (the cofactor matrix
//! is the inverse-transpose times the determinant, so this is the inverse-transpose after
//! normalisation, exact under non-uniform scale and mirroring), `t' = orthogonalize(M3 t, n')`
//! with the handedness `w` kept. Any number of influences per vertex. Inputs are never
//! written, outputs never read, one write per vertex; large meshes are split into chunks
//! skinned on all cores (rayon).
//!
//! Cost: per influence one 4x4 multiply-add of the blend; per vertex one point transform,
//! one cofactor (3 cross products) and a normalisation.
//!
//! Limits: weights are used as given (the importer normalises them); a vertex with no
//! influences is written at the origin.

use glam::{Mat4, Vec3, Vec3A, Vec4};
use rayon::prelude::*;

use super::weights::{
    Influence, Packed4, SlotCodec, U8F32, U8Unorm8, U8Unorm16, U16F32, U16Unorm8, U16Unorm16,
    VertexWeights, WeightLayout,
};
use crate::error::{Error, Result};

/// Vertices per parallel task; below `PARALLEL_THRESHOLD` the job stays on the calling
/// thread because rayon's fork/join overhead (~µs) would exceed the work.
const CHUNK_VERTICES: usize = 8192;
const PARALLEL_THRESHOLD: usize = 2 * CHUNK_VERTICES;

/// Skinned output of one draw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedVertices {
    /// Skinned positions in model space, one per input vertex.
    pub positions: Vec<Vec3>,
    /// Skinned normals, present when the draw has normals.
    pub normals: Option<Vec<Vec3>>,
    /// Skinned tangents (`w` handedness; xyz unit and perpendicular to the normal unless
    /// skinned with `orthonormalize_tangents` off), present when the draw has tangents.
    pub tangents: Option<Vec<Vec4>>,
}

/// An error naming the model, the draw, the vertex and the time when a skinned position or
/// normal is NaN or infinite (finite inputs near f32's limit — an inverse bind matrix of
/// 3e38 — overflow while skinning): `dump` never writes `null` for a vertex, `compare` never
/// passes an overflowed reference, `render` never draws one.
pub fn check_finite(
    scene: &crate::scene::Scene,
    draws: &[usize],
    t: Option<f32>,
    frame: &[SkinnedVertices],
) -> Result<()> {
    for (&d, v) in draws.iter().zip(frame) {
        let normals = v.normals.iter().flatten();
        if let Some((i, p)) = v
            .positions
            .iter()
            .chain(normals)
            .enumerate()
            .find(|(_, p)| !p.is_finite())
        {
            let draw = &scene.draws[d];
            let n = v.positions.len();
            let (what, vertex) = if i < n {
                ("position", i)
            } else {
                ("normal", i - n)
            };
            return Err(Error::invalid(
                &scene.name,
                format!(
                    "draws[{d}] (node {}, mesh {}, primitive {})",
                    scene.nodes[draw.node].source_index, draw.mesh, draw.primitive
                ),
                format!(
                    "skinned {what} of vertex {vertex}{} is {p}: the transforms, inverse bind \
                     matrices or morph targets overflow f32",
                    t.map_or(String::new(), |t| format!(" at t = {t} s"))
                ),
            ));
        }
    }
    Ok(())
}

/// Axis-aligned bounds of skinned positions over several draws (non-finite positions
/// skipped); `None` when there is no finite position ([`crate::math::finite_bounds`]).
pub fn bounds(frames: &[SkinnedVertices]) -> Option<(Vec3, Vec3)> {
    crate::math::finite_bounds(frames.iter().flat_map(|f| f.positions.iter().copied()))
}

/// Validation rules:
/// 1. `weights` has one entry per input position;
/// 2. every joint index `weights` uses is below `palette.len()`;
/// 3. each present input/output attribute array has the same length as `positions`, and an
///    output is given exactly when its input is;
/// 4. the kernel [`SkinningJob::run_kernel`] is given runs on this CPU (checked when it runs).
pub struct SkinningJob<'a> {
    /// The draw's palette (`model_from_bind`), indexed by the weights' joint indices.
    pub palette: &'a [Mat4],
    /// Joint influences of each vertex (indices into `palette`).
    pub weights: &'a VertexWeights,
    /// Input (bind-pose, morphed) positions.
    pub positions: &'a [Vec3],
    /// Input normals, if any.
    pub normals: Option<&'a [Vec3]>,
    /// Input tangents (xyz, `w` handedness), if any.
    pub tangents: Option<&'a [Vec4]>,
    /// Receives the skinned positions; same length as `positions`.
    pub out_positions: &'a mut [Vec3],
    /// Receives the skinned normals; given exactly when `normals` is.
    pub out_normals: Option<&'a mut [Vec3]>,
    /// Receives the skinned tangents; given exactly when `tangents` is.
    pub out_tangents: Option<&'a mut [Vec4]>,
    /// Normalise skinned normals here (true), or leave `sign(det)·cof(M)·n` unnormalised for a
    /// separate [`RenormalizeJob`] pass (Weber, "Run-Time Skin Deformation", §Caching and Performance
    /// times it as its own stage and notes it can be skipped at the cost of slight dimming at bent
    /// joints).
    pub renormalize: bool,
    /// Make skinned tangents perpendicular to the unit normal and unit length (true), or
    /// write them as the blend gives them, `M₃ₓ₃·t` (ozz-animation's output; a shader that
    /// normalises per pixel needs no more). The handedness `w` is kept either way.
    pub orthonormalize_tangents: bool,
    /// How normals follow the blended matrix: its inverse-transpose (exact) or its upper 3×3.
    pub normal_mode: super::modes::NormalMode,
}

impl SkinningJob<'_> {
    /// Check rules 1–3 above (rule 4 is checked when the job runs).
    pub fn validate(&self) -> Result<()> {
        validate_skinning(
            "SkinningJob",
            self.weights,
            self.palette.len(),
            self.positions.len(),
            [
                self.normals.map(|v| v.len()),
                self.tangents.map(|v| v.len()),
            ],
            [
                Some(self.out_positions.len()),
                self.out_normals.as_ref().map(|v| v.len()),
                self.out_tangents.as_ref().map(|v| v.len()),
            ],
        )
    }

    /// Validate, then skin every vertex into the outputs (in parallel for large meshes): on
    /// the kernel [`super::simd::Kernel::chosen`] picks for this CPU (AVX2 + FMA where the CPU
    /// has both, its matrices blended in 512-bit registers where
    /// [`super::simd::Kernel::fastest`] says; the same bits on every such CPU, whichever layout
    /// and range a vertex falls in), else on the portable path.
    pub fn run(&mut self) -> Result<()> {
        self.run_kernel(super::simd::Kernel::chosen())
    }

    /// [`SkinningJob::run`] on the portable (SSE2) path whatever the CPU, as on CPUs without
    /// AVX2 and FMA.
    pub fn run_portable(&mut self) -> Result<()> {
        self.run_kernel(super::simd::Kernel::Portable)
    }

    /// Bytes of every output the job writes.
    fn output_bytes(&self) -> usize {
        let n = self.out_positions.len();
        let per_vertex = size_of::<Vec3>()
            + self.out_normals.as_ref().map_or(0, |_| size_of::<Vec3>())
            + self.out_tangents.as_ref().map_or(0, |_| size_of::<Vec4>());
        n.saturating_mul(per_vertex)
    }

    /// [`SkinningJob::run`] on `kernel`; an error naming it when this CPU cannot run it (rule
    /// 4). An AVX2 kernel that refuses the input (an any-count array whose offsets are out of
    /// order) leaves the job to the portable path, as `run` does.
    pub fn run_kernel(&mut self, kernel: super::simd::Kernel) -> Result<()> {
        use super::simd::Kernel as SimdKernel;
        self.validate()?;
        if !kernel.is_available() {
            return Err(crate::Error::job(
                "SkinningJob",
                4,
                format!("the {} kernel does not run on this CPU", kernel.name()),
            ));
        }
        if kernel != SimdKernel::Portable {
            let range = super::simd::Range {
                palette: self.palette,
                weights: self.weights,
                positions: self.positions,
                normals: self.normals,
                tangents: self.tangents,
                renormalize: self.renormalize,
                orthonormalize_tangents: self.orthonormalize_tangents,
                blend3x3: self.normal_mode == super::modes::NormalMode::Blend3x3,
                kernel,
                stream_tangents: self.output_bytes() >= super::simd::STREAM_MIN_BYTES,
            };
            let refused = std::sync::atomic::AtomicBool::new(false);
            for_each_chunk(
                &mut *self.out_positions,
                self.out_normals.as_deref_mut(),
                self.out_tangents.as_deref_mut(),
                |start, p, nc, tc| {
                    if !range.skin(start, p, nc, tc) {
                        refused.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                },
            );
            // The kernel refuses only inputs it cannot read safely (an any-count array whose
            // offsets are out of order): the portable path then skins the whole job.
            if !refused.into_inner() {
                return Ok(());
            }
        }
        let palette = self.palette;
        match &self.weights.layout {
            WeightLayout::Fixed4(w) => {
                macro_rules! per_encoding {
                    ($($c:ident),*) => {
                        match w.encoding() {
                            $((<$c as SlotCodec>::JOINTS, <$c as SlotCodec>::WEIGHTS) => {
                                self.run_with(Fixed4::<$c> {
                                    palette,
                                    weights: w,
                                    codec: std::marker::PhantomData,
                                })
                            })*
                        }
                    };
                }
                per_encoding!(U8F32, U16F32, U8Unorm16, U16Unorm16, U8Unorm8, U16Unorm8)
            }
            WeightLayout::Csr {
                offsets,
                influences,
            } => self.run_with(Csr {
                palette,
                offsets,
                influences,
            }),
        }
        Ok(())
    }

    fn kernel<'k, B: Blend>(&self, blend: B) -> Kernel<'k, B>
    where
        Self: 'k,
    {
        Kernel {
            blend,
            positions: self.positions,
            normals: self.normals,
            tangents: self.tangents,
            renormalize: self.renormalize,
            orthonormalize_tangents: self.orthonormalize_tangents,
            blend3x3: self.normal_mode == super::modes::NormalMode::Blend3x3,
        }
    }

    fn run_with<B: Blend>(&mut self, blend: B) {
        let kernel = self.kernel(blend);
        for_each_chunk(
            &mut *self.out_positions,
            self.out_normals.as_deref_mut(),
            self.out_tangents.as_deref_mut(),
            |start, p, nc, tc| kernel.skin_range(start, p, nc, tc),
        );
    }
}

/// The numbered rules both skinning jobs share: 1. one weighted vertex per position; 2. every
/// joint index below `palette_len`; 3. every present input (`inputs`: normals, tangents) and
/// output (`outputs`: positions, normals, tangents) as long as the positions, an output given
/// exactly when its input is.
pub(super) fn validate_skinning(
    job: &'static str,
    weights: &VertexWeights,
    palette_len: usize,
    n: usize,
    inputs: [Option<usize>; 2],
    outputs: [Option<usize>; 3],
) -> Result<()> {
    if weights.vertex_count() != n {
        return Err(Error::job(
            job,
            1,
            format!(
                "{} weighted vertices for {n} positions",
                weights.vertex_count()
            ),
        ));
    }
    if !weights.is_empty() && weights.max_joint as usize >= palette_len {
        return Err(Error::job(
            job,
            2,
            format!(
                "joint {} used but the palette has {palette_len} entries",
                weights.max_joint
            ),
        ));
    }
    let len_ok = |x: Option<usize>| x.is_none_or(|l| l == n);
    if outputs[0] != Some(n)
        || !inputs.iter().chain(&outputs).all(|&x| len_ok(x))
        || inputs[0].is_some() != outputs[1].is_some()
        || inputs[1].is_some() != outputs[2].is_some()
    {
        return Err(Error::job(
            job,
            3,
            "attribute arrays differ in length or presence",
        ));
    }
    Ok(())
}

/// Run `f(first_vertex, positions, normals, tangents)` over matching chunks of every present
/// output: on this thread below [`PARALLEL_THRESHOLD`] vertices, else on all cores.
pub(super) fn for_each_chunk(
    out_p: &mut [Vec3],
    out_n: Option<&mut [Vec3]>,
    out_t: Option<&mut [Vec4]>,
    f: impl Fn(usize, &mut [Vec3], Option<&mut [Vec3]>, Option<&mut [Vec4]>) + Sync,
) {
    let n = out_p.len();
    if n < PARALLEL_THRESHOLD {
        f(0, out_p, out_n, out_t);
        return;
    }
    let mut tasks: Vec<ChunkTask> = Vec::with_capacity(n.div_ceil(CHUNK_VERTICES));
    let mut n_chunks = out_n.map(|s| s.chunks_mut(CHUNK_VERTICES));
    let mut t_chunks = out_t.map(|s| s.chunks_mut(CHUNK_VERTICES));
    for (i, p) in out_p.chunks_mut(CHUNK_VERTICES).enumerate() {
        let nc = n_chunks.as_mut().and_then(|it| it.next());
        let tc = t_chunks.as_mut().and_then(|it| it.next());
        tasks.push((i * CHUNK_VERTICES, p, nc, tc));
    }
    tasks
        .into_par_iter()
        .for_each(|(start, p, nc, tc)| f(start, p, nc, tc));
}

/// One parallel task: first vertex, and the matching chunks of each present output.
type ChunkTask<'a> = (
    usize,
    &'a mut [Vec3],
    Option<&'a mut [Vec3]>,
    Option<&'a mut [Vec4]>,
);

/// Blends the palette matrices of vertex `v` by weight.
trait Blend: Sync {
    fn blend(&self, v: usize) -> Mat4;
}

/// Four slots per vertex in encoding `C`, unrolled, no branches.
struct Fixed4<'a, C> {
    palette: &'a [Mat4],
    weights: &'a Packed4,
    codec: std::marker::PhantomData<C>,
}

impl<C: SlotCodec + Sync> Blend for Fixed4<'_, C> {
    #[inline(always)]
    fn blend(&self, v: usize) -> Mat4 {
        let i = &self.weights.get_as::<C>(v);
        let m0 = &self.palette[i.joints[0] as usize];
        let m1 = &self.palette[i.joints[1] as usize];
        let m2 = &self.palette[i.joints[2] as usize];
        let m3 = &self.palette[i.joints[3] as usize];
        let [w0, w1, w2, w3] = i.weights;
        Mat4::from_cols(
            m0.x_axis * w0 + m1.x_axis * w1 + m2.x_axis * w2 + m3.x_axis * w3,
            m0.y_axis * w0 + m1.y_axis * w1 + m2.y_axis * w2 + m3.y_axis * w3,
            m0.z_axis * w0 + m1.z_axis * w1 + m2.z_axis * w2 + m3.z_axis * w3,
            m0.w_axis * w0 + m1.w_axis * w1 + m2.w_axis * w2 + m3.w_axis * w3,
        )
    }
}

/// Any number of influences per vertex.
struct Csr<'a> {
    palette: &'a [Mat4],
    offsets: &'a [u32],
    influences: &'a [Influence],
}

impl Blend for Csr<'_> {
    #[inline(always)]
    fn blend(&self, v: usize) -> Mat4 {
        let (a, b) = (self.offsets[v] as usize, self.offsets[v + 1] as usize);
        let mut c0 = Vec4::ZERO;
        let mut c1 = Vec4::ZERO;
        let mut c2 = Vec4::ZERO;
        let mut c3 = Vec4::ZERO;
        for inf in &self.influences[a..b] {
            let m = &self.palette[inf.joint as usize];
            let w = Vec4::splat(inf.weight);
            c0 += m.x_axis * w;
            c1 += m.y_axis * w;
            c2 += m.z_axis * w;
            c3 += m.w_axis * w;
        }
        Mat4::from_cols(c0, c1, c2, c3)
    }
}

struct Kernel<'a, B: Blend> {
    blend: B,
    renormalize: bool,
    orthonormalize_tangents: bool,
    /// Normals by the blended upper 3×3 instead of its inverse-transpose.
    blend3x3: bool,
    positions: &'a [Vec3],
    normals: Option<&'a [Vec3]>,
    tangents: Option<&'a [Vec4]>,
}

impl<B: Blend> Kernel<'_, B> {
    fn skin_range(
        &self,
        start: usize,
        out_p: &mut [Vec3],
        out_n: Option<&mut [Vec3]>,
        out_t: Option<&mut [Vec4]>,
    ) {
        // One tight loop per attribute combination, so the hot ones carry no per-vertex branches.
        match (out_n, self.normals, out_t, self.tangents) {
            (None, _, None, _) => {
                for (i, op) in out_p.iter_mut().enumerate() {
                    let v = start + i;
                    *op = transform_point(&self.blend.blend(v), self.positions[v]);
                }
            }
            (Some(on), Some(ns), None, _) if !self.blend3x3 => {
                // Four vertices at a time: blend and transform positions per vertex (AoS SIMD),
                // then the normals of all four in SoA form, one vertex per lane.
                let n = out_p.len();
                let whole = n / 4 * 4;
                for i in (0..whole).step_by(4) {
                    let v = start + i;
                    let m = [
                        self.blend.blend(v),
                        self.blend.blend(v + 1),
                        self.blend.blend(v + 2),
                        self.blend.blend(v + 3),
                    ];
                    for k in 0..4 {
                        out_p[i + k] = transform_point(&m[k], self.positions[v + k]);
                    }
                    let r = skin_normals4(
                        &m,
                        [ns[v], ns[v + 1], ns[v + 2], ns[v + 3]],
                        self.renormalize,
                    );
                    on[i..i + 4].copy_from_slice(&r);
                }
                for i in whole..n {
                    let v = start + i;
                    let m = self.blend.blend(v);
                    out_p[i] = transform_point(&m, self.positions[v]);
                    on[i] = if self.renormalize {
                        skin_normal(&m, ns[v]).into()
                    } else {
                        skin_normal_unnormalized(&m, ns[v]).into()
                    };
                }
            }
            (on, ns, ot, ts) => {
                let mut on = on;
                let mut ot = ot;
                for i in 0..out_p.len() {
                    let v = start + i;
                    let m = self.blend.blend(v);
                    out_p[i] = transform_point(&m, self.positions[v]);
                    let mut skinned_n = Vec3A::ZERO;
                    if let (Some(on), Some(ns)) = (on.as_deref_mut(), ns) {
                        let raw = if self.blend3x3 {
                            let n = ns[v];
                            Vec3A::from_vec4(m.x_axis) * n.x
                                + Vec3A::from_vec4(m.y_axis) * n.y
                                + Vec3A::from_vec4(m.z_axis) * n.z
                        } else {
                            skin_normal_unnormalized(&m, ns[v])
                        };
                        skinned_n = unit_or_zero(raw);
                        on[i] = if self.renormalize {
                            skinned_n.into()
                        } else {
                            raw.into()
                        };
                    }
                    if let (Some(ot), Some(ts)) = (ot.as_deref_mut(), ts) {
                        let t = ts[v];
                        let r = Vec3A::from_vec4(m.x_axis) * t.x
                            + Vec3A::from_vec4(m.y_axis) * t.y
                            + Vec3A::from_vec4(m.z_axis) * t.z;
                        ot[i] = if !self.orthonormalize_tangents {
                            r.extend(t.w)
                        } else if skinned_n != Vec3A::ZERO {
                            (r - skinned_n * skinned_n.dot(r))
                                .normalize_or_zero()
                                .extend(t.w)
                        } else {
                            r.normalize_or_zero().extend(t.w)
                        };
                    }
                }
            }
        }
    }
}

/// [`skin_normal`] (or its unnormalised form) for four vertices at once, lane k = vertex k:
/// the same operations in the same order per lane, so results match the one-vertex path.
#[inline(always)]
pub(super) fn skin_normals4(m: &[Mat4; 4], n: [Vec3; 4], renormalize: bool) -> [Vec3; 4] {
    // Rows of the transposes: x_axis components of the four blended x columns, etc.
    let xs = Mat4::from_cols(m[0].x_axis, m[1].x_axis, m[2].x_axis, m[3].x_axis).transpose();
    let ys = Mat4::from_cols(m[0].y_axis, m[1].y_axis, m[2].y_axis, m[3].y_axis).transpose();
    let zs = Mat4::from_cols(m[0].z_axis, m[1].z_axis, m[2].z_axis, m[3].z_axis).transpose();
    let (xx, xy, xz) = (xs.x_axis, xs.y_axis, xs.z_axis);
    let (yx, yy, yz) = (ys.x_axis, ys.y_axis, ys.z_axis);
    let (zx, zy, zz) = (zs.x_axis, zs.y_axis, zs.z_axis);
    // c0 = y × z, c1 = z × x, c2 = x × y (per lane).
    let (c0x, c0y, c0z) = (yy * zz - yz * zy, yz * zx - yx * zz, yx * zy - yy * zx);
    let (c1x, c1y, c1z) = (zy * xz - zz * xy, zz * xx - zx * xz, zx * xy - zy * xx);
    let (c2x, c2y, c2z) = (xy * yz - xz * yy, xz * yx - xx * yz, xx * yy - xy * yx);
    let det = xx * c0x + xy * c0y + xz * c0z;
    let nx = Vec4::new(n[0].x, n[1].x, n[2].x, n[3].x);
    let ny = Vec4::new(n[0].y, n[1].y, n[2].y, n[3].y);
    let nz = Vec4::new(n[0].z, n[1].z, n[2].z, n[3].z);
    let mut rx = c0x * nx + c1x * ny + c2x * nz;
    let mut ry = c0y * nx + c1y * ny + c2y * nz;
    let mut rz = c0z * nx + c1z * ny + c2z * nz;
    let flip = det.cmplt(Vec4::ZERO);
    rx = Vec4::select(flip, -rx, rx);
    ry = Vec4::select(flip, -ry, ry);
    rz = Vec4::select(flip, -rz, rz);
    if renormalize {
        let len2 = rx * rx + ry * ry + rz * rz;
        let ok = len2.cmpgt(Vec4::ZERO) & len2.is_finite_mask();
        let inv = Vec4::select(ok, Vec4::ONE / len2.sqrt(), Vec4::ZERO);
        rx *= inv;
        ry *= inv;
        rz *= inv;
    }
    [
        Vec3::new(rx.x, ry.x, rz.x),
        Vec3::new(rx.y, ry.y, rz.y),
        Vec3::new(rx.z, ry.z, rz.z),
        Vec3::new(rx.w, ry.w, rz.w),
    ]
}

#[inline(always)]
fn transform_point(m: &Mat4, p: Vec3) -> Vec3 {
    (m.x_axis * p.x + m.y_axis * p.y + m.z_axis * p.z + m.w_axis).truncate()
}

/// `normalize(sign(det M3) · cof(M3) · n)`: the cofactor matrix is the inverse-transpose times the
/// determinant, so this is the inverse-transpose normal, exact under non-uniform scale and
/// mirroring, with one square root and no matrix inverse. A degenerate blend (singular M3, e.g. the
/// 180° twist of Weber, "Run-Time Skin Deformation", §Shortcomings of Vertex Blending) gives the
/// zero vector, not NaN.
#[inline(always)]
pub(super) fn skin_normal_unnormalized(m: &Mat4, n: Vec3) -> Vec3A {
    let x = Vec3A::from_vec4(m.x_axis);
    let y = Vec3A::from_vec4(m.y_axis);
    let z = Vec3A::from_vec4(m.z_axis);
    let c0 = y.cross(z);
    let r = c0 * n.x + z.cross(x) * n.y + x.cross(y) * n.z;
    if x.dot(c0) < 0.0 { -r } else { r }
}

#[inline(always)]
fn skin_normal(m: &Mat4, n: Vec3) -> Vec3A {
    unit_or_zero(skin_normal_unnormalized(m, n))
}

/// `r / |r|`, or zero for a zero or non-finite length.
#[inline(always)]
pub(super) fn unit_or_zero(r: Vec3A) -> Vec3A {
    let len2 = r.length_squared();
    if len2 > 0.0 && len2.is_finite() {
        r * (1.0 / len2.sqrt())
    } else {
        Vec3A::ZERO
    }
}

/// RenormalizeJob: renormalise skinned normals in place (zero vectors stay zero), the "re-normalize
/// the normals" stage of Weber, "Run-Time Skin Deformation", §Caching and Performance. Parallel
/// above the same threshold as skinning.
pub struct RenormalizeJob<'a> {
    /// Normals renormalised in place.
    pub normals: &'a mut [Vec3],
}

impl RenormalizeJob<'_> {
    /// Scale every normal to unit length; zero or non-finite vectors become zero.
    pub fn run(&mut self) {
        let f = |c: &mut [Vec3]| {
            for n in c {
                let l2 = n.length_squared();
                *n = if l2 > 0.0 && l2.is_finite() {
                    *n * (1.0 / l2.sqrt())
                } else {
                    Vec3::ZERO
                };
            }
        };
        if self.normals.len() < PARALLEL_THRESHOLD {
            f(self.normals);
        } else {
            self.normals.par_chunks_mut(CHUNK_VERTICES).for_each(f);
        }
    }
}
