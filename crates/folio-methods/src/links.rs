//! The `links` retriever: a notes vault's wikilinks as retrieval. It
//! searches as `hybrid` does, then adds the sections the passages found
//! link to, at most `k` more, in the order of the passage that links and
//! of its links, so an answer one link away from the best match is still
//! reached. Linked sections outside the question's scope are not added.
//! The trace records each link followed.

use serde::{Deserialize, Serialize};

use super::{MethodContext, MethodError, Params, Passage};
use folio_retrieve::SearchMode;

/// How the `links` retriever found one query's passages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct LinksPart {
    pub query: String,
    /// How many passages the search found before links were followed;
    /// the ones after them were reached by a link.
    pub searched: usize,
    pub followed: Vec<FollowedLink>,
    #[serde(default)]
    pub notes: Vec<String>,
}

/// A link followed: passage `from` links to passage `to`, as `written`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct FollowedLink {
    pub from: usize,
    pub to: usize,
    pub written: String,
}

/// Shown when the passages found link nowhere new.
const NO_LINKS: &str =
    "The passages found link to no other section in scope, so they are the search's alone.";

/// The `params.k` passages a hybrid search finds for `query`, then the
/// sections they link to, numbered after them.
pub(super) async fn linked(
    ctx: &MethodContext<'_>,
    query: &str,
    params: &Params,
) -> Result<(Vec<Passage>, LinksPart), MethodError> {
    let mut passages = ctx.search(query, params.k, SearchMode::Hybrid).await?;
    let searched = passages.len();
    // Each linked chunk once, with the passage that led to it and its link.
    let mut targets: Vec<(i64, f64, usize, String)> = Vec::new();
    'passages: for p in &passages {
        for link in ctx.linked(p.chunk_id).await? {
            if targets.len() == params.k {
                break 'passages;
            }
            let known = passages.iter().any(|q| q.chunk_id == link.to_chunk)
                || targets.iter().any(|t| t.0 == link.to_chunk);
            if !known {
                targets.push((link.to_chunk, p.score, p.number, link.written));
            }
        }
    }
    let ranked: Vec<(i64, f64)> = targets.iter().map(|t| (t.0, t.1)).collect();
    let mut followed = Vec::new();
    for mut added in ctx.passages(query, &ranked).await? {
        added.number = passages.len() + 1;
        if let Some((_, _, from, written)) = targets.iter().find(|t| t.0 == added.chunk_id) {
            followed.push(FollowedLink {
                from: *from,
                to: added.number,
                written: written.clone(),
            });
        }
        passages.push(added);
    }
    let notes = match followed.is_empty() {
        true => vec![NO_LINKS.to_string()],
        false => Vec::new(),
    };
    Ok((
        passages,
        LinksPart {
            query: query.to_string(),
            searched,
            followed,
            notes,
        },
    ))
}

/// The links followed, in an exported answer.
pub fn write_links(out: &mut String, part: &LinksPart) {
    use std::fmt::Write as _;
    if part.followed.is_empty() {
        let _ = writeln!(out, "{NO_LINKS}\n");
        return;
    }
    let links: Vec<String> = part
        .followed
        .iter()
        .map(|l| {
            format!(
                "[{}] → [{}] by `[[{}]]`",
                l.from,
                l.to,
                l.written.replace('`', "'")
            )
        })
        .collect();
    let _ = writeln!(out, "{}.\n", links.join("; "));
}
