//! The seeded pseudo-random numbers of the tests, the benchmarks and the rig generator: one
//! file (the benches and `examples/make_test_data.rs` include it with `#[path]`), so no test
//! carries a copy of its own.
//!
//! Several tests' expectations depend on the exact numbers (generated rigs and the reference
//! outputs made from them, proptest regression seeds, counts in messages, the benchmarks'
//! workloads), so each stream a test used before stays what it was: the generators below
//! differ in algorithm, seeding or the way they turn bits into numbers, and each says who uses
//! it. None is for anything but tests.
//!
//! - [`XorShift64`]: Marsaglia's xorshift64 (shifts 13, 7, 17), the state as given.
//! - [`XorShift64Star`]: Vigna's xorshift64* (shifts 12, 25, 27, then a multiply), from a
//!   raw state or seeded through splitmix64.
//! - [`xorshift32`]: Marsaglia's xorshift32 (shifts 13, 17, 5) as a stream of floats.
//! - [`lcg64_bytes`]: Knuth's 64-bit MMIX linear congruential generator, high bytes.
#![allow(dead_code)] // each includer uses part of it

use glam::{DVec3, Vec3};

/// 2⁶⁴ / φ, the golden-ratio increment (splitmix64's, and the partition tests' seed scrambler).
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// xorshift64 (Marsaglia, 13/7/17). The state is used as given: it must not be zero. Floats
/// are the top 24 bits. Used by the SIMD, SoA, skinning-mode and mutation-fuzz tests and the
/// skinning and animation benchmarks (the same stream and draw order as ozz_bench).
#[derive(Clone, Debug)]
pub struct XorShift64(pub u64);

impl XorShift64 {
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [0, 1), 24 bits.
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }
    /// In 0..n, by the remainder (0 when n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    /// A direction: three draws in [-1, 1), normalised (+Z for the zero vector).
    pub fn direction(&mut self) -> Vec3 {
        Vec3::new(
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
        )
        .normalize_or(Vec3::Z)
    }
}

/// xorshift64* (Vigna): xorshift 12/25/27 on the state, the output multiplied by
/// 0x2545F4914F6CDD1D. Used by the generated rigs ([`XorShift64Star::seeded`], every number
/// in f64), the partition tests (their own seed scrambling, floats from the top 24 bits) and
/// the partition benchmark.
#[derive(Clone, Debug)]
pub struct XorShift64Star(u64);

impl XorShift64Star {
    /// The state as given (must not be zero).
    pub const fn from_state(state: u64) -> XorShift64Star {
        XorShift64Star(state)
    }
    /// The state `seed · GOLDEN_GAMMA | 1` (odd, so never zero: the partition tests).
    pub fn scrambled(seed: u64) -> XorShift64Star {
        XorShift64Star(seed.wrapping_mul(GOLDEN_GAMMA) | 1)
    }
    /// The state from splitmix64 of `seed`, so that every seed (0 included) works (the
    /// generated rigs).
    pub fn seeded(seed: u64) -> XorShift64Star {
        let mut z = seed.wrapping_add(GOLDEN_GAMMA);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift64Star(if z == 0 { 0x2545_F491_4F6C_DD1D } else { z })
    }
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1), 24 bits.
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    /// Uniform in [0, 1), 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [lo, hi), from [`Self::unit`].
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    /// In 0..n, by the remainder (0 when n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    /// In 0..n (n > 0), by scaling [`Self::unit`] (the generated rigs' choice).
    pub fn index(&mut self, n: usize) -> usize {
        ((self.unit() * n as f64) as usize).min(n - 1)
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// +1 or -1, evenly.
    pub fn sign(&mut self) -> f64 {
        if self.chance(0.5) { 1.0 } else { -1.0 }
    }
    /// A uniform direction (rejection sampling in the unit ball).
    pub fn unit_vector(&mut self) -> DVec3 {
        loop {
            let v = DVec3::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            let l = v.length_squared();
            if l > 1e-4 && l <= 1.0 {
                return v / l.sqrt();
            }
        }
    }
    /// Fisher–Yates, with [`Self::index`].
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.index(i + 1);
            v.swap(i, j);
        }
    }
}

/// A seeded xorshift32 (Marsaglia, 13/17/5) stream of floats in [0, 1]: reproducible random
/// inputs for property tests (the links and rig tests).
pub fn xorshift32(mut seed: u32) -> impl FnMut() -> f32 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed as f32 / u32::MAX as f32
    }
}

/// `len` pseudo-random bytes: Knuth's 64-bit MMIX LCG from `seed`, the high byte of each
/// state (the importer's noise files).
pub fn lcg64_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect()
}
