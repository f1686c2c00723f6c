//! HTML: `<title>` (else a leading `<h1>`) names the document, h1–h6 become
//! structure nodes nested by level, and block elements (p, whole ul/ol lists,
//! pre, blockquote, table, dt, dd, figcaption, …) plus loose text between
//! blocks become content nodes spanning their source bytes. Scripts, styles
//! and other non-text elements are dropped, entities decoded, whitespace
//! collapsed (except in pre).
//!
//! The tokenizer and the element stack are our own rather than `tl`'s tree:
//! `tl` keeps entities encoded, parses `<` inside `<script>` as a tag (which
//! swallows the rest of the page into the script) and has no implied end
//! tags, so an unclosed `<li>`, `<td>`, `<p>` or `<head>`, all valid HTML,
//! nests everything after it. Here end tags close through whatever they
//! enclose, and starting a block closes an open `<p>` (likewise `<li>`,
//! `<dt>`/`<dd>`, `<tr>`, `<td>`) as browsers do.
//!
//! A list is one content node, items rendered as "- item" ("1. item" in an
//! ordered list) lines with nested items indented, the same as markdown. A
//! table is a table node (`html_table.rs`), also inside a list or a quote,
//! whose text before and after it then become nodes on either side.

use std::ops::Range;

use super::html_table::{HtmlTable, Part};
use crate::structure_tree::{HeadingStack, NodeKind, Span, StructureTree};

/// How deep elements may nest before further start tags are read as empty
/// elements (browsers cap nesting similarly); it bounds the work that end
/// tags do searching the stack of open elements.
const MAX_OPEN_ELEMENTS: usize = 512;

pub(super) fn parse(text: &str, fallback_title: &str) -> StructureTree {
    let mut builder = Builder::new(text, fallback_title);
    for token in Tokenizer::new(text) {
        builder.token(token);
    }
    builder.finish()
}

#[derive(Debug)]
enum Token<'a> {
    /// Character data, entities still encoded.
    Text(Range<usize>),
    Start {
        name: &'a str,
        range: Range<usize>,
        self_closing: bool,
    },
    End {
        name: &'a str,
        range: Range<usize>,
    },
}

/// Splits HTML into tags and text; comments, doctypes and processing
/// instructions are skipped. Never fails: malformed markup becomes text.
struct Tokenizer<'a> {
    src: &'a str,
    pos: usize,
    /// Inside an element whose content is raw text (script, style, …): the
    /// next token is its text, up to the matching end tag.
    raw_text_of: Option<&'a str>,
}

impl<'a> Tokenizer<'a> {
    fn new(src: &'a str) -> Self {
        Tokenizer {
            src,
            pos: 0,
            raw_text_of: None,
        }
    }

    fn skip_past(&mut self, from: usize, needle: &str) {
        self.pos = self.src[from..]
            .find(needle)
            .map_or(self.src.len(), |i| from + i + needle.len());
    }

    fn tag_name_end(&self, from: usize) -> usize {
        let bytes = self.src.as_bytes();
        let mut i = from;
        while i < bytes.len()
            && !matches!(
                bytes[i],
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'
            )
        {
            i += 1;
        }
        i
    }

    /// Index of the `>` closing a start tag that began at `from`, skipping
    /// `>` inside quoted attribute values.
    fn start_tag_end(&self, from: usize) -> Option<usize> {
        let bytes = self.src.as_bytes();
        let mut quote = None;
        let mut after_equals = false;
        for (i, &b) in bytes.iter().enumerate().skip(from) {
            match quote {
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None => match b {
                    b'>' => return Some(i),
                    b'"' | b'\'' if after_equals => quote = Some(b),
                    b'=' => {
                        after_equals = true;
                        continue;
                    }
                    b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => continue,
                    _ => {}
                },
            }
            after_equals = false;
        }
        None
    }

    /// Where the raw text of element `name` ends: at its end tag, matched
    /// case-insensitively.
    fn raw_text_end(&self, name: &str) -> Option<usize> {
        let bytes = self.src.as_bytes();
        let mut from = self.pos;
        while let Some(i) = self.src[from..].find("</") {
            let at = from + i;
            let name_at = at + 2;
            let name_end = name_at + name.len();
            if bytes
                .get(name_at..name_end)
                .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()))
                && bytes.get(name_end).is_none_or(|b| {
                    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>')
                })
            {
                return Some(at);
            }
            from = name_at;
        }
        None
    }
}

impl<'a> Iterator for Tokenizer<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let bytes = self.src.as_bytes();
        if let Some(name) = self.raw_text_of.take() {
            let end = self.raw_text_end(name).unwrap_or(self.src.len());
            if end > self.pos {
                let range = self.pos..end;
                self.pos = end;
                return Some(Token::Text(range));
            }
        }
        loop {
            let start = self.pos;
            if start >= bytes.len() {
                return None;
            }
            if bytes[start] != b'<' {
                let end = self.src[start..]
                    .find('<')
                    .map_or(self.src.len(), |i| start + i);
                self.pos = end;
                return Some(Token::Text(start..end));
            }
            match bytes.get(start + 1) {
                Some(b'!') if self.src[start..].starts_with("<!--") => {
                    self.skip_past(start + 4, "-->")
                }
                Some(b'!' | b'?') => self.skip_past(start, ">"),
                Some(b'/') if bytes.get(start + 2).is_some_and(u8::is_ascii_alphabetic) => {
                    let name_end = self.tag_name_end(start + 2);
                    self.skip_past(name_end, ">");
                    return Some(Token::End {
                        name: &self.src[start + 2..name_end],
                        range: start..self.pos,
                    });
                }
                Some(b'/') => self.skip_past(start, ">"),
                Some(c) if c.is_ascii_alphabetic() => {
                    let name_end = self.tag_name_end(start + 1);
                    // A tag cut off by the end of the file is dropped, as browsers do.
                    let close = self.start_tag_end(name_end)?;
                    self.pos = close + 1;
                    let name = &self.src[start + 1..name_end];
                    if is_raw_text(name)
                        && (!is_escapable_raw_text(name) || self.raw_text_end(name).is_some())
                    {
                        self.raw_text_of = Some(name);
                    }
                    let self_closing = close > name_end && bytes[close - 1] == b'/';
                    return Some(Token::Start {
                        name,
                        range: start..self.pos,
                        self_closing,
                    });
                }
                _ => {
                    // A '<' that starts no markup is text.
                    let end = self.src[start + 1..]
                        .find('<')
                        .map_or(self.src.len(), |i| start + 1 + i);
                    self.pos = end;
                    return Some(Token::Text(start..end));
                }
            }
        }
    }
}

fn is_raw_text(name: &str) -> bool {
    [
        "script", "style", "xmp", "iframe", "noembed", "noframes", "title", "textarea",
    ]
    .iter()
    .any(|n| n.eq_ignore_ascii_case(name))
}

/// Raw-text elements whose missing end tag is an authoring slip rather than
/// a request to read the rest of the file as their text.
fn is_escapable_raw_text(name: &str) -> bool {
    name.eq_ignore_ascii_case("title") || name.eq_ignore_ascii_case("textarea")
}

/// What an element means for the tree. Unknown elements are inline, as in
/// browsers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum El {
    /// Not text for a reader: skipped with everything inside.
    Dropped,
    Title,
    Heading(u8),
    P,
    Li,
    List {
        ordered: bool,
    },
    Pre,
    Table,
    Row,
    Cell,
    Caption,
    Quote,
    /// dt or dd.
    Def,
    DefList,
    /// Other blocks of text: figcaption, address, summary.
    Leaf,
    /// Sectioning and grouping: its text is loose text, not one block.
    Container,
    Br,
    Hr,
    Void,
    Inline,
}

impl El {
    /// Elements that, outside any block, start a content (or heading) node.
    fn starts_block(self) -> bool {
        matches!(
            self,
            El::Heading(_)
                | El::P
                | El::Li
                | El::List { .. }
                | El::Pre
                | El::Table
                | El::Quote
                | El::Def
                | El::Leaf
        )
    }
}

fn part_of(el: El) -> Part {
    match el {
        El::Table => Part::Table,
        El::Row => Part::Row,
        El::Cell => Part::Cell,
        El::Caption => Part::Caption,
        _ => Part::Other,
    }
}

fn classify(name: &str) -> El {
    let mut buf = [0u8; 10];
    let Some(lower) = buf.get_mut(..name.len()) else {
        return El::Inline;
    };
    for (d, s) in lower.iter_mut().zip(name.bytes()) {
        *d = s.to_ascii_lowercase();
    }
    match &*lower {
        b"script" | b"style" | b"noscript" | b"template" | b"svg" | b"math" | b"iframe"
        | b"object" | b"canvas" | b"select" | b"textarea" | b"noembed" | b"noframes" => El::Dropped,
        b"title" => El::Title,
        [b'h', n @ b'1'..=b'6'] => El::Heading(n - b'0'),
        b"p" => El::P,
        b"li" => El::Li,
        b"ul" | b"menu" => El::List { ordered: false },
        b"ol" => El::List { ordered: true },
        b"pre" | b"xmp" | b"listing" => El::Pre,
        b"table" => El::Table,
        b"tr" => El::Row,
        b"td" | b"th" => El::Cell,
        b"caption" => El::Caption,
        b"blockquote" => El::Quote,
        b"dt" | b"dd" => El::Def,
        b"dl" => El::DefList,
        b"figcaption" | b"address" | b"summary" => El::Leaf,
        b"html" | b"head" | b"body" | b"div" | b"section" | b"article" | b"main" | b"header"
        | b"footer" | b"nav" | b"aside" | b"form" | b"fieldset" | b"legend" | b"figure"
        | b"hgroup" | b"center" | b"details" | b"dialog" | b"search" => El::Container,
        b"br" => El::Br,
        b"hr" => El::Hr,
        b"area" | b"base" | b"col" | b"embed" | b"img" | b"input" | b"link" | b"meta"
        | b"source" | b"track" | b"wbr" | b"param" | b"keygen" => El::Void,
        _ => El::Inline,
    }
}

/// Text being collected with whitespace collapsed; breaks and spaces are
/// held back until more text arrives, so nothing trails.
#[derive(Default)]
struct Flow {
    text: String,
    space: bool,
    brk: bool,
    /// Levels of list indentation after a break.
    indent: usize,
}

impl Flow {
    fn prepare(&mut self) {
        if !self.text.is_empty() {
            if self.brk {
                self.trim_line_end();
                self.text.push('\n');
                for _ in 0..self.indent {
                    self.text.push_str("  ");
                }
            } else if self.space && !self.text.ends_with([' ', '\n']) {
                self.text.push(' ');
            }
        }
        self.space = false;
        self.brk = false;
    }

    fn trim_line_end(&mut self) {
        let kept = self.text.trim_end_matches(' ').len();
        self.text.truncate(kept);
    }

    fn push_collapsed(&mut self, s: &str) {
        for (i, word) in s.split(char::is_whitespace).enumerate() {
            if i > 0 {
                self.space = true;
            }
            if !word.is_empty() {
                self.prepare();
                self.text.push_str(word);
            }
        }
    }

    fn push_verbatim(&mut self, s: &str) {
        if !s.is_empty() {
            self.prepare();
            self.text.push_str(s);
        }
    }

    /// Starts a list item line: `indent` levels, then the marker.
    fn start_item(&mut self, indent: usize, marker: &str) {
        if !self.text.is_empty() {
            self.trim_line_end();
            self.text.push('\n');
        }
        for _ in 0..indent {
            self.text.push_str("  ");
        }
        self.text.push_str(marker);
        self.space = false;
        self.brk = false;
    }

    fn push_separator(&mut self, sep: &str) {
        if self.brk {
            self.prepare();
        }
        self.trim_line_end();
        self.text.push_str(sep);
        self.space = false;
    }

    fn finish(self, verbatim: bool) -> String {
        if verbatim {
            self.text
                .trim_end()
                .trim_start_matches(['\r', '\n'])
                .to_owned()
        } else {
            self.text.trim().to_owned()
        }
    }
}

/// The outermost open block element and the text gathered inside it.
struct Block {
    /// Index in the element stack of the element that opened it.
    depth: usize,
    heading: Option<u8>,
    start: usize,
    end: usize,
    flow: Flow,
    /// The block is a `<pre>`: whitespace is kept throughout.
    verbatim: bool,
    pre: u32,
    cells_open: u32,
    cells_in_row: u32,
    /// Open lists, innermost last: the next item number, or None if bulleted.
    lists: Vec<Option<u32>>,
    /// The table being read in the block, if any.
    table: Option<HtmlTable>,
}

impl Block {
    /// A nested block boundary: a new line, or a space inside a table cell so
    /// that a row stays on one line.
    fn boundary(&mut self) {
        if self.cells_open > 0 {
            self.flow.space = true;
        } else {
            self.flow.brk = true;
        }
    }
}

/// Text outside any block element, gathered into one paragraph until the
/// next block boundary.
struct Loose {
    start: usize,
    end: usize,
    flow: Flow,
}

struct Open<'a> {
    name: &'a str,
    el: El,
}

struct Builder<'a> {
    src: &'a str,
    tree: StructureTree,
    headings: HeadingStack,
    title_set: bool,
    seen_node: bool,
    stack: Vec<Open<'a>>,
    block: Option<Block>,
    loose: Option<Loose>,
    /// Inside a dropped element: the elements open within it, root first.
    dropping: Vec<&'a str>,
    /// Inside `<title>`: where it started and its text so far.
    title: Option<(usize, String)>,
    scratch: String,
}

impl<'a> Builder<'a> {
    fn new(src: &'a str, fallback_title: &str) -> Self {
        Builder {
            src,
            tree: StructureTree::new(fallback_title, Span::default()),
            headings: HeadingStack::default(),
            title_set: false,
            seen_node: false,
            stack: Vec::new(),
            block: None,
            loose: None,
            dropping: Vec::new(),
            title: None,
            scratch: String::new(),
        }
    }

    fn token(&mut self, token: Token<'a>) {
        match &token {
            Token::End { name, .. } if name.eq_ignore_ascii_case("title") => {}
            // An unclosed <title> ends at the next tag.
            Token::Start { range, .. } | Token::End { range, .. } => self.finish_title(range.start),
            Token::Text(_) => {}
        }
        match token {
            Token::Text(range) => self.text(range),
            Token::Start {
                name,
                range,
                self_closing,
            } => self.start(name, range, self_closing),
            Token::End { name, range } => self.end(name, range),
        }
    }

    fn text(&mut self, range: Range<usize>) {
        if !self.dropping.is_empty() {
            return;
        }
        let raw = &self.src[range.clone()];
        if let Some((_, title)) = &mut self.title {
            decode_entities(raw, title);
            return;
        }
        let mut decoded = std::mem::take(&mut self.scratch);
        decoded.clear();
        decode_entities(raw, &mut decoded);
        let has_text = !decoded.trim().is_empty();
        if let Some(block) = &mut self.block {
            if let Some(table) = &mut block.table {
                table.text(&decoded);
            } else if block.verbatim || block.pre > 0 {
                block.flow.push_verbatim(&decoded);
            } else {
                block.flow.push_collapsed(&decoded);
            }
            if has_text {
                block.end = block.end.max(range.end);
            }
        } else if has_text {
            let start = range.start + (raw.len() - raw.trim_start().len());
            let end = range.start + raw.trim_end().len();
            let loose = self.loose.get_or_insert_with(|| Loose {
                start,
                end,
                flow: Flow::default(),
            });
            loose.end = end;
            loose.flow.push_collapsed(&decoded);
        } else if let Some(loose) = &mut self.loose {
            loose.flow.space = true;
        }
        self.scratch = decoded;
    }

    fn start(&mut self, name: &'a str, range: Range<usize>, self_closing: bool) {
        if !self.dropping.is_empty() {
            if !self_closing
                && !matches!(classify(name), El::Void | El::Br | El::Hr)
                && self.dropping.len() < MAX_OPEN_ELEMENTS
            {
                self.dropping.push(name);
            }
            return;
        }
        let el = classify(name);
        match el {
            El::Dropped => {
                // HTML ignores the slash on <script/>; only foreign elements
                // such as <svg/> are really empty.
                if !self_closing || is_raw_text(name) {
                    self.dropping.push(name);
                }
                return;
            }
            El::Title => {
                self.title = Some((range.start, String::new()));
                return;
            }
            _ => {}
        }
        self.close_implied(el);
        let opens = !self_closing
            && !matches!(el, El::Br | El::Hr | El::Void)
            && self.stack.len() < MAX_OPEN_ELEMENTS;

        if el == El::Table && opens {
            self.open_table_in_block(range.start);
        }
        if let Some(block) = &mut self.block {
            if let Some(table) = &mut block.table {
                if self.stack.len() > table.depth {
                    table.start(name, &self.src[range.clone()], part_of(el));
                }
                block.end = block.end.max(range.end);
                if opens {
                    self.stack.push(Open { name, el });
                }
                return;
            }
            match el {
                El::Br => block.boundary(),
                El::Li if !block.lists.is_empty() => {
                    let indent = block.lists.len() - 1;
                    match block.lists.last_mut() {
                        Some(Some(n)) => {
                            let marker = format!("{n}. ");
                            *n += 1;
                            block.flow.start_item(indent, &marker);
                        }
                        _ => block.flow.start_item(indent, "- "),
                    }
                }
                El::List { ordered } if opens => {
                    block.lists.push(ordered.then_some(1));
                    block.flow.indent = block.lists.len();
                    block.boundary();
                }
                El::Row => {
                    block.flow.brk = true;
                    block.cells_in_row = 0;
                }
                El::Cell => {
                    if block.cells_in_row > 0 {
                        block.flow.push_separator(" | ");
                    }
                    block.cells_in_row += 1;
                    if opens {
                        block.cells_open += 1;
                    }
                }
                El::Pre => {
                    if opens {
                        block.pre += 1;
                    }
                    block.boundary();
                }
                El::Inline | El::Void => {}
                _ => block.boundary(),
            }
            block.end = block.end.max(range.end);
            if opens {
                self.stack.push(Open { name, el });
            }
            return;
        }

        match el {
            El::Inline | El::Void => {}
            El::Br => {
                if let Some(loose) = &mut self.loose {
                    loose.flow.brk = true;
                }
            }
            _ => self.flush_loose(),
        }
        if !opens {
            return;
        }
        if el.starts_block() {
            let mut block = Block {
                depth: self.stack.len(),
                heading: match el {
                    El::Heading(level) => Some(level),
                    _ => None,
                },
                start: range.start,
                end: range.end,
                flow: Flow::default(),
                verbatim: el == El::Pre,
                pre: 0,
                cells_open: 0,
                cells_in_row: 0,
                lists: Vec::new(),
                table: (el == El::Table).then(|| HtmlTable::new(self.stack.len(), range.start)),
            };
            if let El::List { ordered } = el {
                block.lists.push(ordered.then_some(1));
                block.flow.indent = 1;
            }
            self.block = Some(block);
        }
        self.stack.push(Open { name, el });
    }

    fn end(&mut self, name: &'a str, range: Range<usize>) {
        if !self.dropping.is_empty() {
            if let Some(i) = self
                .dropping
                .iter()
                .rposition(|open| open.eq_ignore_ascii_case(name))
            {
                self.dropping.truncate(i);
                return;
            }
            // An end tag for an element outside the dropped one (an unclosed
            // <svg> inside a <div>, say) ends the dropping.
            if !self
                .stack
                .iter()
                .any(|open| open.name.eq_ignore_ascii_case(name))
            {
                return;
            }
            self.dropping.clear();
        }
        if name.eq_ignore_ascii_case("title") {
            self.finish_title(range.end);
            return;
        }
        if classify(name) == El::Br {
            // Browsers read a stray </br> as <br>.
            self.start(name, range, true);
            return;
        }
        if let Some(i) = self
            .stack
            .iter()
            .rposition(|open| open.name.eq_ignore_ascii_case(name))
        {
            while self.stack.len() > i + 1 {
                self.pop(None);
            }
            self.pop(Some(range.end));
        }
    }

    /// Closes elements whose end tag HTML lets authors omit when `el` starts.
    fn close_implied(&mut self, el: El) {
        let closes_p = matches!(
            el,
            El::P
                | El::Li
                | El::List { .. }
                | El::Pre
                | El::Table
                | El::Quote
                | El::Def
                | El::DefList
                | El::Leaf
                | El::Heading(_)
                | El::Container
                | El::Hr
        );
        if closes_p {
            self.close_in_scope(
                |e| e == El::P,
                |e| matches!(e, El::Table | El::Cell | El::Caption),
            );
        }
        match el {
            El::Li => self.close_in_scope(
                |e| e == El::Li,
                |e| matches!(e, El::List { .. } | El::Table | El::Cell | El::Quote),
            ),
            El::Def => self.close_in_scope(
                |e| e == El::Def,
                |e| matches!(e, El::DefList | El::Table | El::Cell),
            ),
            El::Row => self.close_in_scope(|e| e == El::Row, |e| e == El::Table),
            El::Cell => {
                self.close_in_scope(|e| e == El::Cell, |e| matches!(e, El::Row | El::Table))
            }
            // Headings do not nest: a new one ends an open one.
            El::Heading(_)
                if self
                    .stack
                    .last()
                    .is_some_and(|open| matches!(open.el, El::Heading(_))) =>
            {
                self.pop(None);
            }
            _ => {}
        }
    }

    fn close_in_scope(&mut self, target: impl Fn(El) -> bool, boundary: impl Fn(El) -> bool) {
        for i in (0..self.stack.len()).rev() {
            let el = self.stack[i].el;
            if target(el) {
                while self.stack.len() > i {
                    self.pop(None);
                }
                return;
            }
            if boundary(el) {
                return;
            }
        }
    }

    /// Pops the innermost open element; `end_tag_end` is where its end tag
    /// ended when it was closed explicitly.
    fn pop(&mut self, end_tag_end: Option<usize>) {
        let Some(open) = self.stack.pop() else {
            return;
        };
        let depth = self.stack.len();
        let Some(block) = &mut self.block else {
            if open.el != El::Inline {
                self.flush_loose();
            }
            return;
        };
        if let Some(end) = end_tag_end {
            block.end = block.end.max(end);
        }
        if depth <= block.depth {
            self.finish_block();
            return;
        }
        if let Some(table) = &mut block.table {
            let closes = depth == table.depth;
            let caption = match closes {
                true => None,
                false => table.end(open.name, part_of(open.el)),
            };
            let at = Span::bytes(table.start, block.end);
            if closes {
                self.close_table_in_block();
            } else if let Some(caption) = caption {
                self.push_content(caption.split_whitespace().collect::<Vec<_>>().join(" "), at);
            }
            return;
        }
        match open.el {
            El::List { .. } => {
                block.lists.pop();
                block.flow.indent = block.lists.len();
                block.boundary();
            }
            El::Pre => {
                block.pre = block.pre.saturating_sub(1);
                block.boundary();
            }
            El::Cell => block.cells_open = block.cells_open.saturating_sub(1),
            El::Inline | El::Row => {}
            _ => block.boundary(),
        }
    }

    /// A table starting inside a block that is not one (a list, a quote):
    /// the block's text so far becomes a node, and the block reads the
    /// table next.
    fn open_table_in_block(&mut self, at: usize) {
        let depth = self.stack.len();
        let Some(block) = &mut self.block else {
            return;
        };
        if block.table.is_some() {
            return;
        }
        let after = Flow {
            indent: block.flow.indent,
            ..Flow::default()
        };
        let before = std::mem::replace(&mut block.flow, after).finish(block.verbatim);
        let span = Span::bytes(block.start, at);
        block.start = at;
        block.table = Some(HtmlTable::new(depth, at));
        if !before.is_empty() {
            self.push_content(before, span);
        }
    }

    /// The table a block was reading ends inside it: the table becomes its
    /// node, and the block reads on after it.
    fn close_table_in_block(&mut self) {
        let Some(block) = &mut self.block else {
            return;
        };
        let Some(table) = block.table.take() else {
            return;
        };
        let span = Span::bytes(table.start, block.end);
        block.start = block.end;
        self.push_table(table, span);
    }

    fn push_table(&mut self, table: HtmlTable, span: Span) {
        if let Some((text, shape)) = table.finish() {
            self.tree
                .push_table(self.headings.parent(), text, shape, span);
            self.seen_node = true;
        }
    }

    fn push_content(&mut self, text: String, span: Span) {
        self.tree
            .push(self.headings.parent(), NodeKind::Content, text, span);
        self.seen_node = true;
    }

    fn finish_block(&mut self) {
        let Some(mut block) = self.block.take() else {
            return;
        };
        if let Some(table) = block.table.take() {
            let span = Span::bytes(table.start, block.end);
            self.push_table(table, span);
        }
        let text = block.flow.finish(block.verbatim);
        if text.is_empty() {
            return;
        }
        let span = Span::bytes(block.start, block.end);
        match block.heading {
            Some(1) if !self.title_set && !self.seen_node => {
                self.tree.set_title(text, span);
                self.title_set = true;
            }
            Some(level) => {
                self.headings
                    .push(&mut self.tree, u32::from(level), &text, span);
            }
            None => self.push_content(text, span),
        }
        self.seen_node = true;
    }

    fn flush_loose(&mut self) {
        let Some(loose) = self.loose.take() else {
            return;
        };
        let text = loose.flow.finish(false);
        if !text.is_empty() {
            self.tree.push(
                self.headings.parent(),
                NodeKind::Content,
                text,
                Span::bytes(loose.start, loose.end),
            );
            self.seen_node = true;
        }
    }

    /// Ends a `<title>` being read; the first non-empty one names the
    /// document unless a leading `<h1>` already did.
    fn finish_title(&mut self, end: usize) {
        let Some((start, raw)) = self.title.take() else {
            return;
        };
        let title = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        if !title.is_empty() && !self.title_set {
            self.tree
                .set_title(title, Span::bytes(start, end.max(start)));
            self.title_set = true;
        }
    }

    fn finish(mut self) -> StructureTree {
        self.finish_title(self.src.len());
        while !self.stack.is_empty() {
            self.pop(None);
        }
        self.finish_block();
        self.flush_loose();
        self.tree
    }
}

/// Appends `raw` to `out` with character references decoded. Unknown or
/// malformed references are kept as written.
fn decode_entities(raw: &str, out: &mut String) {
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        match decode_reference(after, out) {
            Some(used) => rest = &after[used..],
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
}

/// Decodes the reference at the start of `s` (just after the `&`) into
/// `out`, returning how many bytes it used.
fn decode_reference(s: &str, out: &mut String) -> Option<usize> {
    if let Some(num) = s.strip_prefix('#') {
        let (digits_at, radix) = match num.as_bytes().first() {
            Some(b'x' | b'X') => (2, 16),
            _ => (1, 10),
        };
        let digits = &s[digits_at..];
        let len = digits
            .bytes()
            .take_while(|b| (*b as char).is_digit(radix))
            .count();
        if len == 0 {
            return None;
        }
        let value = u32::from_str_radix(&digits[..len.min(8)], radix).unwrap_or(u32::MAX);
        out.push(numeric_reference(value));
        let semicolon = usize::from(digits[len..].starts_with(';'));
        return Some(digits_at + len + semicolon);
    }
    let len = s.bytes().take_while(u8::is_ascii_alphanumeric).count();
    if len == 0 || !s[len..].starts_with(';') {
        return None;
    }
    let name = &s[..len];
    if let Some(text) = named_entity(name) {
        out.push_str(text);
    } else {
        out.push(greek_entity(name)?);
    }
    Some(len + 1)
}

/// The character a numeric reference stands for, with the HTML rules: C1
/// controls mean their windows-1252 characters (old pages write &#146; for
/// an apostrophe) and impossible values become U+FFFD.
fn numeric_reference(value: u32) -> char {
    if (0x80..=0x9F).contains(&value) {
        let byte = [value as u8];
        let (text, _) = encoding_rs::WINDOWS_1252.decode_without_bom_handling(&byte);
        return text.chars().next().unwrap_or(char::REPLACEMENT_CHARACTER);
    }
    match value {
        0 => char::REPLACEMENT_CHARACTER,
        v => char::from_u32(v).unwrap_or(char::REPLACEMENT_CHARACTER),
    }
}

fn named_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        "nbsp" => "\u{a0}",
        "ensp" => "\u{2002}",
        "emsp" => "\u{2003}",
        "thinsp" => "\u{2009}",
        "zwnj" => "\u{200c}",
        "zwj" => "\u{200d}",
        "lrm" => "\u{200e}",
        "rlm" => "\u{200f}",
        "shy" => "\u{ad}",
        "copy" => "©",
        "reg" => "®",
        "trade" => "™",
        "hellip" => "…",
        "mdash" => "—",
        "ndash" => "–",
        "minus" => "−",
        "lsquo" => "‘",
        "rsquo" => "’",
        "sbquo" => "‚",
        "ldquo" => "“",
        "rdquo" => "”",
        "bdquo" => "„",
        "laquo" => "«",
        "raquo" => "»",
        "lsaquo" => "‹",
        "rsaquo" => "›",
        "bull" => "•",
        "middot" => "·",
        "prime" => "′",
        "Prime" => "″",
        "dagger" => "†",
        "Dagger" => "‡",
        "permil" => "‰",
        "sect" => "§",
        "para" => "¶",
        "deg" => "°",
        "plusmn" => "±",
        "times" => "×",
        "divide" => "÷",
        "frac12" => "½",
        "frac14" => "¼",
        "frac34" => "¾",
        "sup1" => "¹",
        "sup2" => "²",
        "sup3" => "³",
        "micro" => "µ",
        "euro" => "€",
        "pound" => "£",
        "yen" => "¥",
        "cent" => "¢",
        "curren" => "¤",
        "iexcl" => "¡",
        "iquest" => "¿",
        "brvbar" => "¦",
        "uml" => "¨",
        "macr" => "¯",
        "acute" => "´",
        "cedil" => "¸",
        "ordf" => "ª",
        "ordm" => "º",
        "not" => "¬",
        "circ" => "ˆ",
        "tilde" => "˜",
        "fnof" => "ƒ",
        "larr" => "←",
        "rarr" => "→",
        "uarr" => "↑",
        "darr" => "↓",
        "harr" => "↔",
        "lArr" => "⇐",
        "rArr" => "⇒",
        "hArr" => "⇔",
        "le" => "≤",
        "ge" => "≥",
        "ne" => "≠",
        "asymp" => "≈",
        "equiv" => "≡",
        "infin" => "∞",
        "sum" => "∑",
        "prod" => "∏",
        "radic" => "√",
        "part" => "∂",
        "nabla" => "∇",
        "isin" => "∈",
        "notin" => "∉",
        "cap" => "∩",
        "cup" => "∪",
        "sub" => "⊂",
        "sup" => "⊃",
        "and" => "∧",
        "or" => "∨",
        "forall" => "∀",
        "exist" => "∃",
        "empty" => "∅",
        "int" => "∫",
        "there4" => "∴",
        "sim" => "∼",
        "prop" => "∝",
        "ang" => "∠",
        "lowast" => "∗",
        "sdot" => "⋅",
        "oplus" => "⊕",
        "otimes" => "⊗",
        "perp" => "⊥",
        "loz" => "◊",
        "spades" => "♠",
        "clubs" => "♣",
        "hearts" => "♥",
        "diams" => "♦",
        "Agrave" => "À",
        "Aacute" => "Á",
        "Acirc" => "Â",
        "Atilde" => "Ã",
        "Auml" => "Ä",
        "Aring" => "Å",
        "AElig" => "Æ",
        "Ccedil" => "Ç",
        "Egrave" => "È",
        "Eacute" => "É",
        "Ecirc" => "Ê",
        "Euml" => "Ë",
        "Igrave" => "Ì",
        "Iacute" => "Í",
        "Icirc" => "Î",
        "Iuml" => "Ï",
        "ETH" => "Ð",
        "Ntilde" => "Ñ",
        "Ograve" => "Ò",
        "Oacute" => "Ó",
        "Ocirc" => "Ô",
        "Otilde" => "Õ",
        "Ouml" => "Ö",
        "Oslash" => "Ø",
        "Ugrave" => "Ù",
        "Uacute" => "Ú",
        "Ucirc" => "Û",
        "Uuml" => "Ü",
        "Yacute" => "Ý",
        "THORN" => "Þ",
        "szlig" => "ß",
        "agrave" => "à",
        "aacute" => "á",
        "acirc" => "â",
        "atilde" => "ã",
        "auml" => "ä",
        "aring" => "å",
        "aelig" => "æ",
        "ccedil" => "ç",
        "egrave" => "è",
        "eacute" => "é",
        "ecirc" => "ê",
        "euml" => "ë",
        "igrave" => "ì",
        "iacute" => "í",
        "icirc" => "î",
        "iuml" => "ï",
        "eth" => "ð",
        "ntilde" => "ñ",
        "ograve" => "ò",
        "oacute" => "ó",
        "ocirc" => "ô",
        "otilde" => "õ",
        "ouml" => "ö",
        "oslash" => "ø",
        "ugrave" => "ù",
        "uacute" => "ú",
        "ucirc" => "û",
        "uuml" => "ü",
        "yacute" => "ý",
        "thorn" => "þ",
        "yuml" => "ÿ",
        "OElig" => "Œ",
        "oelig" => "œ",
        "Scaron" => "Š",
        "scaron" => "š",
        "Yuml" => "Ÿ",
        _ => return None,
    })
}

/// Greek letter entities (&alpha; … &Omega;), which map onto two runs of
/// code points.
fn greek_entity(name: &str) -> Option<char> {
    const NAMES: [&str; 25] = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
        "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigmaf", "sigma", "tau", "upsilon",
        "phi", "chi", "psi", "omega",
    ];
    let index = |lower: &str| NAMES.iter().position(|n| *n == lower).map(|i| i as u32);
    if let Some(i) = index(name) {
        return char::from_u32(0x3B1 + i);
    }
    // Capitals are spelled with a leading capital (&Omega;); there is no
    // capital final sigma, and its code point slot is unassigned.
    let first = name.as_bytes().first()?;
    let rest = name.get(1..)?;
    if !first.is_ascii_uppercase()
        || !rest.bytes().all(|b| b.is_ascii_lowercase())
        || name == "Sigmaf"
    {
        return None;
    }
    let folded = format!("{}{rest}", first.to_ascii_lowercase() as char);
    char::from_u32(0x391 + index(&folded)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::TableShape;

    fn outline(tree: &StructureTree) -> Vec<(u32, NodeKind, &str)> {
        tree.nodes()
            .iter()
            .map(|n| (n.depth, n.kind, n.text.as_str()))
            .collect()
    }

    fn texts(tree: &StructureTree) -> Vec<&str> {
        tree.nodes()[1..].iter().map(|n| n.text.as_str()).collect()
    }

    #[test]
    fn title_element_names_the_document_and_headings_nest() {
        let src = "<!DOCTYPE html><html><head><meta charset=utf-8><title> The  Guide </title>\
                   <style>p { color: red }</style></head><body>\
                   <h1>Guide</h1><p>Intro.</p><h3>Deep</h3><p>Under deep.</p><h2>Mid</h2><p>Under mid.</p>\
                   </body></html>";
        let tree = parse(src, "file");
        use NodeKind::*;
        assert_eq!(
            outline(&tree),
            vec![
                (0, Structure, "The Guide"),
                (1, Structure, "Guide"),
                (2, Content, "Intro."),
                (2, Structure, "Deep"),
                (3, Content, "Under deep."),
                (2, Structure, "Mid"),
                (3, Content, "Under mid."),
            ]
        );
        let title = tree.node(0).span;
        assert_eq!(&src[title.start..title.end], "<title> The  Guide </title>");
    }

    #[test]
    fn leading_h1_is_the_title_only_before_content() {
        let tree = parse("<body><h1>Main</h1><p>text</p><h1>Second</h1></body>", "f");
        assert_eq!(tree.title(), "Main");
        assert_eq!(texts(&tree), vec!["text", "Second"]);

        let tree = parse("<body>intro words<h1>Main</h1><p>text</p></body>", "f");
        assert_eq!(tree.title(), "f");
        assert_eq!(
            outline(&tree)[1..],
            [
                (1, NodeKind::Content, "intro words"),
                (1, NodeKind::Structure, "Main"),
                (2, NodeKind::Content, "text")
            ]
        );
    }

    #[test]
    fn script_style_and_friends_are_dropped() {
        let src = "<p>before</p><script>for (i=0;i<n;i++) { x = '</p><p>'; }</script>\
                   <noscript><p>enable js</p></noscript><svg><title>icon</title><text>svg text</text></svg>\
                   <template><p>tpl</p></template><STYLE>b{}</STYLE><p>after</p>";
        let tree = parse(src, "f");
        assert_eq!(texts(&tree), vec!["before", "after"]);
        assert_eq!(tree.title(), "f");
        for n in tree.nodes() {
            assert!(
                !n.text.contains("i++") && !n.text.contains("enable") && !n.text.contains("tpl")
            );
        }
    }

    #[test]
    fn entities_are_decoded() {
        let src = "<p>Fish &amp; chips &lt;3 &#39;quoted&#39; caf&eacute;&nbsp;bar &#x263A; &#150; &Omega;&alpha; &bogus; AT&T</p>";
        let tree = parse(src, "f");
        assert_eq!(
            tree.node(1).text,
            "Fish & chips <3 'quoted' café bar ☺ – Ωα &bogus; AT&T"
        );
    }

    #[test]
    fn whitespace_collapses_except_in_pre() {
        let src = "<p>  a\n   b\t\tc  <b> bold </b>d</p><pre>\nfn main() {\n    x  y\n}\n</pre>";
        let tree = parse(src, "f");
        assert_eq!(
            texts(&tree),
            vec!["a b c bold d", "fn main() {\n    x  y\n}"]
        );
    }

    #[test]
    fn spans_are_element_boundaries() {
        let src = "<html><body><h2 id=x>Setup steps</h2>\n<p class=\"a>b\">Install the tool</p></body></html>";
        let tree = parse(src, "f");
        for n in &tree.nodes()[1..] {
            let source = &src[n.span.start..n.span.end];
            let first = n.text.split_whitespace().next().unwrap();
            assert!(source.contains(first), "{source:?} lacks {first:?}");
            assert!(
                source.starts_with('<') && source.ends_with('>'),
                "{source:?}"
            );
        }
        assert_eq!(
            &src[tree.node(2).span.start..tree.node(2).span.end],
            "<p class=\"a>b\">Install the tool</p>"
        );
    }

    #[test]
    fn a_table_with_spans_is_a_grid_and_its_head_is_the_header() {
        let src = "<table><caption>Fruit  prices</caption>\
                   <thead><tr><th>Fruit<th>Kind<th>Price</thead>\
                   <tbody><tr><td rowspan=2>Apple<td>Gala<td>1\
                   <tr><td>Fuji<td>2\
                   <tr><td colspan=\"2\">Total<td><table><tr><td>3<td>EUR</table></tbody></table>\
                   <p>after";
        let tree = parse(src, "f");
        assert_eq!(
            texts(&tree),
            vec![
                "Fruit prices",
                "Fruit | Kind | Price\nApple | Gala | 1\nApple | Fuji | 2\nTotal |  | 3 EUR",
                "after"
            ]
        );
        let table = tree.node(2);
        assert_eq!(table.table, Some(TableShape::headed(1)));
        assert!(src[table.span.start..table.span.end].starts_with("<table>"));
        assert!(src[table.span.start..table.span.end].ends_with("</table>"));
    }

    #[test]
    fn a_table_in_a_list_item_splits_the_list_around_it() {
        let src = "<ul><li>one<li>two<table><tr><th>k<th>v<tr><td>a<td>b</table><li>three</ul>";
        let tree = parse(src, "f");
        assert_eq!(
            texts(&tree),
            vec!["- one\n- two", "k | v\na | b", "- three"]
        );
        assert!(tree.node(2).table.is_some() && tree.node(3).table.is_none());
    }

    #[test]
    fn implied_end_tags_close_p_li_and_cells() {
        let src = "<body><p>one<p>two<ul><li>a<li>b<ul><li>b1</ul><li>c</ul>after list\
                   <table><tr><th>h1<th>h2<tr><td>1<td><p>2</p></table><p>end</body>";
        let tree = parse(src, "f");
        assert_eq!(
            texts(&tree),
            vec![
                "one",
                "two",
                "- a\n- b\n  - b1\n- c",
                "after list",
                "h1 | h2\n1 | 2",
                "end"
            ]
        );
    }

    #[test]
    fn ordered_lists_definitions_quotes_and_captions() {
        let src = "<ol><li>first</li><li>second<p>more</p></li></ol><dl><dt>Term<dd>Meaning</dl>\
                   <blockquote><p>q1</p><p>q2</p></blockquote><figure><img src=x alt=y><figcaption>Fig 1</figcaption></figure>";
        let tree = parse(src, "f");
        assert_eq!(
            texts(&tree),
            vec![
                "1. first\n2. second\n  more",
                "Term",
                "Meaning",
                "q1\nq2",
                "Fig 1"
            ]
        );
    }

    #[test]
    fn loose_text_in_containers_becomes_paragraphs() {
        let src =
            "<div>Hello <b>world</b><br>next line<div>inner</div> tail <a href=#>link</a></div><section>s</section>";
        let tree = parse(src, "f");
        assert_eq!(
            texts(&tree),
            vec!["Hello world\nnext line", "inner", "tail link", "s"]
        );
        let tail = tree.node(3).span;
        assert_eq!(&src[tail.start..tail.end], "tail <a href=#>link");
    }

    #[test]
    fn unclosed_head_and_uppercase_tags_do_not_hide_the_body() {
        let src =
            "<HTML><HEAD><TITLE>Old page</TITLE><BODY><H2>Part</H2><P>Text one<P>Text two</BODY>";
        let tree = parse(src, "f");
        assert_eq!(tree.title(), "Old page");
        assert_eq!(texts(&tree), vec!["Part", "Text one", "Text two"]);
        assert_eq!(tree.node(2).parent, Some(1));
    }

    #[test]
    fn unclosed_title_ends_at_the_next_tag() {
        let tree = parse("<title>Name<body><p>x</p>", "f");
        assert_eq!(tree.title(), "Name");
        assert_eq!(texts(&tree), vec!["x"]);
    }

    #[test]
    fn comments_and_stray_markup_are_harmless() {
        let src = "<!-- <p>hidden</p> --><p>a < b and c > d</p><!doctype x><?php echo 1 ?></nope><p>ok</p><p";
        let tree = parse(src, "f");
        assert_eq!(texts(&tree), vec!["a < b and c > d", "ok"]);
    }

    #[test]
    fn deep_unclosed_nesting_stays_bounded() {
        let src = format!(
            "{}<p>deep text</p>{}",
            "<b>".repeat(50_000),
            "</i>".repeat(50_000)
        );
        let tree = parse(&src, "f");
        assert_eq!(texts(&tree), vec!["deep text"]);
    }

    #[test]
    fn never_panics_on_odd_input() {
        let pieces = [
            "<", ">", "</", "p", "li", "ul", "table", "td", "h1", "h3", "script", "title", "svg",
            "pre", "&", "#", "x", "amp;", ";", "\"", "'", "=", " ", "\n", "é", "!--", "-->", "/",
            "div", "br",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..500 {
            let mut s = String::new();
            for _ in 0..80 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            let tree = parse(&s, "f");
            for n in tree.nodes() {
                assert!(n.span.start <= n.span.end && n.span.end <= s.len(), "{s:?}");
            }
        }
    }
}
