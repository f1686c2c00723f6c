//! How the scorer grades a neighbour's information gain over a baseline
//! chunk (iG²RAG §3.1, Appendix B.2, figures 4–6). The coarse four-class
//! rubric is the paper's default; fine-grained scores and binary gain are
//! its granularity ablations. Each rubric is a build option, and the rubric
//! is stored with every edge, so graphs of different rubrics live side by
//! side and a question picks one. The store, retrieval and the graph
//! builder all speak this vocabulary, so it sits beside the layers.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::prompts::Prompt;
use crate::response_format::object_schema;
use crate::ReplySchema;
use folio_core::choice::Choice;

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    Serialize,
    Deserialize,
    ts_rs::TS,
    schemars::JsonSchema,
)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum Rubric {
    /// Four classes, Redundant / Minor / Significant / Novel.
    #[default]
    Coarse,
    /// A score from 0.00 to 1.00.
    Fine,
    /// Gain or no gain.
    Binary,
}

/// The four classes an edge is drawn in. Fine scores fall into the class
/// whose interval holds them; binary gain is Novel, no gain Redundant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum GainClass {
    Redundant,
    Minor,
    Significant,
    Novel,
}

impl GainClass {
    pub const ALL: [GainClass; 4] = [
        GainClass::Redundant,
        GainClass::Minor,
        GainClass::Significant,
        GainClass::Novel,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GainClass::Redundant => "redundant",
            GainClass::Minor => "minor",
            GainClass::Significant => "significant",
            GainClass::Novel => "novel",
        }
    }

    pub fn parse(s: &str) -> Option<GainClass> {
        GainClass::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The edge weight of a coarse grade: the middle of the paper's interval
    /// (Redundant 0.0–0.2, Minor 0.3–0.5, Significant 0.6–0.8, Novel
    /// 0.9–1.0). Redundant keeps a little weight, so a walk can still leave
    /// a node whose neighbours all repeat it.
    pub const fn weight(self) -> f64 {
        match self {
            GainClass::Redundant => 0.1,
            GainClass::Minor => 0.4,
            GainClass::Significant => 0.7,
            GainClass::Novel => 0.95,
        }
    }

    /// The class whose interval holds a score in [0, 1]; scores between two
    /// intervals go to the nearer one.
    pub fn of_score(score: f64) -> GainClass {
        if score < 0.25 {
            GainClass::Redundant
        } else if score < 0.55 {
            GainClass::Minor
        } else if score < 0.85 {
            GainClass::Significant
        } else {
            GainClass::Novel
        }
    }
}

/// One neighbour's grade as the scorer gave it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grade {
    pub class: GainClass,
    pub weight: f64,
}

/// Why a grade could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadGrade(pub String);

impl Choice for Rubric {
    const ALL: &'static [Rubric] = &[Rubric::Coarse, Rubric::Fine, Rubric::Binary];

    fn as_str(self) -> &'static str {
        match self {
            Rubric::Coarse => "coarse",
            Rubric::Fine => "fine",
            Rubric::Binary => "binary",
        }
    }
}

static COARSE: Prompt = crate::prompt!(
    "graph/coarse.j2",
    ["baseline", "passages", "labels", "retry"]
);
static FINE: Prompt = crate::prompt!("graph/fine.j2", ["baseline", "passages", "labels", "retry"]);
static BINARY: Prompt = crate::prompt!(
    "graph/binary.j2",
    ["baseline", "passages", "labels", "retry"]
);
/// The graph build's grading prompts, one per rubric.
pub static PROMPTS: &[&Prompt] = &[&COARSE, &FINE, &BINARY];

impl Rubric {
    pub fn prompt(self) -> &'static Prompt {
        match self {
            Rubric::Coarse => &COARSE,
            Rubric::Fine => &FINE,
            Rubric::Binary => &BINARY,
        }
    }

    /// Reads one grade from the reply's JSON value for a neighbour.
    pub fn grade(self, value: &serde_json::Value) -> Result<Grade, BadGrade> {
        match self {
            Rubric::Coarse => {
                let label = value
                    .as_str()
                    .ok_or_else(|| BadGrade(format!("{value} is not one of the four classes")))?;
                let class = GainClass::parse(&label.trim().to_lowercase()).ok_or_else(|| {
                    BadGrade(format!(
                        "\"{label}\" is not redundant, minor, significant or novel"
                    ))
                })?;
                Ok(Grade {
                    class,
                    weight: class.weight(),
                })
            }
            Rubric::Fine => {
                let score = value
                    .as_f64()
                    .filter(|s| (0.0..=1.0).contains(s))
                    .ok_or_else(|| BadGrade(format!("{value} is not a score from 0 to 1")))?;
                Ok(Grade {
                    class: GainClass::of_score(score),
                    weight: score,
                })
            }
            Rubric::Binary => match value.as_i64() {
                Some(0) => Ok(Grade {
                    class: GainClass::Redundant,
                    weight: 0.0,
                }),
                Some(1) => Ok(Grade {
                    class: GainClass::Novel,
                    weight: 1.0,
                }),
                _ => Err(BadGrade(format!("{value} is neither 0 nor 1"))),
            },
        }
    }

    /// [`Rubric::grammar`]'s object as a JSON schema for a server; the
    /// reply is already the JSON the parser reads.
    pub fn schema(self, labels: &[String]) -> ReplySchema {
        let value = match self {
            Rubric::Coarse => json!({ "enum": ["redundant", "minor", "significant", "novel"] }),
            Rubric::Fine => json!({ "type": "number", "minimum": 0, "maximum": 1 }),
            Rubric::Binary => json!({ "enum": [0, 1] }),
        };
        let properties: Vec<(&str, Value)> =
            labels.iter().map(|l| (l.as_str(), value.clone())).collect();
        ReplySchema {
            schema: object_schema(&properties),
            to_text: |v| Some(v.to_string()),
        }
    }

    /// A llama.cpp grammar that admits exactly the JSON object the prompt
    /// asks for: every label once, in order, each with a value of this
    /// rubric. A backend that constrains neither this way nor with
    /// [`Rubric::schema`] leaves the parser to check the reply.
    pub fn grammar(self, labels: &[String]) -> String {
        let value = match self {
            Rubric::Coarse => {
                r#"value ::= "\"redundant\"" | "\"minor\"" | "\"significant\"" | "\"novel\"""#
            }
            Rubric::Fine => r#"value ::= "0." [0-9] [0-9] | "1.00""#,
            Rubric::Binary => r#"value ::= "0" | "1""#,
        };
        let pairs: Vec<String> = labels
            .iter()
            .map(|l| format!(r#""\"{l}\": " value"#))
            .collect();
        format!(
            "root ::= \"{{\" {} \"}}\"\n{value}\n",
            pairs.join(r#" ", " "#)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_reply_is_the_object_the_parser_grades() {
        let labels = ["A".to_string(), "B".to_string()];
        let schema = Rubric::Coarse.schema(&labels);
        assert_eq!(schema.schema["required"], json!(["A", "B"]));
        let text = (schema.to_text)(&json!({"A": "novel", "B": "minor"})).unwrap();
        let reply: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            Rubric::Coarse.grade(&reply["A"]).unwrap().class,
            GainClass::Novel
        );
    }

    #[test]
    fn coarse_grades_are_the_four_classes_in_any_case() {
        let g = Rubric::Coarse.grade(&json!("Novel")).unwrap();
        assert_eq!((g.class, g.weight), (GainClass::Novel, 0.95));
        assert!(Rubric::Coarse.grade(&json!("huge")).is_err());
        assert!(Rubric::Coarse.grade(&json!(0.9)).is_err());
    }

    #[test]
    fn fine_scores_keep_their_value_and_fall_into_the_nearest_class() {
        let g = Rubric::Fine.grade(&json!(0.24)).unwrap();
        assert_eq!((g.class, g.weight), (GainClass::Redundant, 0.24));
        assert_eq!(
            Rubric::Fine.grade(&json!(0.7)).unwrap().class,
            GainClass::Significant
        );
        assert!(Rubric::Fine.grade(&json!(1.5)).is_err());
        assert!(Rubric::Fine.grade(&json!("0.5")).is_err());
    }

    #[test]
    fn binary_grades_are_zero_or_one() {
        assert_eq!(Rubric::Binary.grade(&json!(1)).unwrap().weight, 1.0);
        assert_eq!(
            Rubric::Binary.grade(&json!(0)).unwrap().class,
            GainClass::Redundant
        );
        assert!(Rubric::Binary.grade(&json!(2)).is_err());
    }

    #[test]
    fn the_grammar_names_every_label_in_order() {
        let g = Rubric::Coarse.grammar(&["P1".into(), "P2".into()]);
        assert!(g.starts_with(r#"root ::= "{" "\"P1\": " value ", " "\"P2\": " value "}""#));
        assert!(g.contains(r#""\"novel\"""#));
    }
}
