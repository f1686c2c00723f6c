pub mod fixtures;
