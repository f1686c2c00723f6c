//! Native open and save dialogs, opened from Rust so the webview needs no
//! dialog or file-system permission. Each resolves to the chosen path, or
//! `None` when the user cancels.

use std::path::PathBuf;

use tauri::AppHandle;
use tauri_plugin_dialog::{DialogExt, FileDialogBuilder, FilePath};

use super::CommandResult;
use crate::ipc_error::IpcError;

enum Pick {
    Folder,
    File,
    Save,
}

async fn show(dialog: FileDialogBuilder<tauri::Wry>, pick: Pick) -> CommandResult<Option<PathBuf>> {
    let (tx, rx) = tokio::sync::oneshot::channel::<Option<FilePath>>();
    let done = move |path: Option<FilePath>| {
        let _ = tx.send(path);
    };
    match pick {
        Pick::Folder => dialog.pick_folder(done),
        Pick::File => dialog.pick_file(done),
        Pick::Save => dialog.save_file(done),
    }
    let chosen = rx
        .await
        .map_err(|_| IpcError::new("dialog", "the dialog closed unexpectedly"))?;
    chosen
        .map(|p| {
            p.into_path().map_err(|e| {
                IpcError::new(
                    "dialog",
                    format!("the dialog returned an unusable path: {e}"),
                )
            })
        })
        .transpose()
}

pub async fn folder(app: &AppHandle, title: &str) -> CommandResult<Option<PathBuf>> {
    show(app.dialog().file().set_title(title), Pick::Folder).await
}

pub async fn gguf_file(app: &AppHandle) -> CommandResult<Option<PathBuf>> {
    let dialog = app
        .dialog()
        .file()
        .set_title("Choose a GGUF model file")
        .add_filter("GGUF model", &["gguf"]);
    show(dialog, Pick::File).await
}

pub async fn jsonl_file(app: &AppHandle, title: &str) -> CommandResult<Option<PathBuf>> {
    let dialog = app
        .dialog()
        .file()
        .set_title(title)
        .add_filter("JSON lines", &["jsonl"]);
    show(dialog, Pick::File).await
}

pub async fn markdown_destination(
    app: &AppHandle,
    title: &str,
    suggested_name: &str,
) -> CommandResult<Option<PathBuf>> {
    let dialog = app
        .dialog()
        .file()
        .set_title(title)
        .set_file_name(suggested_name)
        .add_filter("Markdown", &["md"]);
    show(dialog, Pick::Save).await
}
