//! Native dialogs, opened from Rust so the webview needs no dialog or
//! file-system permission, and answered by the person, never by script in
//! the webview. A file or folder picked in one is granted for the session
//! (see [`crate::path_grants`]); a path typed into the webview is used only
//! once the person confirms it in a dialog from here.

use std::path::PathBuf;

use tauri::{AppHandle, Manager};
use tauri_plugin_dialog::{
    DialogExt, FileDialogBuilder, FilePath, MessageDialogButtons, MessageDialogKind,
};

use super::CommandResult;
use crate::ipc_error::IpcError;
use crate::state::AppState;

#[derive(Clone, Copy)]
enum Pick {
    Folder,
    File,
    Save,
}

/// The chosen path, or `None` when the user cancels. An opened file or
/// folder is granted; a save destination is written at once by the caller
/// and never handed back by the webview, so it is not.
async fn show(
    app: &AppHandle,
    dialog: FileDialogBuilder<tauri::Wry>,
    pick: Pick,
) -> CommandResult<Option<PathBuf>> {
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
    let chosen = chosen
        .map(|p| {
            p.into_path().map_err(|e| {
                IpcError::new(
                    "dialog",
                    format!("the dialog returned an unusable path: {e}"),
                )
            })
        })
        .transpose()?;
    if let (Some(path), Pick::Folder | Pick::File) = (&chosen, pick) {
        app.state::<AppState>().grants().grant(path);
    }
    Ok(chosen)
}

pub async fn folder(app: &AppHandle, title: &str) -> CommandResult<Option<PathBuf>> {
    show(app, app.dialog().file().set_title(title), Pick::Folder).await
}

pub async fn gguf_file(app: &AppHandle) -> CommandResult<Option<PathBuf>> {
    let dialog = app
        .dialog()
        .file()
        .set_title("Choose a GGUF model file")
        .add_filter("GGUF model", &["gguf"]);
    show(app, dialog, Pick::File).await
}

pub async fn jsonl_file(app: &AppHandle, title: &str) -> CommandResult<Option<PathBuf>> {
    let dialog = app
        .dialog()
        .file()
        .set_title(title)
        .add_filter("JSON lines", &["jsonl"]);
    show(app, dialog, Pick::File).await
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
    show(app, dialog, Pick::Save).await
}

/// Asks the person a yes-or-no question in a native dialog; `true` when
/// they choose `proceed`.
pub async fn confirm(
    app: &AppHandle,
    title: &str,
    message: String,
    proceed: &str,
) -> CommandResult<bool> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .message(message)
        .title(title)
        .kind(MessageDialogKind::Warning)
        .buttons(MessageDialogButtons::OkCancelCustom(
            proceed.to_string(),
            "Cancel".to_string(),
        ))
        .show(move |confirmed| {
            let _ = tx.send(confirmed);
        });
    rx.await
        .map_err(|_| IpcError::new("dialog", "the dialog closed unexpectedly"))
}

/// Lets a command use `paths` that came from the webview: each was picked
/// in one of these dialogs this session, or the person confirms them all
/// now, told that Folio will `action` them. Declined, the command must do
/// nothing.
pub async fn authorize_paths(
    app: &AppHandle,
    action: &str,
    paths: &[PathBuf],
) -> CommandResult<()> {
    let ungranted: Vec<PathBuf> = app
        .state::<AppState>()
        .grants()
        .ungranted(paths)
        .into_iter()
        .cloned()
        .collect();
    if ungranted.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = ungranted
        .iter()
        .map(|p| format!("    {}", p.display()))
        .collect();
    let message = format!(
        "Folio will {action}:\n\n{}\n\nThese were typed or remembered rather than chosen in a file \
         dialog. Continue only if you entered them yourself.",
        listed.join("\n")
    );
    if !confirm(app, "Confirm paths", message, "Continue").await? {
        return Err(declined(action));
    }
    let state = app.state::<AppState>();
    for path in &ungranted {
        state.grants().grant(path);
    }
    Ok(())
}

/// The error of a command whose paths or settings the person did not confirm.
pub fn declined(action: &str) -> IpcError {
    IpcError::new(
        "not_confirmed",
        format!("Not confirmed, so Folio did not {action}."),
    )
}
