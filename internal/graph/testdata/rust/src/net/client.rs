mod tcp;
use super::Conn;
use crate::util::{helper, Config};

pub struct Client { conn: Conn }
impl Client { pub fn new() -> Self { helper(); Client { conn: Conn } } }
