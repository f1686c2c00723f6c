//! `folio serve`: the library served to other apps on this machine (the
//! HTTP API, and the methods as OpenAI-compatible models; `folio-server`),
//! while the same watcher and job runtime as `folio watch` keep it indexed.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use folio_engine::Library;
use folio_server::secret::SecretHome;
use folio_server::{token, ServeOptions};

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Where to listen; a loopback address unless --allow-remote. Port 0
    /// picks a free port (the address is printed).
    #[arg(long, env = "FOLIO_SERVE_ADDR", default_value = "127.0.0.1:7733")]
    addr: SocketAddr,
    /// Allow an address other than loopback: anyone who can reach it and
    /// holds the token can read the library.
    #[arg(long)]
    allow_remote: bool,
    /// A host name requests may be addressed to, besides the loopback
    /// names and the bound address (repeatable).
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
    /// Print the token clients must send, and exit.
    #[arg(long)]
    show_token: bool,
}

pub async fn run(library: Library, args: ServeArgs, json: bool) -> Result<()> {
    let kept =
        token::load_or_create(&library.config().data_dir).context("keeping the server's token")?;
    if args.show_token {
        println!("{}", kept.token.expose());
        return Ok(());
    }
    let options = ServeOptions {
        addr: args.addr,
        allow_remote: args.allow_remote,
        allow_hosts: args.allow_hosts,
    };
    let listener = folio_server::bind(&options).await?;
    let addr = listener.local_addr()?;
    let kept_in = match &kept.home {
        SecretHome::Keyring => "the OS keyring".to_string(),
        SecretHome::File(path) => path.display().to_string(),
    };
    if json {
        // One line, first, for whoever started the server to read the
        // address from; the watcher's lines follow.
        println!(
            "{}",
            serde_json::json!({ "serving": addr.to_string(), "token_kept_in": kept_in })
        );
    } else {
        println!("serving the library on http://{addr}");
        println!("  the API: /api (described at /openapi.json); Folio's methods as OpenAI-compatible models: /v1");
        println!("  every request needs `Authorization: Bearer <token>`; the token is kept in {kept_in}, and `folio serve --show-token` prints it");
    }
    let library = Arc::new(library);
    let shutdown = library.stop_token().clone();
    let server = folio_server::serve(
        library.clone(),
        listener,
        kept.token,
        &options.allow_hosts,
        shutdown,
    );
    let (served, watched) = tokio::join!(server, crate::watch(&library, json));
    served.context("serving")?;
    watched
}
