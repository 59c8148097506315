//! What every UI case shares: a status type and a Deployment builder.
#![allow(dead_code)]

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kubewright::ReconcilerStatus;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A status with what the root reconciler needs and one field to reflect into.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Status {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    pub deployment: Option<String>,
}

impl ReconcilerStatus for Status {
    fn conditions(&self) -> &[Condition] {
        &self.conditions
    }
    fn conditions_mut(&mut self) -> &mut Vec<Condition> {
        &mut self.conditions
    }
    fn observed_generation(&self) -> Option<i64> {
        self.observed_generation
    }
    fn set_observed_generation(&mut self, g: Option<i64>) {
        self.observed_generation = g;
    }
}

/// A Deployment named `name`.
pub fn deployment(name: String) -> Deployment {
    let mut d = Deployment::default();
    d.metadata.name = Some(name);
    d
}
