//! Command-line forms of engine types: the engine knows nothing of clap, so
//! the flags that fill its settings are declared here.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use folio_engine::choice::Choice;
use folio_engine::documents::loaders::Format;
use folio_engine::methods::runner::AskSettings;
use folio_engine::store::{Day, Scope};
use folio_engine::Library;

/// A flag that takes one of `T`'s names; `--help` lists them.
pub fn choice<T: Choice + Clone + Send + Sync>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::ALL.iter().map(|c| c.as_str())).try_map(|name| T::parse(&name))
}

/// The request settings of `folio ask` and of every spec of `folio eval`.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct SettingsArgs {
    /// Passages to retrieve (default: the method's own, which `folio
    /// methods` lists; 5 for most).
    #[arg(short, long)]
    pub k: Option<usize>,
    /// Sampling temperature (default: the method's own, which `folio
    /// methods` lists, else folio.toml's).
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

/// What a question or a search may draw from; without any of these, the
/// whole library. Each kind narrows the others.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Scope")]
pub struct ScopeArgs {
    /// Only this indexed folder or file; repeat for several.
    #[arg(long = "in", value_name = "PATH")]
    pub within: Vec<PathBuf>,
    /// Only this collection's documents, in its folders and with its tags
    /// (`folio collections` lists them); repeat for several.
    #[arg(long = "collection", value_name = "NAME")]
    pub collections: Vec<String>,
    /// Only documents of this format, by name or extension (pdf, md,
    /// docx, …); repeat for several.
    #[arg(long = "format", value_name = "FORMAT", value_parser = |s: &str| Format::named(s).map_err(|e| e.to_string()))]
    pub formats: Vec<Format>,
    /// Only documents modified on or after this day (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DAY", value_parser = |s: &str| s.parse::<Day>().map_err(|e| e.to_string()))]
    pub since: Option<Day>,
    /// Only notes tagged TAG (in front matter or as `#TAG`), or with a
    /// tag nested under it (`area` takes `area/sub`); repeat for several.
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
}

impl ScopeArgs {
    pub fn scope(&self) -> Scope {
        Scope {
            paths: self.within.iter().map(|p| Library::place(p)).collect(),
            collections: self.collections.clone(),
            formats: self.formats.clone(),
            since: self.since,
            tags: self.tags.clone(),
        }
    }
}
