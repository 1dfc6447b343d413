use crate::net::client::Client;

pub struct Config;
pub fn helper() {}
pub fn make() -> Client { Client::new() }
