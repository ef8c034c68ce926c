//! Help and usage text wrapped to the terminal at word boundaries: clap prints each paragraph
//! as one line without its `wrap_help` feature (which needs a terminal-size crate this build
//! does without), and a terminal then breaks words anywhere.

use std::process::ExitCode;

/// Width when the output is not a terminal and `COLUMNS` is unset (clap's own default).
const DEFAULT_COLUMNS: usize = 100;
/// Narrowest and widest wrapping (below 40 columns nothing reads well; past 120 lines are too
/// long to read, as clap's `max_term_width` default holds).
const COLUMNS_RANGE: (usize, usize) = (40, 120);

/// Print clap's help, version or error `e` wrapped to the terminal; its exit code (0 for help
/// and version, 2 for a usage error, as clap's own `exit`).
pub fn print(e: &clap::Error) -> ExitCode {
    let text = wrap(&e.render().to_string(), columns());
    if e.use_stderr() {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
}

/// The width to wrap at: `COLUMNS`, else the terminal's, else [`DEFAULT_COLUMNS`]; within
/// [`COLUMNS_RANGE`].
fn columns() -> usize {
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok());
    from_env
        .or_else(terminal_columns)
        .unwrap_or(DEFAULT_COLUMNS)
        .clamp(COLUMNS_RANGE.0, COLUMNS_RANGE.1)
}

/// Standard output's terminal width (None when it is not a terminal).
#[cfg(unix)]
fn terminal_columns() -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which is valid for the call.
    #[allow(unsafe_code)]
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

#[cfg(not(unix))]
fn terminal_columns() -> Option<usize> {
    None
}

/// `text` with every line longer than `width` broken at spaces. A continued line starts at
/// its line's indent, or, in a two-column row ("  render   Offscreen …", "  -h, --help  Print
/// …"), at the second column. A word longer than the room stays whole.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        wrap_line(body, width, &mut out);
        out.push_str(newline);
    }
    out
}

/// One line of [`wrap`] into `out` (no newline at its end).
fn wrap_line(line: &str, width: usize, out: &mut String) {
    if line.chars().count() <= width {
        out.push_str(line);
        return;
    }
    let indent = line.len() - line.trim_start().len();
    let hang = second_column(line).unwrap_or(indent);
    let mut column = 0;
    let mut first = true;
    // Words with the spaces before each (the spaces that align a second column kept).
    let mut rest = line;
    while !rest.is_empty() {
        let word_start = rest.len() - rest.trim_start().len();
        let word_end = rest[word_start..]
            .find(' ')
            .map_or(rest.len(), |e| word_start + e);
        let (gap, word) = (&rest[..word_start], &rest[word_start..word_end]);
        rest = &rest[word_end..];
        if word.is_empty() {
            break;
        }
        let (gap_n, word_n) = (gap.chars().count(), word.chars().count());
        if !first && column > hang && column + gap_n + word_n > width {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', hang));
            column = hang;
        } else {
            out.push_str(gap);
            column += gap_n;
        }
        out.push_str(word);
        column += word_n;
        first = false;
    }
}

/// The column where a two-column row's second column starts: after its first run of two or
/// more spaces past the indent (None for a line of prose).
fn second_column(line: &str) -> Option<usize> {
    let indent = line.len() - line.trim_start().len();
    let body = &line[indent..];
    let gap = body.find("  ")?;
    let after = body[gap..].len() - body[gap..].trim_start().len();
    let column = line[..indent + gap + after].chars().count();
    // A column far to the right leaves no room: continue at the indent instead.
    (column < 48 && indent + gap + after < line.len()).then_some(column)
}
