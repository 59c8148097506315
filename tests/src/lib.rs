//! Helpers shared by the integration tests in `tests/` (the tests themselves live in the test targets).

pub mod builtin_objects;
pub mod cronjob_scenario;
pub mod database_scenario;
pub mod domains_scenario;
pub mod dynamic_sets_scenario;
pub mod expose_scenario;
pub mod fights_scenario;
pub mod kubectl;
pub mod normalize;
pub mod notes_scenario;
pub mod plan_scenario;
pub mod priority_scenario;
pub mod sharded_operators;
pub mod sharding_scenario;
pub mod teams_scenario;
pub mod tenants_scenario;
pub mod webapp_rules;
pub mod webapp_snapshot;
pub mod webapp_upgrade;
pub mod webapp_webhooks;
pub mod workload_controllers;
