//! Folio's desktop app. The engine runs inside this process in the
//! background; the window talks to it only through the commands in
//! `commands/`. Closing the window (or SIGTERM) asks background work to stop
//! at a batch boundary before the process exits.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod batching;
mod commands;
mod engine;
mod ipc_error;
mod path_grants;
mod secrets;
mod server;
mod settings;
mod state;
#[cfg(test)]
mod webview_policy;

use tauri::Manager;

use crate::commands::{
    answers, evaluate, library, server as server_commands, settings as settings_commands,
};
use crate::state::AppState;

/// A session logout or `kill` sends SIGTERM: leave through the same exit
/// path as closing the window, so background work stops at a safe point.
async fn exit_on_sigterm(handle: tauri::AppHandle) {
    use tokio::signal::unix::{signal, SignalKind};
    if let Ok(mut term) = signal(SignalKind::terminate()) {
        term.recv().await;
        handle.exit(0);
    }
}

fn main() {
    folio_engine::allocator::limit_arenas();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .manage(AppState::default())
        .setup(|app| {
            let handle = app.handle().clone();
            // Opening the database is quick; the model loads and the first
            // reconcile run in the background once the engine is up.
            tauri::async_runtime::block_on(async {
                handle.state::<AppState>().restart(&handle).await;
            });
            tauri::async_runtime::spawn(exit_on_sigterm(handle));
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            settings_commands::app_info,
            settings_commands::model_pace,
            library::library_overview,
            library::folder_documents,
            library::pick_folder,
            library::add_folders,
            library::remove_folder,
            library::pause_jobs,
            library::resume_jobs,
            library::cancel_job,
            library::retry_files,
            library::document_tree,
            library::note_links,
            library::tags,
            library::document_file,
            library::passage_boxes,
            library::graph_status,
            library::build_graph,
            library::collections,
            library::save_collection,
            library::delete_collection,
            library::scope_size,
            library::search,
            answers::methods,
            answers::ask,
            answers::cancel_ask,
            answers::export_run,
            answers::threads,
            answers::thread_detail,
            answers::delete_thread,
            answers::export_thread,
            evaluate::pick_eval_path,
            evaluate::start_eval,
            evaluate::cancel_eval,
            evaluate::eval_report,
            evaluate::eval_runs,
            evaluate::eval_diff,
            evaluate::export_eval_report,
            settings_commands::settings,
            settings_commands::save_settings,
            settings_commands::pick_model_file,
            settings_commands::served_models,
            settings_commands::server_support,
            settings_commands::found_models,
            settings_commands::model_calibration,
            settings_commands::calibrate_model,
            settings_commands::cancel_calibration,
            server_commands::server_view,
            server_commands::switch_server,
        ])
        .build(tauri::generate_context!())
        .unwrap_or_else(|e| {
            eprintln!("folio: the app could not start: {e}");
            std::process::exit(1);
        });
    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event {
            tauri::async_runtime::block_on(handle.state::<AppState>().shutdown());
        }
    });
}
