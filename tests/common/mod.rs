pub mod engine;
pub mod fixtures;
pub mod llm_server;
