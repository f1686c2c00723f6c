//! Typed method options. A method declares each of its options once, as a
//! constant: a [`Count`], a [`Number`] or a [`Pick`] of a [`Choice`] type,
//! with its name, help, default and range or choices. The declaration that
//! `folio methods`, the CLI's flags and the app's form show, the check that
//! refuses a bad value before any run is stored, and the typed value the
//! method reads all come from that one constant.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::retrievers::RetrieverKind;
use super::{MethodError, MethodOption, Params};
use folio_core::choice::Choice;

/// How a method's passages are found. Every method that retrieves through
/// [`super::MethodContext::retrieve`] declares it, so any of them runs over
/// any retriever; the method's code never names one.
pub const RETRIEVER: Pick<RetrieverKind> = Pick {
    name: "retriever",
    help: "How passages are found: hybrid (dense + BM25), dense, bm25, ig2rag (a walk of the information-gain graph) or rdr2 (routing through the searched documents' headings).",
    default: RetrieverKind::Hybrid,
};

/// The values a numeric option accepts. Checked by `Params::resolve`, so an
/// out-of-range value is refused before a run is recorded.
#[derive(
    Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct OptionRange {
    pub min: f64,
    /// The minimum itself is not allowed (a probability above 0).
    pub min_exclusive: bool,
    /// `None`: no upper bound.
    pub max: Option<f64>,
}

impl OptionRange {
    /// Why `value` is outside the range, in words that name the bounds.
    pub fn refuse(&self, value: f64) -> Option<String> {
        let above_min = if self.min_exclusive {
            value > self.min
        } else {
            value >= self.min
        };
        let below_max = self.max.is_none_or(|max| value <= max);
        if above_min && below_max {
            return None;
        }
        let (min, lowest) = (
            self.min,
            if self.min_exclusive {
                "above"
            } else {
                "at least"
            },
        );
        Some(match self.max {
            None => format!("must be {lowest} {min}, not {value}"),
            Some(max) if self.min_exclusive => {
                format!("must be above {min} and at most {max}, not {value}")
            }
            Some(max) => format!("must be between {min} and {max}, not {value}"),
        })
    }
}

/// A whole number of something (seeds, rounds, tokens) within `min..=max`.
pub struct Count {
    pub name: &'static str,
    pub help: &'static str,
    pub default: usize,
    pub min: usize,
    /// `None`: no upper bound.
    pub max: Option<usize>,
}

impl Count {
    pub fn declare(&self) -> MethodOption {
        MethodOption {
            name: self.name,
            help: self.help,
            default: Value::from(self.default),
            choices: Vec::new(),
            range: Some(OptionRange {
                min: self.min as f64,
                min_exclusive: false,
                max: self.max.map(|m| m as f64),
            }),
        }
    }

    pub fn read(&self, params: &Params) -> Result<usize, MethodError> {
        params.option(self.name)
    }
}

/// A real number (a probability, a threshold, a temperature) in a range.
pub struct Number {
    pub name: &'static str,
    pub help: &'static str,
    pub default: f64,
    pub range: OptionRange,
}

impl Number {
    pub fn declare(&self) -> MethodOption {
        MethodOption {
            name: self.name,
            help: self.help,
            default: Value::from(self.default),
            choices: Vec::new(),
            range: Some(self.range),
        }
    }

    pub fn read(&self, params: &Params) -> Result<f64, MethodError> {
        params.option(self.name)
    }
}

/// One of the named values of a [`Choice`] type (a variant, a rubric, a
/// search mode).
pub struct Pick<T: Choice> {
    pub name: &'static str,
    pub help: &'static str,
    pub default: T,
}

impl<T: Choice> Pick<T> {
    pub fn declare(&self) -> MethodOption {
        MethodOption {
            name: self.name,
            help: self.help,
            default: Value::from(self.default.as_str()),
            choices: T::ALL.iter().map(|c| c.as_str()).collect(),
            range: None,
        }
    }

    pub fn read(&self, params: &Params) -> Result<T, MethodError> {
        let name: String = params.option(self.name)?;
        T::parse(&name).map_err(|e| MethodError::InvalidOption {
            name: self.name.to_string(),
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_name_their_bounds() {
        let closed = OptionRange {
            min: 1.0,
            min_exclusive: false,
            max: Some(5.0),
        };
        assert_eq!(closed.refuse(1.0), None);
        assert_eq!(closed.refuse(5.0), None);
        assert_eq!(
            closed.refuse(7.0).as_deref(),
            Some("must be between 1 and 5, not 7")
        );
        let open_below = OptionRange {
            min: 0.0,
            min_exclusive: true,
            max: Some(1.0),
        };
        assert_eq!(open_below.refuse(0.3), None);
        assert_eq!(
            open_below.refuse(0.0).as_deref(),
            Some("must be above 0 and at most 1, not 0")
        );
        let unbounded = OptionRange {
            min: 100.0,
            min_exclusive: false,
            max: None,
        };
        assert_eq!(unbounded.refuse(1e9), None);
        assert_eq!(
            unbounded.refuse(99.0).as_deref(),
            Some("must be at least 100, not 99")
        );
    }
}
