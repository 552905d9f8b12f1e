package kubefake

import (
	"net/http"
	"slices"
	"sort"
	"strings"
)

const crdKey = "apiextensions.k8s.io/customresourcedefinitions"

// crdResources lists the resources served by the established CRDs.
func (s *Server) crdResourcesLocked() []resource {
	var out []resource

	for _, crd := range s.sortedLocked(crdKey) {
		if !crdEstablished(crd) {
			continue
		}

		names := mapAt(crd, "spec", "names")
		for _, v := range listAt(crd, "spec", "versions") {
			if !boolAt(v, "served") {
				continue
			}

			r := resource{
				group: str(crd, "spec", "group"), version: str(v, "name"),
				name: str(names, "plural"), kind: str(names, "kind"), singular: str(names, "singular"),
				namespaced: str(crd, "spec", "scope") == "Namespaced", crd: true,
			}
			if r.singular == "" {
				r.singular = strings.ToLower(r.kind)
			}

			for _, sn := range listAt(names, "shortNames") {
				if s, ok := sn.(string); ok {
					r.shortNames = append(r.shortNames, s)
				}
			}

			if mapAt(v, "subresources", "status") != nil {
				r.subresources = append(r.subresources, "status")
			}

			out = append(out, r)
		}
	}

	return out
}

func crdEstablished(crd obj) bool {
	for _, c := range listAt(crd, "status", "conditions") {
		if str(c, "type") == "Established" && str(c, "status") == "True" {
			return true
		}
	}

	return false
}

func (s *Server) allResourcesLocked() []resource {
	return append(slices.Clone(s.builtins), s.crdResourcesLocked()...)
}

// lookupLocked finds the resource served at group/version/name.
func (s *Server) lookupLocked(group, version, name string) (resource, bool) {
	for _, r := range s.allResourcesLocked() {
		if r.group == group && r.version == version && r.name == name {
			return r, true
		}
	}

	return resource{}, false
}

// serveDiscovery answers /api, /apis and the group/version documents;
// false when path is not a discovery path.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request, path string) bool {
	if r.Method != http.MethodGet {
		return false
	}

	s.mu.Lock()
	all := s.allResourcesLocked()
	s.mu.Unlock()

	versions := groupVersions(all)
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")

	switch {
	case path == "/api":
		writeJSON(w, http.StatusOK, obj{
			"kind": "APIVersions", "versions": []string{"v1"},
			"serverAddressByClientCIDRs": []obj{{"clientCIDR": "0.0.0.0/0", "serverAddress": r.Host}},
		})
	case path == "/api/v1":
		writeJSON(w, http.StatusOK, resourceList("v1", all, "", "v1"))
	case path == "/apis":
		var groups []any

		for _, g := range sortedGroups(versions) {
			groups = append(groups, apiGroup(g, versions[g]))
		}

		writeJSON(w, http.StatusOK, obj{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
	case len(parts) == 2 && parts[0] == "apis":
		if len(versions[parts[1]]) == 0 || parts[1] == "" {
			writeErr(w, errNotFoundPath())

			return true
		}

		g := apiGroup(parts[1], versions[parts[1]])
		g["kind"], g["apiVersion"] = "APIGroup", "v1"
		writeJSON(w, http.StatusOK, g)
	case len(parts) == 3 && parts[0] == "apis":
		if parts[1] == "" || !slices.Contains(versions[parts[1]], parts[2]) {
			writeErr(w, errNotFoundPath())

			return true
		}

		writeJSON(w, http.StatusOK, resourceList(parts[1]+"/"+parts[2], all, parts[1], parts[2]))
	default:
		return false
	}

	return true
}

func sortedGroups(versions map[string][]string) []string {
	var out []string

	for g := range versions {
		if g != "" {
			out = append(out, g)
		}
	}

	sort.Strings(out)

	return out
}

func apiGroup(name string, versions []string) obj {
	var vs []any
	for _, v := range versions {
		vs = append(vs, obj{"groupVersion": name + "/" + v, "version": v})
	}

	return obj{"name": name, "versions": vs, "preferredVersion": vs[0]}
}

func resourceList(gv string, all []resource, group, version string) obj {
	var items []any

	for _, r := range all {
		if r.group != group || r.version != version {
			continue
		}

		item := obj{
			"name": r.name, "singularName": r.singular, "namespaced": r.namespaced,
			"kind": r.kind, "verbs": verbsFor(r, ""),
		}
		if len(r.shortNames) > 0 {
			item["shortNames"] = r.shortNames
		}

		items = append(items, item)

		for _, sub := range r.subresources {
			si := obj{"name": r.name + "/" + sub, "singularName": "", "namespaced": r.namespaced, "kind": r.kind, "verbs": verbsFor(r, sub)}

			switch sub {
			case "eviction":
				si["group"], si["version"], si["kind"] = "policy", "v1", "Eviction"
			case "scale":
				si["group"], si["version"], si["kind"] = "autoscaling", "v1", "Scale"
			}

			items = append(items, si)
		}
	}

	return obj{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": items}
}
