//! What ufbx does not say about a file's structure: where a binary file was cut short, and
//! where an ASCII file stops making sense.
//!
//! Based on: the binary layout as the Blender Foundation documents it ("FBX binary file
//! format specification", Blender developer blog, 2013) and ufbx's own reader (`ufbx.c`,
//! `ufbxi_binary_parse_node`, `ufbxi_ascii_next_token`).
//!
//! Method: a binary file's top-level records are walked by their end offsets (each record
//! header says where the record ends): a record ending past the end of the file is a file
//! cut short inside it; a file that ends at a record boundary without the end-of-list record
//! and the footer's 16-byte magic was cut short between records. An ASCII file is scanned
//! once for braces, quotes and the `*N { a: … }` arrays: the first block left open at the
//! end, the first `}` with nothing open and the first array whose value count differs from
//! its `*N` are named with their line. Cost: O(top-level records) for binary, O(bytes) for
//! ASCII. Limits: nested binary records are not walked (ufbx reads them; its "Truncated
//! file" error covers them); the ASCII scan reads syntax, not meaning.

/// The binary header's first bytes, `Kaydara FBX Binary  \0\x1a\0`; the version follows.
const BINARY_MAGIC: &[u8; 23] = b"Kaydara FBX Binary  \x00\x1a\x00";

/// The 16 bytes every binary FBX ends with (the footer's magic, as Autodesk's SDK and
/// Blender write it).
const FOOTER_MAGIC: [u8; 16] = [
    0xf8, 0x5a, 0x8c, 0x6a, 0xde, 0xf5, 0xd9, 0x7e, 0xec, 0xe9, 0x0c, 0xe3, 0x75, 0x8f, 0x29, 0x0b,
];

/// Binary FBX 7.5 and later use 64-bit record offsets (25-byte record headers; 13 before).
const WIDE_OFFSETS_FROM: u32 = 7500;

/// What the structure scan found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Structure {
    /// Nothing wrong that it can see.
    Whole,
    /// Cut short between records: what is there is whole, but the end is missing (a warning).
    EndMissing(String),
    /// Cut short inside a record, or malformed: what it says (an error).
    Broken(String),
}

/// A binary file's header version (`None`: not a binary FBX).
pub fn binary_version(bytes: &[u8]) -> Option<u32> {
    let version = bytes.get(BINARY_MAGIC.len()..BINARY_MAGIC.len() + 4)?;
    bytes
        .starts_with(BINARY_MAGIC)
        .then(|| u32::from_le_bytes([version[0], version[1], version[2], version[3]]))
}

/// Walk a binary file's top-level records ([`Structure::Whole`] for a file that is not
/// binary FBX: the ASCII reader checks its own syntax).
pub fn binary(bytes: &[u8]) -> Structure {
    let Some(version) = binary_version(bytes) else {
        return Structure::Whole;
    };
    let wide = version >= WIDE_OFFSETS_FROM;
    let header = if wide { 25 } else { 13 };
    let len = bytes.len() as u64;
    let mut at = BINARY_MAGIC.len() as u64 + 4;
    let mut last = String::from("the header");
    loop {
        if at == len && at == BINARY_MAGIC.len() as u64 + 4 {
            return Structure::Broken(format!(
                "the file is a binary FBX header alone ({len} bytes), no records: cut short"
            ));
        }
        if at == len {
            return Structure::EndMissing(format!(
                "the file ends after {last} (byte {len}) without the end-of-records marker and \
                 footer: cut short"
            ));
        }
        let Some(h) = bytes.get(at as usize..(at + header) as usize) else {
            return Structure::Broken(format!(
                "the file ends at byte {len}, inside the header of the record after {last} \
                 (byte {at}): cut short"
            ));
        };
        let end = match wide {
            true => u64::from_le_bytes(h[..8].try_into().unwrap_or([0; 8])),
            false => u64::from(u32::from_le_bytes(h[..4].try_into().unwrap_or([0; 4]))),
        };
        if end == 0 {
            break;
        }
        let name_len = usize::from(h[header as usize - 1]);
        let name_at = (at + header) as usize;
        let name = bytes
            .get(name_at..name_at + name_len)
            .map_or_else(|| "?".into(), |n| String::from_utf8_lossy(n).into_owned());
        if end > len {
            return Structure::Broken(format!(
                "record \"{name}\" (byte {at}) runs to byte {end}; the file has {len}: cut short"
            ));
        }
        if end <= at + header {
            return Structure::Broken(format!(
                "record \"{name}\" (byte {at}) ends at byte {end}, before its own header does"
            ));
        }
        last = format!("record \"{name}\"");
        at = end;
    }
    match bytes.ends_with(&FOOTER_MAGIC) {
        true => Structure::Whole,
        false => Structure::EndMissing(format!(
            "the records are whole but the footer is missing or cut short (the file's last \
             16 bytes are not FBX's end marker; {} bytes after the records)",
            len - at - header
        )),
    }
}

/// The first thing an ASCII file's syntax gets wrong, with its line: a block left open at
/// the end, a `}` that closes nothing, an array with another count of values than its `*N`.
pub fn ascii_problem(text: &str) -> Option<String> {
    let mut open: Vec<(String, usize)> = Vec::new();
    // The name before the last `:` seen, and its line: the block a `{` opens.
    let mut key = (String::new(), 1);
    // An array being read: its name, line, declared count, values seen.
    let mut array: Option<(String, usize, u64, u64)> = None;
    // Inside an array's `a:` list, after `:` or `,`: the next token is a value.
    let mut expecting = false;
    let mut word = String::new();
    let mut line = 1;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            '"' => {
                for c in chars.by_ref() {
                    match c {
                        '"' => break,
                        '\n' => line += 1,
                        _ => {}
                    }
                }
            }
            ':' => key = (std::mem::take(&mut word), line),
            '*' => {
                let digits: String =
                    std::iter::from_fn(|| chars.next_if(char::is_ascii_digit)).collect();
                let count = digits.parse().unwrap_or(0);
                array = Some((key.0.clone(), line, count, 0));
            }
            '{' => open.push((std::mem::take(&mut key.0), key.1)),
            '}' => {
                if let Some((name, at, count, seen)) = array.take()
                    && count != seen
                {
                    return Some(format!(
                        "line {at}: array \"{name}\" declares {count} values and holds {seen}"
                    ));
                }
                if open.pop().is_none() {
                    return Some(format!("line {line}: a `}}` closes no block"));
                }
            }
            c if c.is_alphanumeric() || c == '_' || c == '|' => word.push(c),
            _ => {}
        }
        if let Some((_, _, _, seen)) = array.as_mut()
            && key.0 == "a"
        {
            // `a:` starts the values, separated by commas.
            match c {
                ':' | ',' => expecting = true,
                '}' => expecting = false,
                c if !c.is_whitespace() && expecting => {
                    *seen += 1;
                    expecting = false;
                }
                _ => {}
            }
        }
        if !c.is_alphanumeric() && c != '_' && c != '|' && c != ':' {
            word.clear();
        }
    }
    open.pop().map(|(name, at)| {
        let name = if name.is_empty() {
            "a block".into()
        } else {
            format!("\"{name}\"")
        };
        format!("the file ends (line {line}) inside {name}, opened at line {at}: cut short?")
    })
}
