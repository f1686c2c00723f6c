//! `folio models`: what is configured and whether it loads, then the
//! models found on this machine; `folio models use`: make one the default;
//! `folio models calibrate`: the language model's sufficiency threshold.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use folio_engine::config::config_file_path;
use folio_engine::llm::discovery::{discover, Found, Places};
use folio_engine::llm::{Backend, LlmSettings};
use folio_engine::model_check::{check, ModelReport};
use folio_engine::models::{calibrate_model as calibrate, use_model as use_model_in};
use folio_engine::Config;

use crate::print_json;

#[derive(clap::Args)]
pub struct ModelsArgs {
    #[command(subcommand)]
    action: Option<ModelsAction>,
}

#[derive(clap::Subcommand)]
enum ModelsAction {
    /// Measure the configured language model's perplexity on a fixed probe
    /// set (answers its knowledge holds, and answers it does not) and store
    /// the threshold that separates them, which CRP-RAG's sufficiency check
    /// then uses for this model.
    Calibrate,
    /// Make a model the one that answers: writes `[llm]` in folio.toml
    /// (backend, model and, for a server, base_url; every other setting
    /// kept) and prints what changed.
    #[command(after_help = USE_EXAMPLES)]
    Use(UseArgs),
}

const USE_EXAMPLES: &str = "Examples:
  folio models use qwen2.5-coder-0.5b                      a model of the kit
  folio models use ~/models/mistral-7b.Q4_K_M.gguf         a GGUF file
  folio models use qwen2.5:0.5b                            a file `folio models` found, by its listed name
  folio models use http://127.0.0.1:11434/v1 qwen2.5:0.5b  a model a server found on 127.0.0.1 serves";

#[derive(clap::Args)]
struct UseArgs {
    /// A kit model (qwen2.5-coder-1.5b, qwen2.5-coder-0.5b, smollm2-135m),
    /// the path of a GGUF file, the name `folio models` lists a found file
    /// under, or the address (base_url) of a server `folio models` found
    /// on 127.0.0.1, followed by MODEL.
    name: String,
    /// With a server's address: the model to use, as the server lists it.
    model: Option<String>,
}

pub async fn run(args: ModelsArgs, config: &Config, json: bool) -> Result<()> {
    match args.action {
        None => show(config, json).await,
        Some(ModelsAction::Calibrate) => calibrate_model(config, json).await,
        Some(ModelsAction::Use(args)) => use_model(args, config, json).await,
    }
}

async fn use_model(args: UseArgs, config: &Config, json: bool) -> Result<()> {
    let report = use_model_in(
        &args.name,
        args.model.as_deref(),
        &config.models_dir,
        &config_file_path(),
        &Places::from_env(),
    )
    .await?;
    if json {
        return print_json(&report);
    }
    let path = report.config_file.display();
    if report.changed.is_empty() {
        println!("{} already answers; {path} is unchanged", report.llm.model);
    } else {
        println!("{path}:");
        for c in &report.changed {
            println!("  {:<9} {} → {}", c.key, c.from, c.to);
        }
    }
    if let Some(missing) = &report.missing {
        eprintln!(
            "note: {} is missing: the model is not fetched yet; scripts/setup.sh fetches it",
            missing.display()
        );
    }
    for var in &report.overridden_by {
        eprintln!("note: {var} is set, and wins over folio.toml while it is");
    }
    Ok(())
}

async fn calibrate_model(config: &Config, json: bool) -> Result<()> {
    let llm = folio_engine::llm::connect(&config.llm)
        .await
        .context("loading the language model")?;
    let prompts = folio_engine::library::load_prompts(&config.prompts_dir)?;
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    eprintln!("calibrating {} on the probe set", config.llm.model);
    let progress = |done: usize, total: usize| eprint!("\r  answer {done} of {total}");
    let measured = calibrate(config, llm.as_ref(), &prompts, &progress, &cancel).await;
    eprintln!();
    let measured = measured?;
    let file = config.calibrations();
    if json {
        return print_json(&measured);
    }
    let range = |values: &[f64]| {
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!("{low:.2}–{high:.2}")
    };
    println!(
        "answers its knowledge held:      perplexity {}",
        range(&measured.known)
    );
    println!(
        "answers its knowledge did not:   perplexity {}",
        range(&measured.unknown)
    );
    println!(
        "threshold {:.3}, sorting {:.0}% of the probes right ({:.0}% of each probe left out of the fit); saved to {}",
        measured.threshold,
        100.0 * measured.accuracy,
        100.0 * measured.held_out_accuracy,
        file.path().display()
    );
    if measured.accuracy < 0.8 {
        println!("note: below 80%, this model's perplexity tells sufficient knowledge from insufficient poorly; CRP-RAG's checks on it are weak evidence");
    }
    Ok(())
}

/// `folio models --json`: the report's fields, and what was found.
#[derive(Serialize)]
struct Shown<'a> {
    #[serde(flatten)]
    report: &'a ModelReport,
    found: &'a Found,
}

async fn show(config: &Config, json: bool) -> Result<()> {
    let places = Places::from_env();
    let (report, found) = tokio::join!(check(config), discover(&places));
    if json {
        print_json(&Shown {
            report: &report,
            found: &found,
        })?;
    } else {
        print_report(&report);
        print_found(&found, &places, &config.llm);
    }
    if !report.all_load() {
        bail!("some models do not load; see above");
    }
    Ok(())
}

fn status(error: &Option<String>) -> String {
    match error {
        None => "loads".into(),
        Some(e) => format!("DOES NOT LOAD: {e}"),
    }
}

/// The server's models, the configured one marked, so a wrong name is
/// corrected by picking from the list.
fn served_list(served: &[String], configured: &str) -> String {
    if served.is_empty() {
        return "none listed by the server".into();
    }
    served
        .iter()
        .map(|m| {
            if m == configured {
                format!("{m} (configured)")
            } else {
                m.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn print_report(r: &ModelReport) {
    match &r.config_file {
        Some(path) => println!("config: {}", path.display()),
        None => println!("config: none (built-in defaults; create folio.toml to change them)"),
    }
    let s = &r.llm.settings;
    println!("\nlanguage model: {}", status(&r.llm.error));
    if let Some(kit) = &r.llm.kit {
        println!(
            "  answers with  {} (the kit's {}: {})",
            kit.label, kit.name, kit.role
        );
    }
    println!("  backend       {:?}", s.backend);
    println!("  model         {}", s.model);
    if let Some(bytes) = r.llm.bytes {
        println!("  size          {:.1} GB", bytes as f64 / 1e9);
    }
    if let Some(pace) = &r.llm.pace {
        println!(
            "  speed here    about {:.0} s a question ({:.0} prompt tokens/s read, {:.1} tokens/s written; \
             measured just now on a probe, estimated for a question of {} prompt and {} answer tokens)",
            pace.seconds_per_question,
            pace.prompt_tokens_per_s,
            pace.tokens_per_s,
            folio_engine::llm::pace::TYPICAL_PROMPT_TOKENS,
            folio_engine::llm::pace::TYPICAL_ANSWER_TOKENS
        );
    }
    if s.backend == folio_engine::llm::Backend::Openai {
        println!("  base_url      {}", s.base_url);
        println!("  api_key       {}", s.api_key_shown());
        if let Some(served) = &r.llm.served {
            println!("  served        {}", served_list(served, &s.model));
        }
    }
    println!("  context_size  {}", s.context_size);
    println!("  temperature   {}", s.temperature);
    println!("  max_tokens    {}", s.max_tokens);
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    match &r.llm.support {
        Some(s) => {
            println!("  token counts  {}", yes_no(s.usage));
            println!("  logprobs      {}", yes_no(s.logprobs));
            let shapes = match s.shapes.as_deref() {
                Some("grammar") => "grammar".to_string(),
                Some(form) => format!("JSON schema (response_format {form})"),
                None => "none: replies a method reads are parsed leniently".to_string(),
            };
            println!("  reply shapes  {shapes}");
        }
        None => {
            if let Some(c) = &r.llm.capabilities {
                println!("  logprobs      {}", yes_no(c.logprobs));
            }
        }
    }
    let calibrated = match (&r.llm.calibration, &r.llm.calibration_error) {
        (_, Some(e)) => e.clone(),
        (Some(c), None) => format!(
            "threshold {:.3} ({:.0}% of the probes, {:.0}% held out)",
            c.threshold,
            100.0 * c.accuracy,
            100.0 * c.held_out_accuracy
        ),
        (None, None) => "no; `folio models calibrate` measures CRP-RAG's threshold for it".into(),
    };
    println!("  calibrated    {calibrated}");
    println!("\nembedding model: {}", status(&r.embedding.error));
    println!("  source        {}", r.embedding.source);
    if let (Some(name), Some(dim)) = (&r.embedding.name, r.embedding.dimensions) {
        println!("  name          {name} ({dim} dimensions)");
    }
    if let Some(note) = &r.embedding.note {
        println!("  note          {note}");
    }
    println!("\nprompts: {}", status(&r.prompts.error));
    println!("  overrides in  {}", r.prompts.override_dir.display());
    for p in &r.prompts.sources {
        match &p.overridden_by {
            Some(path) => println!("  {:<24} overridden by {}", p.file, path.display()),
            None => println!("  {:<24} built in", p.file),
        }
    }
}

/// The "found on this machine" section: files, then servers, then what was
/// passed over, each line marked where it is the configured model.
fn print_found(found: &Found, places: &Places, configured: &LlmSettings) {
    println!("\nfound on this machine:");
    println!("  files");
    if found.files.is_empty() {
        println!(
            "    none in the folders of Ollama, LM Studio, GPT4All, Jan or the Hugging Face cache"
        );
    }
    for f in &found.files {
        let is_configured = configured.backend == Backend::Embedded
            && same_file(Path::new(&configured.model), &f.path);
        println!(
            "    {}  ({}){}",
            plain(&f.name),
            f.app.label(),
            if is_configured { " (configured)" } else { "" }
        );
        println!("      {}", plain(&f.path.display().to_string()));
        let h = &f.header;
        let mut facts = vec![size(f.bytes)];
        facts.push(match (&h.quantization, h.file_type) {
            (Some(q), _) => q.clone(),
            (None, Some(n)) => format!("file type {n}"),
            (None, None) => "quantization not stated".into(),
        });
        facts.extend(h.architecture.clone());
        facts.extend(h.context_length.map(|n| format!("context {n}")));
        facts.push(match &h.chat_template {
            Some(t) => format!("chat template {}", t.summary()),
            None => "no chat template".into(),
        });
        if let Some(split) = h.split {
            facts.push(format!("first of {} files", split.count));
        }
        println!("      {}", facts.join(", "));
    }
    println!("  servers on 127.0.0.1");
    if found.servers.is_empty() {
        let ports: Vec<String> = places
            .ports
            .iter()
            .map(|p| format!("{} ({})", p.port, p.app.label()))
            .collect();
        println!("    none answering on ports {}", ports.join(", "));
    }
    for s in &found.servers {
        let usual = format!("{}'s port", s.usual_app.label());
        match &s.error {
            Some(e) => println!("    {}  ({usual}): {}", s.base_url, plain(e)),
            None if s.models.is_empty() => {
                println!("    {}  ({usual}): serves no models", s.base_url)
            }
            None => println!("    {}  ({usual})", s.base_url),
        }
        for m in &s.models {
            let is_configured = configured.backend == Backend::Openai
                && configured.base_url.trim_end_matches('/') == s.base_url
                && configured.model == m.id;
            let capabilities = match &m.capabilities {
                Some(list) => list.iter().map(|c| plain(c)).collect::<Vec<_>>().join(", "),
                None => "not reported".into(),
            };
            println!(
                "      {}{}  capabilities: {capabilities}",
                plain(&m.id),
                if is_configured { " (configured)" } else { "" }
            );
        }
    }
    if !found.passed_over.is_empty() {
        println!("  passed over");
        for p in &found.passed_over {
            println!(
                "    {}: {}",
                plain(&p.path.display().to_string()),
                plain(&p.reason)
            );
        }
    }
    println!("  make one answer: folio models use NAME, or folio models use BASE_URL MODEL for a server's (see --help)");
}

/// Whether two paths lead to one file (a link and its target do).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Text from files and servers as it may be printed: control characters
/// (a terminal's escape sequences among them) replaced.
fn plain(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

/// A file's size in binary units, as file managers show it.
fn size(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let mib = bytes as f64 / MIB;
    if mib >= 1024.0 {
        format!("{:.2} GiB", mib / 1024.0)
    } else {
        format!("{mib:.1} MiB")
    }
}
