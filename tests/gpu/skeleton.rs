//! The skeleton overlay's bones, against independent computations: one bone per joint,
//! pointing at its one child or at the child whose subtree holds the most skinned weight
//! (summed here by walking each influence up its ancestors, not by the overlay's backward
//! pass), a bone that moves no vertex cut short toward it; a leaf continuing its parent's
//! bone (direction at the rest pose) as long as the vertices it moves reach (a short marker
//! when it moves none) and turning with its own joint (the built-in arm's forearm bends 120°
//! with the skin); bones that move no vertex hidden on request; shapes never wider than their
//! cap, in every style. On every shared model and the built-ins.
#![allow(clippy::unwrap_used)] // test code: a panic is the report

use crate::common;

use glam::Vec3;
use skinview::Scene;
use skinview::character::{Character, CharacterSetup};
use skinview::gpu::OverlayGeometry;
use skinview::view::skeleton::{
    BONE_WIDTH_SHARE, Bone, BoneDraw, BoneStyle, END_BONE_MAX_SHARE, MARKER_SHARE, SkeletonShape,
    joint_flags,
};

/// Every shared model with a skin, and the two built-ins, as characters at rest.
fn skinned_at_rest() -> Vec<Character> {
    let mut scenes: Vec<Scene> = common::all_models()
        .iter()
        .map(|p| skinview::io::load(p).unwrap())
        .filter(|s| !s.skins.is_empty())
        .collect();
    scenes.push(skinview::builtin::woodland_arm().unwrap());
    scenes.push(skinview::builtin::humanoid().unwrap());
    assert!(scenes.len() >= 10, "only {} skinned models", scenes.len());
    scenes
        .iter()
        .map(|s| {
            let mut c = CharacterSetup::clip(None).build(s).unwrap();
            c.update(0.0, 0.0).unwrap();
            c
        })
        .collect()
}

fn bones_of(c: &Character) -> (SkeletonShape, Vec<Bone>) {
    let shape = SkeletonShape::new(&c.scene, &skinview::view::bone_tips(c));
    let mut bones = Vec::new();
    shape.bones(&c.frame.model_from_node, false, &mut bones);
    (shape, bones)
}

/// Per node, the skinned weight of its subtree: each influence added to its joint and every
/// ancestor.
fn subtree_weight(scene: &Scene) -> Vec<f64> {
    let mut w = vec![0.0; scene.nodes.len()];
    for d in scene.deformed_draws() {
        let skin = &scene.skins[d.skin.unwrap()];
        let sw = scene.primitive(d).skin_weights.as_ref().unwrap();
        for (&j, &x) in sw.joints.iter().zip(&sw.weights) {
            let mut n = Some(skin.joints[j as usize]);
            while let Some(k) = n {
                w[k] += f64::from(x);
                n = scene.nodes[k].parent;
            }
        }
    }
    w
}

/// Per node, the sum of its own skinned weights.
fn own_weight(scene: &Scene) -> Vec<f64> {
    let mut w = vec![0.0; scene.nodes.len()];
    for d in scene.deformed_draws() {
        let skin = &scene.skins[d.skin.unwrap()];
        let sw = scene.primitive(d).skin_weights.as_ref().unwrap();
        for (&j, &x) in sw.joints.iter().zip(&sw.weights) {
            w[skin.joints[j as usize]] += f64::from(x);
        }
    }
    w
}

/// Every skinned vertex at rest carried by the joint its largest weight is on alone (its
/// model matrix times its inverse bind matrix): (that joint's node, the point).
fn carried_at_rest(c: &Character) -> Vec<(usize, Vec3)> {
    let scene = &c.scene;
    let mut out = Vec::new();
    for d in scene.deformed_draws() {
        let skin = &scene.skins[d.skin.unwrap()];
        let p = scene.primitive(d);
        let sw = p.skin_weights.as_ref().unwrap();
        for (v, pos) in p.positions.iter().enumerate() {
            let slots = v * sw.width..(v + 1) * sw.width;
            let k = slots
                .filter(|&k| sw.weights[k] > 0.0)
                .max_by(|&a, &b| sw.weights[a].total_cmp(&sw.weights[b]));
            let Some(k) = k else { continue };
            let j = sw.joints[k] as usize;
            let node = skin.joints[j];
            let m = c.frame.model_from_node[node] * skin.joint_from_bind[j];
            out.push((node, m.transform_point3(*pos)));
        }
    }
    out
}

/// The diagonal of the box of the joints and the carried vertices at rest.
fn rest_diagonal(c: &Character) -> f32 {
    let is_joint = joint_flags(&c.scene);
    let joints = (0..c.scene.nodes.len())
        .filter(|&n| is_joint[n])
        .map(|n| c.frame.model_from_node[n].w_axis.truncate());
    let (lo, hi) = carried_at_rest(c)
        .into_iter()
        .map(|(_, p)| p)
        .chain(joints)
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p), hi.max(p))
        });
    (hi - lo).length()
}

/// Per node, how far from the joint at rest reach the vertices it carries.
fn reach(c: &Character) -> Vec<f32> {
    let mut r = vec![0.0f32; c.scene.nodes.len()];
    for (node, p) in carried_at_rest(c) {
        let head = c.frame.model_from_node[node].w_axis.truncate();
        r[node] = r[node].max(p.distance(head));
    }
    r
}

#[test]
fn a_joint_points_at_its_heaviest_child() {
    let (mut checked, mut cut) = (0, 0);
    for c in skinned_at_rest() {
        let scene = &c.scene;
        let is_joint = joint_flags(scene);
        let weight = subtree_weight(scene);
        let own = own_weight(scene);
        let cap = rest_diagonal(&c) * END_BONE_MAX_SHARE as f32;
        let (_, bones) = bones_of(&c);
        let pos = |n: usize| c.frame.model_from_node[n].w_axis.truncate();
        for p in (0..scene.nodes.len()).filter(|&p| is_joint[p]) {
            let children: Vec<usize> = (0..scene.nodes.len())
                .filter(|&k| is_joint[k] && scene.nodes[k].parent == Some(p))
                .collect();
            let Some(&first) = children.first() else {
                continue;
            };
            let heaviest = children
                .iter()
                .fold(first, |b, &k| if weight[k] > weight[b] { k } else { b });
            let bone = bones.iter().filter(|b| b.node == p).collect::<Vec<_>>();
            let to_child = pos(heaviest) - pos(p);
            if to_child.length() == 0.0 {
                assert!(bone.is_empty(), "{}: zero-length bone drawn", scene.name);
                continue;
            }
            assert_eq!(
                bone.len(),
                1,
                "{}: joint {p} has {} bones",
                scene.name,
                bone.len()
            );
            // A bone that moves no vertex stops at the cap on its way to the child.
            let expected = if own[p] == 0.0 && to_child.length() > cap {
                cut += 1;
                pos(p) + to_child * (cap / to_child.length())
            } else {
                pos(heaviest)
            };
            assert!(
                bone[0].tail.distance(expected) <= 1e-4 * to_child.length(),
                "{}: joint {} should point at {} (subtree weight {:.3} of {:?}), tail {} not {}",
                scene.name,
                scene.node_label(p),
                scene.node_label(heaviest),
                weight[heaviest],
                children.iter().map(|&k| weight[k]).collect::<Vec<_>>(),
                bone[0].tail,
                expected
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} joints with children checked");
    assert!(
        cut > 0,
        "no control bone was cut short: the case is untested"
    );
}

/// The built-in arm with an end joint under its forearm that moves no vertex (as Blender's
/// exporter adds `_end` bones), 0.25 m along the forearm's +Y.
fn arm_with_an_end_joint() -> Character {
    let mut scene = skinview::builtin::woodland_arm().unwrap();
    let fore = *scene.skins[0].joints.last().unwrap();
    let mut end = scene.nodes[fore].clone();
    end.name = Some("forearm_end".into());
    end.parent = Some(fore);
    (end.mesh, end.skin, end.morph_weights, end.matrix) = (None, None, None, None);
    end.rest = skinview::math::Trs {
        translation: Vec3::new(0.0, 0.25, 0.0),
        ..Default::default()
    };
    end.source_index = scene.nodes.len();
    scene.nodes.push(end);
    let at_rest = |scene: &Scene| {
        let mut c = CharacterSetup::clip(None).build(scene).unwrap();
        c.update(0.0, 0.0).unwrap();
        c
    };
    let m = at_rest(&scene).frame.model_from_node[scene.nodes.len() - 1];
    scene.skins[0].joints.push(scene.nodes.len() - 1);
    scene.skins[0].joint_from_bind.push(m.inverse());
    at_rest(&scene)
}

#[test]
fn a_leaf_continues_its_parent_as_far_as_its_vertices_reach() {
    let (mut checked, mut markers, mut reached) = (0, 0, 0);
    for c in skinned_at_rest()
        .into_iter()
        .chain([arm_with_an_end_joint()])
    {
        if c.bones.is_some() {
            continue; // native rigs end their leaves where the rig says
        }
        let scene = &c.scene;
        let (_, bones) = bones_of(&c);
        let is_joint = joint_flags(scene);
        let own = own_weight(scene);
        let weight = subtree_weight(scene);
        let reach = reach(&c);
        let diagonal = rest_diagonal(&c);
        let pos = |n: usize| c.frame.model_from_node[n].w_axis.truncate();
        for b in &bones {
            let is_joint = &is_joint;
            let children = |p: usize| {
                (0..scene.nodes.len())
                    .filter(move |&k| is_joint[k] && scene.nodes[k].parent == Some(p))
            };
            let Some(parent) = scene.nodes[b.node].parent.filter(|&p| is_joint[p]) else {
                continue;
            };
            if children(b.node).next().is_some() {
                continue;
            }
            // The parent's bone before any cut: to its heaviest child (the first on ties).
            let heaviest = children(parent)
                .reduce(|a, k| if weight[k] > weight[a] { k } else { a })
                .unwrap();
            let theirs = pos(heaviest) - pos(parent);
            if theirs.length() == 0.0 {
                continue;
            }
            let own_bone = b.tail - b.head;
            let marker = diagonal * MARKER_SHARE as f32;
            let wanted = if own[b.node] > 0.0 {
                reached += 1;
                reach[b.node].max(marker)
            } else {
                markers += 1;
                marker
            };
            let expected = theirs
                .length()
                .min(wanted)
                .min(diagonal * END_BONE_MAX_SHARE as f32);
            assert!(
                (own_bone.length() - expected).abs() <= 1e-3 * expected,
                "{}: leaf {} is {} long, expected {expected} (parent's bone {}, reach {}, marker \
                 {marker})",
                scene.name,
                scene.node_label(b.node),
                own_bone.length(),
                theirs.length(),
                reach[b.node]
            );
            assert!(
                own_bone.normalize().dot(theirs.normalize()) > 0.9999,
                "{}: leaf {} does not continue its parent's direction",
                scene.name,
                scene.node_label(b.node)
            );
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} leaves checked");
    assert!(
        markers > 0 && reached > 0,
        "markers {markers}, leaves with vertices {reached}"
    );
}

/// Hiding the bones that move no vertex leaves out exactly those bones and their
/// relationship lines.
#[test]
fn bones_that_move_no_vertex_hide_on_request() {
    let mut hidden = 0;
    for c in skinned_at_rest() {
        let own = own_weight(&c.scene);
        let (shape, all) = bones_of(&c);
        let mut shown = Vec::new();
        shape.bones(&c.frame.model_from_node, true, &mut shown);
        let expected: Vec<&Bone> = all.iter().filter(|b| own[b.node] > 0.0).collect();
        assert_eq!(
            shown.iter().collect::<Vec<_>>(),
            expected,
            "{}",
            c.scene.name
        );
        hidden += all.len() - shown.len();
        let m = &c.frame.model_from_node;
        let at = |p: Vec3| (0..m.len()).find(|&n| m[n].w_axis.truncate() == p);
        for (a, b) in shape.relations(m, true) {
            for end in [a, b] {
                let moves = (0..m.len())
                    .filter(|&n| m[n].w_axis.truncate() == end)
                    .any(|n| own[n] > 0.0);
                assert!(moves, "{}: a line to {:?}", c.scene.name, at(end));
            }
        }
    }
    assert!(hidden > 0, "no model has a bone that moves no vertex");
}

/// `skinview render builtin:arm --skeleton --time 2`: the forearm's bone bends with the skin.
#[test]
fn the_arms_forearm_bone_bends_with_its_joint() {
    let scene = skinview::builtin::woodland_arm().unwrap();
    let bend = scene.find_animation("bend").unwrap();
    let mut c = CharacterSetup::clip(Some(bend)).build(&scene).unwrap();
    let end_s = scene.animations[bend].duration_s();
    c.update(end_s, 0.0).unwrap();
    let (_, bones) = bones_of(&c);
    assert_eq!(bones.len(), 2, "{bones:?}");
    let (upper, fore) = (bones[0], bones[1]);
    assert_eq!(upper.tail, fore.head, "the forearm starts at the elbow");
    let angle_deg = (upper.tail - upper.head)
        .angle_between(fore.tail - fore.head)
        .to_degrees();
    assert!(
        (angle_deg - 120.0).abs() < 0.05,
        "forearm bone at {angle_deg}° to the upper arm; the arm bends 120°"
    );
}

#[test]
fn bone_shapes_stay_within_their_width_cap_in_every_style() {
    for c in skinned_at_rest() {
        let (lo, hi) = skinview::skin::bounds(&c.outputs).unwrap();
        let diagonal_m = (hi - lo).length();
        let cap = diagonal_m * BONE_WIDTH_SHARE;
        let (shape, bones) = bones_of(&c);
        for style in BoneStyle::ALL {
            let mut g = OverlayGeometry::default();
            let how = BoneDraw {
                style,
                color: shape.color,
                selected: None,
                light: Vec3::Y,
                diagonal_m,
                hide_unweighted: false,
            };
            skinview::view::skeleton::draw(&shape, &bones, &c.frame.model_from_node, &how, &mut g);
            assert!(!g.triangles_front.is_empty() || bones.is_empty());
            for v in &g.triangles_front {
                let p = Vec3::from(v.position);
                let d = bones
                    .iter()
                    .map(|b| segment_distance(p, b.head, b.tail))
                    .fold(f32::INFINITY, f32::min);
                assert!(
                    d <= cap * 1.001 + 1e-6,
                    "{} ({}): a shape reaches {d} from its bone, the cap is {cap}",
                    c.scene.name,
                    style.name()
                );
            }
        }
    }
}

fn segment_distance(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared().max(1e-30)).clamp(0.0, 1.0);
    p.distance(a + ab * t)
}

/// The bones take a colour the model's materials do not use: blue by default, another on a
/// blue model.
#[test]
fn bones_take_a_colour_the_materials_do_not_use() {
    use skinview::view::skeleton::{BONE_COLORS, bone_color};
    let mut scene = skinview::builtin::woodland_arm().unwrap();
    assert_eq!(bone_color(&scene), BONE_COLORS[0], "a skin-toned arm");
    for (material, avoid) in [([0.1, 0.2, 0.9, 1.0], 0), ([0.8, 0.05, 0.6, 1.0], 1)] {
        for m in &mut scene.meshes {
            for p in &mut m.primitives {
                p.base_color = material;
            }
        }
        let c = bone_color(&scene);
        assert_ne!(
            c, BONE_COLORS[avoid],
            "material {material:?} got bones {c:?}"
        );
    }
}

/// The legends say what each colour mode shows: the weights ramp names the bone, the error
/// ramps span the heatmap's four decades from its floor, the bone swatches list the bones with
/// the most weight first (counted here from the weights) in the shader's colours.
#[test]
fn legends_describe_each_colour_mode() {
    use skinview::gpu::ColorMode;
    use skinview::view::ViewOptions;
    use skinview::view::legend::{LegendKind, heat, legend};
    let scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let mut c = CharacterSetup::clip(Some(0)).build(&scene).unwrap();
    c.update(0.5, 0.0).unwrap();
    assert_eq!(legend(&c, &ViewOptions::default(), false), None);
    let arm = scene.find_node("Skeleton_arm_joint_L__3_").unwrap();
    let weights = ViewOptions {
        color_mode: ColorMode::Weights,
        selected_node: Some(arm),
        ..Default::default()
    };
    let l = legend(&c, &weights, false).unwrap();
    assert!(l.title.contains("Skeleton_arm_joint_L__3_"), "{l:?}");
    let errors = ViewOptions {
        color_mode: ColorMode::Errors,
        ..Default::default()
    };
    match legend(&c, &errors, false).unwrap().kind {
        LegendKind::Ramp(ticks) => {
            let labels: Vec<&str> = ticks.iter().map(|(_, l)| l.as_str()).collect();
            assert_eq!(labels, ["1e-8", "1e-7", "1e-6", "1e-5", "1e-4"]);
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(heat(0.0), [0.0, 0.0, 1.0]);
    assert_eq!(heat(0.5), [0.0, 1.0, 0.0]);
    assert_eq!(heat(1.0), [1.0, 0.0, 0.0]);
    // Bone swatches, heaviest first.
    let bones = ViewOptions {
        color_mode: ColorMode::Bones,
        ..Default::default()
    };
    let skin = &scene.skins[0];
    let mut total = vec![0.0f64; scene.nodes.len()];
    for d in scene.deformed_draws() {
        let w = scene.primitive(d).skin_weights.as_ref().unwrap();
        for (&j, &x) in w.joints.iter().zip(&w.weights) {
            total[skin.joints[j as usize]] += f64::from(x);
        }
    }
    let heaviest = (0..total.len())
        .max_by(|&a, &b| total[a].total_cmp(&total[b]))
        .unwrap();
    match legend(&c, &bones, false).unwrap().kind {
        LegendKind::Swatches { entries, more } => {
            // One row per colour, each naming the bones drawn in it ("a · b", "+k" beyond
            // three), the heaviest bone first; every weighted bone named, counted or more.
            assert!(entries[0].1.starts_with(&scene.node_label(heaviest)));
            let mut counted = more;
            for (i, (color, label)) in entries.iter().enumerate() {
                assert!(entries[..i].iter().all(|(c, _)| c != color), "{label}");
                for name in label.split(" · ") {
                    match name.strip_prefix('+') {
                        Some(k) => counted += k.parse::<usize>().unwrap(),
                        None => {
                            let n = scene.find_node(name).unwrap();
                            assert_eq!(skinview::view::legend::bone_color(n as u32), *color);
                            counted += 1;
                        }
                    }
                }
            }
            let used = total.iter().filter(|&&x| x > 0.0).count();
            assert_eq!(counted, used);
            assert!(
                used > skinview::image::QUALITATIVE.len(),
                "a rig that repeats colours"
            );
        }
        k => panic!("{k:?}"),
    }
}

/// On a native rig every bone ends where the rig says (its +X by its length), and a bone link
/// (a joint the rig gained, with no length of its own) ends on a point of the rig's own
/// skeleton (a native bone's end or a joint), never past it: at the humanoid's rest pose,
/// links inserted.
#[test]
fn native_bones_end_where_the_rig_says_and_links_on_the_skeleton() {
    use skinview::character::{CharacterSetup as Setup, CharacterSpec};
    let rig = skinview::builtin::humanoid_rig()
        .unwrap()
        .to_scene()
        .unwrap();
    let spec = CharacterSpec {
        links: true,
        ..CharacterSpec::single(None)
    };
    let mut c = Setup::stage(spec).build_rig(&rig).unwrap();
    c.update(0.0, 0.0).unwrap();
    let (_, bones) = bones_of(&c);
    let meta = c.bones.clone().unwrap();
    let m = &c.frame.model_from_node;
    let native_ends: Vec<Vec3> = (0..meta.len())
        .filter(|&n| meta[n].length_m > 0.0)
        .map(|n| m[n].transform_point3(Vec3::X * meta[n].length_m))
        .chain(m.iter().map(|x| x.w_axis.truncate()))
        .collect();
    let mut links = 0;
    for b in &bones {
        let length = meta[b.node].length_m;
        if length > 0.0 {
            let expected = m[b.node].transform_point3(Vec3::X * length);
            assert!(
                b.tail.distance(expected) < 1e-5,
                "{}",
                c.scene.node_label(b.node)
            );
        } else {
            let on = native_ends.iter().any(|e| e.distance(b.tail) < 1e-4);
            assert!(
                on,
                "link {} ends off the skeleton at {}",
                c.scene.node_label(b.node),
                b.tail
            );
            links += 1;
        }
    }
    assert_eq!(links, 16, "the humanoid's 16 bone links");
}

/// The rest and bind ghosts: one line per bone in each pose's colour (the bones of the shape
/// in that pose), and the red marks (a ball on each pose, a line between them) only on the
/// joint whose inverse bind matrix was moved 1 cm; none on the file as it is.
#[test]
fn ghosts_mark_only_the_joint_whose_bind_moved() {
    use skinview::view::skeleton::{
        BIND_GHOST_COLOR, BIND_REST_MARK_COLOR, Ghosts, REST_GHOST_COLOR, draw_ghosts,
    };
    let mut scene = skinview::io::load(&common::model("CesiumMan")).unwrap();
    let at_rest = |scene: &Scene| {
        let mut c = CharacterSetup::clip(None).build(scene).unwrap();
        c.update(0.0, 0.0).unwrap();
        c
    };
    let count = |scene: &Scene| {
        let c = at_rest(scene);
        let (shape, bones) = bones_of(&c);
        let poses = skinview::poses::ReferencePoses::new(scene).unwrap();
        let how = Ghosts {
            rest: true,
            bind: true,
            hide_unweighted: false,
            diagonal_m: rest_diagonal(&c),
        };
        let mut g = OverlayGeometry::default();
        draw_ghosts(&shape, &poses, &how, &mut g);
        let lines = |color: [f32; 4]| {
            g.lines_front
                .chunks(2)
                .filter(|l| l[0].color == color)
                .count()
        };
        let marked: Vec<[f32; 3]> = g
            .triangles_front
            .iter()
            .filter(|v| v.color == BIND_REST_MARK_COLOR)
            .map(|v| v.position)
            .collect();
        (
            bones.len(),
            lines(REST_GHOST_COLOR),
            lines(BIND_GHOST_COLOR),
            lines(BIND_REST_MARK_COLOR),
            marked,
        )
    };
    let (bones, rest, bind, red_lines, marked) = count(&scene);
    assert_eq!((rest, bind), (bones, bones));
    assert_eq!(
        (red_lines, marked.len()),
        (0, 0),
        "a consistent rig is marked"
    );
    let joint = 3;
    let node = scene.skins[0].joints[joint];
    let ibm = scene.skins[0].joint_from_bind[joint];
    scene.skins[0].joint_from_bind[joint] =
        glam::Mat4::from_translation(Vec3::new(0.01, 0.0, 0.0)) * ibm;
    let (_, _, _, red_lines, marked) = count(&scene);
    assert_eq!(
        red_lines, 1,
        "one line from the moved joint's rest place to its bind place"
    );
    // The balls sit around the joint's rest and bind places (within a mark's radius).
    let poses = skinview::poses::ReferencePoses::new(&scene).unwrap();
    let places = [poses.rest[node], poses.bind[node]].map(|m| m.w_axis.truncate());
    let radius = 0.01 * rest_diagonal(&at_rest(&scene));
    assert!(!marked.is_empty());
    for p in marked {
        let p = Vec3::from(p);
        assert!(
            places.iter().any(|c| c.distance(p) <= radius),
            "a mark at {p}, away from {places:?}"
        );
    }
}
