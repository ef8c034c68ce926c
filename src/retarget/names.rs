//! Bone names read as humanoid bones: the name matching under the automatic bone map.
//!
//! Based on: the VRM 1.0 humanoid specification (`VRMC_vrm` humanoid bone names, the profile
//! the rigs meet in), Godot 4's `SkeletonProfileHumanoid` and its bone-map auto-mapping
//! (synonyms per bone, left/right spellings), and the naming of Mixamo (`mixamorig:LeftArm`),
//! Blender (`upper_arm.L`, `DEF-` prefixes), Unreal (`upperarm_l`, `spine_01`) and glTF
//! exporters (`Armature|Hips`, `b_LeftUpperArm_09`).
//!
//! Method: a name is cut into lowercase tokens at separators (`_ . - space : |`), at
//! lower-to-upper case changes and between letters and digits; the part before a `:` or `|`
//! (a namespace or armature) is dropped, and so are tokens that name no body part (`def`,
//! `mixamorig`, `b`, `bip01`, ...). A token `l`/`left` or `r`/`right` gives the side; the
//! rest, joined, is looked up in a table of synonyms per profile bone (with and without
//! trailing index tokens, so `b_Hip_01` is the hips and `spine_01` a spine). Spine bones are
//! not named here: [`super::map`] gives the bones between the hips and the neck the spine,
//! chest and upper chest by their order, as the rigs number them differently.
//! Cost: O(name length) per name. Limits: English names only; a name with two sides or none
//! for a sided part is not matched (it stays unmapped, and the map panel or file says so).

/// The VRM 1.0 humanoid bones, in the profile's order (parents before children).
pub const HUMANOID_BONES: [&str; 55] = [
    "hips",
    "spine",
    "chest",
    "upperChest",
    "neck",
    "head",
    "leftEye",
    "rightEye",
    "jaw",
    "leftUpperLeg",
    "leftLowerLeg",
    "leftFoot",
    "leftToes",
    "rightUpperLeg",
    "rightLowerLeg",
    "rightFoot",
    "rightToes",
    "leftShoulder",
    "leftUpperArm",
    "leftLowerArm",
    "leftHand",
    "rightShoulder",
    "rightUpperArm",
    "rightLowerArm",
    "rightHand",
    "leftThumbMetacarpal",
    "leftThumbProximal",
    "leftThumbDistal",
    "leftIndexProximal",
    "leftIndexIntermediate",
    "leftIndexDistal",
    "leftMiddleProximal",
    "leftMiddleIntermediate",
    "leftMiddleDistal",
    "leftRingProximal",
    "leftRingIntermediate",
    "leftRingDistal",
    "leftLittleProximal",
    "leftLittleIntermediate",
    "leftLittleDistal",
    "rightThumbMetacarpal",
    "rightThumbProximal",
    "rightThumbDistal",
    "rightIndexProximal",
    "rightIndexIntermediate",
    "rightIndexDistal",
    "rightMiddleProximal",
    "rightMiddleIntermediate",
    "rightMiddleDistal",
    "rightRingProximal",
    "rightRingIntermediate",
    "rightRingDistal",
    "rightLittleProximal",
    "rightLittleIntermediate",
    "rightLittleDistal",
];

/// Tokens that name no body part: exporters' prefixes and rig-kind words.
pub(super) const NOISE: [&str; 14] = [
    "def",
    "org",
    "mch",
    "mixamorig",
    "armature",
    "b",
    "bip",
    "bip01",
    "bone",
    "bn",
    "jnt",
    "joint",
    "skeleton",
    "ctrl",
];

/// Unsided bones: the joined tokens each is spelled as.
const CENTRE: [(&str, &[&str]); 4] = [
    ("hips", &["hips", "hip", "pelvis"]),
    ("neck", &["neck", "neck1", "neck01"]),
    ("head", &["head"]),
    ("jaw", &["jaw"]),
];

/// Sided bones (without `left`/`right`): the joined tokens each is spelled as.
const SIDED: [(&str, &[&str]); 13] = [
    ("Eye", &["eye"]),
    ("UpperLeg", &["upperleg", "upleg", "thigh", "upperthigh"]),
    ("LowerLeg", &["lowerleg", "leg", "calf", "shin", "knee"]),
    ("Foot", &["foot", "ankle"]),
    ("Toes", &["toes", "toe", "toebase", "ball"]),
    (
        "Shoulder",
        &["shoulder", "clavicle", "collar", "collarbone"],
    ),
    ("UpperArm", &["upperarm", "arm", "uparm"]),
    ("LowerArm", &["lowerarm", "forearm", "elbow"]),
    ("Hand", &["hand", "wrist"]),
    ("Thumb", &["thumb", "handthumb"]),
    ("Index", &["index", "handindex", "findex", "pointer"]),
    ("Middle", &["middle", "handmiddle", "fmiddle"]),
    ("Ring", &["ring", "handring", "fring"]),
];

/// Little finger spellings (a finger like the others, after [`SIDED`]'s four).
const LITTLE: &[&str] = &["little", "pinky", "handpinky", "fpinky", "handlittle"];

/// A body side read from a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// `L`, `_l`, `.L`, `Left...`.
    Left,
    /// `R`, `_r`, `.R`, `Right...`.
    Right,
}

/// `name` cut into lowercase tokens (see the module documentation), the namespace or
/// armature before the last `:` or `|` dropped.
pub fn tokens(name: &str) -> Vec<String> {
    let name = name.rsplit([':', '|']).next().unwrap_or(name);
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut prev: Option<char> = None;
    for c in name.chars() {
        let split = match prev {
            _ if !c.is_alphanumeric() => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
                prev = None;
                continue;
            }
            Some(p) => {
                (p.is_lowercase() && c.is_uppercase())
                    || (p.is_alphabetic() && c.is_ascii_digit())
                    || (p.is_ascii_digit() && c.is_alphabetic())
            }
            None => false,
        };
        if split && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
        prev = Some(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The side a name's tokens give (`None`: none, or both).
fn side_of(tokens: &[String]) -> (Option<Side>, Vec<&str>) {
    let mut side = None;
    let mut both = false;
    let mut rest = Vec::with_capacity(tokens.len());
    for t in tokens {
        let s = match t.as_str() {
            "l" | "left" | "lf" | "lft" => Some(Side::Left),
            "r" | "right" | "rt" | "rgt" => Some(Side::Right),
            _ => None,
        };
        match (s, side) {
            (Some(s), Some(old)) if s != old => both = true,
            (Some(s), _) => side = Some(s),
            (None, _) => rest.push(t.as_str()),
        }
    }
    (if both { None } else { side }, rest)
}

/// The humanoid profile bone `name` stands for, if it is one (spine bones aside: see the
/// module documentation).
pub fn humanoid_bone(name: &str) -> Option<&'static str> {
    let tokens = tokens(name);
    let (side, rest) = side_of(&tokens);
    let parts: Vec<&str> = rest
        .into_iter()
        .filter(|t| !NOISE.contains(t))
        .skip_while(|t| t.chars().all(|c| c.is_ascii_digit()))
        .collect();
    // With every token, then without trailing index tokens (`b_Hip_01`, `thumb_01_l` keep
    // their finger number: it is tried first).
    let mut end = parts.len();
    loop {
        let joined: String = parts[..end].concat();
        if let Some(bone) = lookup(&joined, side) {
            return Some(bone);
        }
        match end.checked_sub(1) {
            Some(e) if e > 0 && parts[e].chars().all(|c| c.is_ascii_digit()) => end = e,
            _ => return None,
        }
    }
}

/// A joined token string with its side as a profile bone.
fn lookup(joined: &str, side: Option<Side>) -> Option<&'static str> {
    if let Some((bone, _)) = CENTRE.iter().find(|(_, s)| s.contains(&joined)) {
        return side.is_none().then_some(bone);
    }
    let side = side?;
    let sided = |suffix: &str| {
        let full = match side {
            Side::Left => format!("left{suffix}"),
            Side::Right => format!("right{suffix}"),
        };
        HUMANOID_BONES.iter().copied().find(|b| *b == full)
    };
    if let Some((part, _)) = SIDED[..9].iter().find(|(_, s)| s.contains(&joined)) {
        return sided(part);
    }
    finger(joined).and_then(|suffix| sided(&suffix))
}

/// A finger joint (`thumb1`, `index02`, `indexproximal`, `handpinky3`) as the profile's suffix
/// (`ThumbMetacarpal`, `IndexIntermediate`, ...).
fn finger(joined: &str) -> Option<String> {
    let digits = joined.trim_start_matches(|c: char| !c.is_ascii_digit());
    let word = &joined[..joined.len() - digits.len()];
    let fingers = SIDED[9..].iter().map(|(f, s)| (*f, *s));
    let (finger, _) = fingers
        .chain(std::iter::once(("Little", LITTLE)))
        .find(|(_, s)| s.iter().any(|w| word.starts_with(w)))?;
    let spelled = ["metacarpal", "proximal", "intermediate", "distal"]
        .into_iter()
        .find(|p| word.ends_with(p));
    let joint = match (spelled, digits.parse::<u32>().ok()) {
        (Some(p), _) => p,
        // Numbered from the hand: the thumb's first is its metacarpal, the others' their
        // proximal phalanx.
        (None, Some(n)) => match (finger, n) {
            ("Thumb", 1) => "metacarpal",
            ("Thumb", 2) | (_, 1) => "proximal",
            ("Thumb", 3) | (_, 3) => "distal",
            (_, 2) => "intermediate",
            _ => return None,
        },
        (None, None) => return None,
    };
    let mut suffix = String::from(finger);
    suffix.push_str(&joint[..1].to_uppercase());
    suffix.push_str(&joint[1..]);
    Some(suffix)
}
