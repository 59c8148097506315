//! What can go wrong in `new` and `create api`.

use std::path::PathBuf;

use crate::names::NameError;

/// An error of `cargo kubewright`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A name breaks a Kubernetes or cargo rule.
    #[error(transparent)]
    Name(#[from] NameError),
    /// `new` never writes into a directory that exists.
    #[error(
        "`{0}` already exists: `new` writes a new directory and overwrites nothing; pick another path, or add a \
         kind to a crate it generated with `cargo kubewright create api`"
    )]
    Exists(PathBuf),
    /// The crate's name cannot be read from the path `new` was given.
    #[error("`{0}` ends in no directory name to name the crate after: pass --name NAME")]
    NoName(PathBuf),
    /// The kubewright path names no kubewright crate.
    #[error(
        "no kubewright crate at `{path}` ({why}): pass --kubewright-path PATH, the `operator/` folder of a \
         kubewright checkout"
    )]
    NoKubewright {
        /// The path tried.
        path: PathBuf,
        /// What was found there instead.
        why: String,
    },
    /// `create api` was run outside a crate `new` generated.
    #[error("`{path}` is not a crate `cargo kubewright new` generated: {why}")]
    NotGenerated {
        /// The file read.
        path: PathBuf,
        /// What is missing.
        why: String,
    },
    /// `create api` found the kind in the crate.
    #[error("the crate has a kind `{kind}` already (`{path}`): nothing written")]
    KindExists {
        /// The kind asked for.
        kind: String,
        /// Where it was found.
        path: PathBuf,
    },
    /// Reading or writing a file failed.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        /// What was being done (`write`, `read`, …).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl Error {
    /// An I/O error of `action` on `path`.
    pub fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}
