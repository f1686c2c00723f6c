//! `folio models`: what is configured and whether it loads.

use anyhow::{bail, Result};

use folio::model_check::{check, ModelReport};
use folio::Config;

use crate::print_json;

pub async fn show(config: &Config, json: bool) -> Result<()> {
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
    if let Some(c) = &r.llm.capabilities {
        println!("  logprobs      {}", if c.logprobs { "yes" } else { "no" });
    }
    println!("\nembedding model: {}", status(&r.embedding.error));
    println!("  model_dir     {}", r.embedding.model_dir.display());
    if let (Some(name), Some(dim)) = (&r.embedding.name, r.embedding.dimensions) {
        println!("  name          {name} ({dim} dimensions)");
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
