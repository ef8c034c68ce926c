//! A crowd: N characters of one scene, each playing the scene's clips at its own phase and
//! speed with its own layer weights, updated every frame in parallel over characters, into one
//! buffer holding every character's palette back to back (what the GPU reads in one upload).
//!
//! Based on: ozz-animation's crowd of independent sampling contexts (Guillaume Blanc,
//! ozz-animation's `SamplingJob::Context` and its "multithread" sample), run as
//! `../shared/peers/ozzbench`'s crowd case does (persistent threads, a contiguous share each, a
//! barrier a frame), with work stealing between the shares ([`workers`]); Unreal Engine's
//! animation sharing (characters in the same state play one shared evaluation).
//!
//! Method: at set-up, characters whose motion is the same (clips, weights, phase, speed) form
//! one *evaluation*; every clip a character plays is compiled once ([`SoaClip`]) and each
//! evaluation keeps its own playback state per layer. The evaluations are cut into pieces (up
//! to 16 a thread), each thread owning a contiguous share of them, so that its states stay in
//! its caches from frame to frame. A frame's threads claim pieces ([`Claims`]): their own
//! first, then, when those are done, the back of another's share (a thread whose core is busy
//! elsewhere holds up the frame by one piece at most, and one that has not woken does not
//! hold it up). For each evaluation a thread samples the layers with its own scratch poses,
//! blends them (`LayerJob`), runs local→model and writes the palette straight into the
//! piece's part of the output. Characters sharing an evaluation then copy its palette. Every
//! evaluation depends on its own inputs alone, so the palettes are the same bits on any number
//! of threads and whoever evaluates them. When a thread's playback states outgrow the caches,
//! each evaluation prefetches the next one's as it samples (`SoaAnimateJob::ahead`).
//!
//! Level of detail: [`Crowd::update_some`] animates only the characters a caller picks (an
//! evaluation when any of its characters is picked); the others keep the palette of the frame
//! that last animated them, as Unreal's update rate optimisation lowers the rate of characters
//! that are small on screen or out of view. The viewer's crowd field picks them by screen
//! size; `bench` and every check animate every character.
//!
//! Cost: per evaluation, what one character's clip costs ([`crate::character`] without IK or
//! links), plus a 64-byte copy per palette entry of a character that shares; a
//! compare-and-swap a piece. No allocation in a warm frame on any thread.
//!
//! Limits: at most [`MAX_CROWD_LAYERS`] layers a character, each over the whole body (no
//! masks, no IK, no bone links: those are [`crate::character::Character`]'s); morph weights
//! are not sampled (a crowd shares its scene's); [`MAX_CHARACTERS`] characters and
//! [`MAX_PALETTE_BYTES`] of palettes.

pub mod bench;
pub mod ozz;
pub mod workers;

use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, PoisonError};

use glam::Mat4;
use web_time::Instant;

use crate::anim::layer::{DEFAULT_THRESHOLD, Layer, LayerJob};
use crate::anim::{Pose, SoaAnimateJob, SoaClip, SoaState};
use crate::error::{Error, Result};
use crate::math::Trs;
use crate::scene::Scene;
use crate::skeleton::LocalToModelJob;
use crate::skin::PaletteLayout;
use crate::skin::palette::write_palette;
use crate::skin::skinned_bounds::{Aabb, SkinnedBounds};
pub use workers::{Claims, MAX_THREADS, Parts, Workers, owned};

/// Layers one character blends: a base motion and one over it (a walk and a run at a weight,
/// as Unreal's blend spaces and ozz's blending sample mix two locomotion clips).
pub const MAX_CROWD_LAYERS: usize = 2;

/// Most characters a crowd holds: the GPU crowd's instance limit
/// ([`crate::gpu::MAX_INSTANCES`] is the same figure).
pub const MAX_CHARACTERS: usize = 65_536;

/// Characters each thread gets at least when the thread count is left to the crowd: waking a
/// sleeping thread costs tens of microseconds on a virtual machine, as much as evaluating a
/// few dozen characters, so a small crowd runs on fewer threads (measured on the 2 vCPU CI
/// kind: 16 to 100 characters ran no faster on two threads than on one).
pub const MIN_CHARACTERS_PER_THREAD: usize = 64;

/// Most bytes of palettes a crowd keeps (characters × palette entries × 64): 1 GiB, past what
/// one GPU storage binding holds on any adapter, and a bound on the memory asked for up front.
pub const MAX_PALETTE_BYTES: u64 = 1 << 30;

/// One layer of a character's motion: a clip of the scene (`scene.animations[clip]`) at a
/// weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrowdLayer {
    /// Index into the scene's animations.
    pub clip: usize,
    /// Weight ≥ 0 (layers blend in proportion; below [`DEFAULT_THRESHOLD`] in all the rest
    /// pose fills in, as [`LayerJob`] does).
    pub weight: f32,
}

/// What one character plays: its layers, where it starts in them and how fast it plays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Member {
    /// Its layers (`None`: unused). No layer at all: the rest pose.
    pub layers: [Option<CrowdLayer>; MAX_CROWD_LAYERS],
    /// Its clock at crowd time 0, in seconds (each clip loops over its own length).
    pub phase_s: f32,
    /// Its clock's rate (1: real time; finite, may be 0 or negative).
    pub speed: f32,
}

impl Member {
    /// One clip at weight 1, starting at `phase_s`, in real time.
    pub fn clip(clip: usize, phase_s: f32) -> Member {
        Member {
            layers: [Some(CrowdLayer { clip, weight: 1.0 }), None],
            phase_s,
            speed: 1.0,
        }
    }

    /// The rest pose.
    pub fn rest() -> Member {
        Member {
            layers: [None; MAX_CROWD_LAYERS],
            phase_s: 0.0,
            speed: 1.0,
        }
    }

    /// The key that says two characters pose the same every frame (bit patterns: a NaN never
    /// gets here, the set-up rules refuse it).
    fn key(&self) -> [u64; MAX_CROWD_LAYERS + 1] {
        let mut k = [0u64; MAX_CROWD_LAYERS + 1];
        for (slot, l) in k.iter_mut().zip(&self.layers) {
            *slot = l.map_or(u64::MAX, |l| {
                ((l.clip as u64) << 32) | u64::from(l.weight.to_bits())
            });
        }
        k[MAX_CROWD_LAYERS] =
            (u64::from(self.phase_s.to_bits()) << 32) | u64::from(self.speed.to_bits());
        k
    }
}

/// How a crowd is made.
///
/// Validation rules:
/// 1. 1..=[`MAX_CHARACTERS`] members;
/// 2. every layer names an animation of the scene, with a finite weight ≥ 0;
/// 3. every phase and speed is finite;
/// 4. the scene has a palette (a skin or a drawn node), and the palettes fit
///    [`MAX_PALETTE_BYTES`].
#[derive(Clone, Debug)]
pub struct CrowdSetup {
    /// One per character.
    pub members: Vec<Member>,
    /// Threads the stage runs on, the calling thread included (0: every core, but no more
    /// threads than [`MIN_CHARACTERS_PER_THREAD`] characters each fill; clamped to
    /// [`MAX_THREADS`]).
    pub threads: usize,
    /// Characters whose motion is the same share one evaluation (on by default; the
    /// benchmarks that stand beside ozz-animation's crowd turn it off, so each character is
    /// evaluated as ozz's are).
    pub share: bool,
    /// Runs first on each worker thread (the allocation tests mark the threads they count).
    pub on_worker_start: Option<fn()>,
}

impl CrowdSetup {
    /// `members` on every core, sharing evaluations.
    pub fn new(members: Vec<Member>) -> CrowdSetup {
        CrowdSetup {
            members,
            threads: 0,
            share: true,
            on_worker_start: None,
        }
    }

    /// `n` characters cycling through the scene's clips, the crowd the viewer and `render`
    /// show: character c plays clip c mod clips, from phase frac(c × 0.618…) of that clip (the
    /// golden ratio spreads phases evenly for any n), in real time. A scene without clips
    /// stands at rest.
    pub fn cycling(scene: &Scene, n: usize) -> CrowdSetup {
        let clips = scene.animations.len();
        let members = (0..n)
            .map(|c| match clips {
                0 => Member::rest(),
                _ => {
                    let clip = c % clips;
                    let d = scene.animations[clip].duration_s();
                    Member::clip(clip, golden_phase(c) * d)
                }
            })
            .collect();
        CrowdSetup::new(members)
    }

    /// Check the numbered rules above against `scene`.
    pub fn validate(&self, scene: &Scene) -> Result<()> {
        validate_members(&self.members, scene)
    }
}

/// [`CrowdSetup`]'s rules on `members` (all of them are about the members).
fn validate_members(members: &[Member], scene: &Scene) -> Result<()> {
    const JOB: &str = "CrowdSetup";
    let n = members.len();
    if !(1..=MAX_CHARACTERS).contains(&n) {
        return Err(Error::job(
            JOB,
            1,
            format!("{n} characters: a crowd holds 1..={MAX_CHARACTERS}"),
        ));
    }
    let clips = scene.animations.len();
    for (c, m) in members.iter().enumerate() {
        for l in m.layers.iter().flatten() {
            if l.clip >= clips {
                return Err(Error::job(
                    JOB,
                    2,
                    format!(
                        "character {c}: clip {} does not exist ({})",
                        l.clip,
                        crate::info::count(clips, "animation", "animations")
                    ),
                ));
            }
            if !(l.weight.is_finite() && l.weight >= 0.0) {
                return Err(Error::job(
                    JOB,
                    2,
                    format!(
                        "character {c}: layer weight {} is not finite and ≥ 0",
                        l.weight
                    ),
                ));
            }
        }
        if !(m.phase_s.is_finite() && m.speed.is_finite()) {
            return Err(Error::job(
                JOB,
                3,
                format!(
                    "character {c}: phase {} s and speed {} must be finite",
                    m.phase_s, m.speed
                ),
            ));
        }
    }
    let entries = PaletteLayout::new(scene).len;
    let bytes = n as u64 * entries as u64 * std::mem::size_of::<Mat4>() as u64;
    if entries == 0 || bytes > MAX_PALETTE_BYTES {
        return Err(Error::job(
            JOB,
            4,
            format!(
                "{}: {entries} palette entries a character, {bytes} bytes for {n}: a crowd \
                 needs a palette (a skin or a drawn node) of at most {MAX_PALETTE_BYTES} \
                 bytes in all",
                scene.name
            ),
        ));
    }
    Ok(())
}

/// frac(c × 0.6180339887): the golden-ratio sequence (ozz's crowd benchmark draws its phases
/// the same way), in [0, 1).
pub fn golden_phase(c: usize) -> f32 {
    (c as f64 * 0.618_033_988_7).fract() as f32
}

/// What the last frame did.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CrowdStats {
    /// Characters in the crowd.
    pub characters: usize,
    /// Poses evaluated (sampled, blended, taken to model space and into a palette).
    pub evaluations: usize,
    /// Characters that copied another's evaluation instead ([`CrowdSetup::share`]).
    pub shared: usize,
    /// Evaluations animated this frame (all of them but with [`Crowd::update_some`]).
    pub animated: usize,
    /// Threads the stage ran on.
    pub threads: usize,
    /// Wall time of the frame's stage, µs.
    pub stage_us: f64,
}

/// A piece of the frame's work: a contiguous range of evaluations with their playback states,
/// claimed by one thread a frame ([`Claims`]: its owner's unless another thread ran out of
/// its own). Aligned to two cache lines (the prefetcher's pair), so no two pieces' or threads'
/// fields share a line (false sharing cost the second core most of its gain).
#[repr(align(128))]
struct Piece {
    /// Its first evaluation.
    first: usize,
    /// Per evaluation of the piece, one state per layer slot (`None`: the slot is unused).
    states: Vec<[Option<SoaState>; MAX_CROWD_LAYERS]>,
    /// Its owner's states outgrow the caches ([`PREFETCH_STATE_BYTES`]): each evaluation
    /// prefetches the next one's as it plays.
    prefetch: bool,
}

/// One thread's scratch (aligned as [`Piece`] is).
#[repr(align(128))]
struct Scratch {
    /// Sampled poses, one per layer slot, and the blended locals.
    layer_poses: [Pose; MAX_CROWD_LAYERS],
    blended: Pose,
    model_from_node: Vec<Mat4>,
    /// The first error of the frame on this thread (it then claims no more pieces).
    error: Option<Error>,
}

/// N characters of one scene (see the module documentation).
pub struct Crowd {
    scene: Scene,
    /// The scene's rest locals (blending's reference).
    reference: Vec<Trs>,
    layout: PaletteLayout,
    members: Vec<Member>,
    /// Per animation of the scene: compiled when a member plays it.
    clips: Vec<Option<SoaClip>>,
    /// Per evaluation: the member whose motion it plays.
    leaders: Vec<usize>,
    /// Per member: its evaluation.
    evaluation_of: Vec<usize>,
    /// Every character's palette, back to back (`entries` each).
    palettes: Vec<Mat4>,
    /// Every evaluation's palette when characters share (empty when none does: evaluations
    /// are then the members, and write `palettes` directly).
    evaluated: Vec<Mat4>,
    /// The evaluations in pieces ([`Piece`]), and where each ends (exclusive), in evaluations
    /// and in palette entries.
    pieces: Vec<Mutex<Piece>>,
    piece_ends: Vec<usize>,
    piece_entry_ends: Vec<usize>,
    /// The characters in pieces for the copy of shared palettes: where each ends, in entries.
    member_entry_ends: Vec<usize>,
    /// Per thread: its scratch.
    scratch: Vec<Mutex<Scratch>>,
    /// Who takes which piece this frame, and which parts of an output are out.
    claims: Claims,
    taken: Vec<AtomicBool>,
    workers: Workers,
    share: bool,
    stats: CrowdStats,
    /// Per evaluation: its skinned bounds ([`Crowd::bound`]).
    evaluation_bounds: Vec<Option<Aabb>>,
    /// Per evaluation: animated by the frame being run ([`Crowd::update_some`]).
    animate: Vec<bool>,
}

impl Crowd {
    /// Set up a crowd of `scene` (validated: [`CrowdSetup`]'s rules); every buffer a frame
    /// needs is made here.
    pub fn new(scene: Scene, setup: CrowdSetup) -> Result<Crowd> {
        setup.validate(&scene)?;
        let threads = match setup.threads {
            0 => std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(setup.members.len().div_ceil(MIN_CHARACTERS_PER_THREAD)),
            t => t,
        };
        let workers = Workers::new(threads.min(setup.members.len()), setup.on_worker_start);
        let layout = PaletteLayout::new(&scene);
        let mut crowd = Crowd {
            clips: (0..scene.animations.len()).map(|_| None).collect(),
            layout,
            reference: scene.nodes.iter().map(|n| n.rest).collect(),
            scene,
            members: Vec::new(),
            leaders: Vec::new(),
            evaluation_of: Vec::new(),
            palettes: Vec::new(),
            evaluated: Vec::new(),
            pieces: Vec::new(),
            piece_ends: Vec::new(),
            piece_entry_ends: Vec::new(),
            member_entry_ends: Vec::new(),
            scratch: Vec::new(),
            claims: Claims::new(workers.threads()),
            taken: Vec::new(),
            workers,
            share: setup.share,
            stats: CrowdStats::default(),
            evaluation_bounds: Vec::new(),
            animate: Vec::new(),
        };
        crowd.set_members(setup.members)?;
        Ok(crowd)
    }

    /// Replace what every character plays (set-up time: it groups the evaluations again and
    /// compiles any clip not played before; the playback states start afresh). The same rules
    /// as [`CrowdSetup::validate`].
    pub fn set_members(&mut self, members: Vec<Member>) -> Result<()> {
        validate_members(&members, &self.scene)?;
        for l in members.iter().flat_map(|m| m.layers.iter().flatten()) {
            if self.clips[l.clip].is_none() {
                self.clips[l.clip] =
                    Some(SoaClip::new(&self.scene, &self.scene.animations[l.clip])?);
            }
        }
        self.group(&members);
        let entries = self.layout.len;
        self.palettes = vec![Mat4::IDENTITY; members.len() * entries];
        self.evaluated = match self.leaders.len() == members.len() {
            true => Vec::new(),
            false => vec![Mat4::IDENTITY; self.leaders.len() * entries],
        };
        self.evaluation_bounds = vec![None; self.leaders.len()];
        self.animate = vec![true; self.leaders.len()];
        self.members = members;
        self.make_pieces();
        Ok(())
    }

    /// Group the members into evaluations, in order of first appearance (so with no two
    /// alike, evaluation i is member i).
    fn group(&mut self, members: &[Member]) {
        self.leaders.clear();
        self.evaluation_of.clear();
        let mut seen: std::collections::HashMap<[u64; MAX_CROWD_LAYERS + 1], usize> =
            std::collections::HashMap::with_capacity(members.len());
        for (c, m) in members.iter().enumerate() {
            let e = match self.share {
                true => *seen.entry(m.key()).or_insert_with(|| {
                    self.leaders.push(c);
                    self.leaders.len() - 1
                }),
                false => {
                    self.leaders.push(c);
                    c
                }
            };
            self.evaluation_of.push(e);
        }
    }

    /// The evaluations in pieces, each with its states; each thread's scratch; the characters
    /// in pieces for the copy of shared palettes.
    fn make_pieces(&mut self) {
        let threads = self.workers.threads();
        let evaluations = self.leaders.len();
        let entries = self.layout.len;
        let count = piece_count(evaluations, threads);
        let mut pieces: Vec<Piece> = (0..count)
            .map(|k| {
                let range = owned(evaluations, k, count);
                let states = self.leaders[range.clone()]
                    .iter()
                    .map(|&c| {
                        self.members[c]
                            .layers
                            .map(|l| l.and_then(|l| self.clips[l.clip].as_ref().map(SoaState::new)))
                    })
                    .collect();
                Piece {
                    first: range.start,
                    states,
                    prefetch: false,
                }
            })
            .collect();
        // A thread's pieces prefetch when the states it owns outgrow its caches.
        for t in 0..threads {
            let mine = &mut pieces[owned(count, t, threads)];
            let bytes: usize = mine
                .iter()
                .flat_map(|p| p.states.iter().flatten().flatten())
                .map(SoaState::bytes)
                .sum();
            for p in mine {
                p.prefetch = bytes > PREFETCH_STATE_BYTES;
            }
        }
        self.piece_ends = (0..count)
            .map(|k| owned(evaluations, k, count).end)
            .collect();
        self.piece_entry_ends = self.piece_ends.iter().map(|&e| e * entries).collect();
        let members = self.members.len();
        let member_pieces = piece_count(members, threads);
        self.member_entry_ends = (0..member_pieces)
            .map(|k| owned(members, k, member_pieces).end * entries)
            .collect();
        self.taken = (0..count.max(member_pieces))
            .map(|_| AtomicBool::new(false))
            .collect();
        self.pieces = pieces.into_iter().map(Mutex::new).collect();
        let rest = Pose::rest(&self.scene);
        self.scratch = (0..threads)
            .map(|_| {
                Mutex::new(Scratch {
                    layer_poses: std::array::from_fn(|_| rest.clone()),
                    blended: rest.clone(),
                    model_from_node: Vec::with_capacity(self.scene.nodes.len()),
                    error: None,
                })
            })
            .collect();
    }

    /// Advance every character to crowd time `time_s` (each at its own phase and speed) and
    /// write every palette. Returns the frame's figures.
    pub fn update(&mut self, time_s: f32) -> Result<CrowdStats> {
        self.animate.fill(true);
        self.run(time_s)
    }

    /// [`Crowd::update`] for the characters `animate` picks (one flag per character): an
    /// evaluation is animated when any of its characters is picked, and every character of it
    /// then takes its palette; the others keep theirs from the frame that last animated them
    /// (an animation level of detail). A list of another length is an error and nothing is
    /// animated.
    pub fn update_some(&mut self, time_s: f32, animate: &[bool]) -> Result<CrowdStats> {
        if animate.len() != self.members.len() {
            return Err(Error::Worker(format!(
                "crowd level of detail: {} flags for {} characters",
                animate.len(),
                self.members.len()
            )));
        }
        self.animate.fill(false);
        for (&e, _) in self.evaluation_of.iter().zip(animate).filter(|(_, a)| **a) {
            if let Some(flag) = self.animate.get_mut(e) {
                *flag = true;
            }
        }
        self.run(time_s)
    }

    /// The frame of [`Crowd::update`] for the evaluations `self.animate` flags.
    fn run(&mut self, time_s: f32) -> Result<CrowdStats> {
        if !time_s.is_finite() {
            return Err(Error::TimeRange {
                time_s,
                max_s: f32::MAX,
            });
        }
        let t0 = Instant::now();
        let entries = self.layout.len;
        let threads = self.workers.threads();
        let sharing = !self.evaluated.is_empty();
        {
            let out = match sharing {
                true => &mut self.evaluated[..],
                false => &mut self.palettes[..],
            };
            let parts = Parts::new(out, &self.piece_entry_ends, &self.taken)?;
            let (pieces, scratch) = (&self.pieces, &self.scratch);
            for scratch in scratch {
                lock(scratch).error = None;
            }
            let ctx = Evaluate {
                scene: &self.scene,
                reference: &self.reference,
                clips: &self.clips,
                members: &self.members,
                leaders: &self.leaders,
                animate: &self.animate,
                time_s,
            };
            self.workers
                .run_parts(&self.claims, &parts, &|t, k, _, out| {
                    let (Some(scratch), Some(piece)) = (scratch.get(t), pieces.get(k)) else {
                        return;
                    };
                    // A thread's first error stops its work on the frame's stage.
                    let mut scratch = lock(scratch);
                    if scratch.error.is_none()
                        && let Err(e) = ctx.piece(&mut lock(piece), &mut scratch, out, entries)
                    {
                        scratch.error = Some(e);
                    }
                })?;
        }
        for scratch in &self.scratch {
            if let Some(e) = lock(scratch).error.take() {
                return Err(e);
            }
        }
        if sharing {
            self.copy_shared()?;
        }
        self.stats = CrowdStats {
            characters: self.members.len(),
            evaluations: self.leaders.len(),
            shared: self.members.len() - self.leaders.len(),
            animated: self.animate.iter().filter(|&&a| a).count(),
            threads,
            stage_us: t0.elapsed().as_secs_f64() * 1e6,
        };
        Ok(self.stats)
    }

    /// Characters sharing an evaluation take its palette (in parallel over characters).
    fn copy_shared(&mut self) -> Result<()> {
        let entries = self.layout.len;
        let parts = Parts::new(&mut self.palettes, &self.member_entry_ends, &self.taken)?;
        let (evaluated, evaluation_of) = (&self.evaluated, &self.evaluation_of);
        self.workers
            .run_parts(&self.claims, &parts, &|_, _, start, part| {
                let first = start / entries.max(1);
                for (i, block) in part.chunks_exact_mut(entries).enumerate() {
                    let e = evaluation_of.get(first + i).copied().unwrap_or(0);
                    if let Some(src) = evaluated.get(e * entries..(e + 1) * entries) {
                        block.copy_from_slice(src);
                    }
                }
            })
    }

    /// Bound every character by its palette ([`SkinnedBounds::bound`], set up for this
    /// crowd's scene) with the scene's `morph_weights` (per node), on the crowd's threads: each
    /// evaluation once, characters that share taking their evaluation's. `out[c]` is
    /// character c's box in its own (palette) space, None where it cannot be bounded (then it
    /// must be drawn). No allocation once `out` has held the crowd.
    pub fn bound(
        &mut self,
        bounds: &SkinnedBounds,
        morph_weights: &[Vec<f32>],
        out: &mut Vec<Option<Aabb>>,
    ) -> Result<()> {
        let entries = self.layout.len;
        if bounds.entries() != entries {
            return Err(Error::Worker(format!(
                "crowd bounds set up for {} palette entries, the crowd has {entries}",
                bounds.entries()
            )));
        }
        let palettes = match self.evaluated.is_empty() {
            true => &self.palettes[..],
            false => &self.evaluated[..],
        };
        // The evaluations in the pieces the stage uses, their bounds one entry each.
        let parts = Parts::new(&mut self.evaluation_bounds, &self.piece_ends, &self.taken)?;
        self.workers
            .run_parts(&self.claims, &parts, &|_, _, first, part| {
                for (i, b) in part.iter_mut().enumerate() {
                    let e = first + i;
                    *b = palettes
                        .get(e * entries..(e + 1) * entries)
                        .and_then(|p| bounds.bound(p, morph_weights));
                }
            })?;
        out.clear();
        out.extend(
            self.evaluation_of
                .iter()
                .map(|&e| self.evaluation_bounds.get(e).copied().flatten()),
        );
        Ok(())
    }

    /// Every character's palette back to back ([`Crowd::entries`] each, the layout of
    /// [`crate::frame::FrameState::palette`]): what the GPU crowd uploads in one write.
    pub fn palettes(&self) -> &[Mat4] {
        &self.palettes
    }

    /// Character `c`'s palette (`None` past the crowd).
    pub fn palette(&self, c: usize) -> Option<&[Mat4]> {
        let e = self.layout.len;
        self.palettes.get(c * e..(c + 1) * e)
    }

    /// Palette entries of one character.
    pub fn entries(&self) -> usize {
        self.layout.len
    }

    /// Characters.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Never true: a crowd holds at least one character (rule 1).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// What each character plays.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The scene every character is an instance of.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// Threads the stage runs on.
    pub fn threads(&self) -> usize {
        self.workers.threads()
    }

    /// The last frame's figures.
    pub fn stats(&self) -> CrowdStats {
        self.stats
    }
}

/// Evaluations (or characters) a piece holds at least: a claim costs a compare-and-swap, a
/// piece of eight costs some 10 µs to evaluate.
const PIECE_MIN: usize = 8;

/// Pieces a thread owns at most: enough that a thread that runs out of its own finds pieces
/// to take while the others work (a frame ends within about a sixteenth of a thread's share
/// of the last piece's start), few enough that the evaluations' prefetch of the next one's
/// states rarely meets a piece's end.
const PIECES_PER_THREAD: usize = 16;

/// How many pieces `items` evaluations or characters are cut into on `threads` threads.
fn piece_count(items: usize, threads: usize) -> usize {
    items
        .div_ceil(PIECE_MIN)
        .clamp(1, threads.max(1) * PIECES_PER_THREAD)
}

/// Lock `m`, going on after a panic elsewhere (a poisoned piece or scratch is whole: a panic
/// there is an error of the frame, reported by [`Workers::run`]).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Above this many bytes of playback states in a lane, each evaluation prefetches the next
/// one's as it plays; below it they stay in the caches between frames. A core's L2 on the CI
/// kind's Xeon (2 MB). Measured there with ozz's crowd workload (1.1 KB of state a character,
/// BENCHMARKS.md, crowd section): 4096 characters on two threads (2.4 MB a lane) 950–1010
/// against 1040–1330 ns a character without; at 64 to 2048 characters within noise either way.
const PREFETCH_STATE_BYTES: usize = 2 << 20;

/// What every lane reads in a frame.
struct Evaluate<'a> {
    scene: &'a Scene,
    /// The scene's rest locals: what blending fills in below the threshold.
    reference: &'a [Trs],
    clips: &'a [Option<SoaClip>],
    members: &'a [Member],
    leaders: &'a [usize],
    /// Per evaluation: animated this frame (the others keep their palettes).
    animate: &'a [bool],
    time_s: f32,
}

impl Evaluate<'_> {
    /// Evaluate `piece`'s evaluations into `out` (their palettes, `entries` each) with this
    /// thread's `scratch`; the first error stops the piece.
    fn piece(
        &self,
        piece: &mut Piece,
        scratch: &mut Scratch,
        out: &mut [Mat4],
        entries: usize,
    ) -> Result<()> {
        let first = piece.first;
        for (i, block) in out.chunks_exact_mut(entries).enumerate() {
            let member = self
                .leaders
                .get(first + i)
                .and_then(|&c| self.members.get(c));
            let Some(member) = member else { break };
            if !self.animate.get(first + i).copied().unwrap_or(true) {
                continue;
            }
            self.one(piece, scratch, i, member, block)?;
        }
        Ok(())
    }

    /// Sample `member`'s layers (the piece's evaluation `i`), blend, local→model, palette.
    fn one(
        &self,
        piece: &mut Piece,
        scratch: &mut Scratch,
        i: usize,
        member: &Member,
        out: &mut [Mat4],
    ) -> Result<()> {
        let local_s = member.phase_s + member.speed * self.time_s;
        let Scratch {
            layer_poses,
            blended,
            model_from_node,
            ..
        } = scratch;
        let prefetch = piece.prefetch;
        // This evaluation's states, and the next one's, brought into the caches as these play.
        let (states, next) = match piece.states.get_mut(i..) {
            Some([states, next @ ..]) => (states, next.first()),
            _ => {
                return Err(Error::Worker(format!(
                    "crowd piece has no state for evaluation {i}"
                )));
            }
        };
        let mut sampled = 0usize;
        for (slot, ((layer, state), pose)) in member
            .layers
            .iter()
            .zip(states)
            .zip(layer_poses.iter_mut())
            .enumerate()
        {
            let (Some(layer), Some(state)) = (layer, state) else {
                continue;
            };
            let ahead = next
                .filter(|_| prefetch)
                .and_then(|n| n.get(slot))
                .and_then(Option::as_ref);
            let Some(clip) = self.clips.get(layer.clip).and_then(Option::as_ref) else {
                continue;
            };
            let d = clip.duration_s();
            SoaAnimateJob {
                scene: self.scene,
                clip,
                time_s: if d > 0.0 { local_s.rem_euclid(d) } else { 0.0 },
                state,
                ahead,
                pose,
            }
            .run()?;
            sampled += 1;
        }
        let single = member.layers.iter().position(Option::is_some);
        let pose: &Pose = match (sampled, single) {
            // One layer at full weight: its pose as sampled (no blend, as a character's one clip).
            (1, Some(l)) if member.layers[l].is_some_and(|x| x.weight == 1.0) => &layer_poses[l],
            _ => {
                blend(self.reference, member, layer_poses, blended)?;
                blended
            }
        };
        LocalToModelJob {
            scene: self.scene,
            pose,
            model_from_node,
        }
        .run()?;
        write_palette(self.scene, model_from_node, out);
        Ok(())
    }
}

/// Blend `member`'s sampled layers over `reference` into `out` (no layer: the reference).
fn blend(
    reference: &[Trs],
    member: &Member,
    poses: &[Pose; MAX_CROWD_LAYERS],
    out: &mut Pose,
) -> Result<()> {
    let unused = Layer {
        pose: reference,
        weight: 0.0,
        mask: None,
    };
    let mut layers = [unused; MAX_CROWD_LAYERS];
    let mut count = 0;
    for (l, pose) in member.layers.iter().zip(poses) {
        if let Some(l) = l {
            layers[count] = Layer {
                pose: &pose.locals,
                weight: l.weight,
                mask: None,
            };
            count += 1;
        }
    }
    LayerJob {
        reference,
        layers: &layers[..count],
        threshold: DEFAULT_THRESHOLD,
        output: &mut out.locals,
    }
    .run()
}
