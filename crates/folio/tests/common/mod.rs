pub mod engine;
pub mod fixtures;
pub mod llm_server;
pub mod served;
pub mod soak;
pub mod wait;
