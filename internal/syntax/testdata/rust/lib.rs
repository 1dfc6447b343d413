mod parser;
pub mod graph;
mod inline {
    pub fn inner() {}
}

use crate::parser::Parser;
use super::util::{self, helper, Thing as T};
use self::graph::*;
use std::collections::{HashMap, hash_map::Entry};

pub const LIMIT: usize = 4;
static COUNTER: u32 = 0;
pub type Map = HashMap<String, u32>;

pub struct Index {
    pub name: String,
    count: usize,
}

enum Mode { A, B }

pub trait Visit {
    fn visit(&self, n: &Index) -> bool;
}

impl Index {
    pub fn new(name: &str) -> Self { Index { name: name.to_string(), count: 0 } }
    fn bump(&mut self) { self.count += 1; }
}

impl Visit for Index {
    fn visit(&self, n: &Index) -> bool { helper(n.count) }
}

fn private_fn() -> Mode { Mode::A }
