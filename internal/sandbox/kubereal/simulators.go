package kubereal

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	listerscorev1 "k8s.io/client-go/listers/core/v1"
	listersstoragev1 "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// Timings of the simulated cloud controllers: each reconciles on every
// change its informers see, and at least every simResync (to retry what
// failed); a failed object waits as the real controller's rate limiter
// makes it wait.
const (
	simResync      = 2 * time.Second
	simCallTimeout = 30 * time.Second
	simSyncTimeout = time.Minute
)

// Simulators are what runs in the cluster's pods on a real Hetzner
// cluster and calls the Hetzner API, simulated against the real API
// server with one shared set of informers: the hcloud CCM's service
// (load balancer) and route controllers, the Hetzner CSI driver's
// controller (provisioner and attacher), and the Traefik stand-in
// answering on the nodes' node ports (traefik.go). Each acts only while a
// Ready pod of its image runs, with that pod's environment.
type Simulators struct {
	admin    *kubernetes.Clientset
	endpoint string
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	events   record.EventBroadcaster

	pods     listerscorev1.PodLister
	secrets  listerscorev1.SecretLister
	nodes    listerscorev1.NodeLister
	services listerscorev1.ServiceLister
	pvcs     listerscorev1.PersistentVolumeClaimLister
	pvs      listerscorev1.PersistentVolumeLister
	classes  listersstoragev1.StorageClassLister
	attaches listersstoragev1.VolumeAttachmentLister

	traefik *traefikStandin

	mu    sync.Mutex
	kicks []chan struct{}
}

// StartSimulators runs the simulated service and route controllers and
// CSI driver against this control plane, calling the Hetzner API at
// endpoint, until ctx ends or Stop.
func (c *ControlPlane) StartSimulators(ctx context.Context, endpoint string) (*Simulators, error) {
	admin, err := c.Client("system:admin", "system:masters")
	if err != nil {
		return nil, err
	}

	s := &Simulators{admin: admin, endpoint: endpoint, events: record.NewBroadcaster()}
	ctx, s.cancel = context.WithCancel(ctx)
	s.events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: admin.CoreV1().Events("")})

	f := informers.NewSharedInformerFactory(admin, 0)
	core, storage := f.Core().V1(), f.Storage().V1()
	s.pods, s.secrets, s.nodes, s.services = core.Pods().Lister(), core.Secrets().Lister(), core.Nodes().Lister(), core.Services().Lister()
	s.pvcs, s.pvs = core.PersistentVolumeClaims().Lister(), core.PersistentVolumes().Lister()
	s.classes, s.attaches = storage.StorageClasses().Lister(), storage.VolumeAttachments().Lister()

	kick := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { s.kick() }, UpdateFunc: func(any, any) { s.kick() }, DeleteFunc: func(any) { s.kick() }}
	for _, inf := range []cache.SharedIndexInformer{core.Pods().Informer(), core.Secrets().Informer(), core.Nodes().Informer(),
		core.Services().Informer(), core.PersistentVolumeClaims().Informer(), core.PersistentVolumes().Informer(),
		storage.StorageClasses().Informer(), storage.VolumeAttachments().Informer()} {
		if _, err := inf.AddEventHandler(kick); err != nil {
			s.Stop()

			return nil, fmt.Errorf("simulated cloud controllers: watch: %w", err)
		}
	}

	f.Start(ctx.Done())

	syncCtx, cancel := context.WithTimeout(ctx, simSyncTimeout)
	defer cancel()

	for typ, ok := range f.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			s.Stop()
			f.Shutdown()

			return nil, fmt.Errorf("simulated cloud controllers: the informer of %v did not sync within %s", typ, simSyncTimeout)
		}
	}

	s.wg.Go(func() { <-ctx.Done(); f.Shutdown() })

	lb := &serviceController{sim: s, recorder: s.recorder("service-controller"), state: map[string]lbState{}}
	s.run(ctx, lb.reconcile)

	rc := &routeController{sim: s, recorder: s.recorder("route_controller")}
	s.run(ctx, rc.reconcile)

	csi := &csiDriver{sim: s, recorder: s.recorder("csi.hetzner.cloud"), retry: map[string]retry{}}
	s.run(ctx, csi.reconcile)

	s.traefik = &traefikStandin{sim: s}
	s.run(ctx, s.traefik.reconcile)
	s.wg.Go(func() { <-ctx.Done(); s.traefik.l.Close() })

	return s, nil
}

// Stop ends the simulators and waits for them.
func (s *Simulators) Stop() {
	s.cancel()
	s.wg.Wait()
	s.events.Shutdown()
}

func (s *Simulators) recorder(component string) record.EventRecorder {
	return s.events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
}

// kick wakes every controller (without blocking: one pending wake-up is
// enough, each reconciles everything).
func (s *Simulators) kick() {
	s.mu.Lock()
	defer s.mu.Unlock()

	for _, k := range s.kicks {
		select {
		case k <- struct{}{}:
		default:
		}
	}
}

// run calls reconcile on every change and every simResync until ctx ends.
func (s *Simulators) run(ctx context.Context, reconcile func(context.Context)) {
	k := make(chan struct{}, 1)

	s.mu.Lock()
	s.kicks = append(s.kicks, k)
	s.mu.Unlock()

	s.wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-k:
			case <-time.After(simResync):
			}

			rctx, cancel := context.WithTimeout(ctx, simCallTimeout)
			reconcile(rctx)
			cancel()
		}
	})
}

// hcloud is a Hetzner API client with the pod's token, as the CCM and
// the CSI driver build theirs; actions are polled every 100ms (the
// sandbox's actions are short) and failed calls are not retried (the
// next reconcile does).
func (s *Simulators) hcloud(token, app string) *hcloud.Client {
	return hcloud.NewClient(hcloud.WithToken(token), hcloud.WithEndpoint(s.endpoint),
		hcloud.WithApplication(app, "sandbox"), hcloud.WithRetryOpts(hcloud.RetryOpts{MaxRetries: 0}),
		hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(100 * time.Millisecond)}))
}
