//! Declares Folio's commands to Tauri so each one needs an explicit
//! permission: the capability file grants these and nothing generic.

fn main() {
    let manifest = tauri_build::AppManifest::new().commands(&[
        "app_info",
        "model_pace",
        "library_overview",
        "folder_documents",
        "pick_folder",
        "add_folders",
        "remove_folder",
        "pause_jobs",
        "resume_jobs",
        "cancel_job",
        "retry_files",
        "document_tree",
        "document_file",
        "passage_boxes",
        "graph_status",
        "build_graph",
        "collections",
        "save_collection",
        "delete_collection",
        "scope_size",
        "methods",
        "ask",
        "cancel_ask",
        "export_run",
        "threads",
        "thread_detail",
        "delete_thread",
        "export_thread",
        "pick_eval_path",
        "start_eval",
        "cancel_eval",
        "eval_report",
        "eval_runs",
        "export_eval_report",
        "settings",
        "save_settings",
        "pick_model_file",
        "served_models",
        "server_support",
        "found_models",
    ]);
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest))
        .expect("tauri build configuration");
}
