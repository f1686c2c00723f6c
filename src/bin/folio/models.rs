//! `folio models`: what is configured and whether it loads, and
//! `folio models calibrate`: the language model's sufficiency threshold.

use anyhow::{bail, Context, Result};
use tokio_util::sync::CancellationToken;

use folio::llm::prompts::Prompts;
use folio::methods::crp_rag::calibrate::calibrate;
use folio::model_check::{check, ModelReport};
use folio::Config;

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
}

pub async fn run(args: ModelsArgs, config: &Config, json: bool) -> Result<()> {
    match args.action {
        None => show(config, json).await,
        Some(ModelsAction::Calibrate) => calibrate_model(config, json).await,
    }
}

async fn calibrate_model(config: &Config, json: bool) -> Result<()> {
    let llm = folio::llm::connect(&config.llm)
        .await
        .context("loading the language model")?;
    let prompts = Prompts::load(Some(&config.prompts_dir))?;
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    eprintln!("calibrating {} on the probe set", config.llm.model);
    let progress = |done: usize, total: usize| eprint!("\r  answer {done} of {total}");
    let measured = calibrate(llm.as_ref(), &prompts, &progress, &cancel).await;
    eprintln!();
    let measured = measured?;
    let file = config.calibrations();
    file.save(&config.llm, &measured)?;
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

async fn show(config: &Config, json: bool) -> Result<()> {
    let report = check(config).await;
    if json {
        print_json(&report)?;
    } else {
        print_report(&report);
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
    println!("  backend       {:?}", s.backend);
    println!("  model         {}", s.model);
    if s.backend == folio::llm::Backend::Openai {
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
