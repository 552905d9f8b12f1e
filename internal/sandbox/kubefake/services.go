package kubefake

import (
	"fmt"
	"net/netip"
)

// createAPIServiceLocked creates default/kubernetes, the Service of the
// API servers, at the first address of the service range.
func (s *Server) createAPIServiceLocked() {
	if len(s.opts.ServiceCIDRs) == 0 {
		return
	}

	svc := obj{
		"metadata": obj{"name": "kubernetes", "labels": obj{"component": "apiserver", "provider": "kubernetes"}},
		"spec": obj{
			"clusterIP": addOffset(s.opts.ServiceCIDRs[0].Masked().Addr(), 1).String(),
			"ports":     []any{obj{"name": "https", "port": num(443), "protocol": "TCP", "targetPort": num(6443)}},
		},
	}

	if _, err := s.createLocked(s.builtinLocked("services"), "default", svc, createOpts{}); err != nil {
		panic("kubefake: kubernetes service: " + err.Error())
	}
}

// prepareService defaults a Service and allocates its cluster IP as the
// service IP allocator does (sequentially here, from offset 16).
func (s *Server) prepareService(o obj, old obj) error {
	defaultString(o, "ClusterIP", "spec", "type")
	defaultString(o, "None", "spec", "sessionAffinity")
	s.allocateNodePorts(o, old)

	if old != nil && str(o, "spec", "clusterIP") == "" {
		// The cluster IP is immutable; an update that omits it keeps it.
		for _, k := range []string{"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} {
			if v := nested(old, "spec", k); v != nil {
				set(o, deepCopy(v), "spec", k)
			}
		}
	}

	if str(o, "spec", "type") == "ExternalName" || len(s.opts.ServiceCIDRs) == 0 {
		return nil
	}

	ip := str(o, "spec", "clusterIP")

	switch {
	case ip == "None":
	case ip != "":
		a, err := netip.ParseAddr(ip)
		if err != nil || !s.opts.ServiceCIDRs[0].Contains(a) {
			return errInvalid("Service", str(o, "metadata", "name"), "spec.clusterIPs", "FieldValueInvalid",
				fmt.Sprintf("Invalid value: []string{%q}: failed to allocate IP %s: the provided IP (%s) is not in the valid range. The range of valid IPs is %s", ip, ip, ip, s.opts.ServiceCIDRs[0]))
		}

		if old == nil && s.serviceIPUsedLocked(ip) {
			return errInvalid("Service", str(o, "metadata", "name"), "spec.clusterIPs", "FieldValueInvalid",
				fmt.Sprintf("Invalid value: []string{%q}: failed to allocate IP %s: provided IP is already allocated", ip, ip))
		}
	default:
		pfx := s.opts.ServiceCIDRs[0].Masked()
		for i := 16; ; i++ {
			a := addOffset(pfx.Addr(), i)
			if !pfx.Contains(a) {
				return &apiError{code: 500, reason: "InternalError", message: "Internal error occurred: failed to allocate a serviceIP: range is full"}
			}

			if !s.serviceIPUsedLocked(a.String()) {
				ip = a.String()

				break
			}
		}

		set(o, ip, "spec", "clusterIP")
	}

	set(o, []any{ip}, "spec", "clusterIPs")
	defaultString(o, "SingleStack", "spec", "ipFamilyPolicy")

	if nested(o, "spec", "ipFamilies") == nil {
		set(o, []any{"IPv4"}, "spec", "ipFamilies")
	}

	return nil
}

func (s *Server) serviceIPUsedLocked(ip string) bool {
	for _, svc := range s.sortedLocked("/services") {
		if str(svc, "spec", "clusterIP") == ip {
			return true
		}
	}

	return false
}
