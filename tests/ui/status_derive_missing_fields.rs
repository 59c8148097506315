//! `#[derive(ReconcilerStatus)]` on a status without the fields it reads: one error per missing field, at the
//! struct's name, saying what to add or mark.
#![allow(unused_imports, dead_code)]

use kubewright::ReconcilerStatus;

#[derive(Clone, Debug, Default, serde::Serialize, ReconcilerStatus)]
pub struct Status {
    pub ready: bool,
}

fn main() {}
