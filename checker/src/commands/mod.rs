//! One module per subcommand: its options (a clap `Args` struct) and one `run` function that
//! does it and returns the exit code.

pub mod bench;
pub mod check;
pub mod confirm;
pub mod diff;
pub mod explain;
pub mod explore;
pub mod fixture;
pub mod fixtures;
pub mod matrix;
pub mod merge;
pub mod probe;
pub mod probe_client;
pub mod profiles;
pub mod replay;
pub mod serve;
