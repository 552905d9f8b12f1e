//go:build unix

package kubereal_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
)

func simplePod(name, image string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels}, Spec: corev1.PodSpec{
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		Containers:  []corev1.Container{{Name: "main", Image: image}},
	}}
}

func podPhase(ctx context.Context, cs *kubernetes.Clientset, name string) (*corev1.Pod, corev1.PodPhase, error) {
	p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, "", err
	}

	return p, p.Status.Phase, nil
}

// The simulated kubelet pulls images with the sandbox's per-image delay
// (once per node), reports failed pulls as the kubelet does, runs a Job's
// pod to completion so the real Job controller completes the Job, and
// honours evictions the real API server admits under a
// PodDisruptionBudget; a missing Secret key is CreateContainerConfigError.
func TestKubeletPullsJobsAndEvictions(t *testing.T) {
	t.Parallel()
	ctx, cp, admin := startAdmin(t)

	const slow, pullDelay = "example.com/app/slow:1", 3 * time.Second

	var forbidden atomic.Bool

	forbidden.Store(true)

	startKubelet(t, ctx, cp, kubereal.KubeletConfig{Name: "w-1", Version: "v1.36.3", InternalIP: "10.0.1.2",
		PullDelay: func(img string) time.Duration {
			if img == slow {
				return pullDelay
			}

			return 0
		},
		PullError: func(img string) string {
			if forbidden.Load() && strings.HasPrefix(img, "registry.k8s.io/") {
				return "rpc error: code = Unknown desc = failed to pull and unpack image \"" + img + "\": 403 Forbidden"
			}

			return ""
		},
	})

	waitServiceAccount(t, ctx, admin, "default")

	start := time.Now()
	if _, err := admin.CoreV1().Pods("default").Create(ctx, simplePod("slow", slow, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if _, err := admin.CoreV1().Pods("default").Create(ctx, simplePod("blocked", "registry.k8s.io/pause:3.10", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, time.Minute, "the slow image's pod runs once its pull is done", func() (bool, error) {
		_, ph, err := podPhase(ctx, admin, "slow")

		return ph == corev1.PodRunning, err
	})

	if took := time.Since(start); took < pullDelay {
		t.Errorf("the pod ran %s after it was created, before its image's %s pull could end", took, pullDelay)
	}

	// The image is on the node now: a second pod does not pull again.
	again := time.Now()
	if _, err := admin.CoreV1().Pods("default").Create(ctx, simplePod("slow-2", slow, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, time.Minute, "the second pod of the pulled image runs", func() (bool, error) {
		_, ph, err := podPhase(ctx, admin, "slow-2")

		return ph == corev1.PodRunning, err
	})

	if took := time.Since(again); took >= pullDelay+2*time.Second {
		t.Errorf("the second pod took %s, as if its image were pulled again", took)
	}

	// The trace holds each pod's modelled wait: the pull once, the start
	// for both; and the control plane's measured start.
	waits := map[string]kubereal.PodWait{}
	for _, w := range cp.Trace().Pods {
		waits[w.Name] = w
	}

	if w := waits["slow"]; w.Pull != pullDelay || w.Start != 500*time.Millisecond || w.Node != "w-1" || w.Running.Before(w.Seen.Add(w.Modelled())) {
		t.Errorf("the slow pod's wait is %+v, want a %s pull and the default 500ms start, running after both", w, pullDelay)
	}

	if w, ok := waits["slow-2"]; !ok || w.Pull != 0 {
		t.Errorf("the second pod's wait is %+v (recorded %v), want no pull", w, ok)
	}

	if tr := cp.Trace(); tr.APIServer <= 0 || tr.Controllers < tr.APIServer {
		t.Errorf("control plane start: kube-apiserver ready after %s, controllers after %s", tr.APIServer, tr.Controllers)
	}

	waitFor(t, time.Minute, "the forbidden pull backs off with the kubelet's reason and event", func() (bool, error) {
		p, ph, err := podPhase(ctx, admin, "blocked")
		if err != nil || ph != corev1.PodPending || len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Waiting == nil {
			return false, err
		}

		w := p.Status.ContainerStatuses[0].State.Waiting
		evs, err := admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=blocked,reason=Failed"})

		return w.Reason == "ImagePullBackOff" && strings.HasPrefix(w.Message, `Back-off pulling image "registry.k8s.io/pause:3.10": ErrImagePull: `) &&
			err == nil && len(evs.Items) == 1 && strings.Contains(evs.Items[0].Message, "403 Forbidden"), fmt.Errorf("waiting %+v, events %v", w, err)
	})

	forbidden.Store(false)

	waitFor(t, time.Minute, "the pull succeeds once the registry answers", func() (bool, error) {
		_, ph, err := podPhase(ctx, admin, "blocked")

		return ph == corev1.PodRunning, err
	})

	testJob(t, ctx, admin)
	testEviction(t, ctx, admin)
	testConfigError(t, ctx, admin)
}

// testConfigError: a container whose env names a missing Secret or key
// waits with CreateContainerConfigError until it exists.
func testConfigError(t *testing.T, ctx context.Context, admin *kubernetes.Clientset) {
	t.Helper()

	p := simplePod("creds", "alpine:3", nil)
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "token"}}}}

	if _, err := admin.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitingFor := func(msg string) {
		waitFor(t, time.Minute, "CreateContainerConfigError: "+msg, func() (bool, error) {
			p, _, err := podPhase(ctx, admin, "creds")
			if err != nil || len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Waiting == nil {
				return false, err
			}

			w := p.Status.ContainerStatuses[0].State.Waiting

			return w.Reason == "CreateContainerConfigError" && w.Message == msg, fmt.Errorf("waiting %+v", w)
		})
	}

	waitingFor(`secret "creds" not found`)

	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "default"}, StringData: map[string]string{"other": "x"}}
	if _, err := admin.CoreV1().Secrets("default").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitingFor("couldn't find key token in Secret default/creds")

	sec.StringData = map[string]string{"token": "t"}
	if _, err := admin.CoreV1().Secrets("default").Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, time.Minute, "the pod runs once its Secret key exists", func() (bool, error) {
		_, ph, err := podPhase(ctx, admin, "creds")

		return ph == corev1.PodRunning, err
	})
}

func testJob(t *testing.T, ctx context.Context, admin *kubernetes.Clientset) {
	t.Helper()

	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: "default"}, Spec: batchv1.JobSpec{
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers:  []corev1.Container{{Name: "backup", Image: "ghcr.io/siderolabs/talos-backup:v0.1.0"}}}},
	}}

	if _, err := admin.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 2*time.Minute, "the Job controller completes the Job once its pod succeeded", func() (bool, error) {
		j, err := admin.BatchV1().Jobs("default").Get(ctx, "backup", metav1.GetOptions{})
		if err != nil {
			return false, err
		}

		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return j.Status.Succeeded == 1, nil
			}
		}

		return false, nil
	})
}

func testEviction(t *testing.T, ctx context.Context, admin *kubernetes.Clientset) {
	t.Helper()

	labels := map[string]string{"app": "web"}
	for _, name := range []string{"web-1", "web-2"} {
		if _, err := admin.CoreV1().Pods("default").Create(ctx, simplePod(name, "nginx:1.27", labels), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	two := intstr.FromInt32(2)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &metav1.LabelSelector{MatchLabels: labels}}}

	if _, err := admin.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	observed := func(healthy int32) {
		waitFor(t, time.Minute, fmt.Sprintf("the disruption controller sees %d healthy pods", healthy), func() (bool, error) {
			p, err := admin.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})

			return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == healthy, err
		})
	}

	observed(2)

	evict := func() error {
		return admin.PolicyV1().Evictions("default").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default"}})
	}

	if err := evict(); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("eviction against minAvailable 2 of 2: %v, want 429", err)
	}

	p, err := admin.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	one := intstr.FromInt32(1)
	p.Spec.MinAvailable = &one

	if _, err := admin.PolicyV1().PodDisruptionBudgets("default").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, time.Minute, "the eviction is admitted once the budget allows it", func() (bool, error) {
		err := evict()

		return err == nil, err
	})

	waitFor(t, time.Minute, "the kubelet stops the evicted pod", func() (bool, error) {
		_, err := admin.CoreV1().Pods("default").Get(ctx, "web-1", metav1.GetOptions{})

		return apierrors.IsNotFound(err), err
	})
}
