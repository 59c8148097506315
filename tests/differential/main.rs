//! The differential suite: the same requests against the in-memory server and a real kube-apiserver.

mod support;
