//! The reconciler runtime driving real controllers on the in-memory API server.

mod lifecycle;
mod smoke;
mod table;
mod webapp;
