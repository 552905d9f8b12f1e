package kubefake_test

import (
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
)

func TestJobCompletesOnceItsPodCanRun(t *testing.T) {
	ctx := testCtx(t)
	e := newEnv(t, kubefake.Options{})

	if err := e.srv.RegisterNode(kubefake.NodeRegistration{Name: "n", KubeletVersion: "v1.35.0"}); err != nil {
		t.Fatal(err)
	}

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "install", Namespace: "kube-system"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "quay.io/cilium/cilium-cli:v0.18.0"}},
		}}},
	}
	if _, err := e.cs.BatchV1().Jobs("kube-system").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The node is NotReady (no CNI) and the pod does not tolerate it: no progress.
	eventually(t, ctx, "the job's pod unschedulable", func() (bool, string) {
		pods, err := e.cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=install"})
		if err != nil || len(pods.Items) != 1 {
			return false, fmt.Sprint(err)
		}

		for _, c := range pods.Items[0].Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == "Unschedulable" {
				return true, ""
			}
		}

		return false, fmt.Sprintf("%+v", pods.Items[0].Status)
	})

	if j, _ := e.cs.BatchV1().Jobs("kube-system").Get(ctx, "install", metav1.GetOptions{}); j.Status.Succeeded != 0 {
		t.Fatalf("job succeeded without a schedulable pod: %+v", j.Status)
	}

	// A host-network pod tolerating not-ready runs, and the job completes.
	j, _ := e.cs.BatchV1().Jobs("kube-system").Get(ctx, "install", metav1.GetOptions{})
	if err := e.cs.BatchV1().Jobs("kube-system").Delete(ctx, "install", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	job.Spec.Template.Spec.HostNetwork = true
	job.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}}

	if _, err := e.cs.BatchV1().Jobs("kube-system").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually(t, ctx, "the job complete", func() (bool, string) {
		got, err := e.cs.BatchV1().Jobs("kube-system").Get(ctx, "install", metav1.GetOptions{})
		if err != nil || got.UID == j.UID {
			return false, fmt.Sprint(err)
		}

		for _, c := range got.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return got.Status.Succeeded == 1, fmt.Sprintf("%+v", got.Status)
			}
		}

		return false, fmt.Sprintf("%+v", got.Status)
	})
}
