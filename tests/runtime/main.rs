//! The reconciler runtime driving real controllers on the in-memory API server.

mod smoke;
mod lifecycle;
mod webapp;
