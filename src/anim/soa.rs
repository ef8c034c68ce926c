//! SoaClip: an animation compiled for playback four tracks at a time.
//!
//! Based on: ozz-animation (Guillaume Blanc), its structure-of-arrays sampling and the key
//! preparation of its offline tools; Weber, "Run-Time Skin Deformation", Motion Tracks, for the
//! keys and cursors; Abramowitz and Stegun, "Handbook of Mathematical Functions", 4.4.46, for the
//! `acos` polynomial.
//!
//! Method: the STEP and LINEAR translation, scale and rotation channels of a clip are grouped four
//! to a lane group, vector tracks apart from quaternion tracks. When the clip is compiled, every
//! track is cut into the segments a player meets (the first key held, each interval, the last key
//! held: `Sampler::segment`'s windows) and each segment becomes a record of 16-byte rows ready to
//! evaluate: its window `[lo, hi)`, the blend's start and length, a vector's start and delta, a
//! quaternion interval's two ends with the shorter-arc sign folded in and its slerp angle (as ozz's
//! offline tools prepare its keys). A lane group keeps each lane's segment and the four records
//! transposed. A frame tests the four windows at once (almost always inside in forward playback);
//! when one was left, each such lane tries its next segment (one compare) and otherwise searches
//! its track from the segment it was on (current and next interval, then a gallop), and the group's
//! records are transposed again (whole registers written, so the evaluation's 4-wide reads never
//! wait on lane-sized stores). Tracks on the same key times (a baked export's, usually all of them)
//! are grouped four at a time when the clip is compiled, and such a *lockstep* group keeps its
//! segments already transposed: its four windows are one, lane 0 alone moves and
//! the others follow, and the group reads its transposed records in place, so a segment change
//! costs one compare and an index. One blend factor serves consecutive lockstep groups on the same
//! segment (the same start and length, bit for bit). All four lanes are evaluated at once in `Vec4`
//! arithmetic: the blend factor, the lerp, or the slerp with its two sines by a polynomial (Taylor
//! to x¹³ on [0, π/2], below an f32 ulp there; the common `1/sin θ` is left out, the normalisation
//! removes it), then the quaternion normalisation. An interval's angle comes from a polynomial
//! `acos` too (Abramowitz & Stegun 4.4.46). Only the nodes whose translation, rotation or scale no
//! channel drives are reset to rest each frame.
//!
//! The results are the per-channel sampler's bits for vectors; quaternions differ by the
//! polynomials' and the normalisation's rounding (one reciprocal instead of four divisions),
//! a unit or two in the last place (`tests/core/soa.rs` compares the two on every shared model and
//! rig).
//!
//! Cost per frame: per lane group one 4-wide window test, one division (none for a lockstep
//! group after the first of its segment), three (vector) or about twenty (quaternion) 4-wide
//! operations and a scatter of four results; per segment change a compare for that lane and
//! three or four 4×4 transposes for its group, or for a lockstep group one compare; with a state
//! to prefetch (`ahead`), its lane groups (24 bytes each) at the start and each other group's
//! records as it plays. Memory: the clip copies its channels' samplers and keeps 48 bytes per
//! vector key and 64 per rotation key, twice that for tracks in lockstep groups (their records
//! are also kept transposed); the state is 24 bytes per lockstep lane group and 216 or 280 per
//! other group (its records transposed), plus a cursor per CUBICSPLINE or morph-weight channel:
//! a frame that stays on its segments reads 24 bytes a group, so a crowd's states stream
//! through the caches cheaply.
//!
//! Limits: one clip per animation and scene (rules below), a state plays only the clip it was
//! made for; fewer than 2³² segments in all; a lane group that crosses many intervals per
//! frame (keys far denser than frames) searches every frame, at about the per-channel
//! sampler's cost; CUBICSPLINE and morph-weight channels are left to the per-channel sampler.

use glam::{Mat4, Quat, Vec3, Vec4};

use super::sampler::Segment;
use super::{Animation, Channel, Cursor, Interpolation, Path, Pose, Sampler};
use crate::error::{Error, Result};
use crate::math::prefetch;
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

/// One kind of track's segments, all tracks one after another (record 0: [`Record::PAD`]),
/// and the lockstep groups' records transposed.
#[derive(Clone, Debug)]
struct Segments<const ROWS: usize> {
    records: Vec<[Vec4; ROWS]>,
    /// Per track: the index of its first segment and its segment count.
    first: Vec<u32>,
    count: Vec<u32>,
    /// Per lane group: for a lockstep group (four tracks on the same key times, so the same
    /// windows), the index in `group_cols` of its first segment's transposed records.
    lockstep: Vec<Option<u32>>,
    /// Lockstep groups' segments, transposed ([`Cols`]); such a group reads its current one
    /// in place (a segment change moves an index).
    group_cols: Vec<Cols<ROWS>>,
    /// Lane groups not in lockstep: each keeps its transposed records in the state.
    own_groups: usize,
    /// The padding lanes' record on all four lanes, transposed (what an index out of range
    /// reads).
    pad_cols: Cols<ROWS>,
}

impl<const ROWS: usize> Segments<ROWS>
where
    [Vec4; ROWS]: Record,
{
    fn new() -> Self {
        Segments {
            records: vec![<[Vec4; ROWS]>::PAD],
            first: Vec::new(),
            count: Vec::new(),
            lockstep: Vec::new(),
            group_cols: Vec::new(),
            own_groups: 0,
            pad_cols: std::array::from_fn(|row| rows(&[&<[Vec4; ROWS]>::PAD; LANES], row)),
        }
    }

    /// The records of segments `at`, transposed.
    fn transposed(&self, at: [u32; LANES]) -> Cols<ROWS> {
        let r = at.map(|i| self.record(i));
        std::array::from_fn(|row| rows(&r, row))
    }

    /// The transposed records lane group `lanes` reads: a lockstep group's shared ones, any
    /// other's own (in `own`, its state's); the padding lanes' for an index out of range (a
    /// state made for this clip never has one).
    #[inline]
    fn cols<'a>(&'a self, lanes: &Lanes, own: &'a [Cols<ROWS>]) -> &'a Cols<ROWS> {
        match lanes.records {
            Records::Own(i) => own.get(i as usize),
            Records::Shared(i) => self.group_cols.get(i as usize),
        }
        .unwrap_or(&self.pad_cols)
    }

    /// Every lane group on its tracks' first segments (the first key held), and the
    /// transposed records of those not in lockstep.
    fn first_lanes(&self) -> (Vec<Lanes>, Vec<Cols<ROWS>>) {
        let mut own = Vec::with_capacity(self.own_groups);
        let lanes = self
            .first
            .chunks(LANES)
            .enumerate()
            .map(|(g, c)| {
                let at = std::array::from_fn(|l| c.get(l).copied().unwrap_or(0));
                match self.lockstep.get(g) {
                    Some(Some(base)) => Lanes {
                        at,
                        records: Records::Shared(*base),
                    },
                    _ => {
                        own.push(self.transposed(at));
                        Lanes {
                            at,
                            records: Records::Own(u32::try_from(own.len() - 1).unwrap_or(u32::MAX)),
                        }
                    }
                }
            })
            .collect();
        (lanes, own)
    }

    /// Record `i` (record 0, the padding lanes', for an index past the end: a state made for
    /// this clip never has one).
    #[inline]
    fn record(&self, i: u32) -> &[Vec4; ROWS] {
        self.records.get(i as usize).unwrap_or(&self.records[0])
    }

    /// Add track `s`'s segments (a validated LINEAR or STEP sampler); `Err` when the clip
    /// would pass the index range of a lane (2³² segments).
    fn push(&mut self, s: &Sampler) -> std::result::Result<(), String> {
        let segs = <[Vec4; ROWS]>::track(s);
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

    /// Mark the lane groups whose four tracks (`samplers`, in track order) have the same key
    /// times, and keep their segments transposed.
    fn find_lockstep<'s>(&mut self, samplers: impl Iterator<Item = &'s Sampler>) {
        let samplers: Vec<&Sampler> = samplers.collect();
        self.lockstep.clear();
        self.group_cols.clear();
        for (g, group) in samplers.chunks(LANES).enumerate() {
            let same = group.len() == LANES
                && group
                    .iter()
                    .all(|s| same_times(&s.times_s, &group[0].times_s));
            let count = self.count.get(g * LANES).copied().unwrap_or(0);
            let base = u32::try_from(self.group_cols.len()).ok();
            match base {
                Some(base) if same && base.checked_add(count).is_some() => {
                    self.lockstep.push(Some(base));
                    let first: [u32; LANES] = std::array::from_fn(|l| {
                        self.first.get(g * LANES + l).copied().unwrap_or(0)
                    });
                    for rel in 0..count {
                        let cols = self.transposed(first.map(|f| f + rel));
                        self.group_cols.push(cols);
                    }
                }
                _ => self.lockstep.push(None),
            }
        }
        self.own_groups = self.lockstep.iter().filter(|g| g.is_none()).count();
    }
}

/// `tracks` in lane-group order ([`lockstep_order`]), their segments pushed to `segs` and
/// its lockstep groups marked. `channels[i]` is track `i`'s channel, for the message when
/// the clip has too many segments (rule 3).
fn lay_out<T, const ROWS: usize>(
    tracks: Vec<T>,
    channels: &[usize],
    sampler: fn(&T) -> &Sampler,
    segs: &mut Segments<ROWS>,
) -> Result<Vec<T>>
where
    [Vec4; ROWS]: Record,
{
    let order = lockstep_order(tracks.iter().map(sampler));
    let tracks = reorder(tracks, &order);
    for (track, &o) in tracks.iter().zip(&order) {
        segs.push(sampler(track)).map_err(|m| {
            let ch = channels.get(o).copied().unwrap_or(o);
            Error::job("SoaClip", 3, format!("channel {ch}: {m}"))
        })?;
    }
    segs.find_lockstep(tracks.iter().map(sampler));
    Ok(tracks)
}

/// `items` in `order` (a permutation of their indices).
fn reorder<T>(items: Vec<T>, order: &[usize]) -> Vec<T> {
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order
        .iter()
        .filter_map(|&i| slots.get_mut(i).and_then(Option::take))
        .collect()
}

/// The same key times, to the bit.
fn same_times(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Track order for lane groups: tracks on the same key times (a baked export's, usually all
/// of them) four at a time first, so that their groups play in lockstep; the rest after them,
/// in their own order. Returns indices into `samplers`.
fn lockstep_order<'s>(samplers: impl Iterator<Item = &'s Sampler>) -> Vec<usize> {
    let samplers: Vec<&Sampler> = samplers.collect();
    // Classes of equal key times, in order of first appearance.
    let mut classes: Vec<Vec<usize>> = Vec::new();
    let mut by_times: std::collections::HashMap<Vec<u32>, usize> = std::collections::HashMap::new();
    for (i, s) in samplers.iter().enumerate() {
        let key: Vec<u32> = s.times_s.iter().map(|t| t.to_bits()).collect();
        let c = *by_times.entry(key).or_insert_with(|| {
            classes.push(Vec::new());
            classes.len() - 1
        });
        classes[c].push(i);
    }
    let mut order = Vec::with_capacity(samplers.len());
    let mut rest = Vec::new();
    for class in &classes {
        let whole = class.len() / LANES * LANES;
        order.extend_from_slice(&class[..whole]);
        rest.extend_from_slice(&class[whole..]);
    }
    rest.sort_unstable();
    order.extend(rest);
    order
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
    vec_segments: Segments<3>,
    quat_segments: Segments<4>,
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
    /// Whether the clip drives morph-target weights (its samples then carry more than the
    /// rest weights).
    pub fn animates_morph_weights(&self) -> bool {
        self.generic.iter().any(|c| c.path == Path::Weights)
    }

    /// The compiled animation's length ([`Animation::duration_s`]: its last key time).
    pub fn duration_s(&self) -> f32 {
        self.duration_s
    }

    /// Compile `animation` of `scene`.
    ///
    /// Rules (the animation's own, checked again here): 1. every channel targets a node of
    /// the scene; 2. every sampler is valid ([`Sampler::validate`]) with the component count
    /// its path needs; 3. the four-lane tracks have fewer than 2³² segments in all; 4. no two
    /// channels drive the same translation, rotation or scale (as glTF requires).
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
        // The channel of each four-lane track (for messages).
        let (mut vec_channels, mut quat_channels) = (Vec::new(), Vec::new());
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
            let field = match ch.path {
                Path::Translation => Some(0),
                Path::Rotation => Some(1),
                Path::Scale => Some(2),
                Path::Weights => None,
            };
            if let Some(f) = field {
                // Tracks are regrouped by key times below, so which of two channels on one
                // property would win could not follow channel order (glTF forbids it anyway).
                if driven[ch.node][f] {
                    return Err(Error::job(
                        JOB,
                        4,
                        format!(
                            "channel {i} drives the {} of node {} again",
                            ch.path.name(),
                            ch.node
                        ),
                    ));
                }
                driven[ch.node][f] = true;
            }
            match ch.path {
                Path::Translation | Path::Scale if lanes => {
                    vec_channels.push(i);
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
                    quat_channels.push(i);
                    clip.quat_tracks.push(QuatTrack {
                        node: ch.node,
                        sampler: ch.sampler.clone(),
                    })
                }
                _ => clip.generic.push(ch.clone()),
            }
        }
        // Lane groups: tracks on shared key times together, then their segments.
        clip.vec_tracks = lay_out(
            std::mem::take(&mut clip.vec_tracks),
            &vec_channels,
            |t| &t.sampler,
            &mut clip.vec_segments,
        )?;
        clip.quat_tracks = lay_out(
            std::mem::take(&mut clip.quat_tracks),
            &quat_channels,
            |t| &t.sampler,
            &mut clip.quat_segments,
        )?;
        clip.rest_nodes = (0..scene.nodes.len())
            .filter(|&n| driven[n] != [true; 3])
            .collect();
        Ok(clip)
    }

    /// Lane groups (vector, quaternion) and how many of them play in lockstep (four tracks
    /// on the same key times): `(vector groups, of which lockstep, quaternion groups, of
    /// which lockstep)`.
    pub fn lane_groups(&self) -> (usize, usize, usize, usize) {
        let locked = |s: &[Option<u32>]| s.iter().filter(|g| g.is_some()).count();
        (
            self.vec_segments.lockstep.len(),
            locked(&self.vec_segments.lockstep),
            self.quat_segments.lockstep.len(),
            locked(&self.quat_segments.lockstep),
        )
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

/// Playback state of one [`SoaClip`]: each lane's current segment, the transposed records
/// of the lane groups not in lockstep, and the per-channel sampler's cursors. Keep one per
/// playing instance (a character, a layer); it does not allocate once made.
#[derive(Clone, Debug, Default)]
pub struct SoaState {
    /// The clip it was made for.
    clip_id: u64,
    /// Per lane group, each lane's segment.
    vec_lanes: Vec<Lanes>,
    quat_lanes: Vec<Lanes>,
    /// Per lane group not in lockstep, its records transposed ([`Records::Own`]).
    vec_cols: Vec<Cols<3>>,
    quat_cols: Vec<Cols<4>>,
    generic_cursors: Vec<Cursor>,
}

/// A lane group's four records transposed, row by row (`cols[row][e]`: element `e` of that
/// row, four lanes), so a frame inside every window reads whole registers (copying a refilled
/// lane's values in lane by lane and reading them back 4-wide would stall on store
/// forwarding).
type Cols<const ROWS: usize> = [[Vec4; 4]; ROWS];

/// One lane group's segments: each lane's (an index into the clip's records; padding lanes:
/// 0, the whole line) and where its transposed records are. 24 bytes: a frame that stays on
/// its segments reads only these, so a character's playback state is a few cache lines
/// (a crowd's states stream from memory every frame).
#[derive(Clone, Copy, Debug)]
struct Lanes {
    at: [u32; LANES],
    records: Records,
}

/// Where a lane group's transposed records are.
#[derive(Clone, Copy, Debug)]
enum Records {
    /// A lockstep group's current segment in [`Segments::group_cols`] (the clip's).
    Shared(u32),
    /// Another group's index in the state's transposed records.
    Own(u32),
}

impl Lanes {
    /// The group plays in lockstep (its records are the clip's).
    fn lockstep(&self) -> bool {
        matches!(self.records, Records::Shared(_))
    }
}

impl SoaState {
    /// Bytes of its lane groups, records and cursors (what a frame reads and writes).
    pub fn bytes(&self) -> usize {
        std::mem::size_of_val(&self.vec_lanes[..])
            + std::mem::size_of_val(&self.quat_lanes[..])
            + std::mem::size_of_val(&self.vec_cols[..])
            + std::mem::size_of_val(&self.quat_cols[..])
            + std::mem::size_of_val(&self.generic_cursors[..])
    }

    /// Fresh state for `clip`: every lane on its first segment, searched from on the first
    /// sample after the first key.
    pub fn new(clip: &SoaClip) -> SoaState {
        let (vec_lanes, vec_cols) = clip.vec_segments.first_lanes();
        let (quat_lanes, quat_cols) = clip.quat_segments.first_lanes();
        SoaState {
            clip_id: clip.id,
            vec_lanes,
            quat_lanes,
            vec_cols,
            quat_cols,
            generic_cursors: vec![Cursor::default(); clip.generic.len()],
        }
    }

    /// True when this state was made for `clip` (by [`SoaState::new`] with it or a clone).
    pub fn fits(&self, clip: &SoaClip) -> bool {
        self.clip_id == clip.id
            && self.vec_cols.len() == clip.vec_segments.own_groups
            && self.quat_cols.len() == clip.quat_segments.own_groups
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
    /// Another playback state to bring into the caches as this one plays (its lane groups at
    /// the start, each other group's records on the way; a crowd passes the next character's):
    /// a hint that changes no result.
    pub ahead: Option<&'a SoaState>,
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
        let ahead = self.ahead;
        if let Some(a) = ahead {
            prefetch(&a.vec_lanes);
            prefetch(&a.quat_lanes);
        }
        let locals = &mut self.pose.locals;
        let mut blend = LastBlend::NONE;
        for (g, lanes) in state.vec_lanes.iter_mut().enumerate() {
            if let (Some(a), Records::Own(i)) = (ahead, lanes.records) {
                let i = i as usize;
                prefetch(a.vec_cols.get(i..=i).unwrap_or_default());
            }
            let segs = &clip.vec_segments;
            advance(segs, lanes, &mut state.vec_cols, g, t, |k| {
                clip.vec_tracks.get(k).map(|track| &track.sampler)
            });
            let [[_, _, t0, dt], [ax, ay, az, dx], [dy, dz, _, _]] =
                *segs.cols(lanes, &state.vec_cols);
            let u = blend.factor(lanes.lockstep(), t, t0, dt);
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
            if let (Some(a), Records::Own(i)) = (ahead, lanes.records) {
                let i = i as usize;
                prefetch(a.quat_cols.get(i..=i).unwrap_or_default());
            }
            let segs = &clip.quat_segments;
            advance(segs, lanes, &mut state.quat_cols, g, t, |k| {
                clip.quat_tracks.get(k).map(|track| &track.sampler)
            });
            let cols = segs.cols(lanes, &state.quat_cols);
            let [[_, _, t0, dt], ..] = *cols;
            let q = sample_quats(cols, blend.factor(lanes.lockstep(), t, t0, dt));
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

/// Move lane group `g`'s lanes to the segments holding `t` (a group not in lockstep
/// refills its transposed records in `own`, the state's). A lane whose window `t` left tries
/// the next segment (forward playback: one check), else searches its track. `sampler(k)`
/// gives track `k`'s sampler (none past the last track: padding lanes, whose window is the
/// whole line). A lockstep group moves all four lanes with lane 0 and points at its shared
/// transposed records.
#[inline]
fn advance<'s, const ROWS: usize>(
    segs: &Segments<ROWS>,
    group: &mut Lanes,
    own: &mut [Cols<ROWS>],
    g: usize,
    t: f32,
    sampler: impl Fn(usize) -> Option<&'s Sampler>,
) where
    [Vec4; ROWS]: Record,
{
    let [lo, hi, ..] = segs.cols(group, own)[0];
    let tv = Vec4::splat(t);
    let kept = (tv.cmpge(lo) & tv.cmplt(hi)).bitmask();
    if kept == 0b1111 {
        return;
    }
    if let Some(Some(base)) = segs.lockstep.get(g).copied() {
        // Four tracks on the same key times: lane 0 moves and the others follow to the same
        // segment, read from the shared transposed records.
        let k = g * LANES;
        let Some((at, first)) = next_segment(segs, k, group.at[0], t, &sampler) else {
            return;
        };
        let rel = at - first;
        let shared = base + rel;
        if (shared as usize) < segs.group_cols.len() {
            group.at = std::array::from_fn(|l| segs.first.get(k + l).map_or(0, |f| f + rel));
            group.records = Records::Shared(shared);
        }
        return;
    }
    for (lane, at) in group.at.iter_mut().enumerate() {
        if kept & (1 << lane) != 0 {
            continue;
        }
        if let Some((next, _)) = next_segment(segs, g * LANES + lane, *at, t, &sampler) {
            *at = next;
        }
    }
    if let Records::Own(i) = group.records
        && let Some(cols) = own.get_mut(i as usize)
    {
        *cols = segs.transposed(group.at);
    }
}

/// The segment (an index into `segs`' records) holding `t` of track `k`, which was on
/// segment `at`, and the track's first segment: the next one with one compare (forward
/// playback), else a search through the track's sampler from the interval of segment `at`
/// (where a cursor kept along would be, so the state keeps none). `None` past the last
/// track (padding lanes).
#[inline]
fn next_segment<'s, const ROWS: usize>(
    segs: &Segments<ROWS>,
    k: usize,
    at: u32,
    t: f32,
    sampler: &impl Fn(usize) -> Option<&'s Sampler>,
) -> Option<(u32, u32)>
where
    [Vec4; ROWS]: Record,
{
    let (Some(s), Some(&first), Some(&count)) = (sampler(k), segs.first.get(k), segs.count.get(k))
    else {
        return None;
    };
    let inside = |(lo, hi): (f32, f32)| t >= lo && t < hi;
    let next = at + 1;
    let seg = if next < first + count && inside(segs.record(next).window()) {
        next
    } else {
        // Segment `rel` is interval `rel − 1` (the first key held: interval 0; the last
        // key held: the last interval, as the sampler leaves its cursor).
        let mut cursor = Cursor::default();
        let rel = at.saturating_sub(first) as usize;
        cursor.set_key(
            rel.saturating_sub(1)
                .min((count as usize).saturating_sub(3)),
        );
        let rel = match s.segment(t, &mut cursor).0 {
            Segment::Held(0) => 0,
            Segment::Held(k) | Segment::Span(k) => k + 1,
        };
        first + (rel as u32).min(count - 1)
    };
    Some((seg, first))
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

/// The blend factor of the last lane group evaluated, kept for the next one when that has the
/// same blend start and length (bit for bit): lockstep groups of one key-time class at the
/// same segment, one after another. One division for all of them.
struct LastBlend {
    t0_dt: [u32; 8],
    u: Vec4,
}

impl LastBlend {
    /// No group yet (all-ones bits are a NaN: no blend start or length has them).
    const NONE: LastBlend = LastBlend {
        t0_dt: [u32::MAX; 8],
        u: Vec4::ZERO,
    };

    /// [`blend_factor`]`(t, t0, dt)`, computed again only when `t0` or `dt` changed (`t` is
    /// the same for a whole frame) or for a group not in lockstep (`lockstep` false: its
    /// lanes rarely share a blend with the group before).
    #[inline]
    fn factor(&mut self, lockstep: bool, t: f32, t0: Vec4, dt: Vec4) -> Vec4 {
        if !lockstep {
            return blend_factor(t, t0, dt);
        }
        let [a, b, c, d] = t0.to_array().map(f32::to_bits);
        let [e, f, g, h] = dt.to_array().map(f32::to_bits);
        let key = [a, b, c, d, e, f, g, h];
        if key != self.t0_dt {
            self.t0_dt = key;
            self.u = blend_factor(t, t0, dt);
        }
        self.u
    }
}

/// The four lanes' quaternions at blend factor `u`: the interval's slerp (or lerp) weights,
/// the blend, and the normalisation (identity where the result has no length).
#[inline]
fn sample_quats(cols: &[[Vec4; 4]; 4], u: Vec4) -> [Quat; LANES] {
    let [_, q0, q1, [theta, slerp, _, _]] = *cols;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(times_s: Vec<f32>, components: usize) -> Sampler {
        let values = (0..times_s.len() * components)
            .map(|i| {
                if components == 4 && i % 4 == 3 {
                    1.0
                } else {
                    0.1 * i as f32
                }
            })
            .collect();
        Sampler {
            interpolation: Interpolation::Linear,
            times_s,
            values,
            components,
            is_rotation: components == 4,
        }
    }

    /// Tracks on the same key times are grouped four at a time, the rest keep their order
    /// after them; every index appears once.
    #[test]
    fn lockstep_order_groups_equal_times() {
        let a = vec![0.0, 0.5, 1.0];
        let b = vec![0.0, 0.25, 1.0];
        let c = vec![0.0, 1.0];
        // Classes: a at 0, 2, 3, 5, 7, 8 (six), b at 1, 4, 6 (three), c at 9 (one).
        let times = [&a, &b, &a, &a, &b, &a, &b, &a, &a, &c];
        let samplers: Vec<Sampler> = times.iter().map(|t| linear((*t).clone(), 3)).collect();
        let order = lockstep_order(samplers.iter());
        assert_eq!(order[..4], [0, 2, 3, 5]);
        assert_eq!(order[4..], [1, 4, 6, 7, 8, 9]);
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..times.len()).collect::<Vec<_>>());
    }

    /// A lockstep group's four tracks have the same window on every segment (what lets lane
    /// 0 decide for all four), and its shared records are the lanes' own, transposed. Groups
    /// with different key times, or fewer than four tracks, are not in lockstep.
    #[test]
    fn lockstep_groups_share_windows_and_records() {
        let a = vec![0.0, 0.3, 0.7, 1.0];
        let b = vec![0.0, 0.4, 1.0];
        let mut segs = Segments::<4>::new();
        let samplers: Vec<Sampler> = [&a, &a, &a, &a, &a, &b, &a]
            .iter()
            .map(|t| linear((*t).clone(), 4))
            .collect();
        for s in &samplers {
            segs.push(s)
                .expect("four keys are far under the lane index range");
        }
        segs.find_lockstep(samplers.iter());
        assert_eq!(segs.lockstep.len(), 2);
        let Some(base) = segs.lockstep[0] else {
            panic!("group 0 should be in lockstep");
        };
        assert_eq!(segs.lockstep[1], None);
        let count = segs.count[0];
        assert!((1..LANES).all(|l| segs.count[l] == count));
        for rel in 0..count {
            let at: [u32; LANES] = std::array::from_fn(|l| segs.first[l] + rel);
            let w0 = segs.record(at[0]).window();
            for &i in &at[1..] {
                let w = segs.record(i).window();
                assert_eq!(
                    (w.0.to_bits(), w.1.to_bits()),
                    (w0.0.to_bits(), w0.1.to_bits())
                );
            }
            let own = segs.transposed(at);
            let shared = segs.group_cols[(base + rel) as usize];
            for (r, s) in own.iter().flatten().zip(shared.iter().flatten()) {
                assert_eq!(
                    r.to_array().map(f32::to_bits),
                    s.to_array().map(f32::to_bits)
                );
            }
        }
    }
}
