package kubefake

import (
	"github.com/ohmytalos/ohmytalos/internal/sandbox/ingressstandin"
)

// ingressWantLocked lists the addresses the Traefik stand-in
// (ingressstandin) serves: every node's ExternalIP (in the sandbox the
// server's loopback IPv4, where the load balancer's health checks and
// connections arrive) and loopback InternalIP at every node port of a
// NodePort or LoadBalancer Service that selects a Ready pod of the
// traefik image; true for a TLS port (websecure, or 443).
func (s *Server) ingressWantLocked() map[string]bool {
	var ips []string
	for _, n := range s.sortedLocked("/nodes") {
		for _, a := range listAt(n, "status", "addresses") {
			t, ip := str(a, "type"), str(a, "address")
			if (t == "ExternalIP" || t == "InternalIP") && ingressstandin.Bindable(ip) {
				ips = append(ips, ip)
			}
		}
	}
	want := map[string]bool{}
	if len(ips) == 0 {
		return want
	}
	pods := s.sortedLocked("/pods")
	for _, svc := range s.sortedLocked("/services") {
		if t := str(svc, "spec", "type"); t != "NodePort" && t != "LoadBalancer" {
			continue
		}
		if !selectsReadyTraefik(svc, pods) {
			continue
		}
		for _, p := range listAt(svc, "spec", "ports") {
			node, ok := intAt(p, "nodePort")
			if !ok || node == 0 {
				continue
			}
			port, _ := intAt(p, "port")
			secure := ingressstandin.Secure(str(p, "name"), str(p, "targetPort"), port)
			for _, ip := range ips {
				want[ingressstandin.Addr(ip, node)] = secure
			}
		}
	}
	return want
}

func selectsReadyTraefik(svc obj, pods []obj) bool {
	sel := strMap(svc, "spec", "selector")
	if len(sel) == 0 {
		return false
	}
	ns := str(svc, "metadata", "namespace")
	for _, p := range pods {
		if str(p, "metadata", "namespace") != ns || str(p, "metadata", "deletionTimestamp") != "" ||
			!podReady(p) || !usesImage(mapAt(p, "spec"), ingressstandin.Image) {
			continue
		}
		labels := strMap(p, "metadata", "labels")
		match := true
		for k, v := range sel {
			if labels[k] != v {
				match = false
			}
		}
		if match {
			return true
		}
	}
	return false
}

// syncIngress opens and closes the stand-in's listeners to match the
// cluster.
func (s *Server) syncIngress() {
	s.mu.Lock()
	want := s.ingressWantLocked()
	s.mu.Unlock()
	s.ingress.Sync(want)
}

// closeIngress stops every listener of the stand-in.
func (s *Server) closeIngress() {
	s.ingress.Close()
}
