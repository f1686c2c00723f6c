//! The notes-vault parts of markdown, read as notes apps (Obsidian) read
//! them. Front matter is metadata about the note (its title, aliases and
//! tags), not text to search, so it is read here rather than indexed.
//! Inline `#tags` and the tags of the front matter are normalised the same
//! way, so a filter on `project` finds both. A wikilink's destination is
//! split into note, heading path and block id, so the link can be resolved
//! when it is read, by name, as the notes app would.
//!
//! All of it is pure and never panics: a note is user data, and one odd
//! note must cost its own metadata at most, never the batch.

use std::collections::HashSet;

/// What a note's front matter says about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    /// The `title` key, when it is a non-empty scalar.
    pub title: Option<String>,
    /// The `aliases` and `alias` keys: other names the note answers to.
    pub aliases: Vec<String>,
    /// Normalised as [`normalize_tag`] does, without duplicates, in order of appearance.
    pub tags: Vec<String>,
}

/// Why front matter was not read. The rest of the note is still read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontMatterError {
    /// Over [`MAX_FRONT_MATTER`]: metadata that large is not metadata.
    #[error("front matter over {limit} bytes is not read")]
    TooLarge { limit: usize },
    /// Outside the YAML that notes apps write; `line` counts from 1.
    #[error("front matter line {line}: {message}")]
    Malformed { line: usize, message: String },
}

/// The most front matter, in bytes, that is read.
pub const MAX_FRONT_MATTER: usize = 64 * 1024;

/// The YAML between the `---` fences (the fences themselves not included).
///
/// Only the YAML that notes apps write (Obsidian "properties") is read: a
/// flat map of `key: value` whose values are scalars (plain, quoted, or
/// `|`/`>` blocks) or lists (`[a, b]` or `- item` lines); nested maps are
/// skipped. It is not a full YAML parser on purpose: YAML's anchors and
/// aliases let a few hundred bytes expand into gigabytes ("billion
/// laughs"), so here `&name` and `*name` are never expanded, only read as
/// the plain text they are. Only `title`, `aliases`/`alias` and
/// `tags`/`tag` are kept (keys compared case-insensitively).
pub fn front_matter(yaml: &str) -> Result<FrontMatter, FrontMatterError> {
    if yaml.len() > MAX_FRONT_MATTER {
        let limit = MAX_FRONT_MATTER;
        return Err(FrontMatterError::TooLarge { limit });
    }
    let lines: Vec<&str> = yaml.lines().collect();
    let mut read = FrontMatter::default();
    let mut i = 0;
    while let Some(&line) = lines.get(i) {
        let n = i + 1;
        i += 1;
        if is_skipped(line) {
            continue;
        }
        if indent(line, n)? > 0 || is_item(line) {
            return Err(malformed(n, "expected `key: value`"));
        }
        let (key, rest) = split_key(line, n)?;
        let value = read_value(rest, &lines, &mut i, n)?;
        apply(&mut read, &key, value);
    }
    let mut seen = HashSet::new();
    read.tags.retain(|tag| seen.insert(tag.clone()));
    Ok(read)
}

/// A value as read: a scalar, with whether it was quoted (a quoted alias
/// is one name even with commas in it), or a list.
enum Value {
    Scalar(String, bool),
    List(Vec<String>),
}

fn malformed(line: usize, message: &str) -> FrontMatterError {
    FrontMatterError::Malformed {
        line,
        message: message.to_string(),
    }
}

/// Blank lines and full-line comments.
fn is_skipped(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

fn is_item(line: &str) -> bool {
    let t = line.trim_start();
    t == "-" || t.starts_with("- ")
}

/// The spaces a line is indented by; YAML forbids tabs there.
fn indent(line: &str, n: usize) -> Result<usize, FrontMatterError> {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    if line[spaces..].starts_with('\t') {
        return Err(malformed(n, "a tab used for indentation"));
    }
    Ok(spaces)
}

/// `key: value` split at the first colon followed by whitespace or the end.
fn split_key(line: &str, n: usize) -> Result<(String, &str), FrontMatterError> {
    if line.starts_with(|c: char| c == '"' || c == '\'') {
        let (key, rest) = quoted(line, n)?;
        if let Some(value) = rest.trim_start().strip_prefix(':') {
            if value.is_empty() || value.starts_with(char::is_whitespace) {
                return Ok((key, value));
            }
        }
        return Err(malformed(n, "expected `key: value`"));
    }
    let colon = line
        .char_indices()
        .find(|&(i, c)| c == ':' && line[i + 1..].chars().next().is_none_or(char::is_whitespace));
    match colon {
        Some((i, _)) => Ok((line[..i].trim().to_string(), &line[i + 1..])),
        None => Err(malformed(n, "expected `key: value`")),
    }
}

/// The value after a key on line `n`, with the lines after it that belong
/// to it (`*i` is moved past them).
fn read_value(
    rest: &str,
    lines: &[&str],
    i: &mut usize,
    n: usize,
) -> Result<Value, FrontMatterError> {
    let v = rest.trim();
    if v.is_empty() || v.starts_with('#') {
        return block_value(lines, i);
    }
    if v.starts_with('|') || v.starts_with('>') {
        return Ok(block_scalar(v, lines, i));
    }
    // Indented lines after a value continue it, as YAML folds them.
    let mut text = v.to_string();
    for more in indented_lines(lines, i)? {
        text.push(' ');
        text.push_str(more);
    }
    if text.starts_with('[') {
        return flow_list(&text, n).map(Value::List);
    }
    scalar(&text, n).map(|(value, quoted)| Value::Scalar(value, quoted))
}

/// An empty value (or only a comment: `tags: #rust` is a comment to YAML and
/// to Obsidian): a block list if `- item` lines follow, a nested map
/// (skipped) if indented lines do, else nothing.
fn block_value(lines: &[&str], i: &mut usize) -> Result<Value, FrontMatterError> {
    let mut j = *i;
    while lines.get(j).is_some_and(|l| is_skipped(l)) {
        j += 1;
    }
    let Some(&first) = lines.get(j) else {
        return Ok(Value::Scalar(String::new(), false));
    };
    let depth = indent(first, j + 1)?;
    if is_item(first) {
        *i = j;
        return block_list(lines, i, depth).map(Value::List);
    }
    if depth > 0 {
        indented_lines(lines, i)?;
    }
    Ok(Value::Scalar(String::new(), false))
}

/// The `- item` lines at `depth`; deeper lines under an item are skipped.
fn block_list(
    lines: &[&str],
    i: &mut usize,
    depth: usize,
) -> Result<Vec<String>, FrontMatterError> {
    let mut items = Vec::new();
    while let Some(&line) = lines.get(*i) {
        let n = *i + 1;
        if is_skipped(line) {
            *i += 1;
            continue;
        }
        let at = indent(line, n)?;
        if at == 0 && !(depth == 0 && is_item(line)) {
            break;
        }
        *i += 1;
        if at == depth && is_item(line) {
            let t = line.trim_start();
            let body = t.strip_prefix('-').unwrap_or(t);
            items.push(scalar(body, n)?.0);
        }
    }
    Ok(items)
}

/// The indented lines from `*i` on, trimmed, blank lines and comments left
/// out; `*i` is moved past them.
fn indented_lines<'a>(lines: &[&'a str], i: &mut usize) -> Result<Vec<&'a str>, FrontMatterError> {
    let mut taken = Vec::new();
    while let Some(&line) = lines.get(*i) {
        if !is_skipped(line) {
            if indent(line, *i + 1)? == 0 {
                break;
            }
            taken.push(line.trim());
        }
        *i += 1;
    }
    Ok(taken)
}

/// A `|` or `>` block: its indented lines joined by newlines or spaces.
/// Here `#` starts no comment and tabs may follow the indentation.
fn block_scalar(v: &str, lines: &[&str], i: &mut usize) -> Value {
    let sep = if v.starts_with('>') { " " } else { "\n" };
    let mut parts = Vec::new();
    while let Some(&line) = lines.get(*i) {
        let t = line.trim();
        if !t.is_empty() && !line.starts_with(char::is_whitespace) {
            break;
        }
        *i += 1;
        if !t.is_empty() {
            parts.push(t);
        }
    }
    Value::Scalar(parts.join(sep), true)
}

/// `[a, "b c", d]`: items split at commas outside quotes, each a scalar.
fn flow_list(text: &str, n: usize) -> Result<Vec<String>, FrontMatterError> {
    let mut items = Vec::new();
    let mut rest = text.get(1..).unwrap_or("");
    loop {
        rest = rest.trim_start();
        if rest.starts_with(|c: char| c == '"' || c == '\'') {
            let (item, after) = quoted(rest, n)?;
            items.push(item);
            rest = after.trim_start();
        } else {
            let end = rest.find(|c: char| matches!(c, ',' | ']' | '[' | '{'));
            let end = end.unwrap_or(rest.len());
            items.push(scalar(&rest[..end], n)?.0);
            rest = &rest[end..];
        }
        match rest.chars().next() {
            Some(',') => rest = &rest[1..],
            Some(']') => break,
            Some('[' | '{') => return Err(malformed(n, "a list or map inside a list")),
            _ => return Err(malformed(n, "a list without its closing `]`")),
        }
    }
    let after = rest[1..].trim_start();
    if !after.is_empty() && !after.starts_with('#') {
        return Err(malformed(n, "text after a list's closing `]`"));
    }
    Ok(items)
}

/// A scalar's text, and whether it was quoted. `null` and `~` are empty.
fn scalar(text: &str, n: usize) -> Result<(String, bool), FrontMatterError> {
    let text = text.trim();
    if text.starts_with(|c: char| c == '"' || c == '\'') {
        let (value, rest) = quoted(text, n)?;
        let rest = rest.trim_start();
        if !rest.is_empty() && !rest.starts_with('#') {
            return Err(malformed(n, "text after a quoted value"));
        }
        return Ok((value, true));
    }
    let plain = Some(strip_comment(text)).filter(|p| *p != "~" && !p.eq_ignore_ascii_case("null"));
    Ok((plain.unwrap_or("").to_string(), false))
}

/// A plain scalar without a trailing ` # comment`.
fn strip_comment(s: &str) -> &str {
    let cut = s
        .char_indices()
        .find(|&(i, c)| c == '#' && s[..i].ends_with(char::is_whitespace))
        .map_or(s.len(), |(i, _)| i);
    s[..cut].trim()
}

/// The quoted text `s` starts with, unescaped, and what follows its
/// closing quote. Only `\"`, `\\` (any `\x` as `x`) and `''` are unescaped.
fn quoted(s: &str, n: usize) -> Result<(String, &str), FrontMatterError> {
    let mut chars = s.char_indices();
    let Some((_, q)) = chars.next() else {
        return Err(malformed(n, "unterminated quote"));
    };
    let mut text = String::new();
    while let Some((i, c)) = chars.next() {
        if q == '"' && c == '\\' {
            match chars.next() {
                Some((_, escaped)) => text.push(escaped),
                None => break,
            }
        } else if c == q {
            if q == '\'' && s[i + 1..].starts_with('\'') {
                chars.next();
                text.push('\'');
            } else {
                return Ok((text, &s[i + 1..]));
            }
        } else {
            text.push(c);
        }
    }
    Err(malformed(n, "unterminated quote"))
}

/// Keeps what `key` says, if it is a key Folio reads.
fn apply(read: &mut FrontMatter, key: &str, value: Value) {
    match key.to_lowercase().as_str() {
        "title" => match value {
            Value::Scalar(s, _) if !s.is_empty() => read.title = Some(s),
            _ => {}
        },
        "aliases" | "alias" => {
            let names: Vec<String> = match value {
                Value::Scalar(s, false) => s.split(',').map(|a| a.trim().to_string()).collect(),
                Value::Scalar(s, true) => vec![s],
                Value::List(items) => items,
            };
            read.aliases
                .extend(names.into_iter().filter(|a| !a.trim().is_empty()));
        }
        "tags" | "tag" => {
            let raw = match value {
                Value::Scalar(s, _) => vec![s],
                Value::List(items) => items,
            };
            let words = raw
                .iter()
                .flat_map(|s| s.split(|c: char| c == ',' || c.is_whitespace()));
            read.tags.extend(words.filter_map(normalize_tag));
        }
        _ => {}
    }
}

/// The characters a tag is made of: letters and digits of any script, `_`, `-`, `/`.
fn is_tag_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/')
}

/// `#Project/Alpha` → `project/alpha`: lower case, without the leading `#`, without
/// leading/trailing `/`; `None` when what is left is not a tag (empty, only digits, or
/// holds a character tags cannot: whitespace, or punctuation other than `_`, `-`, `/`).
pub fn normalize_tag(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let tag = raw.strip_prefix('#').unwrap_or(raw).trim_matches('/');
    let valid =
        !tag.is_empty() && tag.chars().all(is_tag_char) && !tag.chars().all(char::is_numeric);
    valid.then(|| tag.to_lowercase())
}

/// The inline `#tags` in a run of prose text, normalised, appended to `out` in order
/// (the caller dedups). Obsidian's rules: a tag starts with `#` at the start of the text
/// or after whitespace or `(`/`[`/`,`; its characters are letters and digits (any script),
/// `_`, `-` and `/`; it needs at least one non-digit (`#123` is no tag, `#y1984` is);
/// `#` followed by a space or another `#` is not a tag; a `#` inside a word (`C#`,
/// `a#b`, a URL's `page#frag`, `&#39;`) is not a tag. Trailing `/` is dropped.
pub fn inline_tags(text: &str, out: &mut Vec<String>) {
    let mut prev: Option<char> = None;
    for (i, c) in text.char_indices() {
        let starts = prev.is_none_or(|p| p.is_whitespace() || matches!(p, '(' | '[' | ','));
        if c == '#' && starts {
            let body = &text[i + 1..];
            let end = body.find(|d: char| !is_tag_char(d)).unwrap_or(body.len());
            out.extend(normalize_tag(&body[..end]));
        }
        prev = Some(c);
    }
}

/// Whether `tag` is `scope` or nested under it: `a/b` is under `a`, `ab` is not.
/// Both are expected normalised ([`normalize_tag`]).
pub fn tag_within(tag: &str, scope: &str) -> bool {
    tag.strip_prefix(scope)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Where a wikilink points, from its destination text (`Note`, `Note#Heading`,
/// `Note#Heading#Sub`, `Note#^block-id`, `#Heading` within the same note, `folder/Note`,
/// `Note.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkTarget {
    /// The note as written, without a trailing `.md` (case kept); empty for a link within the same note.
    pub note: String,
    /// The heading path after the first `#`, each level trimmed (`Heading#Sub` → ["Heading", "Sub"]); empty when none.
    pub headings: Vec<String>,
    /// The block id after `#^`, when the link names a block.
    pub block: Option<String>,
}

/// Splits a wikilink's destination (the `|label` already removed by the
/// markdown parser) into note, heading path and block id, trimming each.
pub fn link_target(dest: &str) -> LinkTarget {
    let dest = dest.trim();
    let (note, anchor) = match dest.split_once('#') {
        Some((note, anchor)) => (note, Some(anchor)),
        None => (dest, None),
    };
    let mut target = LinkTarget {
        note: without_md(note.trim()).trim().to_string(),
        headings: Vec::new(),
        block: None,
    };
    for part in anchor.into_iter().flat_map(|a| a.split('#')).map(str::trim) {
        if let Some(id) = part.strip_prefix('^') {
            target.block = Some(id.trim().to_string()).filter(|id| !id.is_empty());
        } else if !part.is_empty() {
            target.headings.push(part.to_string());
        }
    }
    target
}

/// `note` without a trailing `.md`, in any case.
fn without_md(note: &str) -> &str {
    let cut = note.len().saturating_sub(3);
    match note.get(cut..) {
        Some(ext) if ext.eq_ignore_ascii_case(".md") => &note[..cut],
        _ => note,
    }
}

/// The name a link's note is matched by: its last path component, lower case
/// (`Folder/My Note` → `my note`). Obsidian matches names case-insensitively.
pub fn note_key(note: &str) -> String {
    let name = note.rsplit('/').next().unwrap_or(note);
    name.trim().to_lowercase()
}

/// The block id a line ends with (`... text ^my-id`), which `[[Note#^my-id]]` names;
/// ids are letters, digits and `-` (Latin letters, as in Obsidian), and the `^`
/// starts the line or follows whitespace (so `x^2` names no block).
pub fn block_id(line: &str) -> Option<&str> {
    let line = line.trim_end();
    let start = line.rfind('^')?;
    let id = &line[start + 1..];
    let before = &line[..start];
    let valid = !id.is_empty()
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && (before.is_empty() || before.ends_with(char::is_whitespace));
    valid.then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn read(yaml: &str) -> FrontMatter {
        front_matter(yaml).expect("front matter reads")
    }

    fn title(yaml: &str) -> Option<String> {
        read(yaml).title
    }

    fn malformed_line(yaml: &str) -> usize {
        match front_matter(yaml) {
            Err(FrontMatterError::Malformed { line, .. }) => line,
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    fn found(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        inline_tags(text, &mut out);
        out
    }

    #[test]
    fn front_matter_keys() {
        assert_eq!(front_matter(""), Ok(FrontMatter::default()));
        let yaml = "title: My Note\naliases: [One, \"Two, with comma\"]\n\
                    tags:\n  - \"#rust\"\n  - #Book\n  - area/sub\n";
        let note = read(yaml);
        assert_eq!(note.title.as_deref(), Some("My Note"));
        assert_eq!(note.aliases, strings(&["One", "Two, with comma"]));
        assert_eq!(note.tags, strings(&["rust", "book", "area/sub"]));
        assert_eq!(read("alias: A, B").aliases, strings(&["A", "B"]));
        let other_case = read("Tags: [Rust]\nTITLE: X");
        assert_eq!(other_case.title.as_deref(), Some("X"));
        assert_eq!(other_case.tags, strings(&["rust"]));
        let nulls = "title: null\naliases: ~\ntags: ~";
        assert_eq!(front_matter(nulls), Ok(FrontMatter::default()));
    }

    #[test]
    fn front_matter_tag_forms() {
        assert_eq!(read("tags: rust, book").tags, strings(&["rust", "book"]));
        assert_eq!(read("tags: rust book").tags, strings(&["rust", "book"]));
        assert_eq!(read("tag: single").tags, strings(&["single"]));
        assert_eq!(read("tags:\n- a\n- b\ntitle: x").tags, strings(&["a", "b"]));
        let repeated = "tags: [rust, \"#Rust\", rust]\ntag: RUST";
        assert_eq!(read(repeated).tags, strings(&["rust"]));
    }

    #[test]
    fn front_matter_scalars_and_comments() {
        assert_eq!(
            title("title: \"Rust: the book\" # said so").as_deref(),
            Some("Rust: the book")
        );
        assert_eq!(title("title: 'It''s'").as_deref(), Some("It's"));
        let commented =
            read("# leading\ntitle: Plain # trailing\n  # indented\ntags: [a] # list\n");
        assert_eq!(commented.title.as_deref(), Some("Plain"));
        assert_eq!(commented.tags, strings(&["a"]));
        let nested = "cssclasses:\n  inner: value\n  other: [x, [y]]\ntitle: After";
        assert_eq!(title(nested).as_deref(), Some("After"));
        assert_eq!(
            title("title: >\n  Folded\n  title\ntags: t").as_deref(),
            Some("Folded title")
        );
        let literal = "title: |-\n  Line one\n  # not a comment";
        assert_eq!(title(literal).as_deref(), Some("Line one\n# not a comment"));
        assert_eq!(title("title: [a, b]"), None);
    }

    #[test]
    fn malformed_front_matter_names_the_line() {
        assert_eq!(malformed_line("title: x\njust text"), 2);
        assert_eq!(malformed_line("tags:\n\t- a"), 2);
        assert_eq!(malformed_line("\ttitle: x"), 1);
        assert_eq!(malformed_line("title: ok\ntitle: \"open"), 2);
        assert_eq!(malformed_line("tags: [a, [b]]"), 1);
        assert_eq!(malformed_line("tags: [a, b"), 1);
        let large = "a: b\n".repeat(14_000);
        let limit = MAX_FRONT_MATTER;
        assert_eq!(
            front_matter(&large),
            Err(FrontMatterError::TooLarge { limit })
        );
    }

    #[test]
    fn aliases_are_never_expanded() {
        let lols = ["\"lol\""; 9].join(",");
        let mut yaml = format!("a: &a [{lols}]\n");
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        for pair in names.windows(2) {
            let refs = vec![format!("*{}", pair[0]); 9].join(",");
            yaml.push_str(&format!("{}: &{} [{}]\n", pair[1], pair[1], refs));
        }
        yaml.push_str("tags: *anchor\n");
        let started = std::time::Instant::now();
        assert_eq!(front_matter(&yaml), Ok(FrontMatter::default()));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn inline_tags_follow_obsidian() {
        let text = "see #rust and #Area/Sub, not C# or a#b or #123 or # heading or \
                    http://x.org/p#frag or &#39; but (#paren) and #y1984";
        let mut out = vec!["kept".to_string()];
        inline_tags(text, &mut out);
        assert_eq!(
            out,
            strings(&["kept", "rust", "area/sub", "paren", "y1984"])
        );
        assert_eq!(found("#Café au lait"), strings(&["café"]));
        assert_eq!(found("end #tag/"), strings(&["tag"]));
        assert_eq!(found("##double"), Vec::<String>::new());
    }

    #[test]
    fn tags_normalise_and_nest() {
        assert_eq!(
            normalize_tag("#Project/Alpha").as_deref(),
            Some("project/alpha")
        );
        assert_eq!(normalize_tag("/a/").as_deref(), Some("a"));
        for bad in ["", "#", "123", "a b", "a.b", "*anchor", "##a"] {
            assert_eq!(normalize_tag(bad), None, "{bad}");
        }
        assert!(tag_within("a/b", "a"));
        assert!(tag_within("a", "a"));
        assert!(!tag_within("ab", "a"));
        assert!(!tag_within("a", "a/b"));
    }

    #[test]
    fn link_targets() {
        let cases: [(&str, &str, &[&str], Option<&str>); 11] = [
            ("Note", "Note", &[], None),
            ("Note#Heading", "Note", &["Heading"], None),
            ("Note#Heading#Sub", "Note", &["Heading", "Sub"], None),
            ("Note#^block-id", "Note", &[], Some("block-id")),
            ("Note#H#^id", "Note", &["H"], Some("id")),
            ("#Heading", "", &["Heading"], None),
            ("folder/Note", "folder/Note", &[], None),
            ("Note.md", "Note", &[], None),
            ("Note.MD", "Note", &[], None),
            (" spaced ", "spaced", &[], None),
            (" Note # Heading ", "Note", &["Heading"], None),
        ];
        for (dest, note, headings, block) in cases {
            let expected = LinkTarget {
                note: note.to_string(),
                headings: strings(headings),
                block: block.map(String::from),
            };
            assert_eq!(link_target(dest), expected, "{dest:?}");
        }
    }

    #[test]
    fn note_keys_and_block_ids() {
        assert_eq!(note_key("Folder/My Note"), "my note");
        assert_eq!(note_key("Note"), "note");
        assert_eq!(block_id("text ^abc-1"), Some("abc-1"));
        assert_eq!(block_id("text ^ab c"), None);
        assert_eq!(block_id("^x"), Some("x"));
        assert_eq!(block_id("no id"), None);
        assert_eq!(block_id("x^2"), None);
    }
}
