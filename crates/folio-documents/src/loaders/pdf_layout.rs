//! Where a PDF page's text is drawn, so that a passage can be highlighted on
//! the rendered page exactly, without searching the page for its words.
//!
//! [`PageWriter`] is the pdf-extract output device pages are read with. It
//! writes a page's text by the same rules as pdf-extract's plain-text output,
//! so the text (and every span into it) is what that output gives:
//! - a space before a glyph that starts more than a tenth of the font size
//!   after the previous one ends;
//! - a newline before one whose baseline is more than one and a half font
//!   sizes away, or that starts to the left of where the previous glyph
//!   ended and more than half a font size up or down.
//!
//! The rules apply at the first glyph of each shown string, as there. Beside
//! the text it records each run of glyphs written without a break (a word,
//! as a rule) as a [`TextRun`]: its byte range in the page's text and its box
//! in PDF user space. [`PageLayout::boxes`] turns a byte range into one box
//! per line, which is what the store keeps for each chunk.

use std::fmt::Write as _;

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};
use serde::{Deserialize, Serialize};

use crate::expansion;

/// A rectangle on a PDF page in PDF user space (points, origin at the
/// bottom left, before the page's rotation), as pdf.js's viewports take it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct PdfRect {
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

impl PdfRect {
    fn union(self, other: PdfRect) -> PdfRect {
        PdfRect {
            x0: self.x0.min(other.x0),
            y0: self.y0.min(other.y0),
            x1: self.x1.max(other.x1),
            y1: self.y1.max(other.y1),
        }
    }

    fn height(self) -> f32 {
        self.y1 - self.y0
    }

    /// Whether two boxes sit on one line: they overlap vertically by more
    /// than half the lower one's height.
    fn same_line(self, other: PdfRect) -> bool {
        let overlap = self.y1.min(other.y1) - self.y0.max(other.y0);
        overlap > 0.5 * self.height().min(other.height())
    }

    /// Little-endian f32s, four per box: how the store keeps a chunk's boxes.
    pub fn encode(boxes: &[PdfRect]) -> Vec<u8> {
        boxes
            .iter()
            .flat_map(|r| [r.x0, r.y0, r.x1, r.y1])
            .flat_map(f32::to_le_bytes)
            .collect()
    }

    /// The boxes [`PdfRect::encode`] wrote; trailing bytes that do not make
    /// a whole box are ignored.
    pub fn decode(bytes: &[u8]) -> Vec<PdfRect> {
        bytes
            .chunks_exact(16)
            .map(|b| {
                let f = |i: usize| f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                PdfRect {
                    x0: f(0),
                    y0: f(4),
                    x1: f(8),
                    y1: f(12),
                }
            })
            .collect()
    }
}

/// Glyphs written together on one baseline: their bytes in the page's text
/// and the box they cover.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextRun {
    pub start: u32,
    pub end: u32,
    pub rect: PdfRect,
}

/// The runs of one page's text, in text order. Empty for a page whose text
/// came from OCR or whose glyph positions were unusable.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageLayout {
    pub runs: Vec<TextRun>,
}

impl PageLayout {
    /// One box per line of the text in `start..end`: the runs that overlap
    /// it, merged while they stay on one line.
    pub fn boxes(&self, start: usize, end: usize) -> Vec<PdfRect> {
        let first = self.runs.partition_point(|r| (r.end as usize) <= start);
        let mut boxes: Vec<PdfRect> = Vec::new();
        for run in self.runs[first..]
            .iter()
            .take_while(|r| (r.start as usize) < end)
        {
            match boxes.last_mut() {
                Some(last) if last.same_line(run.rect) => *last = last.union(run.rect),
                _ => boxes.push(run.rect),
            }
        }
        boxes
    }
}

/// How far a glyph's box reaches below and above its baseline, in font
/// sizes: the usual descent and ascent of Latin fonts. pdf-extract does not
/// hand over the font's own metrics, and a highlight needs no more.
const DESCENT: f64 = 0.2;
const ASCENT: f64 = 0.8;

/// A pdf-extract output device for one page: its text, and its runs.
pub struct PageWriter {
    text: String,
    runs: Vec<TextRun>,
    /// The run being extended, if the last glyph may continue it.
    open: Option<TextRun>,
    page_height: f64,
    last_end: f64,
    last_y: f64,
    word_start: bool,
}

impl Default for PageWriter {
    fn default() -> Self {
        PageWriter {
            text: String::new(),
            runs: Vec::new(),
            open: None,
            page_height: 0.0,
            last_end: 100_000.0,
            last_y: 0.0,
            word_start: false,
        }
    }
}

impl PageWriter {
    pub fn finish(mut self) -> (String, PageLayout) {
        self.close_run();
        (self.text, PageLayout { runs: self.runs })
    }

    fn close_run(&mut self) {
        if let Some(run) = self.open.take() {
            // Kept until the page's document is stored: part of what the
            // file produces (crate::expansion), a run's worth each.
            if expansion::charge(std::mem::size_of::<TextRun>() as u64).is_ok() {
                self.runs.push(run);
            }
        }
    }

    fn offset(&self) -> u32 {
        u32::try_from(self.text.len()).unwrap_or(u32::MAX)
    }
}

impl OutputDev for PageWriter {
    fn begin_page(
        &mut self,
        _page: u32,
        media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.page_height = media_box.ury - media_box.lly;
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        self.close_run();
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        glyph: &str,
    ) -> Result<(), OutputError> {
        // A form drawn on every page, or one drawn thousands of times on
        // one, produces text without limit from a few bytes of PDF.
        if expansion::charge(glyph.len() as u64 + 1).is_err() {
            return Err(OutputError::FormatError(std::fmt::Error));
        }
        // The plain-text output's geometry, kept as it is (a mirrored text
        // matrix makes `size` NaN there, and so here) so the text matches.
        let (vx, vy) = (
            font_size * (trm.m11 + trm.m21),
            font_size * (trm.m12 + trm.m22),
        );
        let size = (vx * vy).sqrt();
        let x = trm.m31;
        let y = self.page_height - trm.m32;
        let mut broke = false;
        if self.word_start {
            if (y - self.last_y).abs() > size * 1.5 {
                self.text.push('\n');
                broke = true;
            }
            if x < self.last_end && (y - self.last_y).abs() > size * 0.5 {
                self.text.push('\n');
                broke = true;
            }
            if x > self.last_end + size * 0.1 {
                self.text.push(' ');
                broke = true;
            }
        }
        let start = self.offset();
        write!(self.text, "{glyph}")?;
        self.word_start = false;
        self.last_y = y;
        self.last_end = x + width * size;

        let extent = (vx * vy).abs().sqrt();
        let baseline = trm.m32;
        let rect = PdfRect {
            x0: x as f32,
            y0: (baseline - DESCENT * extent) as f32,
            x1: (x + width * extent) as f32,
            y1: (baseline + ASCENT * extent) as f32,
        };
        let usable = [rect.x0, rect.y0, rect.x1, rect.y1]
            .iter()
            .all(|v| v.is_finite());
        if broke || glyph.trim().is_empty() || !usable {
            self.close_run();
        }
        if glyph.trim().is_empty() || !usable {
            return Ok(());
        }
        let end = self.offset();
        match self.open.as_mut() {
            Some(run) if run.rect.same_line(rect) => {
                run.end = end;
                run.rect = run.rect.union(rect);
            }
            _ => {
                self.close_run();
                self.open = Some(TextRun { start, end, rect });
            }
        }
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.word_start = true;
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    /// Drawing a form costs its content each time, text or not: forms
    /// that draw each other ten times a level are billions of draws from
    /// a few objects, and would keep a core busy without producing a glyph.
    fn begin_form(&mut self, len: usize) -> Result<(), OutputError> {
        expansion::charge(len as u64 + 1).map_err(|_| OutputError::FormatError(std::fmt::Error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x0: f32, y0: f32, x1: f32, y1: f32) -> PdfRect {
        PdfRect { x0, y0, x1, y1 }
    }

    fn run(start: u32, end: u32, r: PdfRect) -> TextRun {
        TextRun {
            start,
            end,
            rect: r,
        }
    }

    #[test]
    fn a_range_becomes_one_box_per_line() {
        // "one two" on a line at y 700, "three" on the next at y 686.
        let layout = PageLayout {
            runs: vec![
                run(0, 3, rect(72.0, 698.0, 90.0, 708.0)),
                run(4, 7, rect(94.0, 698.0, 112.0, 708.0)),
                run(8, 13, rect(72.0, 684.0, 101.0, 694.0)),
            ],
        };
        assert_eq!(
            layout.boxes(0, 13),
            vec![
                rect(72.0, 698.0, 112.0, 708.0),
                rect(72.0, 684.0, 101.0, 694.0)
            ]
        );
        assert_eq!(layout.boxes(4, 7), vec![rect(94.0, 698.0, 112.0, 708.0)]);
        // A range that ends inside a run still covers it; one past the end
        // covers nothing.
        assert_eq!(layout.boxes(9, 10), vec![rect(72.0, 684.0, 101.0, 694.0)]);
        assert!(layout.boxes(13, 20).is_empty());
    }

    #[test]
    fn boxes_survive_their_encoding() {
        let boxes = vec![rect(1.5, 2.0, 300.25, 14.0), rect(-3.0, 0.0, 8.0, 9.5)];
        let bytes = PdfRect::encode(&boxes);
        assert_eq!(bytes.len(), 32);
        assert_eq!(PdfRect::decode(&bytes), boxes);
        assert_eq!(PdfRect::decode(&bytes[..20]), boxes[..1]);
    }
}
