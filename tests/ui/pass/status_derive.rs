//! `#[derive(ReconcilerStatus)]` by field name, by marker, and with generics.
#![deny(warnings)]

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kubewright::ReconcilerStatus;

#[derive(Clone, Debug, Default, serde::Serialize, ReconcilerStatus)]
pub struct ByName {
    pub observed_generation: Option<i64>,
    pub conditions: Vec<Condition>,
    pub message: Option<String>,
}

#[derive(Clone, Debug, Default, serde::Serialize, ReconcilerStatus)]
pub struct ByMarker {
    #[status(observed_generation)]
    pub generation: Option<i64>,
    #[status(conditions)]
    pub state: Vec<Condition>,
}

#[derive(Clone, Debug, Default, serde::Serialize, ReconcilerStatus)]
pub struct Generic<T: Clone + Default + serde::Serialize + Send + Sync + 'static> {
    pub observed_generation: Option<i64>,
    pub conditions: Vec<Condition>,
    pub extra: T,
}

fn main() {
    let mut s = ByMarker::default();
    s.set_observed_generation(Some(2));
    s.conditions_mut().clear();
    assert_eq!((s.generation, s.state.len()), (Some(2), 0));
    assert!(ByName::default().conditions().is_empty());
    assert_eq!(Generic::<u8>::default().observed_generation(), None);
}
