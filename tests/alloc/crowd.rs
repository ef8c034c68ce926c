//! The crowd stage, and the bounds culling takes from it, allocate nothing in a warm frame, on
//! the calling thread or on any of its worker threads, sharing evaluations or not.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)] // test code: panics and prints are its report

use skinview::crowd::{Crowd, CrowdLayer, CrowdSetup, Member, ozz};
use skinview::skin::SkinMode;
use skinview::skin::skinned_bounds::SkinnedBounds;

use crate::common;
use crate::{
    allocations, mark_pool_worker, pool_allocations, reset_allocations, set_counting,
    set_pool_counting,
};

#[test]
fn a_warm_crowd_frame_allocates_nothing_on_any_thread() {
    let fox = skinview::io::load(&common::model("Fox")).unwrap();
    // Fox's clips cycling, some characters blending two clips, some repeating (shared).
    let mut members = CrowdSetup::cycling(&fox, 60).members;
    for (c, m) in members.iter_mut().enumerate().filter(|(c, _)| c % 3 == 0) {
        m.layers[1] = Some(CrowdLayer {
            clip: (c + 1) % 3,
            weight: 0.4,
        });
    }
    members.extend([Member::clip(1, 0.2); 10]);
    let cases = [
        ("Fox, shared", fox.clone(), members.clone(), true),
        ("Fox, not shared", fox, members, false),
        (
            "ozz workload",
            ozz::scene(true).unwrap(),
            ozz::crowd_setup(64, 3).members,
            false,
        ),
    ];
    for (name, scene, members, share) in cases {
        let setup = CrowdSetup {
            threads: 3,
            share,
            on_worker_start: Some(mark_pool_worker),
            ..CrowdSetup::new(members)
        };
        // Culling's bounds too, for each skinning mode's set-up.
        let layout = skinview::skin::PaletteLayout::new(&scene);
        let bounds: Vec<SkinnedBounds> = SkinMode::ALL
            .iter()
            .map(|&m| SkinnedBounds::new(&scene, &layout, |_| m))
            .collect();
        let morph = skinview::anim::Pose::rest(&scene).morph_weights;
        let mut boxes = Vec::new();
        let mut crowd = Crowd::new(scene, setup).unwrap();
        assert_eq!(crowd.threads(), 3, "{name}: two workers beside this thread");
        let dt = 1.0 / 60.0;
        for i in 0..30 {
            crowd.update(i as f32 * dt).unwrap();
            crowd.bound(&bounds[i % 3], &morph, &mut boxes).unwrap();
        }
        // The level of detail's frames too: every third character animated.
        let picked: Vec<bool> = (0..crowd.len()).map(|c| c % 3 == 0).collect();
        crowd.update_some(30.0 * dt, &picked).unwrap();
        reset_allocations();
        set_counting(true);
        set_pool_counting(true);
        for i in 30..90 {
            match i % 2 {
                0 => crowd.update(i as f32 * dt).unwrap(),
                _ => crowd.update_some(i as f32 * dt, &picked).unwrap(),
            };
            crowd.bound(&bounds[i % 3], &morph, &mut boxes).unwrap();
        }
        set_pool_counting(false);
        set_counting(false);
        let (mine, pool) = (allocations(), pool_allocations());
        assert_eq!(
            (mine, pool),
            (0, 0),
            "{name}: allocations in 60 warm frames (this thread, the workers)"
        );
        // The counting does see the workers: on a warm pool a job that allocates on a worker
        // is counted.
        let mut probe = skinview::crowd::Workers::new(2, Some(mark_pool_worker));
        probe.run(&|_| {}).unwrap();
        set_pool_counting(true);
        // A worker may skip a frame the calling thread ends first: this one waits for it.
        let allocated = std::sync::atomic::AtomicBool::new(false);
        probe
            .run(&|t| {
                if t == 1 {
                    std::hint::black_box(vec![0u8; 16]);
                    allocated.store(true, std::sync::atomic::Ordering::Release);
                }
                let t0 = std::time::Instant::now();
                while t == 0
                    && !allocated.load(std::sync::atomic::Ordering::Acquire)
                    && t0.elapsed() < std::time::Duration::from_secs(20)
                {
                    std::thread::yield_now();
                }
            })
            .unwrap();
        set_pool_counting(false);
        assert!(
            pool_allocations() >= 1,
            "{name}: a worker's allocation is seen"
        );
    }
}
