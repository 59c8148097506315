//! Two fields marked as the conditions: the second marker is the error.
#![allow(unused_imports, dead_code)]

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kubewright::ReconcilerStatus;

#[derive(Clone, Debug, Default, serde::Serialize, ReconcilerStatus)]
pub struct Status {
    pub observed_generation: Option<i64>,
    #[status(conditions)]
    pub these: Vec<Condition>,
    #[status(conditions)]
    pub those: Vec<Condition>,
}

fn main() {}
