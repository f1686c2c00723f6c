//! Run parameters: the ones every method shares (k, generation settings)
//! and each method's own declared options, checked against the declaration
//! before a run starts so a typo never reaches the model.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::options::OptionRange;
use super::runner::ResolvedSettings;
use super::{MethodError, MethodInfo};
use folio_llm::Sampling;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct MethodOption {
    pub name: &'static str,
    pub help: &'static str,
    pub default: Value,
    /// The values the option accepts, when it is a choice.
    pub choices: Vec<&'static str>,
    /// The values a number accepts, when it is bounded.
    pub range: Option<OptionRange>,
}

impl MethodOption {
    /// What the option accepts, for help text: ` [a|b]` for choices,
    /// ` [1–6]`, ` [≥ 100]` or ` (0–1]` for a range, empty otherwise.
    pub fn accepted(&self) -> String {
        if !self.choices.is_empty() {
            return format!(" [{}]", self.choices.join("|"));
        }
        match self.range {
            None => String::new(),
            Some(r) => {
                let open = if r.min_exclusive { "(" } else { "[" };
                match r.max {
                    Some(max) => format!(" {open}{}–{max}]", r.min),
                    None if r.min_exclusive => format!(" [> {}]", r.min),
                    None => format!(" [≥ {}]", r.min),
                }
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Passages (or chunks, or nodes) a retrieval step returns.
    pub k: usize,
    pub temperature: f32,
    /// The method's truncation of a sampled draw; `None` for the backend's.
    #[serde(default)]
    pub sampling: Option<Sampling>,
    pub max_tokens: u32,
    pub seed: u32,
    /// Method options by name, defaults filled in.
    pub options: BTreeMap<String, Value>,
}

impl Params {
    /// `options` as given by the user (values as JSON, or bare strings),
    /// checked against the method's declarations and completed with defaults;
    /// `k` and the temperature, where the settings leave them open, are the
    /// method's own.
    pub fn resolve(
        info: &MethodInfo,
        settings: ResolvedSettings,
        given: &BTreeMap<String, String>,
    ) -> Result<Params, MethodError> {
        let ResolvedSettings {
            k,
            temperature,
            configured_temperature,
            max_tokens,
            seed,
        } = settings;
        let k = k.unwrap_or(info.defaults.k);
        let temperature = temperature
            .or(info.defaults.temperature)
            .unwrap_or(configured_temperature);
        if k == 0 {
            return Err(MethodError::InvalidOption {
                name: "k".into(),
                message: "must be at least 1".into(),
            });
        }
        if max_tokens == 0 {
            return Err(MethodError::InvalidOption {
                name: "max_tokens".into(),
                message: "must be at least 1".into(),
            });
        }
        let mut options = BTreeMap::new();
        for (name, raw) in given {
            let Some(decl) = info.options.iter().find(|o| o.name == name) else {
                let known = info.options.iter().map(|o| o.name).collect::<Vec<_>>();
                return Err(MethodError::UnknownOption {
                    method: info.id,
                    name: name.clone(),
                    known: if known.is_empty() {
                        "(none)".into()
                    } else {
                        known.join(", ")
                    },
                });
            };
            options.insert(name.clone(), parse_value(decl, raw)?);
        }
        for decl in &info.options {
            options
                .entry(decl.name.to_string())
                .or_insert_with(|| decl.default.clone());
        }
        Ok(Params {
            k,
            temperature,
            sampling: info.defaults.sampling,
            max_tokens,
            seed,
            options,
        })
    }

    /// Whether the method declares the option `name`.
    pub fn declares(&self, name: &str) -> bool {
        self.options.contains_key(name)
    }

    /// A declared option's value; `resolve` guarantees it is present and of
    /// the declared type.
    pub fn option<T: DeserializeOwned>(&self, name: &str) -> Result<T, MethodError> {
        let value = self.options.get(name).cloned().unwrap_or(Value::Null);
        serde_json::from_value(value).map_err(|e| MethodError::InvalidOption {
            name: name.to_string(),
            message: e.to_string(),
        })
    }
}

/// Reads `raw` as the same JSON type as the option's default (a string
/// option takes the text as it is) and checks it against the declared
/// choices or range.
fn parse_value(decl: &MethodOption, raw: &str) -> Result<Value, MethodError> {
    let invalid = |message: String| MethodError::InvalidOption {
        name: decl.name.to_string(),
        message,
    };
    let value = match &decl.default {
        Value::String(_) => Value::String(raw.to_string()),
        _ => serde_json::from_str(raw)
            .map_err(|_| invalid(format!("`{raw}` is not a valid value")))?,
    };
    let same_type = std::mem::discriminant(&value) == std::mem::discriminant(&decl.default)
        && (decl.default.is_f64() || !value.is_f64());
    if !same_type {
        return Err(invalid(format!("expected a value like {}", decl.default)));
    }
    if !decl.choices.is_empty()
        && !decl
            .choices
            .iter()
            .any(|c| Value::String(c.to_string()) == value)
    {
        return Err(invalid(format!(
            "expected one of: {}",
            decl.choices.join(", ")
        )));
    }
    if let (Some(range), Some(number)) = (decl.range, value.as_f64()) {
        if let Some(why) = range.refuse(number) {
            return Err(invalid(why));
        }
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MethodDefaults;

    fn info() -> MethodInfo {
        MethodInfo {
            id: "m",
            name: "M",
            summary: "",
            retrieves: true,
            defaults: MethodDefaults::COMMON,
            options: vec![
                MethodOption {
                    name: "mode",
                    help: "",
                    default: Value::from("hybrid"),
                    choices: vec!["hybrid", "dense"],
                    range: None,
                },
                MethodOption {
                    name: "depth",
                    help: "",
                    default: Value::from(3),
                    choices: vec![],
                    range: Some(OptionRange {
                        min: 1.0,
                        min_exclusive: false,
                        max: Some(7.0),
                    }),
                },
            ],
        }
    }

    fn settings() -> ResolvedSettings {
        ResolvedSettings {
            k: Some(5),
            temperature: Some(0.2),
            configured_temperature: 0.2,
            max_tokens: 64,
            seed: 42,
        }
    }

    fn given(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_fill_in_and_values_parse() {
        let p = Params::resolve(&info(), settings(), &given(&[("depth", "7")])).unwrap();
        assert_eq!(p.option::<u32>("depth").unwrap(), 7);
        assert_eq!(p.option::<String>("mode").unwrap(), "hybrid");
    }

    #[test]
    fn the_method_settles_what_the_request_leaves_open() {
        let mut info = info();
        info.defaults = MethodDefaults {
            k: 10,
            temperature: Some(0.7),
            sampling: Some(Sampling {
                top_p: 0.8,
                top_k: 20,
            }),
        };
        let open = ResolvedSettings {
            k: None,
            temperature: None,
            ..settings()
        };
        let p = Params::resolve(&info, open, &given(&[])).unwrap();
        assert_eq!((p.k, p.temperature), (10, 0.7));
        assert_eq!(p.sampling, info.defaults.sampling);
        let p = Params::resolve(&info, settings(), &given(&[])).unwrap();
        assert_eq!((p.k, p.temperature), (5, 0.2), "the request's own win");
        info.defaults = MethodDefaults::COMMON;
        let configured = ResolvedSettings {
            configured_temperature: 0.4,
            ..open
        };
        let p = Params::resolve(&info, configured, &given(&[])).unwrap();
        assert_eq!((p.k, p.temperature), (5, 0.4));
        assert_eq!(p.sampling, None);
    }

    #[test]
    fn help_names_choices_and_ranges() {
        let [mode, depth] = &info().options[..] else {
            panic!("two options")
        };
        assert_eq!(mode.accepted(), " [hybrid|dense]");
        assert_eq!(depth.accepted(), " [1–7]");
    }

    #[test]
    fn values_outside_the_declared_range_are_refused_naming_the_bounds() {
        assert!(Params::resolve(&info(), settings(), &given(&[("depth", "1")])).is_ok());
        let err = Params::resolve(&info(), settings(), &given(&[("depth", "8")])).unwrap_err();
        assert!(err.is_user_error());
        assert_eq!(
            err.to_string(),
            "option `depth`: must be between 1 and 7, not 8"
        );
    }

    #[test]
    fn bad_options_are_user_errors() {
        let err = Params::resolve(&info(), settings(), &given(&[("dpth", "7")])).unwrap_err();
        assert!(matches!(err, MethodError::UnknownOption { .. }) && err.is_user_error());
        let err = Params::resolve(&info(), settings(), &given(&[("depth", "deep")])).unwrap_err();
        assert!(matches!(err, MethodError::InvalidOption { .. }));
        let err = Params::resolve(&info(), settings(), &given(&[("depth", "2.5")])).unwrap_err();
        assert!(matches!(err, MethodError::InvalidOption { .. }));
        let err = Params::resolve(&info(), settings(), &given(&[("mode", "sparse")])).unwrap_err();
        assert!(matches!(err, MethodError::InvalidOption { .. }));
        let no_k = ResolvedSettings {
            k: Some(0),
            ..settings()
        };
        assert!(Params::resolve(&info(), no_k, &given(&[])).is_err());
    }
}
