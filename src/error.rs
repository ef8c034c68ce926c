//! Errors for every stage. Input problems name the file and the field at fault; requests that
//! cannot be met (an unknown bone, a render too large) are domain variants with the values
//! involved, which front ends (the CLI, the viewer) turn into messages in their own terms.

use std::path::PathBuf;

/// Everything that can go wrong in skinview. Bad input never panics: it ends up here,
/// with the file and the glTF field (JSON-pointer-like path) that is wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("{path}: cannot read file: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The glTF parser rejected the file.
    #[error("{path}: not a valid glTF file: {message}")]
    Gltf {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// Structurally valid file whose content breaks a skinning rule.
    #[error("{file}: {field}: {message}")]
    Invalid {
        /// The file (or data source) at fault.
        file: String,
        /// The field inside it, JSON-pointer-like.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A `*Job::validate()` rule failed (rule number as in the job's documentation).
    #[error("{job} rule {rule}: {message}")]
    Job {
        /// The job's type name.
        job: &'static str,
        /// The numbered rule of its documentation.
        rule: u32,
        /// What broke it.
        message: String,
    },
    /// A `builtin:` model name that is not one of the built-ins.
    #[error("unknown built-in {name:?}; known: {known}")]
    UnknownBuiltin {
        /// The name asked for.
        name: String,
        /// The known names, comma separated.
        known: String,
    },
    /// An animation (motion) asked for by index or name that the model does not have.
    #[error(
        "{model}: no animation {requested:?} ({}){}",
        crate::info::count(*count, "animation", "animations"),
        did_you_mean(.closest)
    )]
    UnknownAnimation {
        /// The model's name.
        model: String,
        /// The index or name asked for.
        requested: String,
        /// How many animations the model has.
        count: usize,
        /// The model's clip names closest to a name asked for ([`closest_names`]; none for
        /// an index), for the message.
        closest: Vec<String>,
    },
    /// A bone (node) asked for by name that the model does not have.
    #[error("{model}: no bone named {bone:?}{}", did_you_mean(.closest))]
    UnknownBone {
        /// The model's name.
        model: String,
        /// The name asked for.
        bone: String,
        /// The model's names closest to it ([`closest_names`]), for the message.
        closest: Vec<String>,
    },
    /// A node index outside the scene.
    #[error("node {node} does not exist ({count} nodes)")]
    UnknownNode {
        /// The index asked for.
        node: usize,
        /// How many nodes the scene has.
        count: usize,
    },
    /// A hand-set bone transform that is not finite or has a zero rotation.
    #[error("the transform given for node {node} is not finite or has a zero rotation")]
    InvalidOverride {
        /// The node.
        node: usize,
    },
    /// A morph weight held by hand on a target the node's mesh does not have, or not finite.
    #[error(
        "morph target {target} of node {node}: its mesh has {count} targets (numbered from 0), \
         and a weight must be finite"
    )]
    InvalidMorphOverride {
        /// The node.
        node: usize,
        /// The target asked for.
        target: usize,
        /// Targets of the node's mesh.
        count: usize,
    },
    /// A cross-fade between layers that do not exist or are the same layer.
    #[error("cross-fade {from} -> {to}: layers are numbered 0..{layers} and must differ")]
    FadeLayers {
        /// The layer faded out.
        from: usize,
        /// The layer faded in.
        to: usize,
        /// How many layers there are.
        layers: usize,
    },
    /// More motion layers than a character blends.
    #[error("{count} layers; a character blends at most {max}")]
    TooManyLayers {
        /// Layers asked for.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A time outside what a stage can play to.
    #[error("time {time_s} s is outside 0..={max_s} s")]
    TimeRange {
        /// The time asked for.
        time_s: f32,
        /// The largest time allowed.
        max_s: f32,
    },
    /// A render target size the adapter cannot make.
    #[error("render size {width}x{height}: each side must be between 1 and {max}")]
    RenderSize {
        /// Width asked for.
        width: u32,
        /// Height asked for.
        height: u32,
        /// The adapter's largest texture side.
        max: u32,
    },
    /// Nothing drawable: no draws, or no finite skinned vertex.
    #[error("{model}: meshes: nothing to draw (no drawn mesh, or no finite skinned vertex)")]
    NothingToRender {
        /// The model's name.
        model: String,
    },
    /// A draw whose vertices use more influences than the GPU path handles.
    #[error(
        "{model}: draw {draw}: vertices with {used} influences; the GPU path handles up to {max}"
    )]
    TooManyInfluences {
        /// The model's name.
        model: String,
        /// The draw (index in the scene's draw list).
        draw: usize,
        /// Largest influence count of its vertices.
        used: usize,
        /// The GPU path's limit.
        max: usize,
    },
    /// No usable GPU adapter.
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// No window could be opened (no display, or the windowing system refused).
    #[error("cannot open a window: {0}")]
    NoWindow(String),
    /// The GPU reported an error (validation, out of memory, device lost, mapping).
    #[error("GPU error: {0}")]
    Gpu(String),

    /// A worker thread of a parallel stage failed (a panic: a bug, reported rather than
    /// hidden).
    #[error("worker thread: {0}")]
    Worker(String),
    /// What a web page asked for cannot be done (its URL parameters, the files given, a
    /// fetch, the browser's APIs).
    #[error("{0}")]
    Page(String),
    /// An output file could not be written.
    #[error("{path}: cannot write output: {message}")]
    Output {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// `Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An [`Error::Invalid`] naming `file` and `field`.
    pub fn invalid(file: &str, field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            file: file.to_string(),
            field: field.into(),
            message: message.into(),
        }
    }

    /// An [`Error::Invalid`] for a TOML file (`text`) the parser rejected: the field is
    /// where (`line L, column C`, from 1; `(toml)` when the parser gives no place), the
    /// message the parser's.
    pub fn toml(file: &str, text: &str, e: &toml::de::Error) -> Self {
        let field = match e.span() {
            Some(span) => {
                let before = text.get(..span.start).unwrap_or(text);
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!("line {line}, column {column}")
            }
            None => "(toml)".into(),
        };
        Error::invalid(file, field, e.message())
    }

    /// An [`Error::Job`] for rule `rule` of `job`.
    pub fn job(job: &'static str, rule: u32, message: impl Into<String>) -> Self {
        Error::Job {
            job,
            rule,
            message: message.into(),
        }
    }
}

/// Names a message suggests for a mistyped one.
const SUGGESTIONS: usize = 3;

/// The names among `names` closest to `asked`, for "did you mean": those holding it or held
/// by it (any case), then those within a third of its length in edits (Levenshtein, any case;
/// at least 2), nearest first, at most three.
pub fn closest_names<'a>(asked: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let asked_lower = asked.to_lowercase();
    let most = (asked.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let holds = !asked_lower.is_empty()
                && (lower.contains(&asked_lower) || asked_lower.contains(&lower));
            let d = edit_distance(&asked_lower, &lower);
            match (holds, d <= most) {
                (true, _) => Some((0, name)),
                (false, true) => Some((d, name)),
                _ => None,
            }
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(SUGGESTIONS)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// Levenshtein distance in characters (two rows; names are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

/// `; did you mean "a", "b"?` for a non-empty list, else nothing.
pub fn did_you_mean(closest: &[String]) -> String {
    match closest.is_empty() {
        true => String::new(),
        false => {
            let quoted: Vec<String> = closest.iter().map(|c| format!("{c:?}")).collect();
            format!("; did you mean {}?", quoted.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names_take_substrings_then_small_edits() {
        let names = ["l_hand", "r_hand", "l_forearm", "head", "pelvis"];
        assert_eq!(closest_names("hand", names), ["l_hand", "r_hand", "head"]);
        assert_eq!(closest_names("L_Hnad", names), ["l_hand"]);
        assert_eq!(closest_names("pelvsi", names), ["pelvis"]);
        assert!(closest_names("xyzzy_quux", names).is_empty());
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(did_you_mean(&[]), "");
        assert_eq!(did_you_mean(&["a".into()]), "; did you mean \"a\"?");
    }

    /// A TOML error names the line and column (from 1, in characters) where the parser
    /// stopped: here the unquoted value on line 3, after a line with a two-byte character.
    #[test]
    fn toml_errors_name_their_line_and_column() {
        #[derive(Debug, serde::Deserialize)]
        struct AnyTable {
            #[allow(dead_code)] // only the parse is tested
            a: toml::Table,
        }
        let text = "[a]\nname = \"é\"\nhips = nothing\n";
        let e = toml::from_str::<AnyTable>(text).expect_err("an unquoted string is no value");
        let shown = Error::toml("map.toml", text, &e).to_string();
        assert!(shown.starts_with("map.toml: line 3, column 8: "), "{shown}");
    }
}
