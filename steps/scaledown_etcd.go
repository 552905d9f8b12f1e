package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// etcdCallTimeout bounds one Talos API call of the removal, so that a
// node that stopped answering is noticed and handled.
const etcdCallTimeout = 20 * time.Second

// leaveEtcd takes a control plane out of etcd over the Talos API, never
// faster than quorum allows: the members that stay must all answer first;
// the leaving node leaves by itself (EtcdLeaveCluster) and, when it no
// longer answers, a staying member removes it (EtcdRemoveMemberByID); then
// the member list is read again until it no longer has the node. A member
// already gone is fine.
func (s *ScaleDown) leaveEtcd(ctx context.Context, env *engine.Env, r removal, emit engine.Emit) error {
	tc, ips, err := s.talosAccess(ctx, env)
	if err != nil {
		return err
	}
	peerIP := ""
	for _, n := range env.Spec.Nodes() {
		if n.Role == spec.RoleControlPlane && ips[n.Name] != "" {
			peerIP = ips[n.Name]
			break
		}
	}
	if peerIP == "" {
		return fmt.Errorf("remove %s from etcd: no control plane of the spec has a server with a public IPv4 to ask", r.Name)
	}
	peer, err := s.d.Talos(ctx, tc, peerIP)
	if err != nil {
		return err
	}
	defer peer.Close()
	members, err := s.healthyMembers(ctx, tc, ips, peer, r.Name)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(members, func(m talosapi.Member) bool { return m.Name == r.Name })
	if i < 0 {
		emit(engine.Event{Kind: engine.KindLog, Resource: "etcd/" + r.Name, Message: "not an etcd member (any more)"})
		return nil
	}
	if err := s.leaveOrRemove(ctx, tc, ips[r.Name], peer, members[i], emit); err != nil {
		return err
	}
	return s.waitGone(ctx, peer, r.Name, len(members)-1, emit)
}

// talosAccess is what reaching the nodes' Talos APIs takes: the stored
// talosconfig and the cluster's servers' public IPv4 by node name.
func (s *ScaleDown) talosAccess(ctx context.Context, env *engine.Env) (talosconfig []byte, ips map[string]string, _ error) {
	tc, err := env.State.Secret(secretTalosconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("no talosconfig stored (%w): run the bootstrap step first", err)
	}
	ips, err = s.publicIPs(ctx, env)
	return tc, ips, err
}

// publicIPs maps the cluster's servers (by node name) to their public IPv4.
func (s *ScaleDown) publicIPs(ctx context.Context, env *engine.Env) (map[string]string, error) {
	c, err := s.d.HCloud(ctx, env.Spec)
	if err != nil {
		return nil, err
	}
	list, err := ownedServers(ctx, c, env.State, env.Spec.Name)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, sv := range list {
		if ip := sv.PublicNet.IPv4.IP; ip != nil && !ip.IsUnspecified() {
			out[sv.Labels[cloud.LabelNode]] = ip.String()
		}
	}
	return out, nil
}

// healthyMembers reads the member list and checks that every member but
// the leaving one answers through its own node's etcd (its Talos API at
// the public address of the server named like the member): removing a
// member while another is down could cost the quorum.
func (s *ScaleDown) healthyMembers(ctx context.Context, tc []byte, ips map[string]string, peer *talosapi.Client, leaving string) ([]talosapi.Member, error) {
	cctx, cancel := context.WithTimeout(ctx, etcdCallTimeout)
	defer cancel()
	members, err := peer.EtcdMembers(cctx)
	if err != nil {
		return nil, fmt.Errorf("list etcd members before removing %s: %w", leaving, err)
	}
	var sick []string
	for _, m := range members {
		if m.Name != leaving && !s.memberAnswers(cctx, tc, ips[m.Name]) {
			sick = append(sick, m.Name)
		}
	}
	if len(sick) > 0 {
		return nil, fmt.Errorf("etcd members %s do not answer: removing %s now could lose etcd's quorum. Fix: bring them back (ohmytalos doctor), "+
			"or remove them from etcd by hand (talosctl etcd remove-member), then run apply again", strings.Join(sick, ", "), leaving)
	}
	return members, nil
}

// memberAnswers reports whether the etcd of the node at ip answers.
func (s *ScaleDown) memberAnswers(ctx context.Context, tc []byte, ip string) bool {
	if ip == "" {
		return false
	}
	c, err := s.d.Talos(ctx, tc, ip)
	if err != nil {
		return false
	}
	defer c.Close()
	ms, err := c.EtcdMembers(ctx)
	return err == nil && len(ms) > 0
}

// leaveOrRemove asks the leaving node to leave etcd; when it does not
// answer, a staying member removes it by ID.
func (s *ScaleDown) leaveOrRemove(ctx context.Context, tc []byte, ip string, peer *talosapi.Client, m talosapi.Member, emit engine.Emit) error {
	var leaveErr error
	if ip != "" {
		leaveErr = s.leaveSelf(ctx, tc, ip)
		if leaveErr == nil {
			emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionDelete, Resource: "etcd/" + m.Name, Message: "left etcd (EtcdLeaveCluster)"})
			return nil
		}
		if !talosapi.IsRetryable(leaveErr) {
			return fmt.Errorf("%s could not leave etcd: %w", m.Name, leaveErr)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, etcdCallTimeout)
	defer cancel()
	if err := peer.EtcdRemoveMember(cctx, m.ID); err != nil {
		return fmt.Errorf("remove etcd member %s (%s) after it did not answer (%v): %w", m.Name, m.ID, leaveErr, err)
	}
	emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionDelete, Resource: "etcd/" + m.Name,
		Message: "removed from etcd by a staying member (EtcdRemoveMemberByID): the node did not answer"})
	return nil
}

// leaveSelf moves leadership away and leaves etcd on the leaving node.
func (s *ScaleDown) leaveSelf(ctx context.Context, tc []byte, ip string) error {
	c, err := s.d.Talos(ctx, tc, ip)
	if err != nil {
		return err
	}
	defer c.Close()
	cctx, cancel := context.WithTimeout(ctx, etcdCallTimeout)
	defer cancel()
	// Best effort: a node that does not lead answers with no new leader.
	_ = c.EtcdForfeitLeadership(cctx)
	return c.EtcdLeave(cctx)
}

// waitGone polls the member list until the node is no longer a member
// and want members remain.
func (s *ScaleDown) waitGone(ctx context.Context, peer *talosapi.Client, name string, want int, emit engine.Emit) error {
	deadline := time.Now().Add(s.d.nodeTimeout())
	for {
		cctx, cancel := context.WithTimeout(ctx, etcdCallTimeout)
		ms, err := peer.EtcdMembers(cctx)
		cancel()
		if err == nil && !slices.ContainsFunc(ms, func(m talosapi.Member) bool { return m.Name == name }) && len(ms) <= want {
			emit(engine.Event{Kind: engine.KindProgress, Resource: "etcd", Message: fmt.Sprintf("%d etcd members after %s left", len(ms), name)})
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd still lists %s (or more than %d members) after %s: check with talosctl etcd members, then run apply again", name, want, s.d.nodeTimeout())
		}
		if err := sleep(ctx, s.d.poll()); err != nil {
			return err
		}
	}
}

// waitVIP waits until one staying control plane holds the VIP: the
// bootstrap step leaves that check to this step while a leaving control
// plane may hold it.
func (s *ScaleDown) waitVIP(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	tc, ips, err := s.talosAccess(ctx, env)
	if err != nil {
		return err
	}
	var nodes []nodeAddr
	var cps []*talosapi.Client
	defer func() {
		for _, c := range cps {
			_ = c.Close()
		}
	}()
	for _, n := range env.Spec.Nodes() {
		if n.Role != spec.RoleControlPlane || ips[n.Name] == "" {
			continue
		}
		c, err := s.d.Talos(ctx, tc, ips[n.Name])
		if err != nil {
			return err
		}
		cps, nodes = append(cps, c), append(nodes, nodeAddr{node: n, ip: ips[n.Name]})
	}
	wctx, cancel := context.WithTimeout(ctx, s.d.nodeTimeout())
	defer cancel()
	return (&Bootstrap{s.d}).waitVIP(wctx, cps, nodes, env.Spec.ControlPlane.VIP, emit)
}
