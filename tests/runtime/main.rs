//! The reconciler runtime driving real controllers on the in-memory API server.

mod converge;
mod dry_run;
mod dynamic;
mod echoes;
mod explore;
mod explore_cronjob;
mod explore_planted;
mod explore_time;
mod foreign;
mod images;
mod leader;
mod lifecycle;
mod lists;
mod pause;
mod plan;
mod priority;
mod references;
mod selected_caches;
mod sharding;
mod smoke;
mod table;
mod triggers;
mod untyped;
mod versions;
mod webapp;
mod webapp_versions;
