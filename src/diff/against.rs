//! "Compare with…": a second file of the same character (a converted, compressed or
//! re-exported copy) played beside the model at the same time, its vertices paired with the
//! model's ([`crate::diff::Pairing`]) and the distance between them measured per vertex on
//! both, as `skinview diff` measures it: the viewer's A|B view and the `render` command show it
//! as a heatmap side by side. No window or GPU in it.

use super::{ClipPair, FrameStats, MatchedBy, Pairing, names};
use crate::character::{Character, CharacterSetup};
use crate::error::Result;
use crate::scene::Scene;

/// The other file and its figures.
pub struct OtherFile {
    /// Its label (the path or name it was opened by).
    pub label: String,
    /// The loaded file's scene.
    pub scene: Scene,
    /// Its character, playing the clip paired with the model's.
    pub character: Character,
    /// Per clip of the model: the paired clip of this file.
    clip_of: Vec<Option<usize>>,
    /// The clip it plays now.
    anim: Option<usize>,
    /// Whether that clip wraps at its end, as the model's does (at a clip's last instant a
    /// looping clip shows its start: the two must agree there).
    looping: bool,
    /// The model's blend and influence limit its character was built with.
    built_for: (crate::skin::SkinOptions, Option<usize>),
    /// The vertices paired, and the model's character generation they were paired for.
    pairing: Option<(u64, Pairing)>,
    /// Per pair, the last frame's distance.
    distances: Vec<f64>,
    /// Per vertex of the model (draws in order), the last frame's distance to this file.
    pub distances_a: Vec<f32>,
    /// Per vertex of this file (its character's draws), the distance to the model.
    pub distances_b: Vec<f32>,
    /// The last frame's figures (model units).
    pub now: FrameStats,
    /// The largest distance since the clip, the set-up or the pairing last changed, model
    /// units.
    pub largest: f64,
    /// Bumped when the vertices are paired again (the model was rebuilt).
    pub generation: u64,
    /// Unique among the files opened (the viewport makes its GPU scene once per file).
    pub id: u64,
}

/// The next [`OtherFile::id`].
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Every draw of `scene` skinned at its rest pose.
/// Pair `a`'s vertices with the other file's as `diff` does: in the rest poses, or at the
/// start of the clips played when the rest poses differ.
fn pair(a: &Scene, b: &Scene, anim: Option<usize>, b_anim: Option<usize>) -> Result<Pairing> {
    let clip = anim.zip(b_anim).map(|(a, b)| ClipPair {
        a,
        b,
        by: MatchedBy::Index,
    });
    let radius = super::DiffOptions::default().match_radius_rel;
    Ok(super::pair_vertices(a, b, clip, radius)?.0)
}

impl OtherFile {
    /// `scene` beside `a` (the viewer's character, set up as `setup` says), playing the clip
    /// paired with `a`'s clip `anim` (clips by name, then the rest in order) with the same
    /// blend and influence limit.
    pub fn new(
        label: &str,
        scene: Scene,
        a: &Character,
        setup: &CharacterSetup,
        anim: Option<usize>,
    ) -> Result<OtherFile> {
        let (pairs, _, _) = names::match_clips(&a.scene, &scene);
        let mut clip_of = vec![None; a.scene.animations.len()];
        for p in pairs {
            clip_of[p.a] = Some(p.b);
        }
        let b_anim = anim.and_then(|i| clip_of.get(i).copied().flatten());
        let character = Self::build(&scene, setup, b_anim)?;
        Ok(OtherFile {
            label: label.to_string(),
            scene,
            character,
            clip_of,
            anim: b_anim,
            looping: false,
            built_for: (setup.skin, setup.max_influences),
            pairing: None,
            distances: Vec::new(),
            distances_a: Vec::new(),
            distances_b: Vec::new(),
            now: FrameStats::default(),
            largest: 0.0,
            generation: 0,
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }

    /// Its character: `b_anim` on the whole file (no split: it is drawn from the CPU), with
    /// the model's blend and influence limit, not looping until [`OtherFile::follow`] sees the
    /// model's clip loop.
    fn build(scene: &Scene, setup: &CharacterSetup, b_anim: Option<usize>) -> Result<Character> {
        let mut character = CharacterSetup {
            skin: setup.skin,
            max_influences: setup.max_influences,
            ..CharacterSetup::clip(b_anim)
        }
        .build(scene)?;
        character.cpu_skinning = true;
        Ok(character)
    }

    /// The model's diagonal distances are read against (0 before the first frame).
    pub fn diagonal(&self) -> f64 {
        self.pairing.as_ref().map_or(0.0, |(_, p)| p.diagonal)
    }

    /// The clip of this file that plays beside the model's (None: its rest pose).
    pub fn clip(&self) -> Option<usize> {
        self.anim
    }

    /// The pairing, once made.
    pub fn pairing(&self) -> Option<&Pairing> {
        self.pairing.as_ref().map(|(_, p)| p)
    }

    /// When the pairing found no pair at all (another character, or the same one far off):
    /// the vertices of the model and of this file left unmatched. Its figures then measure
    /// nothing (`now` and `largest` stay 0; every per-vertex distance is
    /// [`super::pairing::NO_PARTNER`]).
    pub fn unpaired(&self) -> Option<(usize, usize)> {
        let p = self.pairing()?;
        let s = &p.matching.stats;
        p.matching
            .pairs
            .is_empty()
            .then_some((s.a_unmatched, s.b_unmatched))
    }

    /// Follow `a` (the viewer's character, generation `generation`, CPU-skinned this frame,
    /// playing its clip `anim` at `time_s`): play the paired clip at the same time and
    /// measure the distance at every paired vertex.
    pub fn follow(
        &mut self,
        a: &Character,
        setup: &CharacterSetup,
        generation: u64,
        anim: Option<usize>,
        time_s: f32,
    ) -> Result<()> {
        let b_anim = anim.and_then(|i| self.clip_of.get(i).copied().flatten());
        if let (Some(i), None) = (anim, b_anim) {
            return Err(crate::error::Error::invalid(
                &self.scene.name,
                "animations",
                format!(
                    "no clip pairs with the model's clip {i} ({} clips here): nothing to compare \
                     it with",
                    self.scene.animations.len()
                ),
            ));
        }
        if (setup.skin, setup.max_influences) != self.built_for {
            self.character = Self::build(&self.scene, setup, b_anim)?;
            self.built_for = (setup.skin, setup.max_influences);
            self.anim = b_anim;
            self.looping = false;
            self.largest = 0.0;
        }
        let looping = a.layers().first().is_some_and(|l| l.looping);
        if b_anim != self.anim || looping != self.looping {
            self.character.set_clip(b_anim, looping)?;
            self.anim = b_anim;
            self.looping = looping;
            self.largest = 0.0;
        }
        if self.pairing.as_ref().is_none_or(|(g, _)| *g != generation) {
            let pairing = pair(&a.scene, &self.character.scene, anim, b_anim)?;
            self.pairing = Some((generation, pairing));
            self.largest = 0.0;
            self.generation += 1;
        }
        self.character.update(time_s, 0.0)?;
        if let Some((_, p)) = &self.pairing {
            self.now = p.measure(&a.outputs, &self.character.outputs, &mut self.distances);
            p.per_vertex(
                &self.distances,
                &mut self.distances_a,
                &mut self.distances_b,
            );
            self.largest = self.largest.max(self.now.max);
        }
        Ok(())
    }
}
