//! Zip-based documents (DOCX, PPTX, XLSX, ODT, EPUB): the members a loader
//! reads, each decompressed against one budget for the whole file, so a
//! compression bomb spread over many members costs no more memory than one
//! in a single member. A member is decompressed through a reader that stops
//! one byte past what the budget has left; nothing trusts the sizes the zip
//! declares.

use std::collections::HashMap;
use std::io::{Cursor, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};

use zip::result::ZipError;
use zip::ZipArchive;

use super::xml::{walk, Node};
use super::LoadError;
use crate::expansion;

const DUBLIN_CORE_NAMESPACE: &[u8] = b"http://purl.org/dc/elements/1.1/";

/// Legacy Office files and password-protected OOXML are OLE compound files.
const OLE_SIGNATURE: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";

pub(super) struct Package<'b> {
    archive: ZipArchive<Cursor<&'b [u8]>>,
    format: &'static str,
    /// Decompressed bytes this file may still produce.
    budget_left: u64,
    budget: u64,
}

impl<'b> Package<'b> {
    /// Opens `bytes` as the zip container of a `format` file that may
    /// decompress to at most `budget` bytes in all.
    pub fn open(bytes: &'b [u8], format: &'static str, budget: u64) -> Result<Self, LoadError> {
        if bytes.starts_with(OLE_SIGNATURE) {
            return Err(LoadError::Corrupt {
                format,
                reason: format!(
                    "an OLE compound file (a legacy Office file, or a password-protected \
                     document), not {}",
                    format.to_uppercase()
                ),
            });
        }
        // The zip reader is fed raw, attacker-shaped bytes; a panic there
        // must fail this file, not the batch.
        let archive = catch_unwind(|| ZipArchive::new(Cursor::new(bytes)))
            .map_err(|_| "the zip reader failed on this file".to_owned())
            .and_then(|opened| opened.map_err(|e| format!("not a zip archive: {e}")))
            .map_err(|reason| LoadError::Corrupt { format, reason })?;
        Ok(Package {
            archive,
            format,
            budget_left: budget,
            budget,
        })
    }

    pub fn corrupt(&self, reason: String) -> LoadError {
        LoadError::Corrupt {
            format: self.format,
            reason,
        }
    }

    /// The member `name` as UTF-8 text, `None` when the package has no such
    /// member. Its decompressed size counts against the file's budget.
    pub fn text(&mut self, name: &str) -> Result<Option<String>, LoadError> {
        let Some(bytes) = self.bytes(name)? else {
            return Ok(None);
        };
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| self.corrupt(format!("{name} is not UTF-8")))
    }

    /// Like [`Package::text`], for a member that only refines the document
    /// (styles, a title): a missing or unreadable one is `None`, and only
    /// running over the budget is an error.
    pub fn optional_text(&mut self, name: &str) -> Result<Option<String>, LoadError> {
        match self.text(name) {
            Err(e @ LoadError::OverBudget { .. }) => Err(e),
            read => Ok(read.ok().flatten()),
        }
    }

    /// Like [`Package::text`], for a member the document cannot do without.
    pub fn required_text(&mut self, name: &str, what: &str) -> Result<String, LoadError> {
        self.text(name)?
            .ok_or_else(|| self.corrupt(format!("{name} is missing (not {what}?)")))
    }

    /// The first `dc:title` in member `part` (whose root element is
    /// `root`): ODT's `meta.xml`, OOXML's `docProps/core.xml`, EPUB's
    /// package document. The title only names the document, so a missing or
    /// broken part gives `None`; only running over the budget is an error.
    pub fn dublin_core_title(
        &mut self,
        part: &str,
        root: &[u8],
    ) -> Result<Option<String>, LoadError> {
        let Some(xml) = self.optional_text(part)? else {
            return Ok(None);
        };
        let (mut title, mut depth) = (String::new(), 0u32);
        let read = walk(&xml, self.format, part, root, |node| match node {
            Node::Open { element, empty } if !empty && (depth > 0 || title.is_empty()) => {
                let is_title = element.ns == DUBLIN_CORE_NAMESPACE && element.local == b"title";
                if depth > 0 || is_title {
                    depth += 1;
                }
            }
            Node::Close { .. } if depth > 0 => depth -= 1,
            Node::Text(text) if depth > 0 => title.push_str(text),
            _ => {}
        });
        let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
        Ok((read.is_ok() && !title.is_empty()).then_some(title))
    }

    /// The relationships of OOXML part `part` (DOCX, PPTX, XLSX), with
    /// targets resolved to member names; external targets (links) are left
    /// out. A package without them has none.
    pub fn relationships(&mut self, part: &str) -> Result<Vec<Relationship>, LoadError> {
        let (dir, file) = part.rsplit_once('/').unwrap_or(("", part));
        let rels_part = if dir.is_empty() {
            format!("_rels/{file}.rels")
        } else {
            format!("{dir}/_rels/{file}.rels")
        };
        let Some(xml) = self.text(&rels_part)? else {
            return Ok(Vec::new());
        };
        let mut found = Vec::new();
        walk(&xml, self.format, &rels_part, b"Relationships", |node| {
            if let Node::Open { element, .. } = node {
                let external = element
                    .attribute(b"TargetMode")
                    .is_some_and(|m| m == "External");
                if element.local != b"Relationship" || external {
                    return;
                }
                let target = element
                    .attribute(b"Target")
                    .and_then(|t| member_name(dir, &t));
                if let (Some(id), Some(target)) = (element.attribute(b"Id"), target) {
                    found.push(Relationship {
                        id,
                        kind: element.attribute(b"Type").unwrap_or_default(),
                        target,
                    });
                }
            }
        })?;
        Ok(found)
    }

    fn bytes(&mut self, name: &str) -> Result<Option<Vec<u8>>, LoadError> {
        let format = self.format;
        let left = self.budget_left;
        let read = catch_unwind(AssertUnwindSafe(|| {
            let member = match self.archive.by_name(name) {
                Ok(member) => member,
                Err(ZipError::FileNotFound) => return Ok(None),
                Err(e) => return Err(format!("cannot read {name}: {e}")),
            };
            let mut bytes = Vec::new();
            member
                .take(left.saturating_add(1))
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot decompress {name}: {e}"))?;
            Ok(Some(bytes))
        }))
        .unwrap_or_else(|_| Err(format!("the zip reader failed on {name}")))
        .map_err(|reason| LoadError::Corrupt { format, reason })?;
        let Some(bytes) = read else {
            return Ok(None);
        };
        let over_budget = LoadError::OverBudget {
            format,
            budget_mib: self.budget >> 20,
        };
        if bytes.len() as u64 > left {
            return Err(over_budget);
        }
        // A member is held while the loader makes the document from it, so
        // it counts against what the file may produce as well (and a member
        // read again, a slide or chapter that many entries name, counts
        // each time it is read). When that has no room for it, the failed
        // charge has the file refused as expanded.
        if expansion::charge(bytes.len() as u64).is_err() {
            return Err(over_budget);
        }
        self.budget_left -= bytes.len() as u64;
        Ok(Some(bytes))
    }
}

/// One OOXML relationship: `kind` is its type URI, `target` a member name.
pub(super) struct Relationship {
    pub id: String,
    pub kind: String,
    pub target: String,
}

impl Relationship {
    /// Whether its type URI ends in `/{name}` (`slide`, `notesSlide`, …).
    pub fn is(&self, name: &str) -> bool {
        self.kind
            .rsplit_once('/')
            .is_some_and(|(_, last)| last == name)
    }
}

/// The targets of the relationships of type `kind`, by id; the first of an
/// id wins. A part may list thousands of slides or sheets, each looked up
/// by id, so not by a scan of the list each time.
pub(super) fn targets<'r>(
    relationships: &'r [Relationship],
    kind: &str,
) -> HashMap<&'r str, &'r str> {
    let mut found = HashMap::new();
    for r in relationships.iter().filter(|r| r.is(kind)) {
        found.entry(r.id.as_str()).or_insert(r.target.as_str());
    }
    found
}

/// The member a reference inside the package names: `target` relative to
/// the folder `dir` (or from the package root when it starts with `/`),
/// with `.` and `..` resolved and any fragment or query dropped. `None` for
/// a reference that climbs out of the package or names a URL.
pub(super) fn member_name(dir: &str, target: &str) -> Option<String> {
    let target = target.split(['#', '?']).next()?;
    if target.is_empty() || target.contains(':') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    let base = if target.starts_with('/') { "" } else { dir };
    for part in base.split('/').chain(target.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    let name = parts.join("/");
    Some(percent_decoded(&name))
}

/// `%20` and the like decoded, as hrefs in EPUB and OOXML may be; a
/// sequence that is not valid is kept as it is.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}

#[cfg(test)]
pub(super) mod tests {
    use std::io::Write;

    use zip::write::SimpleFileOptions;
    use zip::{CompressionMethod, ZipWriter};

    use super::*;

    /// A deflated zip of `members`, as the zip-based formats' tests need.
    pub(in crate::loaders) fn zip(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        for (name, contents) in members {
            writer.start_file(*name, options).unwrap();
            writer.write_all(contents).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    #[test]
    fn members_are_read_until_the_budget_for_the_whole_file_runs_out() {
        let bytes = zip(&[("a.xml", &[b'a'; 600]), ("b.xml", &[b'b'; 600])]);
        let mut package = Package::open(&bytes, "docx", 1_000).unwrap();
        assert_eq!(package.text("a.xml").unwrap().unwrap().len(), 600);
        assert!(package.text("missing.xml").unwrap().is_none());
        // Each member alone fits; together they do not.
        assert!(matches!(
            package.text("b.xml"),
            Err(LoadError::OverBudget { format: "docx", .. })
        ));
        let mut package = Package::open(&bytes, "docx", 1_200).unwrap();
        assert!(package.text("a.xml").is_ok() && package.text("b.xml").is_ok());
    }

    #[test]
    fn ole_files_random_bytes_and_bad_members_are_corrupt() {
        for bytes in [
            OLE_SIGNATURE.to_vec(),
            b"PK\x03\x04".to_vec(),
            b"plain".to_vec(),
        ] {
            assert!(matches!(
                Package::open(&bytes, "pptx", 1 << 20),
                Err(LoadError::Corrupt { format: "pptx", .. })
            ));
        }
        let bytes = zip(&[("latin1.xml", b"caf\xe9")]);
        let mut package = Package::open(&bytes, "odt", 1 << 20).unwrap();
        assert!(matches!(
            package.required_text("content.xml", "an ODF document"),
            Err(LoadError::Corrupt { .. })
        ));
        assert!(matches!(
            package.text("latin1.xml"),
            Err(LoadError::Corrupt { .. })
        ));
    }

    #[test]
    fn references_resolve_inside_the_package_only() {
        assert_eq!(
            member_name("ppt", "slides/slide1.xml").unwrap(),
            "ppt/slides/slide1.xml"
        );
        assert_eq!(
            member_name("ppt/slides", "../notesSlides/n1.xml").unwrap(),
            "ppt/notesSlides/n1.xml"
        );
        assert_eq!(member_name("ppt", "/xl/a.xml").unwrap(), "xl/a.xml");
        assert_eq!(
            member_name("OEBPS", "./Text/Chapter%201.xhtml#start").unwrap(),
            "OEBPS/Text/Chapter 1.xhtml"
        );
        assert_eq!(member_name("", "../../etc/passwd"), None);
        assert_eq!(member_name("a", "https://example.com/x"), None);
        assert_eq!(member_name("a", ""), None);
    }

    #[test]
    fn relationships_are_read_and_external_ones_left_out() {
        let rels = br#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://x/officeDocument/2006/relationships/slide" Target="slides/slide1.xml"/><Relationship Id="rId2" Type="http://x/hyperlink" Target="https://example.com" TargetMode="External"/></Relationships>"#;
        let bytes = zip(&[("ppt/_rels/presentation.xml.rels", rels)]);
        let mut package = Package::open(&bytes, "pptx", 1 << 20).unwrap();
        let found = package.relationships("ppt/presentation.xml").unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].id.as_str(), found[0].target.as_str()),
            ("rId1", "ppt/slides/slide1.xml")
        );
        assert!(found[0].is("slide") && !found[0].is("notesSlide"));
        assert!(package
            .relationships("ppt/slides/slide1.xml")
            .unwrap()
            .is_empty());
    }
}
