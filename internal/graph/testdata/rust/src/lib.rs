mod net;
mod util;
mod missing;
pub use crate::net::client::Client;
use serde::Serialize;

pub fn start() -> Client { Client::new() }
