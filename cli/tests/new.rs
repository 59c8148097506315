//! `cargo kubewright new` and `create api` run as cargo runs them (`cargo-kubewright kubewright ...`), into a
//! temporary directory, with the workspace's `operator/` as the kubewright dependency. That the crate builds and
//! its tests pass is `.ci/run`'s step (a build of the whole runtime); here, what is written and what is refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kubewright(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-kubewright"))
        .arg("kubewright")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("cargo-kubewright runs")
}

fn operator_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../operator")
        .canonicalize()
        .expect("the workspace's operator/")
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn new_widget(tmp: &Path) -> Output {
    let operator = operator_dir();
    let operator = operator.to_str().expect("a UTF-8 path");
    kubewright(
        &[
            "new",
            "my-operator",
            "--group",
            "example.dev",
            "--kind",
            "Widget",
            "--kubewright-path",
            operator,
        ],
        tmp,
    )
}

#[test]
fn new_writes_an_operator_crate_on_the_given_kubewright() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let out = new_widget(tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tmp.path().join("my-operator");
    for file in [
        "Cargo.toml",
        "README.md",
        "Dockerfile",
        ".dockerignore",
        ".gitignore",
        ".ci/run",
        "src/lib.rs",
        "src/main.rs",
        "src/widget.rs",
        "tests/widget.rs",
    ] {
        assert!(dir.join(file).is_file(), "{file} is missing");
    }

    let manifest: toml::Table = read(dir.join("Cargo.toml")).parse().expect("TOML");
    assert_eq!(manifest["package"]["name"].as_str(), Some("my-operator"));
    let operator = operator_dir();
    for table in ["dependencies", "dev-dependencies"] {
        let path = manifest[table]["kubewright"]["path"].as_str();
        assert_eq!(path, operator.to_str(), "{table}");
    }
    assert_eq!(
        manifest["dependencies"]["k8s-openapi"]["features"]
            .as_array()
            .map(|f| f.len()),
        Some(1)
    );
    assert_eq!(
        manifest["package"]["metadata"]["kubewright"]["group"].as_str(),
        Some("example.dev")
    );

    let module = read(dir.join("src/widget.rs"));
    assert!(module.contains("group = \"example.dev\""));
    assert!(module.contains("kind = \"Widget\""));
    assert!(module.contains("pub struct WidgetSpec"));
    assert!(module.contains("#[child(desired = desired_config_map, reflect_name = config_map)]"));
    let lib = read(dir.join("src/lib.rs"));
    assert!(lib.contains("pub mod widget;"));
    assert!(lib.contains(".operate::<widget::Widget>()"));
    assert!(read(dir.join("src/main.rs")).contains("my_operator::app().run().await"));
    let tests = read(dir.join("tests/widget.rs"));
    assert!(tests.contains("ReconcilerTestCase::new"));
    assert!(tests.contains("Explore::new(Widget::reconciler)"));
    let readme = read(dir.join("README.md"));
    assert!(
        readme.starts_with("# my-operator\n\n```sh\ncargo run\ncargo test\n```"),
        "{readme}"
    );
    assert!(read(dir.join("Dockerfile")).contains("cp target/release/my-operator /operator"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.join(".ci/run"))
            .expect("the script")
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "the script is executable");
    }
}

#[test]
fn create_api_adds_a_kind_once() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    assert!(new_widget(tmp.path()).status.success());
    let dir = tmp.path().join("my-operator");

    let out = kubewright(&["create", "api", "--kind", "Gadget"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let module = read(dir.join("src/gadget.rs"));
    assert!(module.contains("kind = \"Gadget\""));
    assert!(
        module.contains("group = \"example.dev\""),
        "the group new recorded"
    );
    assert!(read(dir.join("tests/gadget.rs")).contains("use my_operator::gadget::{"));
    let lib = read(dir.join("src/lib.rs"));
    assert!(lib.contains("pub mod gadget;"));
    assert!(lib.contains(".operate::<gadget::Gadget>()"));
    assert!(lib.contains(".operate::<widget::Widget>()"));

    for kind in ["Gadget", "Widget"] {
        let out = kubewright(&["create", "api", "--kind", kind, "--path", "."], &dir);
        assert!(!out.status.success(), "{kind} was added twice");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("the crate has a kind `{kind}` already")),
            "{stderr}"
        );
    }
    assert_eq!(
        read(dir.join("src/lib.rs")),
        lib,
        "lib.rs changed by a refused create api"
    );

    let out = kubewright(&["create", "api", "--kind", "gadget"], &dir);
    assert!(String::from_utf8_lossy(&out.stderr).contains("UpperCamelCase"));
}

#[test]
fn new_refuses_a_directory_that_exists_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    assert!(new_widget(tmp.path()).status.success());
    let dir = tmp.path().join("my-operator");
    std::fs::write(dir.join("src/lib.rs"), "// mine\n").expect("an edit");
    let out = new_widget(tmp.path());
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("already exists") && stderr.contains("overwrites nothing"),
        "{stderr}"
    );
    assert_eq!(read(dir.join("src/lib.rs")), "// mine\n");
}

#[test]
fn new_refuses_invalid_names_before_writing() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let operator = operator_dir();
    let operator = operator.to_str().expect("a UTF-8 path");
    let cases: [(&str, &str, &str, &str); 3] = [
        (
            "op",
            "example",
            "Widget",
            "should be a domain with at least one dot",
        ),
        ("op", "example.dev", "widget", "must be UpperCamelCase"),
        ("Op", "example.dev", "Widget", "lowercase RFC 1123 label"),
    ];
    for (name, group, kind, rule) in cases {
        let out = kubewright(
            &[
                "new",
                name,
                "--group",
                group,
                "--kind",
                kind,
                "--kubewright-path",
                operator,
            ],
            tmp.path(),
        );
        assert!(!out.status.success(), "{name} {group} {kind}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(rule), "{stderr}");
        assert!(!tmp.path().join(name).exists(), "{name} was written");
    }
}
