package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/kube"
)

// drainNode cordons a node and drains it with kubectl's drain library
// (kube.Client.Drain, configured as talosctl drains for upgrades):
// evictions through the Eviction subresource, so a PodDisruptionBudget
// that forbids one is waited for; DaemonSet and mirror pods stay; emptyDir
// data goes. It waits for the pods that were there after the cordon (by
// UID): a replacement that tolerates every taint (the Cilium operator
// does) may land on the cordoned node again, and goes with the node. After
// timeout the error names the node, the pods still there and the fix. A
// node already gone from Kubernetes is drained.
func drainNode(ctx context.Context, c *kube.Client, node string, timeout, poll time.Duration, emit engine.Emit) error {
	err := c.Cordon(ctx, node)
	if errors.Is(err, kube.ErrNotFound) {
		emit(engine.Event{Kind: engine.KindLog, Resource: "node/" + node, Message: "not in Kubernetes (any more): nothing to drain"})
		return nil
	}
	if err != nil {
		return fmt.Errorf("cordon node %s: %w", node, err)
	}
	emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionUpdate, Resource: "node/" + node, Message: "cordoned (spec.unschedulable: true)"})
	var mu sync.Mutex // the drain reports from one goroutine per pod
	progress := func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		emit(engine.Event{Kind: engine.KindProgress, Resource: "node/" + node, Message: "draining: " + msg})
	}
	err = c.Drain(ctx, node, kube.DrainOptions{Timeout: timeout, RetryDelay: poll, Progress: progress})
	var inc *kube.DrainIncomplete
	switch {
	case errors.As(err, &inc) && len(inc.Left) > 0:
		return drainTimeout(node, timeout, inc.Left, inc.Blocked)
	case err != nil && inc == nil:
		return err
	}
	emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionUpdate, Resource: "node/" + node, Message: "drained"})
	return nil
}

// drainTimeout is the operator's error for a drain that did not finish.
func drainTimeout(node string, timeout time.Duration, left, blocked []string) error {
	why := "they did not terminate"
	if len(blocked) > 0 {
		why = "a PodDisruptionBudget forbids evicting " + strings.Join(blocked, ", ")
	}
	return fmt.Errorf("drain node %s: %d pods still there after %s (%s): %s. Fix: give those workloads room elsewhere "+
		"(more replicas on other nodes, or relax the PodDisruptionBudget), or delete the pods yourself, then run apply again; "+
		"nothing was deleted and the node stays cordoned", node, len(left), timeout, strings.Join(left, ", "), why)
}
