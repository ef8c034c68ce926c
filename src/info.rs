//! What a model holds, in words: skins, draws with their vertices, influences, morph targets
//! and attributes, mirrored nodes, animations with their interpolation modes, and every repair
//! and warning the importer made. `skinview info` prints it; the viewer shows it.

use crate::frame::FrameState;
use crate::scene::Scene;

/// The description of a scene; its [`std::fmt::Display`] is the `info` report.
pub struct ModelInfo<'a>(pub &'a Scene);

impl std::fmt::Display for ModelInfo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scene = self.0;
        let mut result = Ok(());
        let mut line = |text: String| {
            if result.is_ok() {
                result = writeln!(f, "{text}");
            }
        };
        line(format!("model: {}", scene.name));
        line(format!("nodes: {}", scene.nodes.len()));
        line(format!("skins: {}", scene.skins.len()));
        for (i, sk) in scene.skins.iter().enumerate() {
            line(format!(
                "  skin {i} {}: {} joints",
                quoted(sk.name.as_deref()),
                sk.joints.len()
            ));
        }
        line(format!(
            "draws (node, mesh, primitive): {}",
            scene.draws.len()
        ));
        for d in &scene.draws {
            let p = scene.primitive(d);
            let node = &scene.nodes[d.node];
            let (sets, infl) = p
                .skin_weights
                .as_ref()
                .map_or((0, 0), |w| (w.width / 4, w.max_influences()));
            line(format!(
                "  node {} {} mesh {} prim {}: {} vertices, {} indices ({}), skin {}, weight sets \
             {sets}, max influences {infl}, morph targets {}, normals {}, tangents {}",
                node.source_index,
                quoted(node.name.as_deref()),
                d.mesh,
                d.primitive,
                p.vertex_count(),
                p.indices.len(),
                p.topology.name(),
                d.skin.map_or("none".into(), |s| s.to_string()),
                p.morph_targets.len(),
                if p.normals.is_some() { "yes" } else { "no" },
                if p.tangents.is_some() { "yes" } else { "no" },
            ));
        }
        line(format!(
            "total: {} vertices drawn, {} joints, max influences {}",
            scene.vertex_count(),
            scene.joint_count(),
            scene.max_influences()
        ));
        // Mirrored nodes flip the winding (glTF: negative determinant of the global transform).
        let mut frame = FrameState::new(scene);
        if frame.evaluate(scene, None, 0.0).is_ok() {
            for d in scene.draws.iter().filter(|d| d.skin.is_none()) {
                if frame.model_from_node[d.node].determinant() < 0.0 {
                    line(format!(
                        "  node {}: negative determinant, triangle winding flipped",
                        scene.nodes[d.node].source_index
                    ));
                }
            }
        }
        line(format!("animations: {}", scene.animations.len()));
        for (i, an) in scene.animations.iter().enumerate() {
            let modes: Vec<&str> = an.interpolations().iter().map(|m| m.name()).collect();
            line(format!(
                "  anim {i} {}: {:.3} s, {}, {}",
                quoted(an.name.as_deref()),
                an.duration_s(),
                count(an.channels.len(), "channel", "channels"),
                modes.join("/")
            ));
        }
        line(format!(
            "repairs and warnings: {}",
            scene.report.notes.len()
        ));
        for n in &scene.report.notes {
            line(format!(
                "  {} {}: {}",
                if n.repaired { "repaired" } else { "warning" },
                n.field,
                n.message
            ));
        }
        result
    }
}

/// A name from the file in quotes, or `(unnamed)`.
fn quoted(name: Option<&str>) -> String {
    match name.filter(|n| !n.is_empty()) {
        Some(n) => format!("{n:?}"),
        None => "(unnamed)".into(),
    }
}

/// `n` and a noun in the number `n` asks for: `1 channel`, `3 channels`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
