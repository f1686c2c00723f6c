//! `folio links PATH`: a note's place in its vault, as text: its aliases
//! and tags, the links it makes (where each lands now, or that nothing
//! does) and the notes that link to it.

use std::fmt::Write;

use folio_engine::path_text::shown;
use folio_engine::store::{NoteLinks, OutgoingLink};

/// What `folio links` prints.
pub fn render(links: &NoteLinks) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(out, "{}", shown(&links.path));
    if !links.aliases.is_empty() {
        let _ = writeln!(out, "  aliases: {}", links.aliases.join(", "));
    }
    if !links.tags.is_empty() {
        let tags: Vec<String> = links.tags.iter().map(|t| format!("#{t}")).collect();
        let _ = writeln!(out, "  tags: {}", tags.join(" "));
    }
    let _ = writeln!(out, "\nlinks ({}):", links.outgoing.len());
    for link in &links.outgoing {
        let _ = writeln!(out, "  {}", outgoing(link));
    }
    let _ = writeln!(out, "\nbacklinks ({}):", links.backlinks.len());
    for back in &links.backlinks {
        let context: String = back
            .context
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let context: String = context.chars().take(70).collect();
        let _ = writeln!(out, "  {} ({})", shown(&back.path), back.written);
        let _ = writeln!(out, "    {context}");
    }
    out
}

fn outgoing(link: &OutgoingLink) -> String {
    let kind = if link.embed { "![[" } else { "[[" };
    let written = format!("{kind}{}]]", link.written);
    match &link.to {
        None => format!("{written} → unresolved: no note has that name"),
        Some(end) => {
            let missing = end
                .missing
                .as_ref()
                .map(|m| format!(" (no {m} there; the note itself)"))
                .unwrap_or_default();
            format!("{written} → {}{missing}", shown(&end.path))
        }
    }
}
