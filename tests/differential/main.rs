//! The differential suite: the same requests against the in-memory server and a real kube-apiserver.
//!
//! Each scenario runs once on `ApiServer::builder().controllers(false)` and once on the shared envtest control
//! plane (skipped with a message when no binaries are found, unless `OPERATOR_REQUIRE_CONTROL_PLANE` is set),
//! each in a fresh namespace; the two transcripts are normalized and compared (`support.rs` runs them, `compare.rs` compares). Scenarios run
//! side by side; a streamed list's closing bookmark carries the watch cache's resourceVersion, which any write
//! in the cluster moves on, so `Transcript::streamed_list` records only whether it is older than a write seen.
//! With `OPERATOR_DIFF_DUMP=DIR`, both normalized transcripts of every scenario are written to `DIR`.
//!
//! # Known deviations
//!
//! Each is accepted by name in the scenarios that meet it, pinned on both servers in `deviations.rs`, and
//! listed in the "Known differences from kube-apiserver" of `kubewright::testing`:
//!
//! - `BUILTIN_MANAGED_FIELDS_SHAPE`: managedFields of built-in kinds mark zero-value structs (`spec`,
//!   `spec.template`, …) with `.` and track atomic structs (`spec.selector`) field by field.
//! - `EMPTY_BUILTIN_STATUS`: a new Deployment has no `status` in memory, `status: {}` on kube-apiserver (a new
//!   Service `status: {loadBalancer: {}}`, met by the `parity` script).
//! - `STATUS_WRITE_METADATA_OWNERSHIP`: metadata changed through `/status` (not applied by either) is owned in
//!   the status entry of managedFields on kube-apiserver only.
//! - `CONTINUE_TOKEN_ERROR`: the message of an invalid `continue` token ends with the token, not Go's JSON
//!   decoding error.
//! - `CONDITION_WITHOUT_TRANSITION_TIME`: a built-in object's `metav1.Condition` without `lastTransitionTime`
//!   is refused with 400 in memory (typed decoding), 422 on kube-apiserver (validation).
//! - `CSR_REQUESTOR`: kube-apiserver records the requesting user in a CertificateSigningRequest's
//!   `spec.username`; the in-memory server authenticates no one, so the table's Requestor cell is empty.
//! - A custom resource's object in protobuf: kube-apiserver 1.35 fails the request without an answer (a nil
//!   pointer in apiextensions-apiserver's decoder), the in-memory server answers `415`
//!   (`protobuf_custom_resources_get_no_answer_on_kube_apiserver`).
//!
//! Pinned in `kinds.rs` instead, which compares discovery and a round trip of every built-in kind:
//!
//! - `NOT_SERVED`: the resources and subresources kube-apiserver serves and the in-memory server does not
//!   (bindings, componentstatuses, `pods/log`, `pods/exec`, …).
//! - `PROTECTION_FINALIZERS`: kube-apiserver's admission adds `kubernetes.io/pv-protection` and
//!   `kubernetes.io/vac-protection` to new PersistentVolumes and VolumeAttributesClasses.
//!
//! # Scenarios
//!
//! `cel`: CRD validation rules (messages, reasons, field paths, transition rules, rules under map lists and
//! maps, quantities, macros and the lists library, rules blocked by schema errors, ratcheting with its
//! warning, status writes), rules that do not compile (syntax errors, undefined fields, mismatched
//! comparisons, rules that are not bools), rules' type errors and cost budgets (per rule and per CRD, with
//! every cause in the server's order), and some 160 rules as written in the wild or near the budget, accepted
//! or refused alike. `crud`: create/get/list, AlreadyExists, NotFound, Conflict on stale updates, Invalid custom resources
//! (schema and scale checks), generateName, dryRun, unknown fields under `fieldValidation` Warn, Ignore,
//! Strict and an unknown mode. `lifecycle`: generation, the status and scale
//! subresources, finalizers and deletion (with the watch events), watch event sequences with and without a
//! label selector. `apply`: server-side apply managers, conflicts, force, no-op applies, /status, type
//! errors. `patch`: strategic merge, JSON and merge patches on a Deployment's containers and their errors.
//! `field_validation`: `fieldValidation` (default, `Warn`, `Ignore`, `Strict`) on JSON, merge and strategic merge patches and server-side apply with unknown and duplicate fields, on a Deployment, a closed and an open custom resource (the patched object a 422 quotes compared as JSON). `jobs`: the Job statuses the in-memory server plays (started, complete, failed), written through `/status`: kube-apiserver stores the same. `list`: label and field selectors, pagination with `limit`/`continue`, streamed lists (also asked as Tables, with their bookmarks). `dry_run`: `dryRun=All` on create,
//! update, every patch type, server-side apply, the status and scale subresources, delete (with finalizers,
//! each propagation policy, preconditions) and deletecollection: the answers, and no watch event from any of
//! them. `parity`: a script of kubectl commands (apply, get -o yaml/json/name/jsonpath, label, annotate,
//! scale, patch, set image, diff, server-side dry runs, wait, explain, `--validate`) whose normalized output is compared line by
//! line; its own accepted differences are listed in its module. `kinds`: discovery of every
//! built-in group, and create/get/list/delete of a minimal object of 32 kinds. `tables`: `kubectl get`
//! tables (`as=Table`, with every `includeObject`) of 17 built-in kinds with printers (Events of both
//! groups), a kind without one, a CRD whose printer columns use filters, indexes, slices, unions, recursive
//! descent, every column type and a path that does not parse, a CRD without printer columns, a `kubectl get
//! -w` watch, and CRDs whose printer columns kube-apiserver refuses; ages and timestamps in cells are
//! normalized. `more_tables`: the tables of 33 more built-in kinds with printers
//! (HorizontalPodAutoscalers also through `autoscaling/v1`). `openapi`: the `/openapi/v3` index and, as
//! `kubectl explain` reads them, the schemas of seven built-in types and the Widget CRD's whole schema, and
//! the `enum` lists and descriptions of every enum field, the required fields, the `x-kubernetes-*`
//! extensions and the `default`s of every built-in schema served, the name of every built-in schema
//! kube-apiserver publishes, every path of every built-in group-version document, whole, and the custom
//! resources' documents (paths, schema names, List kinds and meta types) whole. `openapi_v2`: the
//! content negotiation of `/openapi/v2` (JSON, protobuf, ETag, 304, 406), chosen built-in definitions, two
//! CRDs' definitions (one exercising the v2 conversion), the object paths kubectl reads, every path under a built-in group-version served and the shared parameters, whole. Of the kinds kube-apiserver has printers for,
//! only APIServices are not compared: kube-apiserver serves its own, the in-memory server has none.
//! `protobuf`: answers in protobuf (`Accept` of client-go's typed clients, and protobuf only): a ConfigMap
//! created from a protobuf body, got, listed and as `PartialObjectMetadata`, a Deployment with its `scale`, a
//! Secret, 404/409/422 Status errors, a protobuf watch's frames, a custom resource (406, JSON, its errors and
//! metadata in protobuf) and a Table asked in protobuf only (406); each body decoded with `k8s-pb`
//! (`protobuf_wire.rs` reads it back to JSON field by field) and compared with its `Content-Type`;
//! `protobuf_kinds`: a minimal object of 30 more built-in kinds read in protobuf: `k8s-pb` decodes each and
//! writes back the same bytes, and each carries what the JSON answer carries.
//! `protobuf_metadata_watch`: a metadata-only streamed list in JSON and in protobuf (its bookmark is
//! `PartialObjectMetadata`). `protobuf_bodies`: an Ingress and a Pod created from protobuf equal their twins
//! created from JSON. `protobuf_creates`: a minimal object of every built-in kind served (APIServices
//! aside) created from protobuf (encoded by `encode_protobuf`) equals its twin created from JSON; without a
//! control plane, a check that every kind the in-memory discovery lists has a minimal object.
//! `protobuf_delete_options`: `DeleteOptions` in protobuf as client-go sends them (foreground, a failed
//! precondition, dry run, delete-collection, another group-version in the envelope), malformed ones (Go's
//! error texts), another kind, YAML options, a media type not read. `protobuf_subresources`: a Deployment's
//! `status` and `scale` written in protobuf, a Scale of another type, a custom resource's `scale` in
//! protobuf. `protobuf_crds`: a CRD created from protobuf and deleted with protobuf options. `media_types`: CBOR bodies and CBOR-only `Accept` (415 and 406, go-restful's for
//! built-in resources, apiextensions-apiserver's for custom ones), a patch type a route does not consume.
//! `e2e_behaviours`: what Kubernetes' API-machinery e2e specs meet (`cargo xtask e2e-apimachinery`): the
//! health endpoints' verbose check lists, create and update bodies without `apiVersion`/`kind` and with
//! duplicate keys, a namespace's `status` writes of metadata and its `finalize` subresource.
//! `webhooks`: admission webhooks served by the operator's webhook server (denials, warnings, patches, dry
//! runs, unreachable webhooks under each failure policy). `webhook_conditions`: webhooks' `matchConditions`
//! (true, false, failing under `Fail` and `Ignore`, reading `object`, `oldObject` and `request`) on create,
//! update and delete, validating and mutating. `webhook_warnings`: webhooks' warnings on allowed and refused
//! writes (mutating and validating refusals, both validating webhooks refusing, a dry run), repeated, escaped,
//! dropped and cut ones. `webhook_reinvocation`: mutating webhooks' `reinvocationPolicy` (`IfNeeded` and
//! `Never`, patches that change nothing, chains, webhooks that only match later, a refusal when called again),
//! with the webhooks called in order. `webhook_match_policy`: `matchPolicy` `Equivalent` and `Exact` on a CRD
//! served in two versions (the version each webhook sees, `kind`, `resource`, `requestKind`,
//! `requestResource`, the patches of a webhook of the other version). These three use webhooks whose answers
//! the scenario writes (`hook_server.rs`). `webhook_configurations`: the defaults kube-apiserver stores in
//! webhook configurations and the 422s of invalid ones (a cause per validation rule, several at once, on
//! create and update). `admission_policies`: ValidatingAdmissionPolicies and their bindings enforced
//! (messages, reasons, params, match conditions, variables, Warn and Audit, failure policies, updates,
//! deletes, dry runs) and compiled when written. `crd_status`: a CRD's own `/status` (updates and patches
//! that stay, its defaults, invalid accepted names). `conversion`: a CRD in two versions converted by a
//! conversion webhook (create, read, list, patch, scale, status and watch across versions, a failing
//! conversion, `status.storedVersions` as the storage version moves, a version no longer served), with
//! `strategy: None`, and invalid `spec.versions` and `spec.conversion`. `crd_defaults`: CRD schema defaults (and pruning)
//! applied to objects read from storage. `cel_runtime_cost`: the runtime cost limit of CRD rules.
//! `auth_reviews`: the review kinds (discovery, SelfSubjectReview, TokenReview, access reviews decided by RBAC
//! with their reasons, validation errors, a Table refused, other verbs). `ratcheting`: CRD validation
//! ratcheting of schema errors and rule failures under unchanged values.
//! `flowcontrol`: API priority and fairness: the default FlowSchemas and priority levels, the FlowSchema and
//! priority level the `X-Kubernetes-PF-*` headers name for plain and impersonated requests, the Dangling
//! condition, a level's nominal limit on `/metrics`. `status_validation`: writes to the `status` of the `apps`
//! workloads (counts, `collisionCount`). `request_decoding`: a JSON `DeleteOptions` with mistyped fields, bodies
//! of another kind than the resource addressed.

mod admission_policies;
mod aggregated_discovery;
mod apply;
mod auth_reviews;
mod builtin_validation;
mod cel;
mod cel_in_the_wild;
mod cel_runtime_cost;
mod compare;
mod conversion;
mod crd_defaults;
mod crd_status;
mod crud;
mod deviations;
mod dry_run;
mod e2e_behaviours;
mod field_validation;
mod flowcontrol;
mod hook_server;
mod hpa_validation;
mod ingress_validation;
mod job_selector;
mod jobs;
mod kinds;
mod lifecycle;
mod list;
mod media_types;
mod more_tables;
mod namespace_validation;
mod openapi;
mod openapi_v2;
mod parity;
mod patch;
mod pod_template_parts;
mod protobuf;
mod protobuf_kinds;
mod protobuf_wire;
mod protobuf_writes;
mod quantities;
mod ratcheting;
mod request_decoding;
mod secrets;
mod service_validation;
mod status_validation;
mod support;
mod tables;
mod webhook_conditions;
mod webhook_configurations;
mod webhook_match_policy;
mod webhook_reinvocation;
mod webhook_warnings;
mod webhooks;
mod workload_validation;
