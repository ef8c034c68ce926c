//! The viewport's keys: one table ([`KEYS`]) that the key handler ([`keyboard`]) reads and the
//! help overlay (`?`, [`help_window`]) lists, so the two cannot disagree; the README's list is
//! checked against it (tests/viewer). Pointer gestures ([`POINTER`]) are handled by the
//! viewport and listed beside the keys.

use egui::Key;

use super::state::ViewerState;

/// Which state of Shift a binding wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shift {
    /// Either.
    Any,
    /// Held.
    With,
    /// Not held.
    Without,
}

impl Shift {
    fn matches(self, shift: bool) -> bool {
        match self {
            Shift::Any => true,
            Shift::With => shift,
            Shift::Without => !shift,
        }
    }
}

/// What a key does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Frame the model (or the selected bone's vertices).
    Frame,
    /// Play or pause.
    Play,
    /// Back to t = 0.
    Home,
    /// Step frames (1/30 s) forward (+) or back (−).
    StepFrame(i32),
    /// Step to the next (+) or previous (−) key.
    StepKey(i32),
    /// Next view: GPU, CPU, side by side, heatmap.
    NextView,
    /// Skeleton on or off.
    Skeleton,
    /// Bones that move no vertex hidden or shown.
    UnweightedBones,
    /// The rest pose's ghost skeleton on or off.
    RestPose,
    /// The bind pose's ghost skeleton on or off.
    BindPose,
    /// The selected bone's motion trail on or off.
    Trail,
    /// Joint limits and IK chains on or off.
    Limits,
    /// Grid on or off.
    Grid,
    /// Wireframe on or off.
    Wireframe,
    /// The curves panel open or closed.
    Curves,
    /// Save a screenshot.
    Screenshot,
    /// Clear the selection and the pick (and close the help).
    Clear,
    /// Halve the crowd.
    FewerCharacters,
    /// Double the crowd.
    MoreCharacters,
    /// Both side panels hidden (or shown again).
    Panels,
    /// This help open or closed.
    Help,
    /// While held: orbit by the arrows held.
    Orbit,
    /// While held: pan by the arrows held.
    Pan,
    /// While held: zoom in (true) or out.
    Zoom(bool),
}

impl Action {
    /// Acts while the key is down, every frame, rather than once a press.
    fn held(self) -> bool {
        matches!(self, Action::Orbit | Action::Pan | Action::Zoom(_))
    }
}

/// One row of the table: the keys, as written in the help and the README, what they do, and
/// the keys and Shift state the handler matches.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    /// The keys as a user reads them (`Space`, `.`, `Shift + .`).
    pub label: &'static str,
    /// What they do.
    pub does: &'static str,
    /// egui's keys that trigger it.
    pub keys: &'static [Key],
    /// Shift's state.
    pub shift: Shift,
    /// The action.
    pub action: Action,
}

const fn bind(
    label: &'static str,
    does: &'static str,
    keys: &'static [Key],
    shift: Shift,
    action: Action,
) -> Binding {
    Binding {
        label,
        does,
        keys,
        shift,
        action,
    }
}

/// Every key of the viewport, in the order the help lists them.
pub const KEYS: &[Binding] = &[
    bind(
        "Space",
        "play / pause",
        &[Key::Space],
        Shift::Any,
        Action::Play,
    ),
    bind(
        "Home",
        "back to t = 0",
        &[Key::Home],
        Shift::Any,
        Action::Home,
    ),
    bind(
        ".",
        "a frame (1/30 s) forward, paused",
        &[Key::Period],
        Shift::Without,
        Action::StepFrame(1),
    ),
    bind(
        ",",
        "a frame back, paused",
        &[Key::Comma],
        Shift::Without,
        Action::StepFrame(-1),
    ),
    bind(
        "Shift + .",
        "to the next key (the selected bone's, else the clip's)",
        &[Key::Period],
        Shift::With,
        Action::StepKey(1),
    ),
    bind(
        "Shift + ,",
        "to the previous key",
        &[Key::Comma],
        Shift::With,
        Action::StepKey(-1),
    ),
    bind(
        "F",
        "frame the model (with a bone selected: the vertices it moves)",
        &[Key::F],
        Shift::Any,
        Action::Frame,
    ),
    bind(
        "V",
        "next view: GPU, CPU, the two side by side, their difference as a heatmap",
        &[Key::V],
        Shift::Any,
        Action::NextView,
    ),
    bind(
        "C",
        "curves panel: the selected bone's animation curves and the dope sheet",
        &[Key::C],
        Shift::Any,
        Action::Curves,
    ),
    bind(
        "H",
        "hide the side panels (or show them again)",
        &[Key::H],
        Shift::Any,
        Action::Panels,
    ),
    bind("K", "skeleton", &[Key::K], Shift::Without, Action::Skeleton),
    bind(
        "Shift + K",
        "hide / show the bones that move no vertex (control and end bones)",
        &[Key::K],
        Shift::With,
        Action::UnweightedBones,
    ),
    bind(
        "R",
        "rest pose: the nodes' own transforms as a ghost skeleton with axes",
        &[Key::R],
        Shift::Any,
        Action::RestPose,
    ),
    bind(
        "B",
        "bind pose: the inverse bind matrices' skeleton, bind ≠ rest in red",
        &[Key::B],
        Shift::Any,
        Action::BindPose,
    ),
    bind(
        "T",
        "motion trail: the selected bone's path over the clip",
        &[Key::T],
        Shift::Any,
        Action::Trail,
    ),
    bind(
        "L",
        "joint limits (arcs, red on a bound) and IK chains with their weights",
        &[Key::L],
        Shift::Any,
        Action::Limits,
    ),
    bind("G", "grid", &[Key::G], Shift::Any, Action::Grid),
    bind("W", "wireframe", &[Key::W], Shift::Any, Action::Wireframe),
    bind("P", "screenshot", &[Key::P], Shift::Any, Action::Screenshot),
    bind(
        "Esc",
        "clear the selection and the pick, close this help",
        &[Key::Escape],
        Shift::Any,
        Action::Clear,
    ),
    bind(
        "[",
        "halve the crowd",
        &[Key::OpenBracket],
        Shift::Any,
        Action::FewerCharacters,
    ),
    bind(
        "]",
        "double the crowd",
        &[Key::CloseBracket],
        Shift::Any,
        Action::MoreCharacters,
    ),
    bind(
        "arrows",
        "orbit",
        &[
            Key::ArrowLeft,
            Key::ArrowRight,
            Key::ArrowUp,
            Key::ArrowDown,
        ],
        Shift::Without,
        Action::Orbit,
    ),
    bind(
        "Shift + arrows",
        "pan",
        &[
            Key::ArrowLeft,
            Key::ArrowRight,
            Key::ArrowUp,
            Key::ArrowDown,
        ],
        Shift::With,
        Action::Pan,
    ),
    bind(
        "+",
        "zoom in",
        &[Key::Plus, Key::Equals],
        Shift::Any,
        Action::Zoom(true),
    ),
    bind(
        "-",
        "zoom out",
        &[Key::Minus],
        Shift::Any,
        Action::Zoom(false),
    ),
    bind(
        "?",
        "this help",
        &[Key::Questionmark],
        Shift::Any,
        Action::Help,
    ),
];

/// The pointer's gestures in the viewport (handled by the viewport, listed by the help).
pub const POINTER: &[(&str, &str)] = &[
    (
        "left drag",
        "orbit (on the yellow IK target: move the target)",
    ),
    ("right or middle drag", "pan"),
    ("wheel", "zoom"),
    (
        "click",
        "select the bone (with the skeleton shown) / pick the vertex under the pointer",
    ),
    (
        "drop a file",
        "open it, or compare the model with it (on the page: its curves)",
    ),
];

/// Presses of each [`KEYS`] row this frame (each press with its own Shift state: two
/// presses in one frame may differ), and which held rows are down.
fn read(ui: &egui::Ui) -> (Vec<usize>, Vec<bool>) {
    ui.input(|i| {
        let mut presses = vec![0; KEYS.len()];
        for e in &i.events {
            if let egui::Event::Key {
                key,
                pressed: true,
                modifiers,
                ..
            } = e
            {
                for (n, b) in presses.iter_mut().zip(KEYS) {
                    if !b.action.held() && b.keys.contains(key) && b.shift.matches(modifiers.shift)
                    {
                        *n += 1;
                    }
                }
            }
        }
        let down = KEYS
            .iter()
            .map(|b| {
                b.action.held()
                    && b.shift.matches(i.modifiers.shift)
                    && b.keys.iter().any(|&k| i.key_down(k))
            })
            .collect();
        (presses, down)
    })
}

/// Orbit per frame an arrow is held (radians).
const KEY_ORBIT_RAD: f32 = 0.03;
/// Pan per frame an arrow is held with Shift (view heights).
const KEY_PAN: f32 = 0.01;
/// Zoom factor per frame `+` is held.
const KEY_ZOOM: f32 = 0.97;
/// Zoom factor per frame `-` is held.
const KEY_UNZOOM: f32 = 1.03;

/// Keyboard controls from [`KEYS`], never while a text field has focus. Every press counts,
/// even several of one key in one frame (V pressed twice advances the view twice; a toggle
/// pressed twice is back where it was).
pub fn keyboard(ui: &egui::Ui, state: &mut ViewerState) {
    if ui.ctx().egui_wants_keyboard_input() {
        return;
    }
    let (presses, down) = read(ui);
    for (b, &n) in KEYS.iter().zip(&presses) {
        if n > 0 {
            press(state, b.action, n);
        }
    }
    let held = |k| ui.input(|i| i.key_down(k));
    let axis = |plus, minus| f32::from(u8::from(held(plus))) - f32::from(u8::from(held(minus)));
    let (dx, dy) = (
        axis(Key::ArrowRight, Key::ArrowLeft),
        axis(Key::ArrowUp, Key::ArrowDown),
    );
    for (b, _) in KEYS.iter().zip(&down).filter(|(_, d)| **d) {
        match b.action {
            Action::Orbit => state.framing.orbit(dx * KEY_ORBIT_RAD, dy * KEY_ORBIT_RAD),
            Action::Pan => state.framing.pan(dx * KEY_PAN, dy * KEY_PAN),
            Action::Zoom(true) => state.framing.zoom(KEY_ZOOM),
            Action::Zoom(false) => state.framing.zoom(KEY_UNZOOM),
            _ => {}
        }
    }
}

/// Apply `n` presses of `action`.
fn press(state: &mut ViewerState, action: Action, n: usize) {
    let odd = n % 2 == 1;
    let steps = i32::try_from(n).unwrap_or(i32::MAX);
    match action {
        Action::Frame => state.framing.request(state.view.selected_node.is_some()),
        Action::Play if odd => state.toggle_play(),
        Action::Home => state.scrub(0.0),
        Action::StepFrame(d) => state.step(d.saturating_mul(steps), false),
        Action::StepKey(d) => state.step(d.saturating_mul(steps), true),
        Action::NextView => {
            let all = super::state::ViewMode::ALL;
            // From "A | B" (not in the cycle) the next is the first, GPU.
            let next = all
                .iter()
                .position(|&m| m == state.mode)
                .map_or(n - 1, |i| i + n);
            state.mode = all[next % all.len()];
        }
        Action::Skeleton if odd => state.view.skeleton = !state.view.skeleton,
        Action::UnweightedBones if odd => {
            state.view.hide_unweighted_bones = !state.view.hide_unweighted_bones;
        }
        Action::RestPose if odd => state.view.rest_pose = !state.view.rest_pose,
        Action::BindPose if odd => state.view.bind_pose = !state.view.bind_pose,
        Action::Trail if odd => state.trail.shown = !state.trail.shown,
        Action::Limits if odd => state.show_limits = !state.show_limits,
        Action::Grid if odd => state.view.grid = !state.view.grid,
        Action::Wireframe if odd => state.view.wireframe = !state.view.wireframe,
        Action::Curves if odd => state.curves.open = !state.curves.open,
        Action::Panels if odd => {
            let shown = state.side_panels.contains(&true);
            state.side_panels = [!shown; 2];
        }
        Action::Help if odd => state.help = !state.help,
        Action::Screenshot => state.screenshot_requested = true,
        Action::Clear => {
            state.select(None);
            state.picked = None;
            state.help = false;
        }
        // `[` halves the crowd, `]` doubles it (the crowd view only).
        Action::FewerCharacters | Action::MoreCharacters => {
            if let Some(c) = state.crowd.as_mut() {
                for _ in 0..n {
                    *c = super::crowd::resized(*c, action == Action::MoreCharacters);
                }
            }
        }
        _ => {}
    }
}

/// The help overlay: every key of [`KEYS`] and every pointer gesture, over the viewport.
pub fn help_window(ctx: &egui::Context, state: &mut ViewerState) {
    let mut open = state.help;
    egui::Window::new("Keys")
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            egui::Grid::new("keys help").striped(true).show(ui, |ui| {
                for b in KEYS {
                    ui.monospace(b.label);
                    ui.label(b.does);
                    ui.end_row();
                }
                for (gesture, does) in POINTER {
                    ui.monospace(*gesture);
                    ui.label(*does);
                    ui.end_row();
                }
            });
            ui.label(egui::RichText::new("? or Esc closes this").weak());
        });
    state.help = open && state.help;
}
