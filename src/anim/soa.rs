//! SoaClip: an animation compiled for playback four tracks at a time.
//!
//! Method (after ozz-animation's structure-of-arrays sampling; keys and cursors as in
//! Weber, "Run-Time Skin Deformation", Motion Tracks): the STEP and LINEAR translation, scale
//! and rotation channels of a clip are grouped four to a lane group, vector tracks apart from
//! quaternion tracks. Each lane caches the interval it sampled last — its start, length and
//! end values (a vector's start and delta; a quaternion's two ends with the shorter-arc sign
//! folded in, the slerp angle) — and the time window for which that interval holds. A
//! quaternion interval's sign and angle are worked out once, when the clip is compiled (as
//! ozz's offline tools prepare its keys), so a refill only copies. A frame checks each lane's window (a compare, almost always true in forward
//! playback), refills the few lanes whose window was left through the channel's own cursor
//! (the sampler's `segment`: current and next interval, then a gallop), and evaluates all four
//! lanes at once in `Vec4` arithmetic: the blend factor, the lerp, or the slerp with its two
//! sines by a polynomial (Taylor to x¹³ on [0, π/2], below an f32 ulp there; the common
//! `1/sin θ` is left out, the normalisation removes it), then the quaternion normalisation.
//! An interval's angle comes from a polynomial `acos` too (Abramowitz & Stegun 4.4.46). CUBICSPLINE and morph-weight channels are left to the per-channel
//! sampler.
//!
//! The results are the per-channel sampler's bits for vectors; quaternions differ by the
//! polynomials' and the normalisation's rounding (one reciprocal instead of four divisions),
//! a unit or two in the last place (`tests/soa.rs` compares the two on every shared model and
//! rig).
//!
//! Cost per frame: per lane group a window check per lane, one division, three (vector) or
//! about twenty (quaternion) 4-wide operations and a scatter of four results; per interval
//! change a few copies for that lane. Memory: the clip copies its channels' samplers and keeps
//! 8 bytes per rotation interval;
//! the state is ~200 bytes per lane group. Limits: one clip per animation and scene (rules
//! below); a lane group that crosses many intervals per frame (keys far denser than frames)
//! refills every frame, at about the per-channel sampler's cost.

use glam::{Quat, Vec3, Vec4};

use super::sampler::Segment;
use super::{Animation, Channel, Cursor, Interpolation, Path, Pose, Sampler};
use crate::error::{Error, Result};
use crate::scene::Scene;

/// Tracks per lane group.
pub const LANES: usize = 4;

/// Below this cosine between a rotation interval's keys the slerp lerps instead (the
/// per-channel sampler's threshold, so both take the same branch).
const LERP_COS_THRESHOLD: f32 = 0.9995;

/// The node property a vector track drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum VecField {
    Translation,
    Scale,
}

#[derive(Clone, Debug)]
struct VecTrack {
    node: usize,
    field: VecField,
    sampler: Sampler,
}

#[derive(Clone, Debug)]
struct QuatTrack {
    node: usize,
    sampler: Sampler,
    /// Per LINEAR interval `k` (keys `k`, `k + 1`): its slerp set-up, made once here.
    arcs: Vec<Arc>,
}

/// A quaternion interval's slerp set-up: the shorter-arc sign of its second key and its
/// angle (negative where it lerps: the ends are within [`LERP_COS_THRESHOLD`]).
#[derive(Clone, Copy, Debug)]
struct Arc {
    sign: f32,
    theta: f32,
}

impl Arc {
    /// The set-up of the interval from `a` to `b` (unit quaternions, `[x, y, z, w]`): what
    /// every refill of that interval would compute.
    fn new(a: &[f32], b: &[f32]) -> Arc {
        let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
        let sign = if dot < 0.0 { -1.0 } else { 1.0 };
        let dot = dot * sign;
        let theta = if dot > LERP_COS_THRESHOLD {
            -1.0
        } else {
            acos_unit(dot.clamp(0.0, 1.0))
        };
        Arc { sign, theta }
    }

    /// Every interval of `s` when it is LINEAR (nothing for STEP: its keys are held).
    fn of(s: &Sampler) -> Vec<Arc> {
        if s.interpolation != Interpolation::Linear {
            return Vec::new();
        }
        (0..s.times_s.len().saturating_sub(1))
            .map(|k| Arc::new(s.value(k), s.value(k + 1)))
            .collect()
    }
}

/// An animation compiled for four-lane playback (module documentation).
#[derive(Clone, Debug)]
pub struct SoaClip {
    node_count: usize,
    vec_tracks: Vec<VecTrack>,
    quat_tracks: Vec<QuatTrack>,
    /// Channels the per-channel sampler plays (CUBICSPLINE, morph weights).
    generic: Vec<Channel>,
}

impl SoaClip {
    /// Compile `animation` of `scene`.
    ///
    /// Rules (the animation's own, checked again here): 1. every channel targets a node of
    /// the scene; 2. every sampler is valid ([`Sampler::validate`]) with the component count
    /// its path needs.
    pub fn new(scene: &Scene, animation: &Animation) -> Result<SoaClip> {
        const JOB: &str = "SoaClip";
        let mut clip = SoaClip {
            node_count: scene.nodes.len(),
            vec_tracks: Vec::new(),
            quat_tracks: Vec::new(),
            generic: Vec::new(),
        };
        for (i, ch) in animation.channels.iter().enumerate() {
            if ch.node >= scene.nodes.len() {
                return Err(Error::job(
                    JOB,
                    1,
                    format!(
                        "channel {i} targets node {} of {}",
                        ch.node,
                        scene.nodes.len()
                    ),
                ));
            }
            ch.sampler
                .validate()
                .map_err(|m| Error::job(JOB, 2, format!("channel {i}: {m}")))?;
            let needs = match ch.path {
                Path::Translation | Path::Scale => Some(3),
                Path::Rotation => Some(4),
                Path::Weights => None,
            };
            if needs.is_some_and(|c| c != ch.sampler.components) {
                return Err(Error::job(
                    JOB,
                    2,
                    format!(
                        "channel {i}: {} components for {}",
                        ch.sampler.components,
                        ch.path.name()
                    ),
                ));
            }
            let lanes = ch.sampler.interpolation != Interpolation::CubicSpline;
            match ch.path {
                Path::Translation | Path::Scale if lanes => clip.vec_tracks.push(VecTrack {
                    node: ch.node,
                    field: if ch.path == Path::Translation {
                        VecField::Translation
                    } else {
                        VecField::Scale
                    },
                    sampler: ch.sampler.clone(),
                }),
                Path::Rotation if lanes => clip.quat_tracks.push(QuatTrack {
                    node: ch.node,
                    sampler: ch.sampler.clone(),
                    arcs: Arc::of(&ch.sampler),
                }),
                _ => clip.generic.push(ch.clone()),
            }
        }
        Ok(clip)
    }

    /// Tracks played four at a time (vector, quaternion) and channels left to the per-channel
    /// sampler.
    pub fn track_counts(&self) -> (usize, usize, usize) {
        (
            self.vec_tracks.len(),
            self.quat_tracks.len(),
            self.generic.len(),
        )
    }
}

/// One lane group of vector tracks: each lane's window and interval.
#[derive(Clone, Copy, Debug)]
struct VecGroup {
    lo: [f32; LANES],
    hi: [f32; LANES],
    t0: [f32; LANES],
    dt: [f32; LANES],
    /// Start value and delta (end − start), per component.
    a: [[f32; LANES]; 3],
    d: [[f32; LANES]; 3],
}

/// One lane group of quaternion tracks.
#[derive(Clone, Copy, Debug)]
struct QuatGroup {
    lo: [f32; LANES],
    hi: [f32; LANES],
    t0: [f32; LANES],
    dt: [f32; LANES],
    /// The interval's ends, the second with the shorter-arc sign folded in, per component.
    q0: [[f32; LANES]; 4],
    q1: [[f32; LANES]; 4],
    /// The interval's angle (its slerp weights are `sin((1 − u)θ)` and `sin(uθ)`: the
    /// common factor `1/sin θ` cancels in the normalisation that follows).
    theta: [f32; LANES],
    /// 1 where the lane slerps, 0 where it lerps (short interval, held key).
    slerp: [f32; LANES],
}

/// An empty window: the first sample of every lane refills it.
const NEVER: [f32; LANES] = [f32::INFINITY; LANES];

impl Default for VecGroup {
    fn default() -> Self {
        VecGroup {
            lo: NEVER,
            hi: [f32::NEG_INFINITY; LANES],
            t0: [0.0; LANES],
            dt: [f32::INFINITY; LANES],
            a: [[0.0; LANES]; 3],
            d: [[0.0; LANES]; 3],
        }
    }
}

impl Default for QuatGroup {
    fn default() -> Self {
        QuatGroup {
            lo: NEVER,
            hi: [f32::NEG_INFINITY; LANES],
            t0: [0.0; LANES],
            dt: [f32::INFINITY; LANES],
            q0: [
                [0.0, 0.0, 0.0, 0.0],
                [0.0; LANES],
                [0.0; LANES],
                [1.0; LANES],
            ],
            q1: [[0.0; LANES]; 4],
            theta: [0.0; LANES],
            slerp: [0.0; LANES],
        }
    }
}

/// Playback state of one [`SoaClip`]: the lanes' cached intervals and every track's cursor.
/// Keep one per playing instance (a character, a layer); it does not allocate once made.
#[derive(Clone, Debug, Default)]
pub struct SoaState {
    vec_groups: Vec<VecGroup>,
    quat_groups: Vec<QuatGroup>,
    vec_cursors: Vec<Cursor>,
    quat_cursors: Vec<Cursor>,
    generic_cursors: Vec<Cursor>,
}

impl SoaState {
    /// Fresh state for `clip` (every lane refills on its first sample).
    pub fn new(clip: &SoaClip) -> SoaState {
        SoaState {
            vec_groups: vec![VecGroup::default(); clip.vec_tracks.len().div_ceil(LANES)],
            quat_groups: vec![QuatGroup::default(); clip.quat_tracks.len().div_ceil(LANES)],
            vec_cursors: vec![Cursor::default(); clip.vec_tracks.len()],
            quat_cursors: vec![Cursor::default(); clip.quat_tracks.len()],
            generic_cursors: vec![Cursor::default(); clip.generic.len()],
        }
    }

    /// True when this state was made for `clip` (same track and channel counts).
    pub fn fits(&self, clip: &SoaClip) -> bool {
        self.vec_cursors.len() == clip.vec_tracks.len()
            && self.quat_cursors.len() == clip.quat_tracks.len()
            && self.generic_cursors.len() == clip.generic.len()
            && self.vec_groups.len() == clip.vec_tracks.len().div_ceil(LANES)
            && self.quat_groups.len() == clip.quat_tracks.len().div_ceil(LANES)
    }
}

/// Samples a [`SoaClip`] at a time into a pose, on top of the rest pose (as
/// [`super::AnimateJob`] does for an animation).
///
/// Validation rules:
/// 1. `clip` was compiled for a scene with as many nodes as `scene`;
/// 2. `state` was made for `clip`;
/// 3. `pose` was made for this scene (one entry per node);
/// 4. `time_s` is finite.
pub struct SoaAnimateJob<'a> {
    /// The scene the pose belongs to.
    pub scene: &'a Scene,
    /// The compiled clip.
    pub clip: &'a SoaClip,
    /// Sample time in seconds; outside a track's keys its first or last value is held.
    pub time_s: f32,
    /// The clip's playback state, kept between calls.
    pub state: &'a mut SoaState,
    /// Receives the rest pose with the animated properties overwritten.
    pub pose: &'a mut Pose,
}

impl SoaAnimateJob<'_> {
    /// Check the numbered rules above.
    pub fn validate(&self) -> Result<()> {
        const JOB: &str = "SoaAnimateJob";
        if self.clip.node_count != self.scene.nodes.len() {
            return Err(Error::job(
                JOB,
                1,
                format!(
                    "clip made for {} nodes, scene has {}",
                    self.clip.node_count,
                    self.scene.nodes.len()
                ),
            ));
        }
        if !self.state.fits(self.clip) {
            return Err(Error::job(JOB, 2, "state made for another clip"));
        }
        if self.pose.locals.len() != self.scene.nodes.len()
            || self.pose.morph_weights.len() != self.scene.nodes.len()
        {
            return Err(Error::job(JOB, 3, "pose made for another scene"));
        }
        if !self.time_s.is_finite() {
            return Err(Error::job(
                JOB,
                4,
                format!("time {} is not finite", self.time_s),
            ));
        }
        Ok(())
    }

    /// Validate, then sample every track into the pose.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let t = self.time_s;
        self.pose.reset(self.scene);
        let clip = self.clip;
        let state = &mut *self.state;
        let locals = &mut self.pose.locals;
        for (g, group) in state.vec_groups.iter_mut().enumerate() {
            let tracks = &clip.vec_tracks[g * LANES..((g + 1) * LANES).min(clip.vec_tracks.len())];
            let cursors = &mut state.vec_cursors[g * LANES..g * LANES + tracks.len()];
            for (lane, (track, cursor)) in tracks.iter().zip(cursors.iter_mut()).enumerate() {
                if !(t >= group.lo[lane] && t < group.hi[lane]) {
                    refill_vec(group, lane, &track.sampler, t, cursor);
                }
            }
            let u = blend_factor(t, group.t0, group.dt);
            let c = |i: usize| Vec4::from_array(group.a[i]) + Vec4::from_array(group.d[i]) * u;
            let (x, y, z) = (c(0).to_array(), c(1).to_array(), c(2).to_array());
            for (lane, track) in tracks.iter().enumerate() {
                let v = Vec3::new(x[lane], y[lane], z[lane]);
                let local = &mut locals[track.node];
                match track.field {
                    VecField::Translation => local.translation = v,
                    VecField::Scale => local.scale = v,
                }
            }
        }
        for (g, group) in state.quat_groups.iter_mut().enumerate() {
            let tracks =
                &clip.quat_tracks[g * LANES..((g + 1) * LANES).min(clip.quat_tracks.len())];
            let cursors = &mut state.quat_cursors[g * LANES..g * LANES + tracks.len()];
            for (lane, (track, cursor)) in tracks.iter().zip(cursors.iter_mut()).enumerate() {
                if !(t >= group.lo[lane] && t < group.hi[lane]) {
                    refill_quat(group, lane, track, t, cursor);
                }
            }
            let q = sample_quats(group, t);
            for (lane, track) in tracks.iter().enumerate() {
                locals[track.node].rotation = q[lane];
            }
        }
        // The rest through the per-channel sampler.
        let mut buf = [0.0f32; 4];
        for (ch, cursor) in clip.generic.iter().zip(state.generic_cursors.iter_mut()) {
            let s = &ch.sampler;
            let local = &mut locals[ch.node];
            match ch.path {
                Path::Translation => {
                    s.sample(t, cursor, &mut buf[..3]);
                    local.translation = Vec3::from_slice(&buf[..3]);
                }
                Path::Scale => {
                    s.sample(t, cursor, &mut buf[..3]);
                    local.scale = Vec3::from_slice(&buf[..3]);
                }
                Path::Rotation => {
                    s.sample(t, cursor, &mut buf);
                    local.rotation = Quat::from_xyzw(buf[0], buf[1], buf[2], buf[3]);
                }
                Path::Weights => {
                    let w = &mut self.pose.morph_weights[ch.node];
                    if w.len() >= s.components {
                        s.sample(t, cursor, &mut w[..]);
                    }
                }
            }
        }
        Ok(())
    }
}

/// `((t − t0) / dt)` clamped to [0, 1], four lanes (a held key has `dt` infinite: 0).
#[inline]
fn blend_factor(t: f32, t0: [f32; LANES], dt: [f32; LANES]) -> Vec4 {
    ((Vec4::splat(t) - Vec4::from_array(t0)) / Vec4::from_array(dt)).clamp(Vec4::ZERO, Vec4::ONE)
}

/// Cache the interval of vector track `s` holding `t` in `lane`.
fn refill_vec(group: &mut VecGroup, lane: usize, s: &Sampler, t: f32, cursor: &mut Cursor) {
    let (seg, lo, hi) = s.segment(t, cursor);
    group.lo[lane] = lo;
    group.hi[lane] = hi;
    let (a, b, t0, dt) = match seg {
        Segment::Span(k) if s.interpolation == Interpolation::Linear => (
            s.value(k),
            Some(s.value(k + 1)),
            s.times_s[k],
            s.times_s[k + 1] - s.times_s[k],
        ),
        Segment::Span(k) | Segment::Held(k) => (s.value(k), None, 0.0, f32::INFINITY),
    };
    group.t0[lane] = t0;
    group.dt[lane] = dt;
    for i in 0..3 {
        group.a[i][lane] = a[i];
        group.d[i][lane] = b.map_or(0.0, |b| b[i] - a[i]);
    }
}

/// Cache the interval of quaternion track `s` holding `t` in `lane`: the per-channel
/// sampler's slerp set-up (shorter-arc sign, angle, 1/sin, the lerp threshold).
fn refill_quat(group: &mut QuatGroup, lane: usize, track: &QuatTrack, t: f32, cursor: &mut Cursor) {
    let s = &track.sampler;
    let (seg, lo, hi) = s.segment(t, cursor);
    group.lo[lane] = lo;
    group.hi[lane] = hi;
    match seg {
        Segment::Span(k) if s.interpolation == Interpolation::Linear => {
            let (a, b) = (s.value(k), s.value(k + 1));
            let arc = track.arcs.get(k).copied().unwrap_or_else(|| Arc::new(a, b));
            group.t0[lane] = s.times_s[k];
            group.dt[lane] = s.times_s[k + 1] - s.times_s[k];
            for i in 0..4 {
                group.q0[i][lane] = a[i];
                group.q1[i][lane] = b[i] * arc.sign;
            }
            if arc.theta < 0.0 {
                group.slerp[lane] = 0.0;
            } else {
                group.theta[lane] = arc.theta;
                group.slerp[lane] = 1.0;
            }
        }
        Segment::Span(k) | Segment::Held(k) => {
            let a = s.value(k);
            group.t0[lane] = 0.0;
            group.dt[lane] = f32::INFINITY;
            for (i, &v) in a.iter().enumerate().take(4) {
                group.q0[i][lane] = v;
                group.q1[i][lane] = 0.0;
            }
            group.slerp[lane] = 0.0;
        }
    }
}

/// `acos(x)` for `x` in [0, 1] (Abramowitz & Stegun 4.4.46: `sqrt(1 − x)` times a degree-7
/// polynomial, absolute error below 2e-8 — a third of an f32 ulp at 1).
#[inline]
fn acos_unit(x: f32) -> f32 {
    const A: [f32; 8] = [
        std::f32::consts::FRAC_PI_2,
        -0.214_598_8,
        0.088_978_99,
        -0.050_174_303,
        0.030_891_88,
        -0.017_088_126,
        0.006_670_09,
        -0.001_262_491_1,
    ];
    let mut p = A[7];
    for &a in A[..7].iter().rev() {
        p = p * x + a;
    }
    (1.0 - x).sqrt() * p
}

/// Four lanes of `sin(x)` for `x` in [0, π/2] by the Taylor series to the x¹³ term (the first
/// term left out is below 6e-10 there).
#[inline]
fn sin_quarter(x: Vec4) -> Vec4 {
    let x2 = x * x;
    let mut p = Vec4::splat(1.0 / 6_227_020_800.0);
    for c in [
        -1.0 / 39_916_800.0,
        1.0 / 362_880.0,
        -1.0 / 5_040.0,
        1.0 / 120.0,
        -1.0 / 6.0,
    ] {
        p = p * x2 + Vec4::splat(c);
    }
    x + x * x2 * p
}

/// The four lanes' quaternions at `t`: the interval's slerp (or lerp) weights, the blend, and
/// the normalisation (identity where the result has no length).
#[inline]
fn sample_quats(group: &QuatGroup, t: f32) -> [Quat; LANES] {
    let u = blend_factor(t, group.t0, group.dt);
    let one_minus = Vec4::ONE - u;
    let theta = Vec4::from_array(group.theta);
    let slerp = Vec4::from_array(group.slerp).cmpgt(Vec4::ZERO);
    let wa = Vec4::select(slerp, sin_quarter(one_minus * theta), one_minus);
    let wb = Vec4::select(slerp, sin_quarter(u * theta), u);
    let c = |i: usize| wa * Vec4::from_array(group.q0[i]) + wb * Vec4::from_array(group.q1[i]);
    let (x, y, z, w) = (c(0), c(1), c(2), c(3));
    let len = (x * x + y * y + z * z + w * w).sqrt();
    let inv = Vec4::ONE / len;
    let (x, y, z, w, len) = (
        (x * inv).to_array(),
        (y * inv).to_array(),
        (z * inv).to_array(),
        (w * inv).to_array(),
        len.to_array(),
    );
    std::array::from_fn(|l| {
        if len[l] > 0.0 && len[l].is_finite() {
            Quat::from_xyzw(x[l], y[l], z[l], w[l])
        } else {
            Quat::IDENTITY
        }
    })
}
