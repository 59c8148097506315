// The WebApp operator of examples/src/webapp.rs written on controller-runtime, as kubebuilder lays one out, for
// `cargo xtask bench-cluster --against`: the WebApp's first version only (crd.yaml is `example.dev/v1` alone,
// what `webapp manifests` printed before `v2`; the Rust operator now stores and reconciles `v2`, whose
// `scale.replicas` and single `http` port the benchmark's WebApps set to what their `v1` fields say here, and
// neither side converts anything during a run: each benchmark writes and reads its parents at the storage
// version of the CRD it installed), the same children (a Deployment and a Service per WebApp), the same status
// (observedGeneration, the children's names, available replicas, the ConfigMap hash, Ready rolled up from
// DeploymentReady and ServiceReady), watching the ConfigMaps the WebApps name through a field index, and an event
// for each child it creates or updates (through events.k8s.io/v1, as the Rust operator records them). Defaults are controller-runtime's: one reconcile at a
// time, children written with CreateOrUpdate, the status with an update when it changed.
package main

import (
	"context"
	_ "embed"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

//go:embed crd.yaml
var crd string

const (
	configHashAnnotation = "example.dev/config-hash"
	instanceLabel        = "app.kubernetes.io/instance"
	nameLabel            = "app.kubernetes.io/name"
	defaultPort          = 8080
	configMapField       = "spec.configMap"
)

var groupVersion = schema.GroupVersion{Group: "example.dev", Version: "v1"}

type WebAppSpec struct {
	Image     string  `json:"image"`
	Replicas  int32   `json:"replicas"`
	Port      *int32  `json:"port,omitempty"`
	ConfigMap *string `json:"configMap,omitempty"`
}

type WebAppStatus struct {
	ObservedGeneration *int64             `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	Deployment         *string            `json:"deployment,omitempty"`
	Service            *string            `json:"service,omitempty"`
	AvailableReplicas  *int32             `json:"availableReplicas,omitempty"`
	ConfigHash         *string            `json:"configHash,omitempty"`
}

type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WebAppSpec   `json:"spec,omitempty"`
	Status            WebAppStatus `json:"status,omitempty"`
}

type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebApp `json:"items"`
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func (in *WebAppStatus) DeepCopy() *WebAppStatus {
	out := &WebAppStatus{
		ObservedGeneration: clone(in.ObservedGeneration),
		Deployment:         clone(in.Deployment),
		Service:            clone(in.Service),
		AvailableReplicas:  clone(in.AvailableReplicas),
		ConfigHash:         clone(in.ConfigHash),
	}
	for _, c := range in.Conditions {
		out.Conditions = append(out.Conditions, *c.DeepCopy())
	}
	return out
}

func (in *WebApp) DeepCopyObject() runtime.Object {
	out := &WebApp{TypeMeta: in.TypeMeta, Spec: in.Spec, Status: *in.Status.DeepCopy()}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Port = clone(in.Spec.Port)
	out.Spec.ConfigMap = clone(in.Spec.ConfigMap)
	return out
}

func (in *WebAppList) DeepCopyObject() runtime.Object {
	out := &WebAppList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range in.Items {
		out.Items = append(out.Items, *in.Items[i].DeepCopyObject().(*WebApp))
	}
	return out
}

// configHash is examples/src/webapp.rs's config_hash: FNV-1a over length-prefixed keys and values.
func configHash(cm *corev1.ConfigMap) string {
	hash := uint64(0xcbf29ce484222325)
	feed := func(b []byte) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		for _, c := range append(n[:], b...) {
			hash ^= uint64(c)
			hash *= 0x100000001b3
		}
	}
	keys := func(m map[string]string) []string {
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	for _, k := range keys(cm.Data) {
		feed([]byte("d"))
		feed([]byte(k))
		feed([]byte(cm.Data[k]))
	}
	binKeys := make([]string, 0, len(cm.BinaryData))
	for k := range cm.BinaryData {
		binKeys = append(binKeys, k)
	}
	sort.Strings(binKeys)
	for _, k := range binKeys {
		feed([]byte("b"))
		feed([]byte(k))
		feed(cm.BinaryData[k])
	}
	return fmt.Sprintf("%016x", hash)
}

type reconciler struct {
	client.Client
	scheme   *runtime.Scheme
	recorder events.EventRecorder
}

// announce records an event on the WebApp for a child CreateOrUpdate created or updated, as the Rust operator
// does.
func (r *reconciler) announce(app *WebApp, child client.Object, kind string, op controllerutil.OperationResult) {
	switch op {
	case controllerutil.OperationResultCreated:
		r.recorder.Eventf(app, child, corev1.EventTypeNormal, "Created", "Create", "Created %s %s", kind, child.GetName())
	case controllerutil.OperationResultUpdated:
		r.recorder.Eventf(app, child, corev1.EventTypeNormal, "Updated", "Update", "Updated %s %s", kind, child.GetName())
	}
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var app WebApp
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	status := app.Status.DeepCopy()
	setCondition := func(t string, ok bool, reason, message string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: t, Status: s, Reason: reason, Message: message, ObservedGeneration: app.Generation,
		})
	}
	var hash *string
	if app.Spec.ConfigMap != nil {
		var cm corev1.ConfigMap
		err := r.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: *app.Spec.ConfigMap}, &cm)
		if apierrors.IsNotFound(err) {
			setCondition("Ready", false, "ConfigMapNotFound", fmt.Sprintf("ConfigMap %s not found", *app.Spec.ConfigMap))
			status.ObservedGeneration = &app.Generation
			return ctrl.Result{}, r.writeStatus(ctx, &app, status)
		} else if err != nil {
			return ctrl.Result{}, err
		}
		h := configHash(&cm)
		hash = &h
	}
	port := int32(defaultPort)
	if app.Spec.Port != nil {
		port = *app.Spec.Port
	}
	labels := map[string]string{nameLabel: "webapp", instanceLabel: app.Name}

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		if dep.Labels == nil {
			dep.Labels = map[string]string{}
		}
		for k, v := range labels {
			dep.Labels[k] = v
		}
		replicas := app.Spec.Replicas
		dep.Spec.Replicas = &replicas
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		dep.Spec.Template.Labels = labels
		if hash != nil {
			if dep.Spec.Template.Annotations == nil {
				dep.Spec.Template.Annotations = map[string]string{}
			}
			dep.Spec.Template.Annotations[configHashAnnotation] = *hash
		} else {
			delete(dep.Spec.Template.Annotations, configHashAnnotation)
		}
		if len(dep.Spec.Template.Spec.Containers) == 0 {
			dep.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app"}}
		}
		c := &dep.Spec.Template.Spec.Containers[0]
		c.Image = app.Spec.Image
		c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: port, Protocol: corev1.ProtocolTCP}}
		return controllerutil.SetControllerReference(&app, dep, r.scheme)
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	r.announce(&app, dep, "Deployment", op)

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	op, err = controllerutil.CreateOrUpdate(ctx, r.Client, svc, func() error {
		if svc.Labels == nil {
			svc.Labels = map[string]string{}
		}
		for k, v := range labels {
			svc.Labels[k] = v
		}
		svc.Spec.Selector = labels
		svc.Spec.Ports = []corev1.ServicePort{{
			Name: "http", Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port),
		}}
		return controllerutil.SetControllerReference(&app, svc, r.scheme)
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	r.announce(&app, svc, "Service", op)

	status.Deployment = &dep.Name
	status.Service = &svc.Name
	status.AvailableReplicas = &dep.Status.AvailableReplicas
	status.ConfigHash = nil
	if h, ok := dep.Spec.Template.Annotations[configHashAnnotation]; ok {
		status.ConfigHash = &h
	}
	available := dep.Status.ObservedGeneration >= dep.Generation && dep.Status.AvailableReplicas >= app.Spec.Replicas
	if available {
		setCondition("DeploymentReady", true, "Available", "Deployment "+dep.Name+" is available")
	} else {
		setCondition("DeploymentReady", false, "Progressing", fmt.Sprintf(
			"Deployment %s: %d of %d replicas available", dep.Name, dep.Status.AvailableReplicas, app.Spec.Replicas))
	}
	setCondition("ServiceReady", true, "Ready", "Service "+svc.Name+" exists")
	if available {
		setCondition("Ready", true, "Ready", "every child is ready")
	} else {
		setCondition("Ready", false, "DeploymentNotReady", "Deployment "+dep.Name+" is not available")
	}
	status.ObservedGeneration = &app.Generation
	return ctrl.Result{}, r.writeStatus(ctx, &app, status)
}

// writeStatus updates the status when it changed.
func (r *reconciler) writeStatus(ctx context.Context, app *WebApp, status *WebAppStatus) error {
	if equality.Semantic.DeepEqual(&app.Status, status) {
		return nil
	}
	app.Status = *status
	return r.Status().Update(ctx, app)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "manifests" {
		fmt.Print(crd)
		return
	}
	var metricsAddr string
	// `--kubeconfig` is controller-runtime's own flag.
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "the address the metrics endpoint binds to")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	scheme.AddKnownTypes(groupVersion, &WebApp{}, &WebAppList{})
	metav1.AddToGroupVersion(scheme, groupVersion)

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: metricsAddr},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating the manager:", err)
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &WebApp{}, configMapField, func(o client.Object) []string {
		if name := o.(*WebApp).Spec.ConfigMap; name != nil {
			return []string{*name}
		}
		return nil
	}); err != nil {
		fmt.Fprintln(os.Stderr, "indexing WebApps by ConfigMap:", err)
		os.Exit(1)
	}
	r := &reconciler{Client: mgr.GetClient(), scheme: scheme, recorder: mgr.GetEventRecorder("webapp-controller")}
	byConfigMap := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		var apps WebAppList
		if err := r.List(ctx, &apps, client.InNamespace(o.GetNamespace()),
			client.MatchingFields{configMapField: o.GetName()}); err != nil {
			return nil
		}
		requests := make([]reconcile.Request, 0, len(apps.Items))
		for _, app := range apps.Items {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&app)})
		}
		return requests
	})
	if err := ctrl.NewControllerManagedBy(mgr).
		For(&WebApp{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Watches(&corev1.ConfigMap{}, byConfigMap).
		Named("webapp").
		Complete(r); err != nil {
		fmt.Fprintln(os.Stderr, "creating the controller:", err)
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "running the manager:", err)
		os.Exit(1)
	}
}
