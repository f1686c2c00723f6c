pub mod fixtures;
pub mod engine;
