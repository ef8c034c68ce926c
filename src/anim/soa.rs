//! SoaClip: an animation compiled for playback four tracks at a time.
//!
//! Method (after ozz-animation's structure-of-arrays sampling; keys and cursors as in
//! Weber, "Run-Time Skin Deformation", Motion Tracks): the STEP and LINEAR translation, scale
//! and rotation channels of a clip are grouped four to a lane group, vector tracks apart from
//! quaternion tracks. When the clip is compiled, every track is cut into the segments a
//! player meets (the first key held, each interval, the last key held: `Sampler::segment`'s
//! windows) and each segment becomes a record of 16-byte rows ready to evaluate: its window
//! `[lo, hi)`, the blend's start and length, a vector's start and delta, a quaternion
//! interval's two ends with the shorter-arc sign folded in and its slerp angle (as ozz's
//! offline tools prepare its keys). A lane group keeps each lane's segment and the four
//! records transposed. A frame tests the four windows at once (almost always inside in
//! forward playback); when one was left, each such lane tries its next segment (one compare)
//! and otherwise searches through the channel's own cursor (current and next interval, then a
//! gallop), and the group's records are transposed again (whole registers written, so the
//! evaluation's 4-wide reads never wait on lane-sized stores). All four lanes are evaluated at
//! once in `Vec4` arithmetic: the blend factor, the lerp, or the slerp with its two sines by
//! a polynomial (Taylor to x¹³ on [0, π/2], below an f32 ulp there; the common `1/sin θ` is
//! left out, the normalisation removes it), then the quaternion normalisation. An interval's
//! angle comes from a polynomial `acos` too (Abramowitz & Stegun 4.4.46). Only the nodes whose
//! translation, rotation or scale no channel drives are reset to rest each frame.
//! CUBICSPLINE and morph-weight channels are left to the per-channel sampler.
//!
//! The results are the per-channel sampler's bits for vectors; quaternions differ by the
//! polynomials' and the normalisation's rounding (one reciprocal instead of four divisions),
//! a unit or two in the last place (`tests/soa.rs` compares the two on every shared model and
//! rig).
//!
//! Cost per frame: per lane group one 4-wide window test, one division, three (vector) or
//! about twenty (quaternion) 4-wide operations and a scatter of four results; per segment
//! change a compare for that lane and three or four 4×4 transposes for its group. Memory: the
//! clip copies its channels' samplers and keeps 48 bytes per vector key and 64 per rotation
//! key; the state is 200–260 bytes per lane group. Limits: one clip per animation and scene
//! (rules below), a state plays only the clip it was made for; fewer than 2³² segments in all;
//! a lane group that crosses many intervals per frame (keys far denser than frames) searches
//! every frame, at about the per-channel sampler's cost.

use glam::{Mat4, Quat, Vec3, Vec4};

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
}

/// A vector track's segment as a lane reads it, three rows: `[lo, hi, t0, dt]` (the window
/// `[lo, hi)` for which it holds, the blend's start and length: 0 and infinite where a key is
/// held), `[a.x, a.y, a.z, d.x]`, `[d.y, d.z, 0, 0]` (start value `a`, delta `d` to the end).
type VecRecord = [Vec4; 3];

/// A quaternion track's segment, four rows: `[lo, hi, t0, dt]`, the start key, the end key
/// with the shorter-arc sign folded in (zero where a key is held), `[θ, slerp, 0, 0]` (the
/// slerp angle; 1 where the segment slerps, 0 where it lerps or holds).
type QuatRecord = [Vec4; 4];

/// A track's segments in the order a forward player meets them: the first key held (up to
/// and at its time), each interval between keys, the last key held (from its time on); a
/// one-key track has one segment, held over the whole line. `Sampler::segment`'s windows,
/// exactly. Row 0 of every record is `[lo, hi, t0, dt]`.
trait Record: Copy + AsRef<[Vec4]> {
    /// The padding lanes' segment: the whole line, values that normalise.
    const PAD: Self;
    /// Segment of key `k` held over `[lo, hi)`.
    fn held(s: &Sampler, k: usize, lo: f32, hi: f32) -> Self;
    /// Interval `k` (keys `k`, `k + 1`) of a LINEAR sampler, its row 0 given.
    fn blend(s: &Sampler, k: usize, head: Vec4) -> Self;

    /// Interval `k` of a LINEAR or STEP sampler (STEP holds key `k` over it).
    fn interval(s: &Sampler, k: usize) -> Self {
        let t = &s.times_s;
        if s.interpolation == Interpolation::Linear {
            Self::blend(s, k, Vec4::new(t[k], t[k + 1], t[k], t[k + 1] - t[k]))
        } else {
            Self::held(s, k, t[k], t[k + 1])
        }
    }

    /// Its window `[lo, hi)`.
    fn window(&self) -> (f32, f32) {
        self.as_ref().first().map_or((0.0, 0.0), |h| (h.x, h.y))
    }

    /// Every segment of `s`, in order (one, or the key count plus one).
    fn track(s: &Sampler) -> Vec<Self> {
        let t = &s.times_s;
        let n = t.len();
        if n == 1 {
            return vec![Self::held(s, 0, f32::NEG_INFINITY, f32::INFINITY)];
        }
        let mut v = Vec::with_capacity(n + 1);
        v.push(Self::held(s, 0, f32::NEG_INFINITY, t[0].next_up()));
        v.extend((0..n - 1).map(|k| Self::interval(s, k)));
        v.push(Self::held(s, n - 1, t[n - 1], f32::INFINITY));
        v
    }
}

/// Row 0 of a held segment: its window, a blend that stays at its start (infinite length).
fn held_head(lo: f32, hi: f32) -> Vec4 {
    Vec4::new(lo, hi, 0.0, f32::INFINITY)
}

impl Record for VecRecord {
    const PAD: Self = [
        Vec4::new(f32::NEG_INFINITY, f32::INFINITY, 0.0, f32::INFINITY),
        Vec4::ZERO,
        Vec4::ZERO,
    ];

    fn held(s: &Sampler, k: usize, lo: f32, hi: f32) -> Self {
        let a = s.value(k);
        [
            held_head(lo, hi),
            Vec4::new(a[0], a[1], a[2], 0.0),
            Vec4::ZERO,
        ]
    }

    fn blend(s: &Sampler, k: usize, head: Vec4) -> Self {
        let (a, b) = (s.value(k), s.value(k + 1));
        let d: [f32; 3] = std::array::from_fn(|i| b[i] - a[i]);
        [
            head,
            Vec4::new(a[0], a[1], a[2], d[0]),
            Vec4::new(d[1], d[2], 0.0, 0.0),
        ]
    }
}

impl Record for QuatRecord {
    const PAD: Self = [
        Vec4::new(f32::NEG_INFINITY, f32::INFINITY, 0.0, f32::INFINITY),
        Vec4::W,
        Vec4::ZERO,
        Vec4::ZERO,
    ];

    fn held(s: &Sampler, k: usize, lo: f32, hi: f32) -> Self {
        let a = s.value(k);
        [
            held_head(lo, hi),
            Vec4::new(a[0], a[1], a[2], a[3]),
            Vec4::ZERO,
            Vec4::ZERO,
        ]
    }

    fn blend(s: &Sampler, k: usize, head: Vec4) -> Self {
        let (a, b) = (s.value(k), s.value(k + 1));
        let arc = Arc::new(a, b);
        let slerp = arc.theta >= 0.0;
        [
            head,
            Vec4::new(a[0], a[1], a[2], a[3]),
            Vec4::new(b[0], b[1], b[2], b[3]) * arc.sign,
            Vec4::new(
                if slerp { arc.theta } else { 0.0 },
                if slerp { 1.0 } else { 0.0 },
                0.0,
                0.0,
            ),
        ]
    }
}

/// One kind of track's segments, all tracks one after another (record 0: [`Record::PAD`]).
#[derive(Clone, Debug)]
struct Segments<R> {
    records: Vec<R>,
    /// Per track: the index of its first segment and its segment count.
    first: Vec<u32>,
    count: Vec<u32>,
}

impl<R: Record> Segments<R> {
    fn new() -> Self {
        Segments {
            records: vec![R::PAD],
            first: Vec::new(),
            count: Vec::new(),
        }
    }

    /// Record `i` (record 0, the padding lanes', for an index past the end: a state made for
    /// this clip never has one).
    #[inline]
    fn record(&self, i: u32) -> &R {
        self.records.get(i as usize).unwrap_or(&self.records[0])
    }

    /// Add track `s`'s segments (a validated LINEAR or STEP sampler); `Err` when the clip
    /// would pass the index range of a lane (2³² segments).
    fn push(&mut self, s: &Sampler) -> std::result::Result<(), String> {
        let segs = R::track(s);
        let first = u32::try_from(self.records.len()).ok();
        let count = u32::try_from(segs.len()).ok();
        match (first, count) {
            (Some(f), Some(c)) if f.checked_add(c).is_some() => {
                self.first.push(f);
                self.count.push(c);
                self.records.extend(segs);
                Ok(())
            }
            _ => Err(format!(
                "more than {} keys in the clip's four-lane tracks",
                u32::MAX
            )),
        }
    }
}

/// A quaternion interval's slerp set-up: the shorter-arc sign of its second key and its
/// angle (negative where it lerps: the ends are within [`LERP_COS_THRESHOLD`]).
#[derive(Clone, Copy, Debug)]
struct Arc {
    sign: f32,
    theta: f32,
}

impl Arc {
    /// The set-up of the interval from `a` to `b` (unit quaternions, `[x, y, z, w]`).
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
}

/// Identity of a compiled clip, so a state is only ever played with the clip it was made for
/// (from 1: a `SoaState::default()` has 0 and fits no clip with tracks or without).
static NEXT_CLIP_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// An animation compiled for four-lane playback (module documentation).
#[derive(Clone, Debug)]
pub struct SoaClip {
    /// Which compilation this is (a clone keeps it: same tracks, same segments).
    id: u64,
    node_count: usize,
    vec_tracks: Vec<VecTrack>,
    quat_tracks: Vec<QuatTrack>,
    /// The vector and quaternion tracks' segments.
    vec_segments: Segments<VecRecord>,
    quat_segments: Segments<QuatRecord>,
    /// Channels the per-channel sampler plays (CUBICSPLINE, morph weights).
    generic: Vec<Channel>,
    /// Nodes whose translation, rotation or scale no channel drives: the only ones a frame
    /// resets to rest (the others are overwritten whole).
    rest_nodes: Vec<usize>,
    /// The animation's [`Animation::duration_s`], kept so players need not scan every
    /// channel each frame.
    duration_s: f32,
}

impl SoaClip {
    /// The compiled animation's length ([`Animation::duration_s`]: its last key time).
    pub fn duration_s(&self) -> f32 {
        self.duration_s
    }

    /// Compile `animation` of `scene`.
    ///
    /// Rules (the animation's own, checked again here): 1. every channel targets a node of
    /// the scene; 2. every sampler is valid ([`Sampler::validate`]) with the component count
    /// its path needs; 3. the four-lane tracks have fewer than 2³² segments in all.
    pub fn new(scene: &Scene, animation: &Animation) -> Result<SoaClip> {
        const JOB: &str = "SoaClip";
        let mut clip = SoaClip {
            id: NEXT_CLIP_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            node_count: scene.nodes.len(),
            vec_tracks: Vec::new(),
            quat_tracks: Vec::new(),
            vec_segments: Segments::new(),
            quat_segments: Segments::new(),
            generic: Vec::new(),
            rest_nodes: Vec::new(),
            duration_s: animation.duration_s(),
        };
        // Per node: translation, rotation, scale driven.
        let mut driven = vec![[false; 3]; scene.nodes.len()];
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
                Path::Translation => driven[ch.node][0] = true,
                Path::Rotation => driven[ch.node][1] = true,
                Path::Scale => driven[ch.node][2] = true,
                Path::Weights => {}
            }
            let too_many = |m: String| Error::job(JOB, 3, format!("channel {i}: {m}"));
            match ch.path {
                Path::Translation | Path::Scale if lanes => {
                    clip.vec_segments.push(&ch.sampler).map_err(too_many)?;
                    clip.vec_tracks.push(VecTrack {
                        node: ch.node,
                        field: if ch.path == Path::Translation {
                            VecField::Translation
                        } else {
                            VecField::Scale
                        },
                        sampler: ch.sampler.clone(),
                    })
                }
                Path::Rotation if lanes => {
                    clip.quat_segments.push(&ch.sampler).map_err(too_many)?;
                    clip.quat_tracks.push(QuatTrack {
                        node: ch.node,
                        sampler: ch.sampler.clone(),
                    })
                }
                _ => clip.generic.push(ch.clone()),
            }
        }
        clip.rest_nodes = (0..scene.nodes.len())
            .filter(|&n| driven[n] != [true; 3])
            .collect();
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

/// Playback state of one [`SoaClip`]: each lane's current segment and every track's cursor.
/// Keep one per playing instance (a character, a layer); it does not allocate once made.
#[derive(Clone, Debug, Default)]
pub struct SoaState {
    /// The clip it was made for.
    clip_id: u64,
    /// Per lane group, each lane's segment and the four records transposed.
    vec_lanes: Vec<Lanes<3>>,
    quat_lanes: Vec<Lanes<4>>,
    vec_cursors: Vec<Cursor>,
    quat_cursors: Vec<Cursor>,
    generic_cursors: Vec<Cursor>,
}

/// One lane group's segments: each lane's (an index into the clip's records; padding lanes:
/// 0, the whole line) and their records transposed, row by row (`cols[row][e]`: element `e`
/// of that row, four lanes), so a frame inside every window reads whole registers (copying
/// a refilled lane's values in lane by lane and reading them back 4-wide would stall on
/// store forwarding).
#[derive(Clone, Copy, Debug)]
struct Lanes<const ROWS: usize> {
    at: [u32; LANES],
    cols: [[Vec4; 4]; ROWS],
}

impl<const ROWS: usize> Lanes<ROWS>
where
    [Vec4; ROWS]: Record,
{
    /// The records of segments `at` of `segs`, transposed.
    fn new(segs: &Segments<[Vec4; ROWS]>, at: [u32; LANES]) -> Self {
        let r = at.map(|i| segs.record(i));
        Lanes {
            at,
            cols: std::array::from_fn(|row| rows(&r, row)),
        }
    }

    /// Each lane group of `segs` on its tracks' first segments (the first key held).
    fn first(segs: &Segments<[Vec4; ROWS]>) -> Vec<Self> {
        segs.first
            .chunks(LANES)
            .map(|c| {
                Lanes::new(
                    segs,
                    std::array::from_fn(|l| c.get(l).copied().unwrap_or(0)),
                )
            })
            .collect()
    }
}

impl SoaState {
    /// Fresh state for `clip`: every lane on its first segment, searched from on the first
    /// sample after the first key.
    pub fn new(clip: &SoaClip) -> SoaState {
        SoaState {
            clip_id: clip.id,
            vec_lanes: Lanes::first(&clip.vec_segments),
            quat_lanes: Lanes::first(&clip.quat_segments),
            vec_cursors: vec![Cursor::default(); clip.vec_tracks.len()],
            quat_cursors: vec![Cursor::default(); clip.quat_tracks.len()],
            generic_cursors: vec![Cursor::default(); clip.generic.len()],
        }
    }

    /// True when this state was made for `clip` (by [`SoaState::new`] with it or a clone).
    pub fn fits(&self, clip: &SoaClip) -> bool {
        self.clip_id == clip.id
            && self.vec_cursors.len() == clip.vec_tracks.len()
            && self.quat_cursors.len() == clip.quat_tracks.len()
            && self.generic_cursors.len() == clip.generic.len()
            && self.vec_lanes.len() == clip.vec_tracks.len().div_ceil(LANES)
            && self.quat_lanes.len() == clip.quat_tracks.len().div_ceil(LANES)
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
        let clip = self.clip;
        // Rest values where no channel writes; every driven property is written below.
        for &n in &clip.rest_nodes {
            if let (Some(local), Some(node)) =
                (self.pose.locals.get_mut(n), self.scene.nodes.get(n))
            {
                *local = node.rest;
            }
        }
        self.pose.reset_morph_weights(self.scene);
        let state = &mut *self.state;
        let locals = &mut self.pose.locals;
        for (g, lanes) in state.vec_lanes.iter_mut().enumerate() {
            let segs = &clip.vec_segments;
            let cursors = &mut state.vec_cursors;
            advance(segs, lanes, g, t, cursors, |k| {
                clip.vec_tracks.get(k).map(|track| &track.sampler)
            });
            let [[_, _, t0, dt], [ax, ay, az, dx], [dy, dz, _, _]] = lanes.cols;
            let u = blend_factor(t, t0, dt);
            let (x, y, z) = (
                (ax + dx * u).to_array(),
                (ay + dy * u).to_array(),
                (az + dz * u).to_array(),
            );
            let tracks = clip.vec_tracks.iter().skip(g * LANES).take(LANES);
            for (lane, track) in tracks.enumerate() {
                let v = Vec3::new(x[lane], y[lane], z[lane]);
                if let Some(local) = locals.get_mut(track.node) {
                    match track.field {
                        VecField::Translation => local.translation = v,
                        VecField::Scale => local.scale = v,
                    }
                }
            }
        }
        for (g, lanes) in state.quat_lanes.iter_mut().enumerate() {
            let segs = &clip.quat_segments;
            let cursors = &mut state.quat_cursors;
            advance(segs, lanes, g, t, cursors, |k| {
                clip.quat_tracks.get(k).map(|track| &track.sampler)
            });
            let q = sample_quats(&lanes.cols, t);
            let tracks = clip.quat_tracks.iter().skip(g * LANES).take(LANES);
            for (lane, track) in tracks.enumerate() {
                if let Some(local) = locals.get_mut(track.node) {
                    local.rotation = q[lane];
                }
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

/// Move lane group `g`'s lanes to the segments holding `t` (and their transposed records
/// with them). A lane whose window `t` left tries the next segment (forward playback: one
/// check), else searches its track through the sampler's cursor. `sampler(k)` gives track
/// `k`'s sampler, `cursors` every track's cursor (none past the last track: padding lanes,
/// whose window is the whole line).
#[inline]
fn advance<'s, const ROWS: usize>(
    segs: &Segments<[Vec4; ROWS]>,
    group: &mut Lanes<ROWS>,
    g: usize,
    t: f32,
    cursors: &mut [Cursor],
    sampler: impl Fn(usize) -> Option<&'s Sampler>,
) where
    [Vec4; ROWS]: Record,
{
    let [lo, hi, ..] = group.cols[0];
    let tv = Vec4::splat(t);
    let kept = (tv.cmpge(lo) & tv.cmplt(hi)).bitmask();
    if kept == 0b1111 {
        return;
    }
    let record = |i: u32| segs.record(i);
    let inside = |(lo, hi): (f32, f32)| t >= lo && t < hi;
    let mut lanes = group.at;
    for (lane, at) in lanes.iter_mut().enumerate() {
        if kept & (1 << lane) != 0 {
            continue;
        }
        let k = g * LANES + lane;
        let (Some(s), Some(cursor), Some(&first), Some(&count)) = (
            sampler(k),
            cursors.get_mut(k),
            segs.first.get(k),
            segs.count.get(k),
        ) else {
            continue;
        };
        let next = *at + 1;
        *at = if next < first + count && inside(record(next).window()) {
            // Interval `rel − 1`, or the last key held (the cursor stays on the last
            // interval, as the sampler leaves it).
            let rel = (next - first) as usize;
            cursor.set_key(
                rel.saturating_sub(1)
                    .min((count as usize).saturating_sub(3)),
            );
            next
        } else {
            let rel = match s.segment(t, cursor).0 {
                Segment::Held(0) => 0,
                Segment::Held(k) | Segment::Span(k) => k + 1,
            };
            first + (rel as u32).min(count - 1)
        };
    }
    *group = Lanes::new(segs, lanes);
}

/// Row `row` of the four lanes' records transposed: element `e` of the result holds the row's
/// element `e` of every lane.
#[inline(always)]
fn rows<const ROWS: usize>(r: &[&[Vec4; ROWS]; LANES], row: usize) -> [Vec4; 4] {
    let m = Mat4::from_cols(r[0][row], r[1][row], r[2][row], r[3][row]).transpose();
    [m.x_axis, m.y_axis, m.z_axis, m.w_axis]
}

/// `((t − t0) / dt)` clamped to [0, 1], four lanes (a held key has `dt` infinite: 0).
#[inline]
fn blend_factor(t: f32, t0: Vec4, dt: Vec4) -> Vec4 {
    ((Vec4::splat(t) - t0) / dt).clamp(Vec4::ZERO, Vec4::ONE)
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
fn sample_quats(cols: &[[Vec4; 4]; 4], t: f32) -> [Quat; LANES] {
    let [[_, _, t0, dt], q0, q1, [theta, slerp, _, _]] = *cols;
    let u = blend_factor(t, t0, dt);
    let one_minus = Vec4::ONE - u;
    let slerp = slerp.cmpgt(Vec4::ZERO);
    let wa = Vec4::select(slerp, sin_quarter(one_minus * theta), one_minus);
    let wb = Vec4::select(slerp, sin_quarter(u * theta), u);
    let c = |i: usize| wa * q0[i] + wb * q1[i];
    let (x, y, z, w) = (c(0), c(1), c(2), c(3));
    let len = (x * x + y * y + z * z + w * w).sqrt();
    let inv = Vec4::ONE / len;
    // Back to one quaternion per lane with a 4×4 transpose (whole registers, no lane-by-lane
    // assembly).
    let q = Mat4::from_cols(x * inv, y * inv, z * inv, w * inv).transpose();
    let ok = (len.cmpgt(Vec4::ZERO) & len.cmplt(Vec4::INFINITY)).bitmask();
    let lane = |l: usize, v: Vec4| {
        if ok & (1 << l) != 0 {
            Quat::from_vec4(v)
        } else {
            Quat::IDENTITY
        }
    };
    [
        lane(0, q.x_axis),
        lane(1, q.y_axis),
        lane(2, q.z_axis),
        lane(3, q.w_axis),
    ]
}
