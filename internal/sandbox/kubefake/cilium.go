package kubefake

import "strings"

// ciliumOperatorImage is the image of the Cilium operator (generic, the
// one for clusters outside AWS, Azure and Alibaba), with any registry and
// tag; operator-* variants start the same cell.
const ciliumOperatorImage = "cilium/operator-generic"

// ciliumCRDs are CRDs the cilium-operator registers when it starts, with
// their names and scope from cilium/cilium
// pkg/k8s/apis/cilium.io/client/crds/v2/*.yaml: a subset, the ones the
// agent and ohmytalos use. No manifest installs them: the operator's
// RegisterCRDsCell (pkg/k8s/apis/cilium.io/client/cell.go) creates them
// in its start hook unless --skip-crd-creation is set, so an object of
// these kinds applied before the operator runs is refused as a kind the
// API server does not serve, as the real one does.
var ciliumCRDs = []struct{ plural, kind, short, scope string }{
	{"ciliumclusterwidenetworkpolicies", "CiliumClusterwideNetworkPolicy", "ccnp", "Cluster"},
	{"ciliumnetworkpolicies", "CiliumNetworkPolicy", "cnp", "Namespaced"},
	{"ciliumendpoints", "CiliumEndpoint", "cep", "Namespaced"},
	{"ciliumidentities", "CiliumIdentity", "ciliumid", "Cluster"},
	{"ciliumnodes", "CiliumNode", "cn", "Cluster"},
}

// reconcileCiliumOperatorLocked registers Cilium's CRDs once a pod of the
// cilium-operator image is ready and was not told to skip them.
func (s *Server) reconcileCiliumOperatorLocked() {
	crds := s.builtinLocked("customresourcedefinitions")
	if _, ok := s.getLocked(crds, "", ciliumCRDs[0].plural+".cilium.io"); ok {
		return
	}

	for _, p := range s.sortedLocked("/pods") {
		spec := mapAt(p, "spec")
		if !usesImage(spec, ciliumOperatorImage) || !podReady(p) || skipsCRDCreation(spec) {
			continue
		}

		for _, c := range ciliumCRDs {
			// Built valid here; one that exists already stays, as the
			// operator's create-or-update leaves a current one.
			_, _ = s.createLocked(crds, "", ciliumCRD(c.plural, c.kind, c.short, c.scope), createOpts{}) //nolint:errcheck // see above
		}

		return
	}
}

// skipsCRDCreation reports whether the operator container has
// --skip-crd-creation (or =true) among its command and arguments.
func skipsCRDCreation(spec map[string]any) bool {
	for _, c := range listAt(spec, "containers") {
		if !imageIs(str(c, "image"), ciliumOperatorImage) {
			continue
		}

		for _, a := range append(listAt(c, "command"), listAt(c, "args")...) {
			s, _ := a.(string)
			if s == "--skip-crd-creation" || strings.EqualFold(s, "--skip-crd-creation=true") {
				return true
			}
		}
	}

	return false
}

// ciliumCRD is one cilium.io/v2 CRD as the operator creates it, with a
// schema that keeps every field (the fake does not validate custom
// resources against their schema).
func ciliumCRD(plural, kind, short, scope string) obj {
	return obj{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": obj{"name": plural + ".cilium.io", "labels": obj{"io.cilium.k8s.crd.schema.version": "1.32.3"}},
		"spec": obj{
			"group": "cilium.io", "scope": scope,
			"names": obj{"plural": plural, "kind": kind, "listKind": kind + "List", "singular": strings.ToLower(kind),
				"shortNames": []any{short}, "categories": []any{"cilium"}},
			"versions": []any{obj{"name": "v2", "served": true, "storage": true,
				"schema": obj{"openAPIV3Schema": obj{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}
}
