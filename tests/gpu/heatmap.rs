//! The distance heatmap (`view --compare-with`, `diff --render`): a vertex with no partner in
//! the other file ([`NO_PARTNER`]) is drawn grey, off the ramp, not as a perfect match (the
//! ramp's blue floor, which a distance of 0 gets).

use crate::common;
use skinview::character::CharacterSetup;
use skinview::diff::pairing::NO_PARTNER;

/// Pixels clearly blue (the ramp's floor) and clearly grey-neutral and lit (not the dark
/// background) in `image`.
fn blue_and_grey(image: &skinview::image::Rgba8) -> (usize, usize) {
    let (mut blue, mut grey) = (0, 0);
    for p in image.pixels.chunks_exact(4) {
        let [r, g, b] = [p[0], p[1], p[2]].map(i32::from);
        if b > r + 80 && b > g + 80 {
            blue += 1;
        } else if (r - g).abs() < 6 && (g - b).abs() < 6 && r > 90 {
            grey += 1;
        }
    }
    (blue, grey)
}

#[test]
fn vertices_with_no_partner_are_grey_not_blue() {
    let Some(ctx) = common::gpu() else { return };
    let scene = skinview::builtin::woodland_arm().unwrap();
    let mut c = CharacterSetup::clip(None).build(&scene).unwrap();
    c.update(0.0, 0.0).unwrap();
    let n = scene.vertex_count();
    let render = |value: f32| {
        let distances = vec![value; n];
        skinview::view::render_distances(
            ctx,
            &c,
            (&distances, 1.0),
            &Default::default(),
            None,
            (160, 120),
        )
        .unwrap()
    };
    let (blue_matched, grey_matched) = blue_and_grey(&render(0.0));
    let (blue_alone, grey_alone) = blue_and_grey(&render(NO_PARTNER));
    println!(
        "distance 0: {blue_matched} blue, {grey_matched} grey; no partner: {blue_alone} blue, {grey_alone} grey"
    );
    assert!(
        blue_matched > 1000,
        "{blue_matched} blue pixels at distance 0"
    );
    assert_eq!(
        blue_alone, 0,
        "a vertex with no partner is drawn on the ramp"
    );
    assert!(
        grey_alone > grey_matched + blue_matched / 2,
        "{grey_alone} vs {grey_matched}"
    );
}
