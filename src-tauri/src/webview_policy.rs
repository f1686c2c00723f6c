//! The webview's attack surface, pinned. Script that got into the webview
//! can do what the capability grants and what the CSP lets it load, so
//! both are checked here against what Folio needs: its own commands, the
//! engine's events, and nothing from outside the app. Loosening either
//! fails these tests, and the change has to say why in review.

use std::collections::BTreeSet;

use serde_json::Value;

const CAPABILITY: &str = include_str!("../capabilities/main.json");
const CONFIG: &str = include_str!("../tauri.conf.json");
/// Where the commands are registered with Tauri (`generate_handler!`) and
/// declared to its ACL (`build.rs`).
const MAIN: &str = include_str!("main.rs");
const BUILD: &str = include_str!("../build.rs");

/// The only grants that are not Folio's own commands: the UI listens to the
/// engine's events.
const CORE: [&str; 2] = ["core:event:allow-listen", "core:event:allow-unlisten"];

/// The comma-separated items between `open` and the next `]` in `source`.
fn list_after<'a>(source: &'a str, open: &str) -> Vec<&'a str> {
    let start = source.find(open).unwrap_or_else(|| panic!("no `{open}`")) + open.len();
    let end = start + source[start..].find(']').expect("a closing ]");
    source[start..end]
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .collect()
}

fn registered_commands() -> BTreeSet<String> {
    list_after(MAIN, "generate_handler![")
        .into_iter()
        .map(|path| path.rsplit("::").next().unwrap().to_string())
        .collect()
}

fn declared_commands() -> BTreeSet<String> {
    list_after(BUILD, ".commands(&[")
        .into_iter()
        .map(|name| name.trim_matches('"').to_string())
        .collect()
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{value} is not a list"))
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| panic!("{v} is not a plain name"))
        })
        .collect()
}

#[test]
fn the_one_capability_grants_folio_commands_and_event_listening_only() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("capabilities");
    let files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["main.json"], "every capability file is granted");
    let config: Value = serde_json::from_str(CONFIG).unwrap();
    assert!(config["app"]["security"].get("capabilities").is_none());

    let capability: Value = serde_json::from_str(CAPABILITY).unwrap();
    assert_eq!(strings(&capability["windows"]), ["main"]);
    for key in ["webviews", "remote", "local"] {
        assert!(capability.get(key).is_none(), "the capability sets `{key}`");
    }
    // Plain names only: an object would carry a scope (paths, URLs).
    let permissions = strings(&capability["permissions"]);
    let (commands, others): (Vec<&str>, Vec<&str>) = permissions
        .into_iter()
        .partition(|p| p.starts_with("allow-"));
    assert_eq!(others, CORE, "no plugin permission beyond event listening");

    let granted: BTreeSet<String> = commands
        .iter()
        .map(|p| p.trim_start_matches("allow-").replace('-', "_"))
        .collect();
    assert_eq!(
        granted.len(),
        commands.len(),
        "a permission is listed twice"
    );
    assert_eq!(
        granted,
        registered_commands(),
        "granted vs generate_handler!"
    );
    assert_eq!(granted, declared_commands(), "granted vs build.rs");
}

/// The CSP's directives, each with its sources.
fn directives(csp: &str) -> Vec<(&str, Vec<&str>)> {
    csp.split(';')
        .map(str::split_whitespace)
        .filter_map(|mut words| Some((words.next()?, words.collect())))
        .collect()
}

fn sources<'a>(csp: &'a [(&'a str, Vec<&'a str>)], name: &str) -> &'a [&'a str] {
    &csp.iter()
        .find(|(directive, _)| *directive == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .1
}

#[test]
fn the_csp_runs_only_the_apps_own_script_and_embeds_nothing() {
    let config: Value = serde_json::from_str(CONFIG).unwrap();
    let app = &config["app"];
    assert_eq!(app["withGlobalTauri"], false);
    let security = app["security"].as_object().unwrap();
    let keys: Vec<&str> = security.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["csp", "devCsp", "freezePrototype"],
        "no asset protocol, no disabled CSP rewriting, no other loosening"
    );
    assert_eq!(security["freezePrototype"], true);

    // The dev server's CSP runs only under `npm run dev`; it may let Vite
    // inject styles and talk to its own socket, and nothing more.
    // pdf.js fetches its fonts, character maps and image decoders from the
    // app's own files ('self'), never from elsewhere.
    let ipc: &[&str] = &["ipc:", "http://ipc.localhost", "'self'"];
    let dev_server: &[&str] = &[
        "ipc:",
        "http://ipc.localhost",
        "ws://localhost:1420",
        "'self'",
    ];
    let own: &[&str] = &["'self'"];
    let none: &[&str] = &["'none'"];
    for (key, styles, connect) in [
        ("csp", own, ipc),
        ("devCsp", &["'self'", "'unsafe-inline'"][..], dev_server),
    ] {
        let csp = directives(security[key].as_str().unwrap());
        for (name, expected) in [
            ("default-src", own),
            ("script-src", own),
            ("style-src", styles),
            ("img-src", own),
            ("font-src", own),
            ("connect-src", connect),
            ("object-src", none),
            ("frame-src", none),
            ("base-uri", none),
            ("form-action", none),
        ] {
            assert_eq!(sources(&csp, name), expected, "{key} {name}");
        }
        for (name, values) in &csp {
            for value in values {
                assert!(
                    ![
                        "'unsafe-eval'",
                        "'wasm-unsafe-eval'",
                        "'unsafe-hashes'",
                        "*",
                        "data:",
                        "blob:"
                    ]
                    .contains(value),
                    "{key} {name} allows {value}"
                );
            }
        }
    }
}
