//! Scopes: the part of the library a question may draw from. A [`Scope`] is
//! what a person asks for (folders or files, collections, formats, a
//! modified-since day); [`Store::resolve_scope`] turns it into the
//! [`DocumentSet`] that retrieval filters by, inside every ranking, so a
//! scoped top-k is the best k of the scope and not a filtered global top-k.
//! A scope is resolved when a question is asked, never saved resolved: a
//! file moved out of a collection's folder leaves the collection with it.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{Result, Store, StoreError};
use folio_documents::loaders::vault::normalize_tag;
use folio_documents::loaders::Format;

/// What a question is restricted to. Each kind narrows the others: a
/// document counts when it lies in one of the places (paths and the
/// collections' folders, if any are given), has one of the formats (if any),
/// and was modified on or after `since` (if given). The default is the whole
/// library.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct Scope {
    /// Folders or files, as canonical paths: a document counts when it is
    /// one of them or lies below one.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Named collections, each a saved set of folders and tags.
    #[serde(default)]
    pub collections: Vec<String>,
    #[serde(default)]
    pub formats: Vec<Format>,
    /// Modified on or after this day (UTC).
    #[serde(default)]
    pub since: Option<Day>,
    /// Notes with any of these tags, or a tag nested under one (`area`
    /// takes `area/sub` too).
    #[serde(default)]
    pub tags: Vec<String>,
}

/// How the index names `path`: its canonical form if it exists, else the
/// path made absolute (a folder since deleted can still be named, and is
/// then reported as not indexed).
pub fn place(path: &Path) -> String {
    let placed = std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf());
    folio_core::path_text::to_text(&placed)
}

impl Scope {
    /// The scope with each path named as [`place`] names it, so a path
    /// typed relative, through a symlink or with a trailing slash matches
    /// the canonical paths the index holds.
    pub fn placed(&self) -> Scope {
        Scope {
            paths: self
                .paths
                .iter()
                .map(|p| place(&folio_core::path_text::to_path(p)))
                .collect(),
            ..self.clone()
        }
    }

    /// Whether the scope is the whole library.
    pub fn is_everything(&self) -> bool {
        self.paths.is_empty()
            && self.collections.is_empty()
            && self.formats.is_empty()
            && self.since.is_none()
            && self.tags.is_empty()
    }
}

/// How a scope reads in a message or a trace: "in /notes; collection
/// work; format pdf; modified since 2026-01-01".
impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_everything() {
            return f.write_str("the whole library");
        }
        let mut parts = Vec::new();
        if !self.paths.is_empty() {
            parts.push(format!("in {}", self.paths.join(", ")));
        }
        if !self.collections.is_empty() {
            let noun = if self.collections.len() == 1 {
                "collection"
            } else {
                "collections"
            };
            parts.push(format!("{noun} {}", self.collections.join(", ")));
        }
        if !self.formats.is_empty() {
            let names: Vec<&str> = self.formats.iter().map(|f| f.as_str()).collect();
            let noun = if names.len() == 1 {
                "format"
            } else {
                "formats"
            };
            parts.push(format!("{noun} {}", names.join(", ")));
        }
        if let Some(day) = self.since {
            parts.push(format!("modified since {day}"));
        }
        if !self.tags.is_empty() {
            let noun = if self.tags.len() == 1 { "tag" } else { "tags" };
            let tags: Vec<String> = self
                .tags
                .iter()
                .map(|t| format!("#{}", t.trim_start_matches('#')))
                .collect();
            parts.push(format!("{noun} {}", tags.join(", ")));
        }
        f.write_str(&parts.join("; "))
    }
}

/// A calendar day, written `YYYY-MM-DD`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    ts_rs::TS,
    schemars::JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
#[ts(export, type = "string")]
pub struct Day {
    year: i32,
    month: u32,
    day: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a day; write it as YYYY-MM-DD, for example 2026-01-31")]
pub struct NotADay(pub String);

impl Day {
    /// The first nanosecond of the day, UTC, in the unit documents' mtimes use.
    pub fn start_ns(self) -> i64 {
        days_from_civil(self.year, self.month, self.day) * 86_400 * 1_000_000_000
    }
}

impl FromStr for Day {
    type Err = NotADay;

    fn from_str(text: &str) -> std::result::Result<Day, NotADay> {
        let bad = || NotADay(text.to_string());
        let mut parts = text.trim().splitn(3, '-');
        let mut next = |len: usize| {
            parts
                .next()
                .filter(|p| p.len() == len && p.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|p| p.parse::<u32>().ok())
                .ok_or_else(bad)
        };
        let (year, month, day) = (next(4)? as i32, next(2)?, next(2)?);
        if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return Err(bad());
        }
        Ok(Day { year, month, day })
    }
}

impl TryFrom<String> for Day {
    type Error = NotADay;

    fn try_from(text: String) -> std::result::Result<Day, NotADay> {
        text.parse()
    }
}

impl From<Day> for String {
    fn from(day: Day) -> String {
        day.to_string()
    }
}

impl fmt::Display for Day {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn days_in_month(year: i32, month: u32) -> u32 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The documents a scoped question may draw from: their ids, sorted, and a
/// bitmap over them, so a scan over every chunk tests membership with one
/// array read; and their chunks' ids, which SQL filters by (FTS5 and
/// sqlite-vec rank by chunk).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentSet {
    ids: Vec<i64>,
    bits: Vec<u64>,
    chunks: Vec<i64>,
}

impl DocumentSet {
    /// The set of documents `ids`, whose chunks are `chunks` (ids are
    /// non-negative, as SQLite assigns them).
    pub fn new(mut ids: Vec<i64>, mut chunks: Vec<i64>) -> DocumentSet {
        chunks.sort_unstable();
        chunks.dedup();
        ids.retain(|id| *id >= 0);
        ids.sort_unstable();
        ids.dedup();
        let words = ids.last().map_or(0, |max| *max as usize / 64 + 1);
        let mut bits = vec![0u64; words];
        for id in &ids {
            bits[*id as usize / 64] |= 1 << (*id as usize % 64);
        }
        DocumentSet { ids, bits, chunks }
    }

    pub fn contains(&self, id: i64) -> bool {
        usize::try_from(id).is_ok_and(|i| {
            self.bits
                .get(i / 64)
                .is_some_and(|word| word & (1 << (i % 64)) != 0)
        })
    }

    /// The ids, ascending.
    pub fn ids(&self) -> &[i64] {
        &self.ids
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The documents' chunks, ascending.
    pub fn chunks(&self) -> &[i64] {
        &self.chunks
    }

    /// The chunk ids as a JSON array, for SQL's `json_each`.
    pub(super) fn chunks_json(&self) -> String {
        serde_json::to_string(&self.chunks).unwrap_or_else(|_| "[]".into())
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// Why a scope could not be used. All but `Store` are the asker's to fix.
#[derive(Debug, thiserror::Error)]
pub enum ScopeError {
    #[error("{0} is not in the library: pick an indexed folder or file, or add its folder first")]
    NotIndexed(String),
    #[error("there is no collection `{name}`; {}", known_collections(.known))]
    UnknownCollection { name: String, known: Vec<String> },
    #[error("nothing indexed matches the scope ({0}); widen it")]
    NothingMatches(String),
    #[error("a collection needs a name of 1 to {MAX_NAME} characters without control characters")]
    BadName,
    #[error("a collection needs at least one folder or tag")]
    Empty,
    #[error("`{0}` is not a tag: a tag is letters, digits, `_`, `-` and `/`, not digits alone")]
    BadTag(String),
    #[error("no indexed note carries the tag #{0}; `folio tags` lists those that do")]
    UnknownTag(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The longest collection name, so lists and pickers can show it whole.
pub const MAX_NAME: usize = 60;

fn known_collections(known: &[String]) -> String {
    if known.is_empty() {
        "there are none yet".into()
    } else {
        format!("the collections are: {}", known.join(", "))
    }
}

impl ScopeError {
    pub fn is_user_error(&self) -> bool {
        !matches!(self, ScopeError::Store(_))
    }
}

/// One place of a scope as SQL on `documents.path`: the path itself or
/// anything below it, as a range of the path index (everything from
/// `root/` up to `root0`, `0` being the byte after `/`), so a scope reads
/// only its own documents' rows.
pub(super) const IN_PLACE: &str = "(path = ? OR (path >= ? AND path < ?))";

/// The three values [`IN_PLACE`] binds for `place`.
pub(super) fn place_bounds(place: &str) -> (&str, String, String) {
    let root = place.trim_end_matches('/');
    (place, format!("{root}/"), format!("{root}0"))
}

/// SQL selecting the chunk ids that parameter `param` holds as a JSON
/// array ([`DocumentSet::chunks_json`]). SQLite reads them into a
/// temporary index once per query.
pub(super) fn chunks_in(param: usize) -> String {
    format!("SELECT value FROM json_each(?{param})")
}

impl Store {
    /// The documents `scope` allows; `None` for the whole library. A path
    /// with nothing indexed at or below it, or an unknown collection, is an
    /// error naming it, and so is a scope that matches no document.
    pub async fn resolve_scope(
        &self,
        scope: &Scope,
    ) -> std::result::Result<Option<DocumentSet>, ScopeError> {
        if scope.is_everything() {
            return Ok(None);
        }
        for path in &scope.paths {
            if self.indexed_in(path).await? == 0 {
                return Err(ScopeError::NotIndexed(path.clone()));
            }
        }
        // Each collection is its own folders and tags; the scope's paths
        // are one more place. A document in any of them counts.
        let mut ids = Vec::new();
        if scope.collections.is_empty() || !scope.paths.is_empty() {
            ids.extend(self.documents_in(&scope.paths, scope, &[]).await?);
        }
        for name in &scope.collections {
            let Some(members) = self.collection_members(name).await? else {
                return Err(ScopeError::UnknownCollection {
                    name: name.clone(),
                    known: self.collection_names().await?,
                });
            };
            ids.extend(
                self.documents_in(&members.folders, scope, &members.tags)
                    .await?,
            );
        }
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return Err(ScopeError::NothingMatches(scope.to_string()));
        }
        let chunks = self.chunks_of_documents(&ids).await?;
        Ok(Some(DocumentSet::new(ids, chunks)))
    }

    /// The ids of every chunk of the documents `ids`.
    async fn chunks_of_documents(&self, ids: &[i64]) -> Result<Vec<i64>> {
        let ids = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        Ok(sqlx::query_scalar(
            "SELECT id FROM chunks WHERE document_id IN (SELECT value FROM json_each(?))",
        )
        .bind(ids)
        .fetch_all(&self.pool)
        .await?)
    }

    /// How many indexed documents are `place` or lie below it.
    pub async fn indexed_in(&self, place: &str) -> Result<i64> {
        let (path, from, to) = place_bounds(place);
        Ok(sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM documents WHERE status = 'indexed' AND {IN_PLACE}"
        ))
        .bind(path)
        .bind(from)
        .bind(to)
        .fetch_one(&self.pool)
        .await?)
    }

    /// Indexed documents in any of `places` (all of them when there are
    /// none) that pass `scope`'s format, day and tag filters and, if
    /// `also_tags` names any, carry one of those too (a collection's own
    /// tags), by id.
    pub(super) async fn documents_in(
        &self,
        places: &[String],
        scope: &Scope,
        also_tags: &[String],
    ) -> Result<Vec<i64>> {
        let mut sql = String::from("SELECT id FROM documents WHERE status = 'indexed'");
        if !places.is_empty() {
            let any = vec![IN_PLACE; places.len()].join(" OR ");
            sql.push_str(&format!(" AND ({any})"));
        }
        if !scope.formats.is_empty() {
            let marks = vec!["?"; scope.formats.len()].join(", ");
            sql.push_str(&format!(" AND format IN ({marks})"));
        }
        if scope.since.is_some() {
            sql.push_str(" AND mtime_ns >= ?");
        }
        let tag_groups: Vec<Vec<String>> = [scope.tags.as_slice(), also_tags]
            .into_iter()
            .filter(|tags| !tags.is_empty())
            .map(|tags| tags.iter().map(|t| tag_as_stored(t)).collect())
            .collect();
        for tags in &tag_groups {
            sql.push_str(&tagged_with_any(tags.len()));
        }
        let mut query = sqlx::query_scalar::<_, i64>(&sql);
        for place in places {
            let (path, from, to) = place_bounds(place);
            query = query.bind(path).bind(from).bind(to);
        }
        for format in &scope.formats {
            query = query.bind(format.as_str());
        }
        if let Some(day) = scope.since {
            query = query.bind(day.start_ns());
        }
        for tag in tag_groups.iter().flatten() {
            let (tag, from, to) = place_bounds(tag);
            query = query.bind(tag).bind(from).bind(to);
        }
        Ok(query.fetch_all(&self.pool).await?)
    }
}

/// A tag as `note_tags` stores it. A tag that is no tag (`a b`) is kept as
/// typed, so it matches nothing and the scope says so, rather than
/// widening to all.
fn tag_as_stored(tag: &str) -> String {
    normalize_tag(tag).unwrap_or_else(|| tag.to_lowercase())
}

/// SQL keeping documents with any of `count` tags, or one nested under
/// one: a tag and its range `area/` up to `area0`, bound as
/// [`place_bounds`] binds a path (nesting is written with `/` as paths are).
fn tagged_with_any(count: usize) -> String {
    let any = vec!["(t.tag = ? OR (t.tag >= ? AND t.tag < ?))"; count].join(" OR ");
    format!(" AND id IN (SELECT t.document_id FROM note_tags t WHERE {any})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_parse_check_the_calendar_and_count_from_the_epoch() {
        let day: Day = "2024-02-29".parse().unwrap();
        assert_eq!(day.to_string(), "2024-02-29");
        assert_eq!("1970-01-01".parse::<Day>().unwrap().start_ns(), 0);
        assert_eq!(
            "2000-03-01".parse::<Day>().unwrap().start_ns(),
            951_868_800 * 1_000_000_000
        );
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "2024-1-01",
            "24-01-01",
            "yesterday",
            "",
        ] {
            assert!(bad.parse::<Day>().is_err(), "{bad}");
        }
        let json = serde_json::to_string(&day).unwrap();
        assert_eq!(json, "\"2024-02-29\"");
        assert!(serde_json::from_str::<Day>("\"2024-02-30\"").is_err());
    }

    #[test]
    fn a_document_set_answers_membership_for_any_id() {
        let set = DocumentSet::new(vec![130, 3, 64, 3, -1], vec![9, 7, 9]);
        assert_eq!(set.chunks(), &[7, 9]);
        assert_eq!(set.ids(), &[3, 64, 130]);
        for id in [3, 64, 130] {
            assert!(set.contains(id));
        }
        for id in [-1, 0, 63, 65, 129, 131, 10_000] {
            assert!(!set.contains(id), "{id}");
        }
        assert!(DocumentSet::new(vec![], vec![]).is_empty());
    }

    #[test]
    fn a_scope_reads_as_a_phrase() {
        let scope = Scope {
            paths: vec!["/notes".into()],
            collections: vec!["work".into()],
            formats: vec![Format::Pdf, Format::Markdown],
            since: Some("2026-01-31".parse().unwrap()),
            tags: vec!["area/sub".into()],
        };
        assert_eq!(
            scope.to_string(),
            "in /notes; collection work; formats pdf, markdown; modified since 2026-01-31; tag #area/sub"
        );
        assert_eq!(Scope::default().to_string(), "the whole library");
    }
}
