//! Command-line forms of engine types: the engine knows nothing of clap, so
//! the flags that fill its settings are declared here.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use folio::choice::Choice;
use folio::methods::runner::{AskSettings, DEFAULT_K};

/// A flag that takes one of `T`'s names; `--help` lists them.
pub fn choice<T: Choice + Clone + Send + Sync>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::ALL.iter().map(|c| c.as_str())).try_map(|name| T::parse(&name))
}

/// The request settings of `folio ask` and of every spec of `folio eval`.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct SettingsArgs {
    /// Passages to retrieve.
    #[arg(short, long, default_value_t = DEFAULT_K)]
    pub k: usize,
    /// Sampling temperature (default from folio.toml).
    #[arg(long)]
    pub temperature: Option<f32>,
    /// Most tokens the model may write per step (default from folio.toml).
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// Seed of sampled replies (default 42); matters only where something
    /// is sampled.
    #[arg(long)]
    pub seed: Option<u32>,
}

impl From<SettingsArgs> for AskSettings {
    fn from(a: SettingsArgs) -> AskSettings {
        AskSettings {
            k: a.k,
            temperature: a.temperature,
            max_tokens: a.max_tokens,
            seed: a.seed,
        }
    }
}
