//! Ollama's models folder: `manifests/<registry>/<namespace>/<model>/<tag>`
//! are JSON manifests whose layer of media type
//! `application/vnd.ollama.image.model` names, by its sha256 digest, the
//! GGUF file `blobs/sha256-<hex>`. A manifest gives the model Ollama's
//! name for it (`qwen2.5:0.5b`), as `ollama list` shows it.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::walk::{self, Bounds};
use super::PassedOver;

/// A manifest is a few hundred bytes; more is not one.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;
const MODEL_LAYER: &str = "application/vnd.ollama.image.model";
/// The registry and namespace Ollama leaves out of the names it shows.
const DEFAULT_REGISTRY: &str = "registry.ollama.ai";
const DEFAULT_NAMESPACE: &str = "library";

/// A model a manifest names: Ollama's name and the blob that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Model {
    pub name: String,
    pub blob: PathBuf,
}

#[derive(Deserialize)]
struct Manifest {
    layers: Vec<Layer>,
}

#[derive(Deserialize)]
struct Layer {
    #[serde(rename = "mediaType")]
    media_type: String,
    digest: String,
}

/// Every model the manifests under `root` name, with manifests that name
/// none, or a blob that is not there, added to `passed_over`.
pub(super) fn models(root: &Path, passed_over: &mut Vec<PassedOver>) -> Vec<Model> {
    let manifests = root.join("manifests");
    let bounds = Bounds {
        depth: 4,
        entries: walk::MAX_ENTRIES,
    };
    let at_tag_depth = |path: &Path| tag_path(&manifests, path).is_some();
    walk::files(&manifests, bounds, at_tag_depth, passed_over)
        .into_iter()
        .filter_map(|path| match model(root, &manifests, &path) {
            Ok(model) => Some(model),
            Err(reason) => {
                passed_over.push(PassedOver { path, reason });
                None
            }
        })
        .collect()
}

/// The four parts of a manifest's path below `manifests`, if it has four.
fn tag_path<'a>(manifests: &Path, path: &'a Path) -> Option<[&'a str; 4]> {
    let parts: Vec<&str> = path
        .strip_prefix(manifests)
        .ok()?
        .iter()
        .map(|part| part.to_str())
        .collect::<Option<_>>()?;
    parts.try_into().ok()
}

fn model(root: &Path, manifests: &Path, path: &Path) -> Result<Model, String> {
    let [registry, namespace, model, tag] =
        tag_path(manifests, path).ok_or("not a manifest's place")?;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_MANIFEST_BYTES).read_to_string(&mut text))
        .map_err(|e| format!("an Ollama manifest that cannot be read: {e}"))?;
    let manifest: Manifest =
        serde_json::from_str(&text).map_err(|e| format!("not an Ollama manifest: {e}"))?;
    let layer = manifest
        .layers
        .iter()
        .find(|layer| layer.media_type == MODEL_LAYER)
        .ok_or("an Ollama manifest without a model layer")?;
    let hex = blob_hex(&layer.digest).ok_or_else(|| {
        format!(
            "an Ollama manifest naming the blob {:?}, which is no sha256 digest",
            layer.digest
        )
    })?;
    let blob = root.join("blobs").join(format!("sha256-{hex}"));
    if !blob.is_file() {
        return Err(format!(
            "an Ollama manifest naming the blob {}, which is not there",
            blob.display()
        ));
    }
    let name = match (registry, namespace) {
        (DEFAULT_REGISTRY, DEFAULT_NAMESPACE) => format!("{model}:{tag}"),
        (DEFAULT_REGISTRY, namespace) => format!("{namespace}/{model}:{tag}"),
        (registry, namespace) => format!("{registry}/{namespace}/{model}:{tag}"),
    };
    Ok(Model { name, blob })
}

/// The hex of a `sha256:<64 hex digits>` digest. Checked in full, since it
/// becomes part of a path: a digest such as `sha256:../../x` names no blob.
fn blob_hex(digest: &str) -> Option<&str> {
    let hex = digest.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "4c1f0a1cf0ad6ff8d0c8f7b3a34f1e6f38a9c6b7c0b4b9c2e8a7d3f5e6a1b2c3";

    fn manifest(root: &Path, at: &str, digest: &str) {
        let path = root.join("manifests").join(at);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let json = format!(
            r#"{{"schemaVersion":2,"layers":[{{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:{HEX}"}},{{"mediaType":"{MODEL_LAYER}","digest":"{digest}","size":3}}]}}"#
        );
        std::fs::write(path, json).unwrap();
    }

    #[test]
    fn names_are_ollamas_and_blobs_come_from_digests() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("blobs")).unwrap();
        std::fs::write(root.join(format!("blobs/sha256-{HEX}")), b"GGUF").unwrap();
        let digest = format!("sha256:{HEX}");
        manifest(root, "registry.ollama.ai/library/qwen2.5/0.5b", &digest);
        manifest(root, "registry.ollama.ai/someone/tiny/latest", &digest);
        manifest(root, "hf.co/org/repo-GGUF/Q4_K_M", &digest);
        manifest(
            root,
            "registry.ollama.ai/library/evil/tag",
            "sha256:../../../etc/passwd",
        );
        manifest(
            root,
            "registry.ollama.ai/library/gone/tag",
            &format!("sha256:{}", "0".repeat(64)),
        );
        let mut passed = Vec::new();
        let names: Vec<String> = models(root, &mut passed)
            .into_iter()
            .map(|m| {
                assert_eq!(m.blob, root.join(format!("blobs/sha256-{HEX}")));
                m.name
            })
            .collect();
        assert_eq!(
            names,
            [
                "hf.co/org/repo-GGUF:Q4_K_M",
                "qwen2.5:0.5b",
                "someone/tiny:latest"
            ]
        );
        let reasons: Vec<&str> = passed.iter().map(|p| p.reason.as_str()).collect();
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        assert!(reasons[0].contains("no sha256 digest"), "{reasons:?}");
        assert!(reasons[1].contains("which is not there"), "{reasons:?}");
    }
}
