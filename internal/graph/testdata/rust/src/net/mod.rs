pub mod client;
use crate::util::helper;

pub struct Conn;
