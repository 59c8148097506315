//! `cargo kubewright`: starts a Kubernetes operator crate on kubewright (`new`) and adds kinds to it
//! (`create api`), as kubebuilder's `init` and `create api` do for Go. Cargo runs it as
//! `cargo-kubewright kubewright ARGS` for `cargo kubewright ARGS`.

mod create_api;
mod error;
mod files;
mod names;
mod new;
mod template;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::create_api::CreateApi;
use crate::error::Error;
use crate::new::NewCrate;

/// Cargo's command line, of which this binary is the `kubewright` subcommand.
#[derive(Debug, Parser)]
#[command(name = "cargo", bin_name = "cargo", styles = clap::builder::Styles::plain())]
enum Cargo {
    /// Start a Kubernetes operator crate on kubewright, or add a kind to one.
    Kubewright(Kubewright),
}

/// `cargo kubewright`.
#[derive(Debug, Args)]
#[command(version, about, long_about = None)]
struct Kubewright {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Write a new operator crate: a kind with one child (a ConfigMap), `app()`, its binary, a table test and
    /// an explorer test, a Dockerfile, a CI script and a README.
    ///
    /// The crate builds and its tests pass as written (`cargo test` in it). kubewright is not published yet:
    /// the crate depends on it by path, on the checkout this binary was built from unless --kubewright-path
    /// names another.
    New(NewArgs),
    /// Add to a crate `new` wrote.
    Create {
        #[command(subcommand)]
        what: Create,
    },
}

/// What `create` adds.
#[derive(Debug, Subcommand)]
enum Create {
    /// Add a kind: its module `src/<kind>.rs` and tests `tests/<kind>.rs`, registered in `src/lib.rs` and
    /// `app()`. Refuses a kind the crate has.
    Api(ApiArgs),
}

/// The arguments of `new`.
#[derive(Debug, Args)]
struct NewArgs {
    /// The directory to create (it must not exist); its name is the crate's unless --name says otherwise.
    path: PathBuf,
    /// The API group of the kinds: a DNS subdomain with at least one dot, e.g. example.dev.
    #[arg(long)]
    group: String,
    /// The first kind, UpperCamelCase, e.g. Widget.
    #[arg(long)]
    kind: String,
    /// The API version of the kind.
    #[arg(long, default_value = "v1")]
    version: String,
    /// The crate's name, also the operator's in Kubernetes (its Deployment and namespace NAME-system).
    #[arg(long)]
    name: Option<String>,
    /// The `operator/` folder of a kubewright checkout, which the crate depends on by path (kubewright is not
    /// published yet). Default: the checkout this binary was built from.
    #[arg(long, value_name = "PATH", default_value = new::BUILT_FROM, hide_default_value = true)]
    kubewright_path: PathBuf,
}

/// The arguments of `create api`.
#[derive(Debug, Args)]
struct ApiArgs {
    /// The kind to add, UpperCamelCase, e.g. Gadget.
    #[arg(long)]
    kind: String,
    /// The API group (default: the one `new` recorded in Cargo.toml's [package.metadata.kubewright]).
    #[arg(long)]
    group: Option<String>,
    /// The API version (default: the one `new` recorded).
    #[arg(long)]
    version: Option<String>,
    /// The crate's directory.
    #[arg(long, default_value = ".")]
    path: PathBuf,
}

fn main() -> ExitCode {
    let Cargo::Kubewright(args) = Cargo::parse();
    match run(args.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<(), Error> {
    match command {
        Command::New(args) => {
            let written = NewCrate {
                path: args.path,
                name: args.name,
                group: args.group,
                version: args.version,
                kind: args.kind,
                kubewright_path: Some(args.kubewright_path),
            }
            .write()?;
            for file in &written.files {
                println!("created {}", file.display());
            }
            warn_unformatted(written.unformatted.as_deref());
            println!(
                "\nNext:\n  cd {}\n  cargo run     # the operator on an embedded in-memory cluster\n  \
                 cargo test    # its table tests and the explorer",
                written.dir.display()
            );
        }
        Command::Create {
            what: Create::Api(args),
        } => {
            let added = CreateApi {
                dir: args.path,
                kind: args.kind,
                group: args.group,
                version: args.version,
            }
            .write()?;
            if let Some((lib, created)) = added.files.split_last() {
                for file in created {
                    println!("created {}", file.display());
                }
                println!("updated {}", lib.display());
            }
            warn_unformatted(added.unformatted.as_deref());
        }
    }
    Ok(())
}

fn warn_unformatted(why: Option<&str>) {
    if let Some(why) = why {
        eprintln!(
            "warning: the Rust files are written as the templates have them, not formatted: {why}"
        );
    }
}
