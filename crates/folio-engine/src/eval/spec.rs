//! A method with its options, written on one line so several can be
//! compared in one run (`folio eval`, `folio compare`): `method` or
//! `method:name=value[:name=value…]`, e.g. `pager:variant=parallel:slots-max=3`.
//! The spec text is the name the method goes by in results and summaries.
//!
//! One name is the runner's, not the method's: `rewrite=off` asks a
//! conversation's follow-ups as written instead of rewriting them to stand
//! alone, and `rewrite=join` searches each with the question before it:
//! the baselines the rewrite is measured against.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use super::error::{EvalError, Result};
use folio_core::choice::Choice;
use folio_methods::runner::{AskRequest, AskSettings, ResolvedSettings, RewriteMode};
use folio_methods::{find, whole_document, Params};
use folio_store::Scope;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodSpec {
    text: String,
    pub method: String,
    pub options: BTreeMap<String, String>,
    /// How follow-ups are searched (`rewrite=on|off|join`).
    pub rewrite: RewriteMode,
}

/// The runner's option name in a spec.
const REWRITE: &str = "rewrite";

impl FromStr for MethodSpec {
    type Err = EvalError;

    fn from_str(s: &str) -> Result<MethodSpec> {
        let text = s.trim();
        let bad = |message: String| EvalError::BadSpec {
            spec: text.to_string(),
            message,
        };
        let mut parts = text.split(':');
        let method = parts.next().unwrap_or_default().trim();
        if method.is_empty() {
            return Err(bad("it names no method".into()));
        }
        let mut options = BTreeMap::new();
        for part in parts {
            let (name, value) = part
                .split_once('=')
                .map(|(n, v)| (n.trim(), v.trim()))
                .ok_or_else(|| bad(format!("`{part}` is not name=value")))?;
            if name.is_empty() || value.is_empty() {
                return Err(bad(format!("`{part}` is not name=value")));
            }
            if options
                .insert(name.to_string(), value.to_string())
                .is_some()
            {
                return Err(bad(format!("option `{name}` is given twice")));
            }
        }
        let rewrite = match options.remove(REWRITE) {
            None => RewriteMode::On,
            Some(value) => {
                RewriteMode::parse(&value).map_err(|e| bad(format!("`{REWRITE}`: {e}")))?
            }
        };
        Ok(MethodSpec {
            text: text.to_string(),
            method: method.to_string(),
            options,
            rewrite,
        })
    }
}

impl fmt::Display for MethodSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// As the text `folio eval --methods` takes, in an evaluation job's payload.
impl serde::Serialize for MethodSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for MethodSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The runner's own checks on every spec, done before any question is
/// asked, so a typo in the last spec does not surface after hours of
/// answering; and no spec twice, since rows are told apart by spec.
/// `settings` are the values the runs will use.
pub fn check_all(specs: &[MethodSpec], settings: ResolvedSettings) -> Result<()> {
    for spec in specs {
        spec.check(settings)?;
        if spec.method == whole_document::ID {
            return Err(EvalError::BadSpec {
                spec: spec.text.clone(),
                message: "whole-document answers about one document a person picks; an evaluation asks its questions of a whole corpus".into(),
            });
        }
    }
    refuse_repeats(specs)
}

/// Refuses a method with the same options given twice, which would answer
/// the same way twice under one name.
pub fn refuse_repeats(specs: &[MethodSpec]) -> Result<()> {
    for (i, spec) in specs.iter().enumerate() {
        if specs[..i].iter().any(|s| {
            s.method == spec.method && s.options == spec.options && s.rewrite == spec.rewrite
        }) {
            return Err(EvalError::BadSpec {
                spec: spec.text.clone(),
                message: "the same method and options are given twice".into(),
            });
        }
    }
    Ok(())
}

/// Method specs as a person types them (`folio eval --methods`, the
/// Evaluate form, the server's bodies), each trimmed and parsed.
pub fn parse_specs<S: AsRef<str>>(texts: &[S]) -> Result<Vec<MethodSpec>> {
    texts
        .iter()
        .map(|text| MethodSpec::from_str(text.as_ref().trim()))
        .collect()
}

/// What Compare asks: `question` put to each of `specs` in turn, within
/// `scope`, once two or more specs are given, each checked and none
/// repeated (the CLI's `folio compare`, the app's and the server's).
pub fn compare_requests(
    question: &str,
    specs: &[MethodSpec],
    settings: AskSettings,
    resolved: ResolvedSettings,
    scope: &Scope,
) -> Result<Vec<AskRequest>> {
    if specs.len() < 2 {
        return Err(EvalError::BadSetting {
            name: "compare",
            message: "needs two methods or more, e.g. vanilla-rag,activerag".into(),
        });
    }
    for spec in specs {
        spec.check(resolved)?;
    }
    refuse_repeats(specs)?;
    Ok(specs
        .iter()
        .map(|spec| AskRequest {
            scope: scope.clone(),
            ..spec.request(question, settings)
        })
        .collect())
}

impl MethodSpec {
    /// The method exists and takes these options with these values.
    pub fn check(&self, settings: ResolvedSettings) -> Result<()> {
        let method_error = |source| EvalError::Method {
            spec: self.text.clone(),
            source,
        };
        let method = find(&self.method).map_err(method_error)?;
        Params::resolve(&method.info(), settings, &self.options).map_err(method_error)?;
        Ok(())
    }

    pub fn request(&self, question: &str, settings: AskSettings) -> AskRequest {
        AskRequest {
            k: settings.k,
            temperature: settings.temperature,
            max_tokens: settings.max_tokens,
            seed: settings.seed,
            options: self.options.clone(),
            rewrite: self.rewrite,
            ..AskRequest::new(question, self.method.clone())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use folio_methods::MethodError;

    fn settings() -> ResolvedSettings {
        ResolvedSettings {
            k: Some(5),
            temperature: Some(0.0),
            configured_temperature: 0.0,
            max_tokens: 64,
            seed: 42,
        }
    }

    #[test]
    fn options_follow_the_method() {
        let spec: MethodSpec = "pager:variant=parallel:slots-max=3".parse().unwrap();
        assert_eq!(spec.method, "pager");
        assert_eq!(
            spec.options,
            BTreeMap::from([
                ("slots-max".to_string(), "3".to_string()),
                ("variant".to_string(), "parallel".to_string()),
            ])
        );
        assert_eq!(spec.to_string(), "pager:variant=parallel:slots-max=3");
        let plain: MethodSpec = " vanilla-rag ".parse().unwrap();
        assert_eq!(plain.method, "vanilla-rag");
        assert!(plain.options.is_empty());
        assert_eq!(plain.to_string(), "vanilla-rag");
    }

    #[test]
    fn malformed_specs_are_refused() {
        let err = "pager:variant".parse::<MethodSpec>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "method spec `pager:variant`: `variant` is not name=value"
        );
        for bad in [
            "",
            ":variant=x",
            "pager:variant=",
            "pager:=x",
            "pager:k=1:k=2",
        ] {
            assert!(
                matches!(bad.parse::<MethodSpec>(), Err(EvalError::BadSpec { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn checks_are_the_runners() {
        let ok: MethodSpec = "vanilla-rag".parse().unwrap();
        ok.check(settings()).unwrap();
        let unknown_method: MethodSpec = "nope".parse().unwrap();
        assert!(matches!(
            unknown_method.check(settings()),
            Err(EvalError::Method {
                source: MethodError::UnknownMethod { .. },
                ..
            })
        ));
        let unknown_option: MethodSpec = "vanilla-rag:mood=x".parse().unwrap();
        let err = unknown_option.check(settings()).unwrap_err();
        assert!(
            matches!(
                &err,
                EvalError::Method {
                    source: MethodError::UnknownOption { .. },
                    ..
                }
            ),
            "{err}"
        );
        assert!(err
            .to_string()
            .starts_with("method spec `vanilla-rag:mood=x`: "));
        // Whole-document is a method (`folio compare` may run it), but an
        // evaluation asks its questions of a whole corpus.
        let one_document: MethodSpec = "whole-document".parse().unwrap();
        one_document.check(settings()).unwrap();
        let err = check_all(&[one_document], settings()).unwrap_err();
        assert!(err.to_string().contains("one document"), "{err}");
    }

    #[test]
    fn rewrite_is_the_runners_option() {
        let off: MethodSpec = "vanilla-rag:rewrite=off".parse().unwrap();
        assert!(off.rewrite == RewriteMode::Off && off.options.is_empty());
        assert_eq!(off.to_string(), "vanilla-rag:rewrite=off");
        let settings_of_ask = AskSettings {
            k: Some(3),
            temperature: None,
            max_tokens: None,
            seed: None,
        };
        assert_eq!(off.request("Q?", settings_of_ask).rewrite, RewriteMode::Off);
        let on: MethodSpec = "vanilla-rag".parse().unwrap();
        assert_eq!(on.rewrite, RewriteMode::On);
        let join: MethodSpec = "vanilla-rag:rewrite=join".parse().unwrap();
        assert_eq!(join.rewrite, RewriteMode::Join);
        check_all(&[on, off, join], settings()).unwrap();
        let err = "vanilla-rag:rewrite=maybe"
            .parse::<MethodSpec>()
            .unwrap_err();
        assert!(err.to_string().contains("on, off, join"), "{err}");
    }

    #[test]
    fn a_spec_may_appear_once() {
        let specs: Vec<MethodSpec> = ["llm-only", "vanilla-rag"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        check_all(&specs, settings()).unwrap();
        let twice: Vec<MethodSpec> = ["llm-only", "vanilla-rag", " vanilla-rag "]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let err = check_all(&twice, settings()).unwrap_err().to_string();
        assert_eq!(
            err,
            "method spec `vanilla-rag`: the same method and options are given twice"
        );
        // Options in another order are the same spec.
        let a: MethodSpec = "pager:variant=parallel:slots-max=3".parse().unwrap();
        let b: MethodSpec = "pager:slots-max=3:variant=parallel".parse().unwrap();
        assert_eq!((&a.method, &a.options), (&b.method, &b.options));
    }

    #[test]
    fn a_request_carries_the_options() {
        let spec: MethodSpec = "pager:variant=parallel".parse().unwrap();
        let settings = AskSettings {
            k: Some(3),
            temperature: Some(0.0),
            max_tokens: None,
            seed: Some(7),
        };
        let request = spec.request("Why?", settings);
        assert_eq!(request.method, "pager");
        assert_eq!((request.k, request.seed), (Some(3), Some(7)));
        assert_eq!(request.options["variant"], "parallel");
    }
}
