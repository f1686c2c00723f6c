//! What a note says beyond its text, for the links and tags of a notes
//! vault: the names it answers to besides its file's (aliases), its tags
//! and the links it makes. Markdown's loader fills it (front matter,
//! inline `#tags`, `[[wikilinks]]`); other formats leave it empty. The
//! store keeps it beside the document, and a link is resolved when it is
//! read rather than stored resolved, so a note renamed, added or deleted
//! changes what links point at at once.

use crate::loaders::vault::LinkTarget;

/// A wikilink or an embed in a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteLink {
    /// The structure-tree node the link is written in.
    pub node: usize,
    pub target: LinkTarget,
    /// `![[…]]`: a notes app shows the target in place; Folio keeps it a
    /// link and never copies the target's text in.
    pub embed: bool,
}

/// A note's aliases, tags and links.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoteFacts {
    pub aliases: Vec<String>,
    /// Normalised (`area/sub`, lower case), each once.
    pub tags: Vec<String>,
    /// In document order.
    pub links: Vec<NoteLink>,
}

impl NoteFacts {
    pub fn is_empty(&self) -> bool {
        self.aliases.is_empty() && self.tags.is_empty() && self.links.is_empty()
    }
}
