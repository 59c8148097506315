//! `#[derive(Reconciler)]` as an author uses it: a full operator declared with every attribute, its wiring and
//! RBAC, the generated reconciler running end to end on the in-memory API server (`site`); and the WebApp
//! operator written with the derive against the one written by hand, through one scenario (`webapp`), and its two
//! versions' conversions (`webapp_versions`); the
//! `teams` example (`teams`); the `tenants` example (`tenants`, and its table tests in `tenants_table`); `async fn`
//! steps awaiting before the children are written (`async_steps`); a child set of Jobs created once, with a
//! trimmed history (`runs`); the `cronjob` example's table tests (`cronjob_table`); a built-in kind as the
//! parent, `#[reconciler(parent = Service)]` (`expose`), and table tests of the Expose example's built-in parent
//! and of the Domain example's untyped child (`expose_table`, `domains_table`).

mod async_steps;
mod cronjob;
mod cronjob_table;
mod database;
mod database_table;
mod domains_table;
mod expose;
mod expose_table;
mod notes;
mod runs;
mod site;
mod teams;
mod tenants;
mod tenants_table;
mod webapp;
mod webapp_table;
mod webapp_versions;
