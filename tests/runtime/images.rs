//! The image each example's manifests run is the one the workspace's `Dockerfile` builds for that example, as
//! the Dockerfile and `docs/production.md` spell the command.

use kubewright::manifests::Manifests;

fn image(manifests: Manifests) -> String {
    manifests
        .deployment()
        .spec
        .and_then(|s| s.template.spec)
        .and_then(|p| p.containers[0].image.clone())
        .expect("the Deployment names an image")
}

#[test]
fn every_example_deployment_runs_the_image_the_dockerfile_builds() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let dockerfile = std::fs::read_to_string(format!("{root}/Dockerfile")).unwrap();
    let readme = std::fs::read_to_string(format!("{root}/docs/production.md")).unwrap();
    let examples = [
        ("webapp", examples::webapp_derive::app().installation()),
        ("database", examples::database::installation()),
        ("tenants", examples::tenants::installation()),
        ("teams", examples::teams::app().installation()),
    ];
    for (example, installation) in examples {
        let image = image(installation);
        // `--build-arg EXAMPLE=webapp   -t IMAGE .`, however the columns are aligned.
        let built = |text: &str| {
            text.lines().any(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words.contains(&format!("EXAMPLE={example}").as_str())
                    && words.windows(2).any(|w| w == ["-t", image.as_str()])
            })
        };
        assert!(
            built(&dockerfile),
            "the Dockerfile does not build {image} for {example}"
        );
        assert!(
            built(&readme),
            "docs/production.md does not build {image} for {example}"
        );
    }
    assert!(dockerfile.contains("--locked") && dockerfile.contains("USER 65532"));
}
