//! What every layer of Folio shares and none owns: named choices, the one
//! progress type and the event bus, text normalisation, atomic file
//! replacement, paths as lossless text, whether a process is alive, where the checkout and its model kit are, the HTTP client plumbing of the server backends, order
//! statistics and the allocator's setup. It names no other Folio crate.

pub mod allocator;
pub mod atomic_file;
pub mod checkout;
pub mod choice;
pub mod dir;
pub mod events;
pub mod path_text;
pub mod process;
pub mod server_http;
pub mod stats;
pub mod text;
