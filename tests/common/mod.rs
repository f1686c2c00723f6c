pub mod engine;
pub mod fixtures;
