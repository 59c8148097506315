//! The paths of a group-version's OpenAPI v3 document, as kube-apiserver publishes them: for each
//! resource its collection (list, create, delete collection), its objects (read, replace, patch, delete), the
//! list across namespaces, the `status` and `scale` subresources served, and the deprecated watch paths;
//! and the group-version's resource list (`/apis/apps/v1/`). Each operation has kube-apiserver's operation
//! id, tag, description, action, kind, query parameters (described as the options types' fields are, from
//! `fields.rs`), request body and answers; the parameters every operation of a path shares are declared
//! on the path.

use serde_json::{Map, Value, json};

use super::fields;
use crate::registry::ResourceType;

const SCHEMAS: &str = "#/components/schemas/";
const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";

const PRETTY: &str = "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).";
const NAMESPACE: &str = "object name and auth scope, such as for teams and projects";
const WATCH_ONE: &str = "deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.";
const WATCH_LIST: &str = "deprecated: use the 'watch' parameter with a list operation instead.";

/// The query parameters of a list (and of a watch), from `ListOptions`.
const LIST: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
];
/// The query parameters of a delete, from `DeleteOptions`.
const DELETE: &[&str] = &[
    "dryRun",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "orphanDependents",
    "propagationPolicy",
];
/// The query parameters of a create or an update.
const WRITE: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
/// The query parameters of a patch, from `PatchOptions`.
const PATCH: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "force"];

/// The resources whose delete answers with the object rather than a `Status` (their registries'
/// `ReturnDeletedObject`; a namespace's registry answers with a `Status`): group, resource.
const RETURN_DELETED_OBJECT: &[(&str, &str)] = &[
    ("", "persistentvolumeclaims"),
    ("", "persistentvolumes"),
    ("", "pods"),
    ("", "podtemplates"),
    ("", "resourcequotas"),
    ("", "serviceaccounts"),
    ("", "services"),
    ("resource.k8s.io", "deviceclasses"),
    ("resource.k8s.io", "devicetaintrules"),
    ("resource.k8s.io", "resourceclaims"),
    ("resource.k8s.io", "resourceclaimtemplates"),
    ("resource.k8s.io", "resourceslices"),
    ("storage.k8s.io", "csidrivers"),
    ("storage.k8s.io", "csinodes"),
    ("storage.k8s.io", "storageclasses"),
    ("storage.k8s.io", "volumeattachments"),
    ("storage.k8s.io", "volumeattributesclasses"),
];

/// The patch types of a built-in resource.
const PATCH_TYPES: &[&str] = &[
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

/// A group-version's name in operation ids (`AppsV1`, `CoreV1`, `RbacAuthorizationV1`) and its tag
/// (`apps_v1`, `rbacAuthorization_v1`).
pub(super) fn gv_names(group: &str, version: &str) -> (String, String) {
    let group = if group.is_empty() {
        "core"
    } else {
        group.strip_suffix(".k8s.io").unwrap_or(group)
    };
    let parts: Vec<&str> = group.split('.').collect();
    let camel: String = parts.iter().map(|p| capitalize(p)).collect();
    let tag_group: String = parts
        .iter()
        .enumerate()
        .map(|(i, p)| if i == 0 { p.to_string() } else { capitalize(p) })
        .collect();
    (
        format!("{camel}{}", capitalize(version)),
        format!("{tag_group}_{version}"),
    )
}

/// The article kube-apiserver puts before a kind in a description, with its spaces: none for a plural
/// (`delete Endpoints`), `an` before a vowel.
fn article(kind: &str) -> &'static str {
    if kind.ends_with('s') && !kind.ends_with("ss") {
        " "
    } else if kind
        .chars()
        .next()
        .is_some_and(|c| "aeiou".contains(c.to_ascii_lowercase()))
    {
        " an "
    } else {
        " a "
    }
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A query parameter documented as the field of the same name of `options`.
fn query(options: &str, name: &str) -> Value {
    let (ty, description) =
        fields::option(options, name).unwrap_or_else(|| ("string".to_string(), String::new()));
    // A list of strings (`dryRun`) is documented as a string.
    let ty = if ty == "array" {
        "string".to_string()
    } else {
        ty
    };
    json!({ "description": description, "in": "query", "name": name,
            "schema": { "type": ty, "uniqueItems": true } })
}

fn queries(options: &str, names: &[&str]) -> Vec<Value> {
    names.iter().map(|n| query(options, n)).collect()
}

fn path_param(name: &str, description: &str) -> Value {
    json!({ "description": description, "in": "path", "name": name, "required": true,
            "schema": { "type": "string", "uniqueItems": true } })
}

fn pretty() -> Value {
    json!({ "description": PRETTY, "in": "query", "name": "pretty",
            "schema": { "type": "string", "uniqueItems": true } })
}

/// The answer of one status code, with `schema` in every media type the resource is served in.
fn content(schema: &str, stream: bool, custom: bool) -> Value {
    let reference = json!({ "schema": { "$ref": format!("{SCHEMAS}{schema}") } });
    // A custom resource is served in JSON and YAML only, and its documented answers are never streams.
    let mut types = vec!["application/json", "application/yaml"];
    if !custom {
        types.push("application/vnd.kubernetes.protobuf");
    }
    if stream && !custom {
        types.extend([
            "application/json;stream=watch",
            "application/vnd.kubernetes.protobuf;stream=watch",
        ]);
    }
    Value::Object(
        types
            .into_iter()
            .map(|t| (t.to_string(), reference.clone()))
            .collect(),
    )
}

fn responses(codes: &[&str], schema: &str, stream: bool, custom: bool) -> Value {
    let mut out = Map::new();
    for code in codes {
        let description = match *code {
            "201" => "Created",
            "202" => "Accepted",
            _ => "OK",
        };
        out.insert(
            code.to_string(),
            json!({ "description": description, "content": content(schema, stream, custom) }),
        );
    }
    out.insert("401".into(), json!({ "description": "Unauthorized" }));
    Value::Object(out)
}

fn body(schema: &str, required: bool, custom: bool) -> Value {
    let reference = json!({ "schema": { "$ref": format!("{SCHEMAS}{schema}") } });
    let types: &[&str] = if custom {
        &["application/json", "application/yaml"]
    } else {
        &["*/*"]
    };
    let content: Map<String, Value> = types
        .iter()
        .map(|t| (t.to_string(), reference.clone()))
        .collect();
    let mut b = json!({ "content": content });
    if required {
        b["required"] = json!(true);
    }
    b
}

/// The patch types accepted: strategic merge patches for built-in kinds only.
fn patch_body(custom: bool) -> Value {
    let content: Map<String, Value> = PATCH_TYPES
        .iter()
        .filter(|t| !(custom && t.contains("strategic")))
        .map(|t| {
            (
                t.to_string(),
                json!({ "schema": { "$ref": format!("{SCHEMAS}{META}.Patch") } }),
            )
        })
        .collect();
    json!({ "content": content, "required": true })
}

/// One operation being built: its method, the operation itself and every parameter it takes.
struct Op {
    method: &'static str,
    op: Value,
    params: Vec<Value>,
}

/// A path item from its operations: the parameters all of them take are declared on the path, the others
/// on each operation, sorted by name.
fn path_item(ops: Vec<Op>) -> Value {
    let name = |p: &Value| p["name"].as_str().unwrap_or_default().to_string();
    let shared: Vec<Value> = ops
        .first()
        .map(|first| {
            first
                .params
                .iter()
                .filter(|p| {
                    ops.iter()
                        .all(|o| o.params.iter().any(|q| name(q) == name(p)))
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let shared_names: Vec<String> = shared.iter().map(name).collect();
    let mut item = Map::new();
    for Op {
        method,
        mut op,
        params,
    } in ops
    {
        let mut own: Vec<Value> = params
            .into_iter()
            .filter(|p| !shared_names.contains(&name(p)))
            .collect();
        own.sort_by_key(name);
        if !own.is_empty() {
            op["parameters"] = Value::Array(own);
        }
        item.insert(method.to_string(), op);
    }
    let mut shared = shared;
    shared.sort_by_key(name);
    if !shared.is_empty() {
        item.insert("parameters".into(), Value::Array(shared));
    }
    Value::Object(item)
}

/// The paths of the built-in resources `kinds` of one group-version, each kind's schema named by `schema`.
pub(super) fn builtin(
    group: &str,
    version: &str,
    kinds: &[(&ResourceType, String)],
) -> Map<String, Value> {
    let (gv, tag) = gv_names(group, version);
    let base = format!("/{}", super::kind::gv_path(group, version));
    let mut paths = Map::new();
    paths.insert(
        format!("{base}/"),
        json!({ "get": {
            "description": "get available resources",
            "operationId": format!("get{gv}APIResources"),
            "tags": [tag],
            "responses": responses(&["200"], &format!("{META}.APIResourceList"), false, false),
        } }),
    );
    for (t, schema) in kinds {
        Resource {
            t,
            custom: false,
            schema,
            gv: &gv,
            tag: &tag,
            base: &base,
        }
        .add(&mut paths);
    }
    paths
}

/// The paths of the custom resources `kinds` of one group-version, each kind's schema named by `schema`, as
/// apiextensions-apiserver publishes them (no resource list, no watch paths).
pub(super) fn custom(
    group: &str,
    version: &str,
    kinds: &[(&ResourceType, String)],
) -> Map<String, Value> {
    let (gv, tag) = gv_names(group, version);
    let base = format!("/{}", super::kind::gv_path(group, version));
    let mut paths = Map::new();
    for (t, schema) in kinds {
        Resource {
            t,
            custom: true,
            schema,
            gv: &gv,
            tag: &tag,
            base: &base,
        }
        .add(&mut paths);
    }
    paths
}

/// One resource's paths being built.
struct Resource<'a> {
    t: &'a ResourceType,
    /// A custom resource, which apiextensions-apiserver documents with fewer media types, patch types and
    /// answers, a `resourceVersion` on reads, a plain list's parameters on a delete collection, and no
    /// watch paths.
    custom: bool,
    schema: &'a str,
    gv: &'a str,
    tag: &'a str,
    base: &'a str,
}

impl Resource<'_> {
    fn op(
        &self,
        method: &'static str,
        action: &str,
        id: String,
        description: String,
        gvk: Value,
    ) -> Op {
        Op {
            method,
            op: json!({
                "description": description,
                "operationId": id,
                "tags": [self.tag],
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
            }),
            params: vec![pretty()],
        }
    }

    /// A list's description: a custom resource's does not say "or watch".
    fn list_description(&self) -> String {
        let kind = &self.t.kind;
        if self.custom {
            format!("list objects of kind {kind}")
        } else {
            format!("list or watch objects of kind {kind}")
        }
    }

    /// The query parameters of a read.
    fn read_params(&self) -> Vec<Value> {
        if self.custom {
            vec![query("ListOptions", "resourceVersion")]
        } else {
            Vec::new()
        }
    }

    /// The answers of a patch.
    fn patched(&self) -> &'static [&'static str] {
        if self.custom {
            &["200"]
        } else {
            &["200", "201"]
        }
    }

    fn gvk(&self) -> Value {
        json!({ "group": self.t.group, "kind": self.t.kind, "version": self.t.version })
    }

    fn add(&self, paths: &mut Map<String, Value>) {
        let t = self.t;
        let (kind, gv, base, plural) = (&t.kind, self.gv, self.base, &t.plural);
        let scoped = if t.namespaced { "Namespaced" } else { "" };
        let list = format!("{}List", self.schema);
        let (collection, watch_collection) = if t.namespaced {
            (
                format!("{base}/namespaces/{{namespace}}/{plural}"),
                format!("{base}/watch/namespaces/{{namespace}}/{plural}"),
            )
        } else {
            (format!("{base}/{plural}"), format!("{base}/watch/{plural}"))
        };
        let scope = |mut op: Op, named: Option<&str>| {
            if let Some(of) = named {
                op.params
                    .push(path_param("name", &format!("name of the {of}")));
            }
            if t.namespaced {
                op.params.push(path_param("namespace", NAMESPACE));
            }
            op
        };
        let with = |mut op: Op, params: Vec<Value>, key: &str, value: Value| {
            op.params.extend(params);
            op.op[key] = value;
            op
        };
        let with_body = |mut op: Op, b: Value| {
            op.op["requestBody"] = b;
            op
        };

        // The collection.
        let mut ops = vec![scope(
            with(
                self.op(
                    "get",
                    "list",
                    format!("list{gv}{scoped}{kind}"),
                    self.list_description(),
                    self.gvk(),
                ),
                queries("ListOptions", LIST),
                "responses",
                responses(&["200"], &list, true, self.custom),
            ),
            None,
        )];
        ops.push(scope(
            with_body(
                with(
                    self.op(
                        "post",
                        "post",
                        format!("create{gv}{scoped}{kind}"),
                        format!("create{}{kind}", article(kind)),
                        self.gvk(),
                    ),
                    queries("CreateOptions", WRITE),
                    "responses",
                    responses(&["200", "201", "202"], self.schema, false, self.custom),
                ),
                body(self.schema, true, self.custom),
            ),
            None,
        ));
        if t.delete_collection {
            let mut op = with(
                self.op(
                    "delete",
                    "deletecollection",
                    format!("delete{gv}Collection{scoped}{kind}"),
                    format!("delete collection of {kind}"),
                    self.gvk(),
                ),
                Vec::new(),
                "responses",
                responses(&["200"], &format!("{META}.Status"), false, self.custom),
            );
            if self.custom {
                op.params.extend(queries("ListOptions", LIST));
            } else {
                op.params
                    .extend(queries("ListOptions", &LIST[1..LIST.len() - 1]));
                op.params.extend(queries("DeleteOptions", DELETE));
                op = with_body(op, body(&format!("{META}.DeleteOptions"), false, false));
            }
            ops.push(scope(op, None));
        }
        paths.insert(collection.clone(), path_item(ops));

        // One object.
        let deleted = if RETURN_DELETED_OBJECT.contains(&(t.group.as_str(), plural.as_str())) {
            self.schema.to_string()
        } else {
            format!("{META}.Status")
        };
        let ops = vec![
            scope(
                with(
                    self.op(
                        "get",
                        "get",
                        format!("read{gv}{scoped}{kind}"),
                        format!("read the specified {kind}"),
                        self.gvk(),
                    ),
                    self.read_params(),
                    "responses",
                    responses(&["200"], self.schema, false, self.custom),
                ),
                Some(kind),
            ),
            scope(
                with_body(
                    with(
                        self.op(
                            "put",
                            "put",
                            format!("replace{gv}{scoped}{kind}"),
                            format!("replace the specified {kind}"),
                            self.gvk(),
                        ),
                        queries("UpdateOptions", WRITE),
                        "responses",
                        responses(&["200", "201"], self.schema, false, self.custom),
                    ),
                    body(self.schema, true, self.custom),
                ),
                Some(kind),
            ),
            scope(
                with_body(
                    with(
                        self.op(
                            "patch",
                            "patch",
                            format!("patch{gv}{scoped}{kind}"),
                            format!("partially update the specified {kind}"),
                            self.gvk(),
                        ),
                        queries("PatchOptions", PATCH),
                        "responses",
                        responses(self.patched(), self.schema, false, self.custom),
                    ),
                    patch_body(self.custom),
                ),
                Some(kind),
            ),
            scope(
                with_body(
                    with(
                        self.op(
                            "delete",
                            "delete",
                            format!("delete{gv}{scoped}{kind}"),
                            format!("delete{}{kind}", article(kind)),
                            self.gvk(),
                        ),
                        queries("DeleteOptions", DELETE),
                        "responses",
                        responses(&["200", "202"], &deleted, false, self.custom),
                    ),
                    body(&format!("{META}.DeleteOptions"), false, self.custom),
                ),
                Some(kind),
            ),
        ];
        paths.insert(format!("{collection}/{{name}}"), path_item(ops));

        // The subresources served.
        if t.status_subresource {
            self.subresource(paths, &collection, "status", self.schema, self.gvk(), kind);
        }
        if t.scale.is_some() {
            // A custom resource's scale operations are marked, and its name described, with the resource's
            // kind.
            let (gvk, named) = if self.custom {
                (self.gvk(), kind.as_str())
            } else {
                (
                    json!({ "group": "autoscaling", "kind": "Scale", "version": "v1" }),
                    "Scale",
                )
            };
            self.subresource(
                paths,
                &collection,
                "scale",
                "io.k8s.api.autoscaling.v1.Scale",
                gvk,
                named,
            );
        }

        // Across namespaces, and the deprecated watch paths.
        let watch = |id: String, description: String, named: Option<&str>, all: bool| {
            let mut op = with(
                self.op(
                    "get",
                    if named.is_some() {
                        "watch"
                    } else {
                        "watchlist"
                    },
                    id,
                    description,
                    self.gvk(),
                ),
                queries("ListOptions", LIST),
                "responses",
                responses(&["200"], &format!("{META}.WatchEvent"), true, self.custom),
            );
            if all {
                if let Some(of) = named {
                    op.params
                        .push(path_param("name", &format!("name of the {of}")));
                }
                op
            } else {
                scope(op, named)
            }
        };
        if t.namespaced {
            let all = with(
                self.op(
                    "get",
                    "list",
                    format!("list{gv}{kind}ForAllNamespaces"),
                    self.list_description(),
                    self.gvk(),
                ),
                queries("ListOptions", LIST),
                "responses",
                responses(&["200"], &list, true, self.custom),
            );
            paths.insert(format!("{base}/{plural}"), path_item(vec![all]));
        }
        if self.custom {
            return;
        }
        if t.namespaced {
            paths.insert(
                format!("{base}/watch/{plural}"),
                path_item(vec![watch(
                    format!("watch{gv}{kind}ListForAllNamespaces"),
                    format!("watch individual changes to a list of {kind}. {WATCH_LIST}"),
                    None,
                    true,
                )]),
            );
        }
        paths.insert(
            watch_collection.clone(),
            path_item(vec![watch(
                format!("watch{gv}{scoped}{kind}List"),
                format!("watch individual changes to a list of {kind}. {WATCH_LIST}"),
                None,
                false,
            )]),
        );
        paths.insert(
            format!("{watch_collection}/{{name}}"),
            path_item(vec![watch(
                format!("watch{gv}{scoped}{kind}"),
                format!("watch changes to an object of kind {kind}. {WATCH_ONE}"),
                Some(kind),
                false,
            )]),
        );
    }

    /// The path of a subresource (`status`, `scale`): read, replace and patch of `schema`.
    fn subresource(
        &self,
        paths: &mut Map<String, Value>,
        collection: &str,
        sub: &str,
        schema: &str,
        gvk: Value,
        named: &str,
    ) {
        let t = self.t;
        let (kind, gv) = (&t.kind, self.gv);
        let scoped = if t.namespaced { "Namespaced" } else { "" };
        let suffix = capitalize(sub);
        let scope = |mut op: Op| {
            op.params
                .push(path_param("name", &format!("name of the {named}")));
            if t.namespaced {
                op.params.push(path_param("namespace", NAMESPACE));
            }
            op
        };
        let make = |method: &'static str,
                    verb: &str,
                    what: &str,
                    params: Vec<Value>,
                    codes: &[&str],
                    b: Option<Value>| {
            let mut op = self.op(
                method,
                method_action(method),
                format!("{verb}{gv}{scoped}{kind}{suffix}"),
                format!("{what} {sub} of the specified {kind}"),
                gvk.clone(),
            );
            op.params.extend(params);
            op.op["responses"] = responses(codes, schema, false, self.custom);
            if let Some(b) = b {
                op.op["requestBody"] = b;
            }
            scope(op)
        };
        let ops = vec![
            make("get", "read", "read", self.read_params(), &["200"], None),
            make(
                "put",
                "replace",
                "replace",
                queries("UpdateOptions", WRITE),
                &["200", "201"],
                Some(body(schema, true, self.custom)),
            ),
            make(
                "patch",
                "patch",
                "partially update",
                queries("PatchOptions", PATCH),
                self.patched(),
                Some(patch_body(self.custom)),
            ),
        ];
        paths.insert(format!("{collection}/{{name}}/{sub}"), path_item(ops));
    }
}

fn method_action(method: &str) -> &'static str {
    match method {
        "get" => "get",
        "put" => "put",
        "patch" => "patch",
        "post" => "post",
        _ => "delete",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_versions_in_operation_ids_and_tags() {
        assert_eq!(
            gv_names("", "v1"),
            ("CoreV1".to_string(), "core_v1".to_string())
        );
        assert_eq!(
            gv_names("rbac.authorization.k8s.io", "v1"),
            (
                "RbacAuthorizationV1".to_string(),
                "rbacAuthorization_v1".to_string()
            )
        );
        assert_eq!(
            gv_names("apps", "v1"),
            ("AppsV1".to_string(), "apps_v1".to_string())
        );
    }
}
