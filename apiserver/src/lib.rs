//! An in-memory Kubernetes API server that a real [`kube::Client`] drives.
//!
//! It stands on its own: it needs kube's client only, not kube-runtime and not the `kubewright` runtime
//! (which re-exports it as `kubewright::testing::apiserver`), so any kube-rs user can test against it by adding
//! it as a dev-dependency.
//!
//! [`ApiServer`] is a [`tower::Service`] over HTTP requests, so `kube::Client::new(server, "default")` works and
//! every `kube::Api` call, `kube_runtime::watcher`, `reflector` and `Controller` runs against it unchanged. It
//! keeps what operators depend on: one monotonic `resourceVersion`, `metadata.generation` bumped on spec changes
//! only, uids and timestamps, the `status` and `scale` subresources, finalizers and `deletionTimestamp`,
//! `generateName`, label and field selectors, paginated lists, watches with bookmarks and `410 Gone`, JSON,
//! merge, strategic merge and server-side apply patches with `managedFields`, CustomResourceDefinitions with
//! schema validation, defaulting and pruning, namespaces, owner-reference garbage collection, quantities of
//! built-in kinds in canonical form, fault injection, and a log of every request. Like a whole cluster it also
//! plays the workload controllers' status: Deployments, StatefulSets, ReplicaSets and DaemonSets become ready,
//! Jobs run for a set time and complete or fail (see [`ApiServerBuilder::workload_status`] and
//! [`ApiServerBuilder::job_run_time`]). [`ApiServer::serve`] also serves it over HTTP for `kubectl`.
//!
//! It serves every resource that kube-apiserver 1.35 serves by default (58 in the core group and 18 others:
//! apps, batch, autoscaling v2 and v1, policy, networking, discovery, node, rbac, storage, scheduling,
//! coordination, certificates, flowcontrol, resource, events, admissionregistration, apiextensions,
//! apiregistration), with kube-apiserver's discovery: scope, short names, categories, verbs, and the `status`
//! and `scale` subresources where it has them. Other kinds can be served with [`ApiServer::register`].
//!
//! ```
//! # async fn demo() -> Result<(), kube::Error> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//! use kubewright_apiserver::ApiServer;
//!
//! let server = ApiServer::new();
//! let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! let created = cms.create(&PostParams::default(), &cm).await?;
//! assert!(created.metadata.uid.is_some());
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```
//!
//! In the tests of any kube-rs project (with this crate among its dev-dependencies), the server is the
//! `tower::Service` under a `kube::Client`; tests can make requests fail and read every request made:
//!
//! ```
//! # async fn demo() -> Result<(), kube::Error> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, ListParams};
//! use kubewright_apiserver::{ApiServer, Fault, Verb};
//!
//! let server = ApiServer::builder().seed(7).build();
//! let client = kube::Client::new(server.clone(), "default");
//! server.inject(Fault::on(Verb::List).resource("configmaps").fail(500, "InternalError").times(1));
//! let cms: Api<ConfigMap> = Api::default_namespaced(client);
//! assert!(cms.list(&ListParams::default()).await.is_err());
//! assert!(cms.list(&ListParams::default()).await?.items.is_empty());
//! let lists = server.requests().iter().filter(|r| r.verb == Some(Verb::List)).count();
//! assert_eq!(lists, 2);
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```
//!
//! # Known differences from kube-apiserver
//!
//! - No authentication or authorization: every request is made by one user, `system:admin` in
//!   `system:masters` and `system:authenticated`, and is allowed. The review kinds are served, create only
//!   and never stored (`authentication.k8s.io/v1` SelfSubjectReview, TokenReview; `authorization.k8s.io/v1`
//!   SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview), in
//!   discovery with the one verb `create`, a Table of them refused with 406: a SelfSubjectReview names that
//!   user; a TokenReview authenticates no token (the server issues none: `invalid bearer token`); the access
//!   reviews are decided as kube-apiserver with `--authorization-mode=RBAC` decides them (`system:masters`
//!   allowed, then the stored Roles, ClusterRoles and bindings, with RBAC's `reason` texts), except that
//!   kube-apiserver's bootstrap roles and bindings (`cluster-admin`, `system:discovery`, ...) do not exist
//!   here, the field and label selector requirements and `metadata must be empty` are not validated, and
//!   when several bindings allow a request the one named is the first by name. They are not published in
//!   `/openapi/v2` or `/openapi/v3`, and admission webhooks are not called for them. Admission webhooks stored as
//!   `MutatingWebhookConfiguration`s and `ValidatingWebhookConfiguration`s are called (over HTTPS, or
//!   in-process for a Service registered with [`ApiServer::serve_webhook`]), with these differences:
//!   `matchConditions` have no cost budget (their `authorizer` allows every check; a field selected from a
//!   null `object` in an expression that also compares it is `false` instead of an error); a built-in object
//!   is not defaulted again between two mutating webhooks (custom resources get their schema's defaults, as
//!   there); a patch counts as a change (for reinvocation) when the object's JSON changes, where
//!   kube-apiserver compares built-in kinds as Go structs (an empty map equal to a missing one); the warnings
//!   and the first refusal of validating webhooks (called side by side) come in the webhooks' order, where
//!   kube-apiserver takes them in the order of their answers. The configurations are defaulted and validated
//!   as kube-apiserver does (match condition expressions are type-checked by the CEL rules' checker in the
//!   admission environment). `ValidatingAdmissionPolicy`s are enforced through their bindings (matching,
//!   params, match conditions, variables, validations, `Deny`/`Warn`/`Audit`, failure policies, with
//!   kube-apiserver's refusals and warnings) and compiled when written; not done: their cost budget,
//!   `status.typeChecking`, `auditAnnotations`, the other checks of a policy's fields (see
//!   `admission/policies.rs`).
//! - Impersonation: the `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and `Impersonate-Extra-*`
//!   headers are read as kube-apiserver reads them (a service account's groups, `system:authenticated` or
//!   `system:unauthenticated` added, a group, extra or uid without a user refused with its 400) and always
//!   granted (the requester is in `system:masters`), but the impersonated user is used only to classify the
//!   request (below): the request is still served as the requester (a SelfSubjectReview names `system:admin`,
//!   nothing is forbidden).
//! - API priority and fairness: kube-apiserver's default FlowSchemas and PriorityLevelConfigurations exist
//!   (the mandatory `exempt` and `catch-all` and the suggested ones, as kube-apiserver v1.35.4 creates them,
//!   annotation `apf.kubernetes.io/autoupdate-spec` included), every FlowSchema gets the `Dangling` condition
//!   kube-apiserver's configuration controller writes, and every request is classified by the stored
//!   FlowSchemas (`matchingPrecedence`, then name; user, group and service-account subjects with `*`; resource
//!   rules by verb, group, resource and subresource, namespace or `clusterScope`; non-resource rules by verb
//!   and URL, `/prefix/*` included; a FlowSchema whose priority level is missing passed over) and answered
//!   with the `X-Kubernetes-PF-FlowSchema-UID` and `X-Kubernetes-PF-PriorityLevel-UID` headers. `/metrics`
//!   serves only `apiserver_flowcontrol_nominal_limit_seats` (each level's nominal limit from a server limit
//!   of 600, as kube-apiserver's defaults compute it). Not done: no request is queued, limited or rejected
//!   (no 429), so `limitResponse`, queues, borrowing and the flow distinguisher change nothing; the
//!   configuration objects are not kept up to date (a deleted default is not recreated, an edited one not
//!   reset, `autoupdate-spec` is ignored); the status is written in the request that changes the
//!   configuration, not shortly after; no other APF metric and no `/debug/api_priority_and_fairness/` dumps;
//!   a path the server does not route is classified as a non-resource request even where kube-apiserver's
//!   request info would read it as a resource.
//! - CEL rules (`x-kubernetes-validations`) in CRD schemas are evaluated on every write like kube-apiserver's
//!   (messages, reasons, field paths, transition rules, ratcheting, the Kubernetes library functions). On
//!   update, OpenAPI schema errors and rule failures under values the update left unchanged are ratcheted as
//!   kube-apiserver ratchets them (properties and map-list items by key correlate with their old values; a
//!   set's or atomic list's items only with the whole list; rule failures become warnings, sent only when
//!   the write succeeds; schema errors are dropped, except `allOf`/`anyOf`/`oneOf`/`not` errors, which are
//!   never ratcheted here where kube-apiserver ratchets them under an unchanged value). When a
//!   CRD is written they are type-checked and their cost estimated as kube-apiserver does (cel-go's checker
//!   and cost estimator, the Kubernetes library's estimates, the per-rule and per-CRD budgets, with the
//!   server's messages; the optional syntax and the two-variable comprehensions included), except: rules
//!   using `optMap`/`optFlatMap` or `sortBy` are evaluated but accepted without a type check or cost
//!   estimate; literal format strings are not checked
//!   against their arguments; schema object types in type errors are named `selfType.<path>` where the
//!   server names them `selfType<nanoseconds>.<path>`. The runtime cost limits (per rule and per object)
//!   count the cost estimator's cost for the values' actual sizes, an upper bound of cel-go's count: a rule
//!   cel-go stops early (`exists`, a short-circuited `&&`) may be counted over a limit it stays within.
//! - A CRD's versions are all served from one stored form at its storage version, and converted on every
//!   read, list, watch event and write (create, update, every patch, server-side apply, `status` and `scale`):
//!   with `strategy: None` only `apiVersion` changes; with `strategy: Webhook` a `ConversionReview` goes to
//!   the CRD's webhook through the admission webhooks' transport (HTTPS to `clientConfig.url`, or in-process
//!   for a Service registered with [`ApiServer::serve_webhook`]), its answer is checked and its failures
//!   answered as kube-apiserver answers them (a bare 500 `conversion webhook for GROUP/VERSION, Kind=KIND
//!   failed: ...`). `spec.versions` and `spec.conversion` are validated, deprecated versions send their
//!   `Warning`, discovery lists versions in kube-aware order, `status.storedVersions` gains each new storage
//!   version (see `convert/custom.rs`). Deviations: the webhook is called synchronously, the request waiting
//!   for it (an HTTPS webhook must not be served by the single-threaded runtime that drives the server: serve
//!   it in-process or from another thread); the managedFields entries of managers that wrote another version
//!   are not converted to the version read (`MANAGED_FIELDS_ACROSS_VERSIONS`, pinned by
//!   `managed_fields_of_another_version_convert_on_kube_apiserver_only`); messages quoting the whole
//!   `spec.versions` print its JSON where kube-apiserver prints its internal Go structs; a version no longer
//!   served answers its 404 as a JSON Status, not plain text; the `Warning` of a deprecated version is not
//!   sent on watches.
//! - Garbage collection and namespace termination run synchronously inside the request that triggers them
//!   (a real cluster does this asynchronously in kube-controller-manager).
//! - The workload controllers are played, not run, for Deployments, StatefulSets, ReplicaSets, DaemonSets and
//!   Jobs only: every pod is taken to start at once and be ready, and the status follows the write that caused
//!   it inside the same request. A Job's pods run for a set time on the server's clock (10 seconds by default,
//!   [`ApiServerBuilder::job_run_time`], or the Job's annotation [`RUN_TIME_ANNOTATION`]), then the Job
//!   completes, or fails when told to ([`ApiServerBuilder::jobs_fail`], [`FAIL_ANNOTATION`]), all its pods at
//!   once: no retries, no backoff. No pods are created, and CronJobs create no Jobs.
//! - Built-in kinds are checked by round-tripping through their `k8s-openapi` types and receive only the most
//!   common defaults (Pod templates, PodTemplates, ReplicationControllers, Deployments, StatefulSets,
//!   CronJobs, Services; a Pod also gets `SetDefaults_Pod`'s requests from its containers' limits,
//!   `enableServiceLinks` and host ports on the host's network, but not the defaults of pod-level
//!   `resources`). Of kube-apiserver's validation of built-in kinds, these rules run, on create,
//!   update, every patch and dry runs, with its field paths, reasons and messages, in its order:
//!   - names per kind (a DNS-1035 label for Services, an RFC 1123 label for Namespaces and StatefulSets, a
//!     path segment for the RBAC kinds, a subdomain for the others); label keys and values, annotation keys
//!     and their total size, for every kind;
//!   - ConfigMap and Secret keys and size, `immutable`, a Secret's type (immutable, and the keys each type
//!     requires);
//!   - in pod specs and templates (Pods, PodTemplates, the `apps` workloads, Jobs, CronJobs): the containers'
//!     and init containers' names (required, RFC 1123 labels, unique), images (required), requests within
//!     limits, and the restart policy (a Job's `OnFailure` or `Never`, `Always` for the `apps` kinds); the
//!     containers' and init containers' ports (names, numbers, unique names, protocols), environment
//!     variables (names, `valueFrom` naming one source and no `value`, the key selectors' names and keys),
//!     volume mounts (naming a valid volume, a mount path unique in the container, `subPath` and
//!     `subPathExpr`); the regular containers' probes (one handler, its port and scheme or command, non-negative
//!     numbers, a success threshold of 1 for liveness and startup probes, no grace period on a readiness
//!     probe); pod and container security contexts (user and group IDs, sysctl names, duplicates and
//!     namespaces beside host networking or IPC, `shareProcessNamespace` with `hostPID`, the fsGroup,
//!     supplemental groups and SELinux change policies, seccomp and AppArmor profiles, Windows options'
//!     GMSA credential spec name and the user name's emptiness and backslashes, `procMount`, privilege
//!     escalation refused with `privileged` or `CAP_SYS_ADMIN`); volumes (names, unique, one source, the required fields, modes and item paths of `secret`,
//!     `configMap`, `persistentVolumeClaim` and `hostPath`); a Pod's spec immutable but for images, a lowered `activeDeadlineSeconds`, tolerations and scheduling gates;
//!   - label selectors' syntax (match labels, expressions' operators, keys and values) in the `apps`
//!     workloads, PodDisruptionBudgets and Jobs with `manualSelector`; an `apps` selector that does not
//!     parse refuses the write without checking the template, as kube-apiserver does;
//!   - the `apps` selectors (required, not empty, matching the template's labels, immutable), a StatefulSet's
//!     `serviceName` and forbidden spec updates, non-negative replica counts, min ready seconds and history
//!     limits, a Deployment's strategy (its type, `maxSurge` and `maxUnavailable` as numbers or
//!     percentages, not both 0, at most 100% unavailable) and a progress deadline above its min ready seconds;
//!   - a new Job's generated selector: without `manualSelector: true` the server gives it the selector
//!     `batch.kubernetes.io/controller-uid=<uid>` and its template the labels `controller-uid`,
//!     `batch.kubernetes.io/controller-uid`, `job-name` and `batch.kubernetes.io/job-name` (a Job without
//!     labels takes its template's), none of them owned by the request's manager; a selector of the user's own
//!     or a conflicting label is refused (`validateGeneratedSelector`, on update too), and a manual selector is
//!     required and must match the template;
//!   - a Job's template (but the scheduling directives of a Job suspended before it started), selector,
//!     completions, completion mode, pod failure policy, backoff limit per index, `managedBy` and success
//!     policy never changing; a CronJob's schedule (as robfig/cron's standard parser reads it, without
//!     `TZ=`), time zone (a name of the system's time zone database, where kube-apiserver has its own
//!     copy) and name length;
//!   - a Service's ports (required, names, numbers, protocols, target ports, app protocols, duplicate ports
//!     and node ports, no node port on a `ClusterIP` Service), type, session affinity and its timeout,
//!     external IPs, an `ExternalName` Service's name (and no cluster IPs or families), the load balancer
//!     fields (source ranges, class, node port allocation, only on a `LoadBalancer` Service), external and
//!     internal traffic policies, health check node port and traffic distribution; checked first and alone,
//!     as kube-apiserver's allocator does: `clusterIP` agreeing with `clusterIPs`, addresses, IP families
//!     and policies (this single-stack IPv4 cluster refusing IPv6 and dual stack), each IP of its family,
//!     and a requested node port in 30000-32767 and not asked twice; cluster IPs, IP families, the load
//!     balancer class and health check node port that may not change; an update that leaves out the
//!     allocated cluster IPs and IP families keeps them;
//!   - a PersistentVolumeClaim's spec immutable (but a bound claim's requests);
//!   - a Namespace's `spec.finalizers` (qualified names, fully qualified unless standard);
//!   - a NetworkPolicy's pod selector, ports (protocol, number or name, end port), peers (selectors, or an
//!     IP block alone whose exceptions are strict subsets of its CIDR, CIDRs already stored kept) and policy
//!     types;
//!   - an Ingress's rules (hosts: DNS subdomains, one leading wildcard, not IP addresses; HTTP paths: a path
//!     type, absolute `Exact`/`Prefix` paths without `//`, `/./`, `/../`, `%2f` or a trailing `/..` or `/.`;
//!     backends: a Service with a DNS-1035 name and a port name or number, or a resource, exactly one),
//!     default backend (or rules), TLS hosts and secret names, class name and the
//!     `kubernetes.io/ingress.class` annotation agreeing with it on create, with the stored object's
//!     allowances on update; an IngressClass's controller (a domain-prefixed path, at most 250 bytes,
//!     immutable) and parameters (kind, name, API group, scope and namespace, the scope defaulted to
//!     `Cluster`);
//!   - a HorizontalPodAutoscaler's (`autoscaling/v2`, and `v1` read as kube-apiserver converts it, its CPU
//!     target as a `Resource` metric) replica bounds, scale target reference (kind, name, an API group in its
//!     `apiVersion` but for ReplicationControllers and unchanged references), metrics (one source per metric,
//!     each source's required fields, the targets' types and positive values, scaling to zero only with an
//!     Object or External metric) and behavior (policies' types, values and periods, stabilization windows
//!     within 0-3600 s, select policies, non-negative tolerances), checked on the object with kube-apiserver's
//!     defaults (which this server does not store);
//!   - a Lease's duration (above 0) and transitions (not negative);
//!   - a PodDisruptionBudget's `minAvailable` and `maxUnavailable` (not both, numbers or percentages up to
//!     100%) and unhealthy pod eviction policy (checked before its metadata, as kube-apiserver does);
//!   - a Role's and ClusterRole's rules (verbs, resources and their groups, non-resource URLs), a binding's
//!     `roleRef` (group, kind, name; immutable) and subjects (kinds, groups, names, a ServiceAccount's
//!     namespace), with kube-apiserver's defaults of the groups.
//!
//!   Not validated: every other field of these kinds (`envFrom`, volume devices, lifecycle hooks, the
//!   fields of the other volume sources, init containers' probes and restart policies, a Windows user
//!   name's domain and characters, the seccomp and AppArmor pod annotations,
//!   a ClusterRole's aggregation
//!   selectors, a Service's cluster IP range, node ports held by other Services (this server allocates no
//!   node ports nor a health check node port), a gated Pod's node selector and affinity), the other
//!   kinds' own rules (their metadata only; a ServiceAccount has no rules but its metadata's, which run),
//!   a HorizontalPodAutoscaler's container resource names (`ValidateContainerResourceName`)
//!   and an empty scaling `policies` list (the typed round trip reads `[]` as absent, so the defaults fill
//!   it), an Ingress path's `pathType: ""` (read as absent: `Required`, where kube-apiserver says
//!   `Unsupported value`), and part of the status rules. A write to a `status` runs the kind's status rules
//!   in place of its spec rules for Deployments, ReplicaSets, StatefulSets and DaemonSets (counts not
//!   negative nor above `status.replicas`, `availableReplicas` not above `readyReplicas`, `collisionCount`
//!   never decremented), Jobs (every rule of `ValidateJobStatusUpdate` with the options kube-apiserver 1.35
//!   sets: conditions that contradict each other, `completionTime` and `startTime`, index lists, counters
//!   and terminal conditions never taken back), CronJobs (none), Services and Ingresses (the load
//!   balancer's ingress IPs, IP modes and host names), Namespaces (the phase), PodDisruptionBudgets (the
//!   conditions, counts), HorizontalPodAutoscalers (replica counts), PersistentVolumeClaims (access modes,
//!   capacity and allocated resources not negative, their resource names and resize states) and Pods (conditions, node, nominated node, observed generation,
//!   QoS class, pod and host IPs; not container state transitions, container users and resources, resource
//!   claim statuses nor the pod-specific annotations); other kinds' status writes get their update rules. Where kube-apiserver prints a value of its internal types in a message (a Job's immutable
//!   template) the value is printed as the object's JSON (a container's security context with Go's field
//!   names, but its nested structs other than the capabilities as their JSON), and the immutable spec messages of a
//!   PersistentVolumeClaim and a Pod have no diff of the two specs.
//! - Request bodies are JSON, YAML, or protobuf for every built-in kind (client-go's typed clients and
//!   kubectl's `create <generator>` send protobuf; `kubectl run` and `expose` send JSON): ConfigMap, Secret,
//!   Namespace, ServiceAccount, Service, Pod, Deployment, Job, CronJob, the four RBAC kinds, ResourceQuota,
//!   PodDisruptionBudget and PriorityClass are mapped field by field from `k8s-pb`'s messages, the other
//!   kinds (CustomResourceDefinitions among them) and the fields that mapping does not carry are read by the
//!   generated `.proto` files' messages, for the object, its `status` and its `scale` (custom resources'
//!   too). `DeleteOptions` bodies (of deletes and delete-collections) are read in JSON, YAML or protobuf
//!   as kube-apiserver reads them: in any group-version, a malformed protobuf one answered with Go's
//!   error text, a JSON one whose fields have the wrong type answered with Go's `cannot unmarshal` text, the
//!   query beside a body unread but for `dryRun=All`, and refused as
//!   `ValidateDeleteOptions` refuses them (every cause in one 422). Protobuf bodies gzip-encoded or not fitting their message are refused with 415 rather
//!   than read in part, and so are custom resources' objects in protobuf (kube-apiserver 1.35 fails such a
//!   request without an answer: its decoder of custom resources dereferences a nil pointer); CBOR is
//!   refused as kube-apiserver 1.35 refuses it with its
//!   `CBORServingAndStorage` gate off (415 for a body, 406 for an `Accept` naming only CBOR). Built-in
//!   resources refuse what go-restful's routes refuse before a handler runs (a patch type the route does not
//!   consume: `415: Unsupported Media Type`; an `Accept` naming none of the types the route produces:
//!   `406: Not Acceptable` with their list). Responses are protobuf when `Accept` prefers it, as
//!   kube-apiserver negotiates (`q` values, wildcards, `as=`, `stream=watch`): objects of every built-in kind,
//!   their lists, `PartialObjectMetadata`, `scale`, `metav1.Status` errors (of custom resources too) and watch
//!   events, encoded from the generated `.proto` files' messages (`cargo xtask protobuf-schema`); Tables are
//!   never protobuf, custom resources are JSON or 406 as on kube-apiserver. Deviations: a request whose
//!   `Accept` names no protobuf but something the server can answer is answered in JSON (one that
//!   negotiates YAML gets JSON); a path that
//!   names no served resource keeps its JSON 404; an object whose JSON does not fit its message (a field
//!   the message lacks) is answered in JSON, or 406, rather than in protobuf, and ends a protobuf watch with
//!   an error event; raw JSON inside objects (`RawExtension`, `FieldsV1`) is written compact with sorted keys,
//!   where kube-apiserver keeps the bytes it was sent; 406 Status bodies that kube-apiserver indents are
//!   compact.
//! - `/openapi/v3` publishes, per group-version, the schemas of the kinds served and of the types they refer
//!   to, with kube-apiserver's names and `x-kubernetes-group-version-kind`: built-in kinds from k8s-openapi,
//!   custom resources from their CRD's `openAPIV3Schema` (with `apiVersion`, `kind` and a reference to
//!   `ObjectMeta`). `/openapi/v2` publishes the same schemas as one swagger 2.0 document (built-in ones in v2
//!   form, CRDs converted as kube-apiserver converts structural schemas to v2), as JSON or as gnostic's
//!   protobuf (what kubectl asks for: `kubectl explain --output plaintext-openapiv2` reads it), with
//!   kube-apiserver's content negotiation, ETag and `304`, but not gzip-compressed and without
//!   `Last-Modified`. k8s-openapi's schemas carry kube-apiserver's descriptions; the `enum` lists and
//!   "Possible enum values" paragraphs of enum fields, the `required` fields in Go order, the
//!   `x-kubernetes-*` extensions (list and map types, patch strategies, unions) and the `default`s of v3
//!   (`""`, `0`, `{}` beside a reference, a port's `protocol: TCP`; v2 has none, as on kube-apiserver) are
//!   set from a table of the 1.35 release's generated definitions. Each built-in group-version document also
//!   publishes its List kinds (built from the same table), `DeleteOptions`, `Status`, `WatchEvent`, `Patch`,
//!   `ListMeta`, `APIResourceList` and, where a scale subresource is served, `Scale`, and the v2 document the
//!   discovery types (`APIGroupList`, `APIVersions`, the version `Info`); not the schemas only the resources
//!   not served refer to (`Binding`, `ComponentStatus`, `Eviction`, `TokenRequest`) nor the review kinds'.
//!   Every v3 group-version document has the paths kube-apiserver publishes for the resources served
//!   (built-in: collection, object, list across namespaces, `status`, `scale`, the deprecated watch paths,
//!   the resource list; custom resources: the same but the watch paths and the resource list, as
//!   apiextensions-apiserver writes them, with their List kinds and shared meta types), with the operations,
//!   operation ids, parameters and their descriptions, request bodies and answers; `/openapi/v2` has those of
//!   the built-in resources, its shared parameters declared once under kube-openapi's names. Not published:
//!   the discovery paths (`/api`, `/apis`, `/apis/GROUP`, `/version`, and their v3 documents), and in v2 any
//!   path of a custom resource but that of one object (read, replace, patch, delete), whose PATCH declares
//!   the patch types accepted (kubectl's client-side apply sends a merge patch, as against kube-apiserver)
//!   but no other request body.
//! - `fieldValidation` on patches is kube-apiserver's: duplicate keys (with their paths), a JSON patch
//!   operation's unknown fields and the patched object's unknown fields are warned about (`Warn`, the default)
//!   or refused (`Strict`: 422 `patch: Invalid value: "...": strict decoding error: ...`, showing the patched
//!   object for a JSON or merge patch and Go's `%+v` of the patch for a strategic merge patch); server-side
//!   apply refuses fields the schema does not declare with 500 `failed to create typed patch object (...)`
//!   whatever the mode, and duplicate YAML keys (with their lines) under `Strict`. The patched object shown
//!   for a built-in kind has its keys sorted (kube-apiserver keeps the Go field order of the parts the patch
//!   does not touch), and a JSON patch value's duplicate keys are not kept in it; an item of an associative
//!   list in an undeclared field's path is named by its keys only where the schema gives the list's keys.
//!   A JSON create or update reports its duplicate and unknown fields together in document order, as
//!   kube-apiserver's strict decoder meets them.
//! - Watch history is kept per resource (`history_limit` changes), not compacted by time. A custom resource's
//!   watches start, as its watch cache does on kube-apiserver, at the first request to it (after that request's
//!   own write); a watch from an earlier version ends with `410 Expired`. On kube-apiserver the cache's first
//!   list races a first request that writes, so it may start a version earlier.
//! - The managedFields of built-in kinds mark every struct with `.` (kube-apiserver skips those a Go zero value
//!   already has, such as `spec` and `spec.template`) and track atomic structs such as a `LabelSelector` field by field.
//! - New built-in objects whose Go status is a plain struct (a Deployment, a Service) have no `status` until one
//!   is written; kube-apiserver answers `status: {}` (a Service's `status: {loadBalancer: {}}`).
//! - A `/status` write that also changes metadata: like kube-apiserver it is not applied, but the in-memory server
//!   does not record the metadata fields in the status entry of `managedFields` (kube-apiserver does).
//! - The message of an invalid list `continue` token ends with the token, not with Go's decoding error.
//! - A built-in object whose `metav1.Condition` (a PodDisruptionBudget's status conditions) has no
//!   `lastTransitionTime` is refused with `400 BadRequest` (the typed decoding needs it); kube-apiserver
//!   decodes the zero time and refuses it with `422 Invalid` (`lastTransitionTime: Required value`).
//! - Not served: `bindings`,
//!   `componentstatuses`, and the subresources that reach a kubelet, a proxy or a signer or write a part of
//!   an object other than status and scale: `pods/log`, `exec`, `attach`, `portforward`, `proxy`, `eviction`,
//!   `binding`, `ephemeralcontainers` and `resize`, `serviceaccounts/token`,
//!   `nodes/proxy`, `services/proxy`, `certificatesigningrequests/approval`.
//! - New PersistentVolumes and VolumeAttributesClasses get no protection finalizer
//!   (`kubernetes.io/pv-protection`, `kubernetes.io/vac-protection`), so they are gone as soon as deleted.
//! - `kubectl get` tables (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`) have kube-apiserver's columns
//!   and cells for custom resources (printer columns, with client-go's JSONPath) and for every built-in kind
//!   kube-apiserver has a printer for; like kube-apiserver, the others (Roles, ClusterRoles, LimitRanges,
//!   CSIStorageCapacities, CRDs) print Name and Created At. Where the in-memory object lacks a field
//!   kube-apiserver always sets (a new Pod's or PersistentVolumeClaim's `Pending` phase, a claim's volume mode,
//!   defaulted fields), the printer reads kube-apiserver's value. In `.*` and `..` JSONPath steps, maps are
//!   walked in key order (Go walks them in random order).
//! - A new CertificateSigningRequest gets no `spec.username` (no one is authenticated), so its table's
//!   Requestor cell is empty; kube-apiserver records the requesting user.
//! - `autoscaling/v1` HorizontalPodAutoscalers convert only the CPU utilization target and its current value
//!   to and from the stored `v2` form; what `v1` cannot express is dropped (kube-apiserver keeps it in
//!   `autoscaling.alpha.kubernetes.io/*` annotations), so an update through `v1` loses it.
//!
//! `tests/differential` runs the same scenarios here and on a real kube-apiserver (from `kubewright-envtest`)
//! and compares the answers (its `parity` module does the same with a script of kubectl commands and their
//! output; `builtin_validation` runs each rule above as a valid object, an invalid create and a forbidden
//! update); the CEL rules' missing type checks and cost estimate, the validation messages that print an
//! internal type or a diff, and the differences from the managedFields
//! of built-in kinds to the protection finalizers above, are what it found and could not remove, and it pins
//! each of them on both servers; it does not compare `autoscaling/v1` objects (their tables it does compare, with every other table but an
//! APIService's: the in-memory server has none of kube-apiserver's own). The ones before are by design (no
//! authorization, no controllers running beside the server
//! except garbage collection and the played workload status) and not compared.

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod admission;
mod auth;
mod body;
mod cel;
mod clock;
mod convert;
mod crd;
mod discovery;
mod error;
mod faults;
mod flowcontrol;
mod handlers;
mod health;
mod http;
mod lifecycle;
mod log;
mod managed_fields;
mod negotiate;
mod omit_empty;
mod openapi;
mod protobuf;
mod quantity;
mod registry;
mod request;
mod schema;
mod selector;
mod server;
mod store;
mod strategic;
mod strict;
mod table;
mod validation;
mod watch;
mod workloads;

pub use body::ResponseBody;
pub use clock::Clock;
pub use error::ApiError;
pub use faults::{Fault, FaultAction};
pub use http::Serving;
pub use log::RequestRecord;
pub use protobuf::{ProtobufError, encode as encode_protobuf};
pub use registry::{PrinterColumn, ResourceType, ScaleSpec};
pub use request::Verb;
pub use server::{ApiServer, ApiServerBuilder};
pub use workloads::job::{FAIL_ANNOTATION, RUN_TIME_ANNOTATION, job_finishes_at, job_status};
pub use workloads::workload_status;
