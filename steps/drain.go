package steps

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/kube"
)

// drainNode cordons a node and evicts its pods through the Eviction
// subresource, as kubectl drain does: DaemonSet and mirror pods stay, a
// PodDisruptionBudget that forbids an eviction (429) is waited for, and
// after timeout the error names the node, the pods still there and the
// fix. As kubectl drain does, it waits for the pods that were there after
// the cordon (by UID): a replacement that tolerates every taint (the
// Cilium operator does) may land on the cordoned node again, and goes
// with the node. A node already gone from Kubernetes is drained.
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
	deadline := time.Now().Add(timeout)
	last := ""
	dr := &drain{c: c, node: node}
	for {
		left, blocked, err := dr.evictOnce(ctx)
		switch {
		case err != nil && !kube.IsRetryable(err):
			return err
		case err != nil && time.Now().After(deadline):
			return fmt.Errorf("drain node %s: the Kubernetes API kept failing for %s: %w", node, timeout, err)
		case len(left) == 0 && err == nil:
			emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionUpdate, Resource: "node/" + node, Message: "drained"})
			return nil
		}
		if err == nil && time.Now().After(deadline) {
			return drainTimeout(node, timeout, left, blocked)
		}
		msg := fmt.Sprintf("draining: %d pods left (%s)", len(left), strings.Join(left, ", "))
		if err != nil {
			msg = "draining: the Kubernetes API failed (" + err.Error() + "); trying again"
		}
		if len(blocked) > 0 {
			msg += "; a PodDisruptionBudget holds back " + strings.Join(blocked, ", ") + " for now"
		}
		if msg != last {
			emit(engine.Event{Kind: engine.KindProgress, Resource: "node/" + node, Message: msg})
			last = msg
		}
		if err := sleep(ctx, poll); err != nil {
			return fmt.Errorf("drain node %s: %w", node, err)
		}
	}
}

// drain is one node's drain in progress.
type drain struct {
	c    *kube.Client
	node string
	// uids are the pods to move: those on the node at the first listing.
	uids map[string]bool
}

// evictOnce asks to evict every pod that must leave the node; it returns
// the pods still there (namespace/name) and those a disruption budget
// held back.
func (d *drain) evictOnce(ctx context.Context) (left, blocked []string, err error) {
	c, node := d.c, d.node
	pods, err := c.PodsOnNode(ctx, node)
	if err != nil {
		return nil, nil, fmt.Errorf("list the pods of node %s: %w", node, err)
	}
	first := d.uids == nil
	if first {
		d.uids = map[string]bool{}
	}
	for _, p := range pods {
		if kube.DrainSkipReason(p) != "" {
			continue
		}
		md, _ := p["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		name, _ := md["name"].(string)
		uid, _ := md["uid"].(string)
		if first {
			d.uids[uid] = true
		} else if !d.uids[uid] {
			continue
		}
		left = append(left, ns+"/"+name)
		if _, terminating := md["deletionTimestamp"]; terminating {
			continue
		}
		err := c.Evict(ctx, ns, name)
		switch {
		case errors.Is(err, kube.ErrTooManyRequests):
			blocked = append(blocked, ns+"/"+name)
		case err != nil && !kube.IsRetryable(err):
			return nil, nil, fmt.Errorf("evict pod %s/%s from node %s: %w", ns, name, node, err)
		}
	}
	sort.Strings(left)
	sort.Strings(blocked)
	return left, blocked, nil
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
