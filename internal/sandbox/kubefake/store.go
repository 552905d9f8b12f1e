package kubefake

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

type createOpts struct {
	dryRun bool
}

func objKey(ns, name string) string { return ns + "/" + name }

func (s *Server) getLocked(r resource, ns, name string) (obj, bool) {
	o, ok := s.objs[r.key()][objKey(ns, name)]

	return o, ok
}

// sortedLocked lists the objects of a resource key by namespace and name.
func (s *Server) sortedLocked(key string) []obj {
	m := s.objs[key]
	keys := make([]string, 0, len(m))

	for k := range m {
		keys = append(keys, k)
	}

	slices.Sort(keys)

	out := make([]obj, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}

	return out
}

func (s *Server) builtinLocked(name string) resource {
	for _, r := range s.builtins {
		if r.name == name {
			return r
		}
	}

	panic("kubefake: no built-in resource " + name)
}

// storeLocked writes o (already prepared), bumps the resourceVersion and
// tells the watchers; typ is ADDED or MODIFIED.
func (s *Server) storeLocked(r resource, o obj, typ string) obj {
	s.rv++
	meta(o)["resourceVersion"] = strconv.FormatUint(s.rv, 10)

	m := s.objs[r.key()]
	if m == nil {
		m = map[string]obj{}
		s.objs[r.key()] = m
	}

	m[objKey(str(o, "metadata", "namespace"), str(o, "metadata", "name"))] = o
	s.notifyLocked(r, typ, o)

	return copyObj(o)
}

func (s *Server) removeLocked(r resource, o obj) {
	ns, name := str(o, "metadata", "namespace"), str(o, "metadata", "name")
	delete(s.objs[r.key()], objKey(ns, name))
	delete(s.applied, str(o, "metadata", "uid"))

	s.rv++
	gone := copyObj(o)
	meta(gone)["resourceVersion"] = strconv.FormatUint(s.rv, 10)
	s.notifyLocked(r, "DELETED", gone)
}

func (s *Server) newUID() string {
	s.seq++

	return fmt.Sprintf("6b1f3c2e-%04x-4%03x-8%03x-%012x", (s.seq>>24)&0xffff, (s.seq>>12)&0xfff, s.seq&0xfff, s.seq)
}

// randSuffix is the 5 characters kube-apiserver appends to a generateName,
// from its alphabet (no vowels), deterministic here.
func (s *Server) randSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"

	s.seq++
	n := s.seq*2654435761 + 12345

	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[n%uint64(len(alphabet))]
		n /= uint64(len(alphabet))
	}

	return string(b)
}

// checkBody validates apiVersion, kind, namespace and name of a request body.
func checkBody(r resource, ns, name string, o obj) error {
	if av := str(o, "apiVersion"); av != "" && av != r.apiVersion() {
		return errBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", av, r.apiVersion()))
	}

	if k := str(o, "kind"); k != "" && k != r.kind {
		return errBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", k, r.kind))
	}

	if bns := str(o, "metadata", "namespace"); r.namespaced && bns != "" && bns != ns {
		return errBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}

	if bn := str(o, "metadata", "name"); name != "" && bn != "" && bn != name {
		return errBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", bn, name))
	}

	return nil
}

// createLocked creates o in ns (POST), with kube-apiserver's checks.
func (s *Server) createLocked(r resource, ns string, o obj, co createOpts) (obj, error) {
	if err := checkBody(r, ns, "", o); err != nil {
		return nil, err
	}

	o = copyObj(o)
	m := meta(o)
	o["apiVersion"], o["kind"] = r.apiVersion(), r.kind

	if !r.namespaced {
		ns = ""
	}

	delete(m, "namespace")

	if ns != "" {
		m["namespace"] = ns
	}

	name := str(m, "name")
	if name == "" && str(m, "generateName") != "" {
		name = str(m, "generateName") + s.randSuffix()
		m["name"] = name
	}

	if name == "" {
		return nil, errInvalid(r.groupKind(), "", "metadata.name", "FieldValueRequired", "Required value: name or generateName is required")
	}

	if msg := nameProblem(r, name); msg != "" {
		return nil, errInvalid(r.groupKind(), name, "metadata.name", "FieldValueInvalid", fmt.Sprintf("Invalid value: %q: %s", name, msg))
	}

	if r.namespaced {
		if _, ok := s.getLocked(s.builtinLocked("namespaces"), "", ns); !ok {
			return nil, errNotFound(s.builtinLocked("namespaces"), ns)
		}
	}

	if _, ok := s.getLocked(r, ns, name); ok {
		return nil, errAlreadyExists(r, name)
	}

	if err := s.prepareCreate(r, o); err != nil {
		return nil, err
	}

	for _, k := range []string{"uid", "resourceVersion", "deletionTimestamp", "managedFields"} {
		delete(m, k)
	}

	m["uid"] = s.newUID()
	m["creationTimestamp"] = s.timestamp()

	if _, ok := o["spec"]; ok && r.name != "nodes" {
		m["generation"] = num(1)
	}

	if co.dryRun {
		return o, nil
	}

	return s.storeLocked(r, o, "ADDED"), nil
}

// prepareCreate applies the defaults and validation of the resource strategies.
func (s *Server) prepareCreate(r resource, o obj) error {
	if r.hasStatus() && r.name != "nodes" {
		// PrepareForCreate of every strategy with a status subresource resets it.
		delete(o, "status")
	}

	switch r.key() {
	case "/namespaces":
		set(o, obj{"phase": "Active"}, "status")
		meta(o)["labels"] = withLabel(strMap(o, "metadata", "labels"), "kubernetes.io/metadata.name", str(o, "metadata", "name"))
	case "/pods":
		set(o, obj{"phase": "Pending", "qosClass": "BestEffort"}, "status")
		defaultString(o, "default-scheduler", "spec", "schedulerName")
		defaultString(o, "Always", "spec", "restartPolicy")
	case "/services":
		return s.prepareService(o, nil)
	case "/secrets":
		defaultString(o, "Opaque", "type")

		return mergeStringData(o)
	case "apps/deployments", "apps/replicasets", "apps/statefulsets":
		if _, ok := intAt(o, "spec", "replicas"); !ok {
			set(o, num(1), "spec", "replicas")
		}
	case crdKey:
		return s.prepareCRD(o)
	}

	return nil
}

func withLabel(l map[string]string, k, v string) map[string]any {
	out := map[string]any{}
	for lk, lv := range l {
		out[lk] = lv
	}

	out[k] = v

	return out
}

func defaultString(o obj, v string, path ...string) {
	if str(o, path...) == "" {
		set(o, v, path...)
	}
}

// mergeStringData moves a Secret's stringData into data, as the API does.
func mergeStringData(o obj) error {
	for k, v := range mapAt(o, "data") {
		s, _ := v.(string) //nolint:errcheck // checked below
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return errBadRequest(fmt.Sprintf("Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data in data[%q]", k))
		}
	}

	sd := mapAt(o, "stringData")
	if sd == nil {
		return nil
	}

	for k, v := range sd {
		s, _ := v.(string) //nolint:errcheck // non-strings are dropped
		set(o, base64.StdEncoding.EncodeToString([]byte(s)), "data", k)
	}

	delete(o, "stringData")

	return nil
}

// prepareCRD checks the name rule and marks the CRD established, as the
// apiextensions controllers do within moments of its creation.
func (s *Server) prepareCRD(o obj) error {
	group, plural := str(o, "spec", "group"), str(o, "spec", "names", "plural")
	name := str(o, "metadata", "name")

	if name != plural+"."+group {
		return errInvalid("CustomResourceDefinition.apiextensions.k8s.io", name, "metadata.name", "FieldValueInvalid",
			fmt.Sprintf("Invalid value: %q: must be spec.names.plural+\".\"+spec.group", name))
	}

	var stored []any

	for _, v := range listAt(o, "spec", "versions") {
		if boolAt(v, "storage") {
			stored = append(stored, str(v, "name"))
		}
	}

	if len(stored) != 1 {
		return errInvalid("CustomResourceDefinition.apiextensions.k8s.io", name, "spec.versions", "FieldValueInvalid",
			"Invalid value: must have exactly one version marked as storage version")
	}

	ts := s.timestamp()
	set(o, obj{
		"acceptedNames":  deepCopy(mapAt(o, "spec", "names")),
		"storedVersions": stored,
		"conditions": []any{
			obj{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": ts},
			obj{"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": ts},
		},
	}, "status")

	return nil
}

type updateOpts struct {
	sub    string
	dryRun bool
	// apply marks a server-side apply: the caller already merged.
	apply bool
}

// updateLocked replaces an object (PUT, or the result of a patch).
func (s *Server) updateLocked(r resource, ns, name string, o obj, uo updateOpts) (obj, error) {
	if err := checkBody(r, ns, name, o); err != nil {
		return nil, err
	}

	old, ok := s.getLocked(r, ns, name)
	if !ok {
		return nil, errNotFound(r, name)
	}

	if rv := str(o, "metadata", "resourceVersion"); rv != "" && rv != str(old, "metadata", "resourceVersion") {
		return nil, errConflict(r, name)
	}

	next := copyObj(o)
	if uo.sub == "status" {
		next = copyObj(old)
		next["status"] = deepCopy(o["status"])
	} else if r.hasStatus() {
		if st, ok := old["status"]; ok {
			next["status"] = deepCopy(st)
		} else {
			delete(next, "status")
		}
	}

	next["apiVersion"], next["kind"] = r.apiVersion(), r.kind
	m, om := meta(next), meta(old)

	for _, k := range []string{"uid", "creationTimestamp", "name", "namespace", "generation", "managedFields", "deletionTimestamp", "resourceVersion"} {
		if v, ok := om[k]; ok {
			m[k] = v
		} else {
			delete(m, k)
		}
	}

	switch r.key() {
	case "/services":
		if err := s.prepareService(next, old); err != nil {
			return nil, err
		}
	case "/secrets":
		if err := mergeStringData(next); err != nil {
			return nil, err
		}
	case "/namespaces":
		m["labels"] = withLabel(strMap(next, "metadata", "labels"), "kubernetes.io/metadata.name", name)
	case "apps/deployments", "apps/replicasets", "apps/statefulsets":
		// Defaulting runs on every write: a missing replicas is 1.
		if _, ok := intAt(next, "spec", "replicas"); !ok && uo.sub == "" {
			set(next, num(1), "spec", "replicas")
		}
	}

	if specChanged(old, next) {
		g, _ := intAt(old, "metadata", "generation")
		m["generation"] = num(g + 1)
	}

	if equal(old, next) || uo.dryRun {
		return copyObj(next), nil
	}

	if m["deletionTimestamp"] != nil && len(listAt(next, "metadata", "finalizers")) == 0 {
		s.removeLocked(r, next)

		return copyObj(next), nil
	}

	return s.storeLocked(r, next, "MODIFIED"), nil
}

// specChanged reports a change outside metadata and status: what bumps
// metadata.generation.
func specChanged(a, b obj) bool {
	strip := func(o obj) obj {
		c := obj{}

		for k, v := range o {
			if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
				c[k] = v
			}
		}

		return c
	}

	_, hasGen := mapAt(a, "metadata")["generation"]

	return hasGen && !equal(strip(a), strip(b))
}

// deleteLocked deletes an object, or marks it for deletion while it has
// finalizers; namespaces take their objects with them.
func (s *Server) deleteLocked(r resource, ns, name string, dryRun bool) (obj, error) {
	o, ok := s.getLocked(r, ns, name)
	if !ok {
		return nil, errNotFound(r, name)
	}

	if dryRun {
		return copyObj(o), nil
	}

	if len(listAt(o, "metadata", "finalizers")) > 0 {
		if str(o, "metadata", "deletionTimestamp") == "" {
			c := copyObj(o)
			meta(c)["deletionTimestamp"] = s.timestamp()

			return s.storeLocked(r, c, "MODIFIED"), nil
		}

		return copyObj(o), nil
	}

	s.removeLocked(r, o)

	switch r.key() {
	case "/namespaces":
		s.deleteNamespaceContentsLocked(name)
	case crdKey:
		// Deleting a CRD deletes its custom resources.
		key := str(o, "spec", "group") + "/" + str(o, "spec", "names", "plural")
		cr := resource{group: str(o, "spec", "group"), name: str(o, "spec", "names", "plural")}

		for _, c := range s.sortedLocked(key) {
			s.removeLocked(cr, c)
		}
	}

	return copyObj(o), nil
}

func (s *Server) deleteNamespaceContentsLocked(ns string) {
	for _, r := range s.allResourcesLocked() {
		if !r.namespaced {
			continue
		}

		for _, o := range s.sortedLocked(r.key()) {
			if str(o, "metadata", "namespace") == ns {
				s.removeLocked(r, o)
			}
		}
	}
}

// hasPrefixAny is strings.HasPrefix over several prefixes.
func hasPrefixAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}

	return false
}
