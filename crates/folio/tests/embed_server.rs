//! The `/v1/embeddings` backend against a real llama-cpp-python server
//! serving the kit's GGUF with embeddings on. The protocol is what is
//! tested (batching, requests in flight, order, pooling, errors, a switch of
//! model), not the vectors' quality.

mod common;

use std::path::Path;

use common::engine::{ingest, scalar};
use common::llm_server::{free_port, LlmServer, ALIAS};
use folio_engine::embed::{
    EmbedError, Embedder, EmbeddingBackend, EmbeddingSource, ServerSettings,
};
use folio_engine::retrieve::SearchMode;
use folio_engine::store::Scope;
use folio_engine::{Config, Library};

/// SmolLM2-135M's hidden size.
const DIM: usize = 576;

fn settings(server: &LlmServer) -> ServerSettings {
    ServerSettings {
        base_url: server.base_url(),
        model: ALIAS.into(),
        batch: 4,
        parallel: 3,
        ..ServerSettings::default()
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn requests_in_flight_return_each_texts_own_unit_vector_in_order() {
    let server = LlmServer::start_embeddings();
    let embedder = Embedder::load(&EmbeddingSource::Server(settings(&server))).unwrap();
    assert_eq!(embedder.dim(), DIM);
    assert_eq!(embedder.name(), format!("{ALIAS} (server)"));
    // llama-cpp-python 0.3.36 mixes up the texts of one request for a model
    // whose file names no pooling, and the check at connect finds it.
    assert!(
        embedder.note().is_some_and(|n| n.contains("one a request")),
        "{:?}",
        embedder.note()
    );
    let topics = ["ownership", "lifetimes", "traits", "closures", "macros"];
    // 23 texts: six requests of 4 (the last short), three at a time.
    let texts: Vec<String> = (0..23)
        .map(|i| format!("Passage {i} explains {} in Rust.", topics[i % topics.len()]))
        .collect();
    let bulk = embedder.embed_bulk(&texts).unwrap();
    assert_eq!(bulk.len(), texts.len());
    for vector in &bulk {
        assert_eq!(vector.len(), DIM);
        assert!((cosine(vector, vector) - 1.0).abs() < 1e-4);
    }
    for i in [0, 7, 22] {
        let alone = embedder.embed_one(&texts[i]).unwrap();
        assert!(
            cosine(&bulk[i], &alone) > 0.999,
            "text {i}'s vector depends on its batch"
        );
        assert!(cosine(&bulk[i], &bulk[(i + 1) % texts.len()]) < 0.9999);
    }
}

#[test]
fn a_server_that_is_down_is_named_with_what_to_do() {
    let down = ServerSettings {
        base_url: format!("http://127.0.0.1:{}/v1", free_port()),
        model: ALIAS.into(),
        ..ServerSettings::default()
    };
    let error = Embedder::load(&EmbeddingSource::Server(down.clone()))
        .err()
        .expect("nothing listens there");
    assert!(matches!(error, EmbedError::ServerDown { .. }), "{error:?}");
    let text = error.to_string();
    assert!(
        text.contains(&down.base_url) && text.contains("base_url"),
        "{text}"
    );

    let unnamed = ServerSettings {
        model: String::new(),
        ..down
    };
    let error = Embedder::load(&EmbeddingSource::Server(unnamed))
        .err()
        .unwrap();
    assert!(error.to_string().contains("[embedding] model"), "{error}");
}

fn write_docs(dir: &Path, names: &[(&str, &str)]) {
    for (name, text) in names {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

fn server_config(data: &Path, settings: ServerSettings) -> Config {
    let mut config = Config::new(Some(data.to_path_buf()), None);
    config.embedding_backend = EmbeddingBackend::Openai;
    config.embedding_server = settings;
    config
}

async fn top_path(library: &Library, query: &str) -> String {
    let hits = library
        .search(query, 3, SearchMode::Dense, &Scope::default())
        .await
        .expect("search");
    hits.first().expect("a hit").path.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_indexes_with_a_server_survives_its_fall_and_re_embeds_on_a_switch() {
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    write_docs(
        docs.path(),
        &[
            ("volcano.md", "# Volcanoes\n\nMagma rises through the crust and erupts as lava from the volcano's vent."),
            ("bread.md", "# Baking bread\n\nYeast ferments the dough, which rises before it is baked in a hot oven."),
        ],
    );
    let server = LlmServer::start_embeddings();
    let library = Library::open(server_config(data.path(), settings(&server)))
        .await
        .unwrap();
    let summary = ingest(&library, docs.path()).await;
    assert_eq!(summary.chunks_embedded, 2);
    assert!(top_path(&library, "lava erupting from a vent")
        .await
        .ends_with("volcano.md"));
    let model: String = sqlx::query_scalar("SELECT value FROM settings WHERE key = 'vector_model'")
        .fetch_one(library.store().pool())
        .await
        .unwrap();
    assert_eq!(model, format!("{ALIAS} (server)"));

    // The server falls: adding a file fails with a message that says what to
    // do, and what was indexed stays searchable.
    drop(server);
    write_docs(
        docs.path(),
        &[(
            "tides.md",
            "# Tides\n\nThe moon's pull raises the sea twice a day along the coast.",
        )],
    );
    let job = library.add(&[docs.path().to_path_buf()]).await.unwrap();
    let error = library
        .jobs()
        .run(job)
        .await
        .expect_err("no server to embed with");
    assert!(error.to_string().contains("cannot be reached"), "{error}");
    assert_eq!(
        scalar(&library, "SELECT COUNT(*) FROM chunk_vectors_int8").await,
        2
    );
    drop(library);

    // Back at another address, same model: nothing is re-embedded but the
    // new file, since the vectors are stored under the model's id.
    let server = LlmServer::start_embeddings();
    let library = Library::open(server_config(data.path(), settings(&server)))
        .await
        .unwrap();
    let summary = ingest(&library, docs.path()).await;
    assert_eq!(summary.chunks_embedded, 1);
    assert!(top_path(&library, "the moon and the sea")
        .await
        .ends_with("tides.md"));
    drop(library);
    drop(server);

    // The embedded model instead: every chunk is embedded again.
    let library = Library::open(Config::new(Some(data.path().to_path_buf()), None))
        .await
        .unwrap();
    let summary = ingest(&library, docs.path()).await;
    assert_eq!(summary.chunks_embedded, 3);
    assert!(top_path(&library, "yeast and dough in an oven")
        .await
        .ends_with("bread.md"));
    assert_eq!(
        scalar(&library, "SELECT COUNT(*) FROM chunk_vectors_int8").await,
        3
    );
}
