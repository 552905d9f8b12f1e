package kubereal

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// images is a node's image store as the kubelet's image manager sees it
// (kubernetes pkg/kubelet/images/image_manager.go, EnsureImageExists): an
// image is pulled once per node (IfNotPresent), one pull at a time
// (serializeImagePulls, default true); a failed pull reports ErrImagePull
// with the runtime's error and a Warning "Failed" event, and ImagePullBackOff
// on the next attempts.
type images struct {
	mu      sync.Mutex
	ready   map[string]time.Time // image -> when its pull ends
	lastEnd time.Time
	fails   map[string]int // pod UID and image -> failed pulls
}

// waiting is a container's waiting state (reason, message).
type waiting struct{ reason, message string }

// pull plays the image manager for p's containers: nil once every image
// is on the node, else each container's waiting state.
func (k *Kubelet) pull(ctx context.Context, p *corev1.Pod, ps *podSeen) map[string]waiting {
	k.imgs.mu.Lock()
	defer k.imgs.mu.Unlock()

	var out map[string]waiting

	now := time.Now()
	last := now

	for _, c := range p.Spec.Containers {
		w, failed := k.pullOne(now, p, c.Image)
		if end, ok := k.imgs.ready[c.Image]; ok && end.After(last) {
			last = end
		}

		if w == nil {
			continue
		}

		if out == nil {
			out = map[string]waiting{}
		}

		out[c.Name] = *w

		if failed {
			k.event(ctx, p, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", c.Image, w.message))
		}
	}

	// The first request fixes the pod's modelled pull time (its queue
	// included); the kubelet wakes when the last image is there.
	k.mu.Lock()
	first := !ps.pulling
	if first {
		ps.pulling, ps.pull = true, last.Sub(now)
	}
	k.mu.Unlock()

	if first && last.After(now) {
		k.poll.wakeAfter(last.Sub(now))
	}

	return out
}

// pullOne is one image's state: nil once pulled; failed says this attempt
// just failed (the event to record).
func (k *Kubelet) pullOne(now time.Time, p *corev1.Pod, img string) (w *waiting, failed bool) {
	if msg := k.pullError(img); msg != "" {
		key := string(p.UID) + "_" + img
		k.imgs.fails[key]++

		if k.imgs.fails[key] == 1 {
			return &waiting{"ErrImagePull", msg}, true
		}

		return &waiting{"ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", img, msg)}, false
	}

	end, ok := k.imgs.ready[img]
	if !ok {
		var d time.Duration
		if k.cfg.PullDelay != nil {
			d = k.cfg.PullDelay(img)
		}

		start := now
		if k.imgs.lastEnd.After(now) {
			start = k.imgs.lastEnd
		}

		end = start.Add(d)
		k.imgs.ready[img], k.imgs.lastEnd = end, end
	}

	if now.Before(end) {
		return &waiting{reason: "ContainerCreating"}, false
	}

	return nil, false
}

func (k *Kubelet) pullError(img string) string {
	if k.cfg.PullError == nil {
		return ""
	}

	return k.cfg.PullError(img)
}

// setWaiting records a pod whose containers wait for their images:
// Pending, not ready; only when something changed.
func (k *Kubelet) setWaiting(ctx context.Context, p *corev1.Pod, ws map[string]waiting) {
	var statuses []corev1.ContainerStatus

	changed := p.Status.Phase != corev1.PodPending || len(p.Status.ContainerStatuses) != len(p.Spec.Containers)

	for i, c := range p.Spec.Containers {
		st := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: new(false)}
		if w, ok := ws[c.Name]; ok {
			st.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.reason, Message: w.message}
		} else {
			st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}

		if !changed && (p.Status.ContainerStatuses[i].State.Waiting == nil || *p.Status.ContainerStatuses[i].State.Waiting != *st.State.Waiting) {
			changed = true
		}

		statuses = append(statuses, st)
	}

	if !changed {
		return
	}

	now := metav1.Now()
	p.Status.Phase, p.Status.HostIP = corev1.PodPending, k.cfg.InternalIP
	p.Status.ContainerStatuses = statuses
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now},
	}

	_, _ = k.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}) //nolint:errcheck // retried next sync
}

// event records an event about p from this node's kubelet.
func (k *Kubelet) event(ctx context.Context, p *corev1.Pod, typ, reason, msg string) {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: p.Name + ".", Namespace: p.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Type:           typ, Reason: reason, Message: msg, Count: 1, FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "kubelet", Host: k.cfg.Name},
	}

	_, _ = k.client.CoreV1().Events(p.Namespace).Create(ctx, ev, metav1.CreateOptions{}) //nolint:errcheck // best effort, as the kubelet's
}

// isJobPod: a pod a Job controls runs to completion (its restart policy
// is Never or OnFailure); the sandbox's containers exit 0 after JobRun.
func isJobPod(p *corev1.Pod) bool {
	owner := metav1.GetControllerOf(p)

	return owner != nil && owner.Kind == "Job" && p.Spec.RestartPolicy != corev1.RestartPolicyAlways
}

// complete ends a Job's pod: its containers terminated with exit code 0,
// the pod Succeeded, so the real Job controller counts it.
func (k *Kubelet) complete(ctx context.Context, p *corev1.Pod) {
	if p.Status.StartTime == nil || time.Since(p.Status.StartTime.Time) < k.cfg.JobRun {
		return
	}

	now := metav1.Now()
	p.Status.Phase = corev1.PodSucceeded

	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		started := now
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}

		cs.Ready, cs.Started = false, new(false)
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: now}}
	}

	for i := range p.Status.Conditions {
		if c := &p.Status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.Reason, c.LastTransitionTime = corev1.ConditionFalse, "PodCompleted", now
		}
	}

	_, _ = k.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}) //nolint:errcheck // retried next sync
}

// volumesAttached reports whether every CSI volume of p's claims is
// attached to this node: the kubelet's volume manager waits for the
// attach-detach controller to list it in the node's volumesAttached
// ("kubernetes.io/csi/DRIVER^HANDLE", pkg/volume/util GetUniqueVolumeName),
// unless the driver's CSIDriver says attaching is not required.
func (k *Kubelet) volumesAttached(ctx context.Context, p *corev1.Pod) bool {
	var want []string

	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}

		pvc, err := k.client.CoreV1().PersistentVolumeClaims(p.Namespace).Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if err != nil || pvc.Spec.VolumeName == "" {
			return false
		}

		pv, err := k.client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return false
		}

		if pv.Spec.CSI == nil {
			continue
		}

		if d, err := k.client.StorageV1().CSIDrivers().Get(ctx, pv.Spec.CSI.Driver, metav1.GetOptions{}); err == nil && d.Spec.AttachRequired != nil && !*d.Spec.AttachRequired {
			continue
		}

		want = append(want, "kubernetes.io/csi/"+pv.Spec.CSI.Driver+"^"+pv.Spec.CSI.VolumeHandle)
	}

	if len(want) == 0 {
		return true
	}

	n, err := k.client.CoreV1().Nodes().Get(ctx, k.cfg.Name, metav1.GetOptions{})
	if err != nil {
		return false
	}

	for _, w := range want {
		if !slices.ContainsFunc(n.Status.VolumesAttached, func(a corev1.AttachedVolume) bool { return string(a.Name) == w }) {
			return false
		}
	}

	return true
}

// configError is the kubelet's CreateContainerConfigError for p: a
// Secret or ConfigMap key its containers' env needs that does not exist
// (kuberuntime generateContainerConfig, makeEnvironmentVariables; the
// messages of pkg/kubelet/kubelet_pods.go); "" when every one does.
func (k *Kubelet) configError(ctx context.Context, p *corev1.Pod) string {
	for _, c := range p.Spec.Containers {
		for _, ef := range c.EnvFrom {
			if r := ef.SecretRef; r != nil && (r.Optional == nil || !*r.Optional) {
				if _, err := k.client.CoreV1().Secrets(p.Namespace).Get(ctx, r.Name, metav1.GetOptions{}); err != nil {
					return fmt.Sprintf("secret %q not found", r.Name)
				}
			}
		}

		for _, e := range c.Env {
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				continue
			}

			ref := e.ValueFrom.SecretKeyRef
			if ref.Optional != nil && *ref.Optional {
				continue
			}

			sec, err := k.client.CoreV1().Secrets(p.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Sprintf("secret %q not found", ref.Name)
			}

			if _, ok := sec.Data[ref.Key]; !ok {
				return fmt.Sprintf("couldn't find key %s in Secret %s/%s", ref.Key, p.Namespace, ref.Name)
			}
		}
	}

	return ""
}
