//! A model's calibrated sufficiency threshold, kept per model in one JSON
//! file beside the library (`calibrations.json` in the data folder).
//! CRP-RAG decides whether a step's knowledge suffices by the perplexity of
//! the model's answer, and what counts as sure differs from model to model,
//! so the threshold is measured for each one (`folio models calibrate`)
//! rather than fixed. The file is small and rewritten whole, atomically.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Backend, LlmSettings};

/// What a calibration measured for one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct Calibration {
    /// Below this perplexity a step's knowledge counts as sufficient.
    pub threshold: f64,
    /// Share of the probe set the threshold sorts right, 0–1.
    pub accuracy: f64,
    /// The same, each probe sorted by a threshold fitted without it (leave
    /// one probe out): what to expect on steps the fit has not seen.
    pub held_out_accuracy: f64,
    /// Perplexities of the answers whose knowledge held them, probe order.
    pub known: Vec<f64>,
    /// Perplexities of the answers whose knowledge did not.
    pub unknown: Vec<f64>,
    /// Seconds since the Unix epoch.
    pub measured_at: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error(
        "cannot read the calibrations in {path}: {message}; delete the file and calibrate again"
    )]
    Read { path: PathBuf, message: String },
    #[error("cannot save the calibration to {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The file of calibrations, by model.
pub struct Calibrations {
    path: PathBuf,
}

impl Calibrations {
    pub fn at(path: impl Into<PathBuf>) -> Calibrations {
        Calibrations { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The calibration of the model `settings` name, if it has one.
    pub fn of(&self, settings: &LlmSettings) -> Result<Option<Calibration>, CalibrationError> {
        Ok(self.read()?.remove(&key(settings)))
    }

    /// Stores `calibration` as the model's, replacing an earlier one.
    pub fn save(
        &self,
        settings: &LlmSettings,
        calibration: &Calibration,
    ) -> Result<(), CalibrationError> {
        let mut all = self.read()?;
        all.insert(key(settings), calibration.clone());
        let write = |source| CalibrationError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(write)?;
        }
        let text = serde_json::to_vec_pretty(&all).expect("calibrations serialise");
        folio_core::atomic_file::replace(&self.path, &text, 0o644).map_err(write)
    }

    fn read(&self) -> Result<BTreeMap<String, Calibration>, CalibrationError> {
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => {
                return Err(CalibrationError::Read {
                    path: self.path.clone(),
                    message: e.to_string(),
                })
            }
        };
        serde_json::from_slice(&text).map_err(|e| CalibrationError::Read {
            path: self.path.clone(),
            message: e.to_string(),
        })
    }
}

/// Which model a calibration belongs to: the embedded model's file, or a
/// server's model name at its address (two servers may give one name to
/// different weights).
fn key(settings: &LlmSettings) -> String {
    match settings.backend {
        Backend::Embedded => format!("embedded {}", settings.model),
        Backend::Openai => format!("openai {} at {}", settings.model, settings.base_url),
    }
}

/// Leave-one-out accuracy over paired probes: `known[i]` and `unknown[i]`
/// are one probe's two answers, sorted by a threshold fitted on the rest.
pub fn held_out_accuracy(known: &[f64], unknown: &[f64]) -> Option<f64> {
    let pairs = known.len().min(unknown.len());
    if pairs < 2 {
        return None;
    }
    let without = |values: &[f64], i: usize| {
        let mut rest = values[..pairs].to_vec();
        rest.remove(i);
        rest
    };
    let right: usize = (0..pairs)
        .map(|i| {
            let (t, _) =
                separate(&without(known, i), &without(unknown, i)).expect("both kinds remain");
            usize::from(known[i] < t) + usize::from(unknown[i] >= t)
        })
        .sum();
    Some(right as f64 / (2 * pairs) as f64)
}

/// The threshold that sorts the most probes right: `known` answers should
/// fall below it and `unknown` ones at or above it. Among equally good
/// cuts the middle one is taken, the widest margin either way. Returns the
/// threshold and its accuracy; `None` without probes of both kinds.
pub fn separate(known: &[f64], unknown: &[f64]) -> Option<(f64, f64)> {
    if known.is_empty() || unknown.is_empty() {
        return None;
    }
    let mut values: Vec<f64> = known.iter().chain(unknown).copied().collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    // Cuts between neighbours, and one past either end.
    let mut cuts = vec![values[0] - 0.01];
    cuts.extend(values.windows(2).map(|w| (w[0] + w[1]) / 2.0));
    cuts.push(values[values.len() - 1] + 0.01);
    let total = (known.len() + unknown.len()) as f64;
    let accuracy = |t: f64| {
        let right =
            known.iter().filter(|&&p| p < t).count() + unknown.iter().filter(|&&p| p >= t).count();
        right as f64 / total
    };
    let best = cuts.iter().map(|&t| accuracy(t)).fold(0.0, f64::max);
    let tied: Vec<f64> = cuts.into_iter().filter(|&t| accuracy(t) == best).collect();
    Some((tied[tied.len() / 2], best))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_sorts_the_most_probes_right_with_the_widest_margin() {
        let (t, accuracy) = separate(&[1.1, 1.2, 1.3], &[2.0, 2.5]).unwrap();
        assert_eq!(accuracy, 1.0);
        assert!((t - 1.65).abs() < 1e-9, "{t}");
        // One unknown answer as sure as the known ones cannot be sorted right.
        let (t, accuracy) = separate(&[1.1, 1.2], &[1.15, 3.0]).unwrap();
        assert_eq!(accuracy, 0.75);
        assert!(t > 1.2 && t < 3.0 || t < 1.15, "{t}");
        assert_eq!(separate(&[], &[2.0]), None);
    }

    #[test]
    fn held_out_accuracy_sorts_each_probe_by_a_cut_fitted_without_it() {
        assert_eq!(
            held_out_accuracy(&[1.1, 1.2, 1.3], &[2.0, 2.1, 2.2]),
            Some(1.0)
        );
        // The third probe's answers are the wrong way round: fitted on the
        // other two, it is sorted wrong both ways; they stay right.
        let held_out = held_out_accuracy(&[1.1, 1.2, 2.5], &[2.0, 2.1, 1.0]).unwrap();
        assert!((held_out - 4.0 / 6.0).abs() < 1e-9, "{held_out}");
        assert_eq!(held_out_accuracy(&[1.0], &[2.0]), None);
    }

    #[test]
    fn calibrations_are_kept_per_model_and_survive_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let file = Calibrations::at(dir.path().join("data/calibrations.json"));
        let embedded = LlmSettings::default();
        let served = LlmSettings {
            backend: Backend::Openai,
            ..LlmSettings::default()
        };
        assert_eq!(file.of(&embedded).unwrap(), None);
        let measured = Calibration {
            threshold: 1.4,
            accuracy: 0.9,
            held_out_accuracy: 0.8,
            known: vec![1.1],
            unknown: vec![2.0],
            measured_at: 1,
        };
        file.save(&embedded, &measured).unwrap();
        assert_eq!(file.of(&embedded).unwrap(), Some(measured.clone()));
        assert_eq!(
            file.of(&served).unwrap(),
            None,
            "another model's is not this one's"
        );
        std::fs::write(file.path(), "{ not json").unwrap();
        let err = file.of(&embedded).unwrap_err().to_string();
        assert!(err.contains("delete the file and calibrate again"), "{err}");
    }
}
