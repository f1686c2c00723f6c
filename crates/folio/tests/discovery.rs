//! Finding the language models a person already has, on real parts: each
//! app's folder layout built inside a temporary home around the kit's real
//! SmolLM2 GGUF file, with a broken header, a symbolic-link loop and a
//! locked folder beside them; loopback servers that hang, talk nonsense or
//! really serve (llama-cpp-python); and `folio models use` through the real
//! binary, writing a real folio.toml.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::llm_server::{free_port, LlmServer, ALIAS};
use folio_engine::config::{default_models_dir, ConfigFile};
use folio_engine::llm::discovery::{
    discover, find_files, probe_servers, App, FoundFile, FoundServer, Places, ServerPort,
    TemplateFamily, PROBE_WAIT,
};
use folio_engine::llm::settings::SMOLLM2;
use folio_engine::llm::{Backend, LlmSettings};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The kit file's sha256, as scripts/setup.sh checks it: Ollama names a
/// blob by its digest.
const SMOLLM2_SHA256: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
/// What the kit file's header says of itself.
const SMOLLM2_GENERAL_NAME: &str = "Smollm2 135M 8k Lc100K Mix1 Ep2";
/// A hub revision, as the cache names its snapshot folders.
const REVISION: &str = "9a1b2c3d4e5f60718293a4b5c6d7e8f901234567";

fn kit_file() -> PathBuf {
    let path = default_models_dir().join(SMOLLM2.file);
    assert!(
        path.is_file(),
        "{} is missing; run scripts/setup.sh to fetch the model kit",
        path.display()
    );
    path
}

/// `at` made to be the kit file: a hard link where the file system allows
/// one, else a symbolic link.
fn place_kit_file(at: &Path) {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    if std::fs::hard_link(kit_file(), at).is_err() {
        std::os::unix::fs::symlink(kit_file(), at).unwrap();
    }
}

/// A home folder laid out as each app lays out its own, around the kit's
/// SmolLM2 file, with the hostile corners a real disk may have.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn build() -> Home {
        // Beside the build, on the models' file system, where hard links work.
        let dir = tempfile::Builder::new()
            .prefix("discovery-home")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let home = dir.path();
        // Ollama: a manifest whose model layer names the blob by digest.
        let ollama = home.join(".ollama/models");
        place_kit_file(&ollama.join(format!("blobs/sha256-{SMOLLM2_SHA256}")));
        let manifest = ollama.join("manifests/registry.ollama.ai/library/smollm2/135m");
        std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
        std::fs::write(
            &manifest,
            format!(
                r#"{{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","config":{{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:{0}","size":489}},"layers":[{{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:{1}","size":{2}}},{{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:{0}","size":298}}]}}"#,
                "e".repeat(64),
                SMOLLM2_SHA256,
                SMOLLM2.bytes
            ),
        )
        .unwrap();
        // LM Studio, now and in its older place.
        place_kit_file(&home.join(
            ".lmstudio/models/bartowski/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q4_1.gguf",
        ));
        place_kit_file(&home.join(".cache/lm-studio/models/TheBloke/smol-GGUF/smol.Q4_1.gguf"));
        // GPT4All.
        place_kit_file(&home.join(".local/share/nomic.ai/GPT4All/smollm2-135m-instruct.Q4_1.gguf"));
        // Jan, deep down, and in its llama.cpp folder.
        place_kit_file(&home.join("jan/models/smollm2/nested/deeper/model.gguf"));
        place_kit_file(&home.join(".local/share/Jan/data/llamacpp/models/smollm2-135m/model.gguf"));
        // The Hugging Face cache: snapshot files are relative links into
        // blobs/, and two revisions share the blob.
        let repo =
            home.join(".cache/huggingface/hub/models--HuggingFaceTB--SmolLM2-135M-Instruct-GGUF");
        place_kit_file(&repo.join(format!("blobs/{SMOLLM2_SHA256}")));
        for revision in [REVISION, "0000000000000000000000000000000000000000"] {
            let snapshot = repo.join("snapshots").join(revision);
            std::fs::create_dir_all(&snapshot).unwrap();
            std::os::unix::fs::symlink(
                format!("../../blobs/{SMOLLM2_SHA256}"),
                snapshot.join("smollm2-135m-instruct-q4_1.gguf"),
            )
            .unwrap();
        }
        // A header cut short, and a text file named as a model.
        let bad = home.join(".lmstudio/models/broken/repo");
        std::fs::create_dir_all(&bad).unwrap();
        let start = std::fs::read(kit_file()).unwrap()[..4096].to_vec();
        std::fs::write(bad.join("truncated.gguf"), start).unwrap();
        std::fs::write(bad.join("notes.gguf"), "not a model\n").unwrap();
        // A link from inside Jan's folder back up to a folder above it.
        std::os::unix::fs::symlink(
            home.join("jan/models/smollm2"),
            home.join("jan/models/smollm2/loop"),
        )
        .unwrap();
        // A folder no one may read, holding a model.
        let locked = home.join(".local/share/Jan/data/models/locked");
        place_kit_file(&locked.join("model.gguf"));
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        Home { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn locked(&self) -> PathBuf {
        self.path().join(".local/share/Jan/data/models/locked")
    }

    /// Whether the locked folder really is unreadable: root reads it anyway.
    fn locked_is_unreadable(&self) -> bool {
        std::fs::read_dir(self.locked()).is_err()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        // So the temporary folder can be removed by a user who is not root.
        let _ = std::fs::set_permissions(self.locked(), std::fs::Permissions::from_mode(0o755));
    }
}

fn of_app(files: &[FoundFile], app: App) -> Vec<&FoundFile> {
    files.iter().filter(|f| f.app == app).collect()
}

#[test]
fn every_apps_folder_yields_the_kit_model_with_its_header() {
    let home = Home::build();
    let found = find_files(&Places::home(home.path()));
    let h = home.path();

    let ollama = of_app(&found.files, App::Ollama);
    assert_eq!(ollama.len(), 1, "{:#?}", found.files);
    assert_eq!(ollama[0].name, "smollm2:135m", "Ollama's own name");
    assert_eq!(
        ollama[0].path,
        h.join(format!(".ollama/models/blobs/sha256-{SMOLLM2_SHA256}"))
    );

    let lm_studio = of_app(&found.files, App::LmStudio);
    let paths: Vec<&Path> = lm_studio.iter().map(|f| f.path.as_path()).collect();
    assert_eq!(
        paths,
        [
            h.join(".lmstudio/models/bartowski/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q4_1.gguf"),
            h.join(".cache/lm-studio/models/TheBloke/smol-GGUF/smol.Q4_1.gguf"),
        ]
    );
    assert_eq!(of_app(&found.files, App::Gpt4All).len(), 1);

    let jan: Vec<&Path> = of_app(&found.files, App::Jan)
        .iter()
        .map(|f| f.path.as_path())
        .collect();
    assert!(
        jan.contains(
            &h.join("jan/models/smollm2/nested/deeper/model.gguf")
                .as_path()
        ),
        "{jan:?}"
    );
    assert!(
        jan.contains(
            &h.join(".local/share/Jan/data/llamacpp/models/smollm2-135m/model.gguf")
                .as_path()
        ),
        "{jan:?}"
    );

    let hub = of_app(&found.files, App::HuggingFace);
    assert_eq!(
        hub.len(),
        1,
        "two revisions of one blob are one file: {hub:#?}"
    );
    assert!(hub[0].path.starts_with(h.join(
        ".cache/huggingface/hub/models--HuggingFaceTB--SmolLM2-135M-Instruct-GGUF/snapshots"
    )));

    for file in &found.files {
        assert_eq!(file.bytes, SMOLLM2.bytes, "{}", file.path.display());
        let header = &file.header;
        assert_eq!(header.version, 3);
        assert_eq!(header.architecture.as_deref(), Some("llama"));
        assert_eq!(header.context_length, Some(8192));
        assert_eq!(header.file_type, Some(3));
        assert_eq!(header.quantization.as_deref(), Some("Q4_1"));
        let template = header
            .chat_template
            .as_ref()
            .expect("SmolLM2 has a chat template");
        assert_eq!(template.family, Some(TemplateFamily::ChatMl));
        if file.app != App::Ollama {
            assert_eq!(file.name, SMOLLM2_GENERAL_NAME, "named by general.name");
        }
    }
}

#[test]
fn a_broken_header_a_symlink_loop_and_a_locked_folder_are_passed_over_and_the_walk_goes_on() {
    let home = Home::build();
    let found = find_files(&Places::home(home.path()));
    let reason = |path: &Path| {
        found
            .passed_over
            .iter()
            .find(|p| p.path == path)
            .map(|p| p.reason.clone())
            .unwrap_or_else(|| {
                panic!(
                    "{} not passed over: {:#?}",
                    path.display(),
                    found.passed_over
                )
            })
    };
    let bad = home.path().join(".lmstudio/models/broken/repo");
    assert!(reason(&bad.join("truncated.gguf")).contains("the header ends early"));
    assert!(reason(&bad.join("notes.gguf")).contains("not a GGUF file"));
    assert!(reason(&home.path().join("jan/models/smollm2/loop")).contains("symbolic link back to"));
    let in_locked = home.locked().join("model.gguf");
    let listed_from_locked = found.files.iter().any(|f| f.path == in_locked);
    if home.locked_is_unreadable() {
        assert!(reason(&home.locked()).contains("cannot be read"));
        assert!(!listed_from_locked);
    } else {
        // Running as root: the folder is read anyway, and its model listed.
        assert!(listed_from_locked, "{:#?}", found.files);
    }
    // None of it stopped the rest: every app's files are there.
    for app in [
        App::Ollama,
        App::LmStudio,
        App::Gpt4All,
        App::Jan,
        App::HuggingFace,
    ] {
        assert!(!of_app(&found.files, app).is_empty(), "{app:?}");
    }
}

#[test]
fn the_apps_variables_move_their_folders() {
    let home = Home::build();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::rename(
        home.path().join(".ollama/models"),
        elsewhere.path().join("ollama"),
    )
    .unwrap();
    std::fs::rename(
        home.path().join(".cache/huggingface/hub"),
        elsewhere.path().join("hub"),
    )
    .unwrap();
    let places = Places {
        ollama_models: Some(elsewhere.path().join("ollama")),
        hf_hub_cache: Some(elsewhere.path().join("hub")),
        ..Places::home(home.path())
    };
    let found = find_files(&places);
    assert_eq!(of_app(&found.files, App::Ollama)[0].name, "smollm2:135m");
    assert_eq!(of_app(&found.files, App::HuggingFace).len(), 1);
    let by_home = Places {
        hf_home: Some(elsewhere.path().to_path_buf()),
        ..Places::home(home.path())
    };
    assert_eq!(
        of_app(&find_files(&by_home).files, App::HuggingFace).len(),
        1,
        "HF_HOME/hub"
    );
    assert!(of_app(&find_files(&by_home).files, App::Ollama).is_empty());
}

/// A port with a listener that accepts connections and never answers.
async fn silent_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    port
}

/// A port whose listener reads the request and answers `reply`.
async fn answering_port(reply: &'static [u8]) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0; 4096];
                let _ = socket.read(&mut request).await;
                let _ = socket.write_all(reply).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    port
}

fn at(app: App, port: u16) -> ServerPort {
    ServerPort { app, port }
}

#[tokio::test]
async fn a_server_that_never_answers_costs_the_probe_its_bounded_wait_and_no_more() {
    let port = silent_port().await;
    let started = Instant::now();
    let servers = probe_servers(&[at(App::Ollama, port)]).await;
    let took = started.elapsed();
    assert!(took < PROBE_WAIT + Duration::from_secs(1), "took {took:?}");
    assert_eq!(servers.len(), 1, "something is there: {servers:?}");
    let error = servers[0].error.as_deref().unwrap();
    assert!(error.contains("sent no whole answer within 2s"), "{error}");
    assert!(servers[0].models.is_empty());
}

#[tokio::test]
async fn servers_that_answer_garbage_become_entries_with_the_reason_and_closed_ports_none() {
    let not_http = answering_port(b"SSH-2.0-OpenSSH_9.6\r\n").await;
    let not_a_list = answering_port(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"data\": 42}",
    )
    .await;
    let refused = answering_port(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n").await;
    let closed = free_port();
    let servers = probe_servers(&[
        at(App::LlamaCpp, not_http),
        at(App::Vllm, not_a_list),
        at(App::Jan, closed),
        at(App::LmStudio, refused),
    ])
    .await;
    let ports: Vec<u16> = servers.iter().map(|s| s.port).collect();
    assert_eq!(
        ports,
        [not_http, not_a_list, refused],
        "nothing listens on {closed}"
    );
    let errors: Vec<&str> = servers
        .iter()
        .map(|s| s.error.as_deref().unwrap())
        .collect();
    assert!(
        errors[0].contains("did not answer as an HTTP server"),
        "{errors:?}"
    );
    assert!(
        errors[1].contains("something other than a model list"),
        "{errors:?}"
    );
    assert!(errors[1].contains("{\"data\": 42}"), "{errors:?}");
    assert!(
        errors[2].contains("HTTP 401") && errors[2].contains("API key"),
        "{errors:?}"
    );
    assert_eq!(servers[1].usual_app, App::Vllm);
    assert_eq!(
        servers[1].base_url,
        format!("http://127.0.0.1:{not_a_list}/v1")
    );
}

#[tokio::test]
async fn a_real_llama_cpp_server_lists_its_model_even_on_ollamas_port() {
    let server = LlmServer::start(None);
    let port = server.port();
    let servers = probe_servers(&[at(App::LlamaCpp, port), at(App::Ollama, port)]).await;
    assert_eq!(servers.len(), 2, "{servers:#?}");
    for found in &servers {
        assert_eq!(found.error, None, "{found:#?}");
        assert_eq!(found.base_url, server.base_url());
        let ids: Vec<&str> = found.models.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, [ALIAS]);
        assert_eq!(
            found.models[0].capabilities, None,
            "llama-cpp-python reports no capabilities, and answers no /api/show"
        );
    }
}

#[tokio::test]
async fn discovery_walks_the_folders_and_asks_every_port_at_once() {
    let home = Home::build();
    let silent = [
        silent_port().await,
        silent_port().await,
        silent_port().await,
    ];
    let places = Places {
        ports: silent.iter().map(|&port| at(App::LlamaCpp, port)).collect(),
        ..Places::home(home.path())
    };
    let started = Instant::now();
    let found = discover(&places).await;
    let took = started.elapsed();
    assert!(
        took < PROBE_WAIT + Duration::from_secs(2),
        "three silent ports asked in parallel took {took:?}"
    );
    assert_eq!(found.servers.len(), 3);
    assert!(found
        .servers
        .iter()
        .all(|s: &FoundServer| s.error.is_some()));
    assert!(of_app(&found.files, App::Ollama).len() == 1);
    let json = serde_json::to_value(&found).unwrap();
    assert_eq!(json["files"][0]["app"], "ollama");
    assert_eq!(json["files"][0]["header"]["quantization"], "Q4_1");
    assert_eq!(
        json["files"][0]["header"]["chat_template"]["family"],
        "chatml"
    );
}

/// The real `folio` with `home` as $HOME (and none of the apps' variables)
/// and `config` as its folio.toml.
fn folio(home: &Path, config: &Path, args: &[&str]) -> Output {
    let data = home.join("folio-data");
    Command::new(env!("CARGO_BIN_EXE_folio"))
        .env("HOME", home)
        .env("FOLIO_CONFIG", config)
        .env_remove("OLLAMA_MODELS")
        .env_remove("HF_HUB_CACHE")
        .env_remove("HF_HOME")
        .env_remove("FOLIO_LLM_BACKEND")
        .env_remove("FOLIO_LLM_MODEL")
        .env_remove("FOLIO_LLM_BASE_URL")
        .arg("--data-dir")
        .arg(&data)
        .args(args)
        .output()
        .expect("run folio")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A folio.toml with a server configured and settings of its own, which
/// `folio models use` must keep.
fn configured(dir: &Path) -> PathBuf {
    let path = dir.join("folio.toml");
    std::fs::write(
        &path,
        "[llm]\nbackend = \"openai\"\nmodel = \"remote-model\"\nbase_url = \"http://127.0.0.1:9/v1\"\ntemperature = 0.5\nmax_tokens = 300\n\n[prompts]\ndir = \"/my/prompts\"\n",
    )
    .unwrap();
    path
}

fn llm_in(config: &Path) -> LlmSettings {
    ConfigFile::read(config)
        .unwrap()
        .llm
        .expect("an [llm] table")
}

#[test]
fn folio_models_use_a_kit_name_makes_it_the_embedded_model_and_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let config = configured(dir.path());
    let out = folio(dir.path(), &config, &["models", "use", SMOLLM2.name]);
    let printed = text(&out);
    assert!(out.status.success(), "{printed}");
    assert!(printed.contains("backend   openai → embedded"), "{printed}");
    assert!(
        printed.contains(&format!(
            "model     remote-model → {}",
            kit_file().display()
        )),
        "{printed}"
    );
    let llm = llm_in(&config);
    assert_eq!(llm.backend, Backend::Embedded);
    assert_eq!(PathBuf::from(&llm.model), kit_file());
    assert_eq!((llm.temperature, llm.max_tokens), (0.5, 300));
    let file = ConfigFile::read(&config).unwrap();
    assert_eq!(file.prompts.dir, Some(PathBuf::from("/my/prompts")));
}

#[test]
fn folio_models_use_a_found_files_name_or_path_makes_that_file_the_model() {
    let home = Home::build();
    let config = configured(home.path());
    let out = folio(
        home.path(),
        &config,
        &["--json", "models", "use", "smollm2:135m"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let blob = home
        .path()
        .join(format!(".ollama/models/blobs/sha256-{SMOLLM2_SHA256}"));
    let llm = llm_in(&config);
    assert_eq!(
        (llm.backend, PathBuf::from(&llm.model)),
        (Backend::Embedded, blob.clone())
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["changed"][1]["key"], "model");
    assert_eq!(report["changed"][1]["to"], blob.display().to_string());

    let gpt4all = home
        .path()
        .join(".local/share/nomic.ai/GPT4All/smollm2-135m-instruct.Q4_1.gguf");
    let out = folio(
        home.path(),
        &config,
        &["models", "use", gpt4all.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(PathBuf::from(llm_in(&config).model), gpt4all);

    // general.name is shared by every copy here: it names no one file,
    // unless the copies are links to one file (where hard links fail).
    let out = folio(
        home.path(),
        &config,
        &["models", "use", SMOLLM2_GENERAL_NAME],
    );
    let copies_are_one_file =
        std::fs::canonicalize(&gpt4all).unwrap() == std::fs::canonicalize(kit_file()).unwrap();
    if copies_are_one_file {
        assert!(out.status.success(), "{}", text(&out));
    } else {
        assert!(!out.status.success());
        assert!(text(&out).contains("use one's path"), "{}", text(&out));
    }
}

#[test]
fn folio_models_use_refuses_an_unknown_name_and_lists_what_can_be_used() {
    let home = Home::build();
    let config = configured(home.path());
    let before = std::fs::read_to_string(&config).unwrap();
    let out = folio(home.path(), &config, &["models", "use", "gpt-17-ultra"]);
    let printed = text(&out);
    assert!(!out.status.success(), "{printed}");
    for expected in [
        "no model is called \"gpt-17-ultra\"",
        SMOLLM2.name,
        "smollm2:135m  (Ollama: ",
        "or the path of a GGUF file",
    ] {
        assert!(printed.contains(expected), "{expected:?} in {printed}");
    }
    let truncated = home
        .path()
        .join(".lmstudio/models/broken/repo/truncated.gguf");
    let out = folio(
        home.path(),
        &config,
        &["models", "use", truncated.to_str().unwrap()],
    );
    assert!(!out.status.success());
    assert!(
        text(&out).contains("is not a usable GGUF file: the header ends early"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        before,
        "folio.toml untouched"
    );
}

#[test]
fn folio_models_lists_what_it_found_after_its_report() {
    let home = Home::build();
    let config = configured(home.path());
    folio(home.path(), &config, &["models", "use", SMOLLM2.name]);
    let out = folio(home.path(), &config, &["models"]);
    let printed = text(&out);
    assert!(out.status.success(), "{printed}");
    let found = printed.find("found on this machine:").expect(&printed);
    assert!(found > printed.find("language model:").unwrap());
    let section = &printed[found..];
    assert!(section.contains("    smollm2:135m  (Ollama)"), "{section}");
    assert!(
        section.contains("93.8 MiB, Q4_1, llama, context 8192, chat template ChatML"),
        "{section}"
    );
    assert!(section.contains("the header ends early"), "{section}");
    let out = folio(home.path(), &config, &["--json", "models"]);
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(
        report["llm"]["error"],
        serde_json::Value::Null,
        "the report is kept"
    );
    let files = report["found"]["files"].as_array().unwrap();
    assert!(files
        .iter()
        .any(|f| f["name"] == "smollm2:135m" && f["app"] == "ollama"));
    assert!(report["found"]["servers"].is_array());
}
