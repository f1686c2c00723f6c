//! The commands the UI may invoke (each granted in `capabilities/main.json`).
//! Every one is thin: take state, call one engine function, map the error.

pub mod answers;
pub mod dialogs;
pub mod evaluate;
pub mod library;
pub mod server;
pub mod settings;

/// What every command returns.
pub type CommandResult<T> = Result<T, crate::ipc_error::IpcError>;
