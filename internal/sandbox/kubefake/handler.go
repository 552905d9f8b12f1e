package kubefake

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// reqInfo is a parsed resource URL.
type reqInfo struct {
	res        resource
	ns, name   string
	sub        string
	collection bool
}

// parsePath reads /api/v1/... and /apis/GROUP/VERSION/... resource paths.
func (s *Server) parsePath(path string) (reqInfo, error) {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")

	var group, version string

	switch {
	case len(parts) >= 3 && parts[0] == "api" && parts[1] == "v1":
		version, parts = "v1", parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, version, parts = parts[1], parts[2], parts[3:]
	default:
		return reqInfo{}, errNotFoundPath()
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	var ri reqInfo

	// /namespaces/NS/RESOURCE... unless RESOURCE is a subresource of a namespace.
	if len(parts) >= 3 && parts[0] == "namespaces" && parts[2] != "status" {
		ri.ns, parts = parts[1], parts[2:]
	}

	r, ok := s.lookupLocked(group, version, parts[0])
	if !ok {
		return reqInfo{}, errNotFoundPath()
	}

	ri.res = r

	switch len(parts) {
	case 1:
		ri.collection = true
	case 2:
		ri.name = parts[1]
	case 3:
		ri.name, ri.sub = parts[1], parts[2]
		if !r.hasSub(ri.sub) {
			return reqInfo{}, errNotFoundPath()
		}
	default:
		return reqInfo{}, errNotFoundPath()
	}

	if r.namespaced && ri.ns == "" && !ri.collection {
		return reqInfo{}, errNotFoundPath()
	}

	if !r.namespaced && ri.ns != "" {
		return reqInfo{}, errNotFoundPath()
	}

	return ri, nil
}

func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, path string) {
	ri, err := s.parsePath(path)
	if err != nil {
		writeErr(w, err)

		return
	}

	q := r.URL.Query()
	dryRun := q.Get("dryRun") == "All"

	switch {
	case ri.sub == "scale":
		s.serveScale(w, r, ri, dryRun)
	case r.Method == http.MethodGet && ri.collection:
		s.serveList(w, r, ri)
	case r.Method == http.MethodGet && ri.sub == "eviction":
		writeErr(w, errMethodNotAllowed(r.Method, ri.res))
	case r.Method == http.MethodGet:
		s.serveGet(w, ri)
	case r.Method == http.MethodPost && ri.sub == "eviction":
		s.serveEviction(w, r, ri)
	case r.Method == http.MethodPost && ri.collection:
		s.serveWrite(w, r, ri, http.StatusCreated, func(body obj) (obj, error) {
			return s.createLocked(ri.res, ri.ns, body, createOpts{dryRun: dryRun})
		})
	case r.Method == http.MethodPut && !ri.collection && (ri.sub == "" || ri.sub == "status"):
		s.serveWrite(w, r, ri, http.StatusOK, func(body obj) (obj, error) {
			return s.updateLocked(ri.res, ri.ns, ri.name, body, updateOpts{sub: ri.sub, dryRun: dryRun})
		})
	case r.Method == http.MethodPatch && !ri.collection && (ri.sub == "" || ri.sub == "status"):
		s.servePatch(w, r, ri, dryRun)
	case r.Method == http.MethodDelete && ri.collection:
		s.serveDeleteCollection(w, r, ri)
	case r.Method == http.MethodDelete && ri.sub == "":
		s.mu.Lock()
		o, err := s.deleteLocked(ri.res, ri.ns, ri.name, dryRun)
		s.mu.Unlock()

		if err != nil {
			writeErr(w, err)

			return
		}

		writeJSON(w, http.StatusOK, o)
	default:
		writeErr(w, errMethodNotAllowed(r.Method, ri.res))
	}
}

func (s *Server) serveGet(w http.ResponseWriter, ri reqInfo) {
	s.mu.Lock()
	o, ok := s.getLocked(ri.res, ri.ns, ri.name)
	o = copyObj(o)
	s.mu.Unlock()

	if !ok {
		writeErr(w, errNotFound(ri.res, ri.name))

		return
	}

	writeJSON(w, http.StatusOK, s.render(ri.res, o))
}

// render sets the apiVersion the client asked for (CRDs serve every
// version from one storage).
func (s *Server) render(r resource, o obj) obj {
	o["apiVersion"], o["kind"] = r.apiVersion(), r.kind

	return o
}

func (s *Server) serveList(w http.ResponseWriter, r *http.Request, ri reqInfo) {
	q := r.URL.Query()

	labels, err := parseLabelSelector(q.Get("labelSelector"))
	if err != nil {
		writeErr(w, err)

		return
	}

	fields, err := parseFieldSelector(ri.res, q.Get("fieldSelector"))
	if err != nil {
		writeErr(w, err)

		return
	}

	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		s.serveWatch(w, r, ri.res, ri.ns, labels, fields)

		return
	}

	limit, _ := strconv.Atoi(q.Get("limit")) //nolint:errcheck // no limit on error

	after := ""
	if c := q.Get("continue"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil {
			writeErr(w, errBadRequest("continue key is not valid: "+err.Error()))

			return
		}

		after = string(b)
	}

	s.mu.Lock()
	items := []any{}
	listMeta := obj{"resourceVersion": fmt.Sprint(s.rv)}

	for _, o := range s.sortedLocked(ri.res.key()) {
		key := objKey(str(o, "metadata", "namespace"), str(o, "metadata", "name"))
		if (ri.ns != "" && str(o, "metadata", "namespace") != ri.ns) || (after != "" && key <= after) {
			continue
		}

		if !labels.matches(strMap(o, "metadata", "labels")) || !fieldsMatch(fields, o) {
			continue
		}

		if limit > 0 && len(items) == limit {
			// A page is full: the continue token names the last key served.
			last := items[len(items)-1].(obj) //nolint:forcetypeassert // items are objects
			listMeta["continue"] = base64.RawURLEncoding.EncodeToString([]byte(objKey(str(last, "metadata", "namespace"), str(last, "metadata", "name"))))

			break
		}

		items = append(items, s.render(ri.res, copyObj(o)))
	}

	s.mu.Unlock()

	writeJSON(w, http.StatusOK, obj{
		"kind": ri.res.kind + "List", "apiVersion": ri.res.apiVersion(),
		"metadata": listMeta, "items": items,
	})
}

func (s *Server) serveDeleteCollection(w http.ResponseWriter, r *http.Request, ri reqInfo) {
	labels, err := parseLabelSelector(r.URL.Query().Get("labelSelector"))
	if err != nil {
		writeErr(w, err)

		return
	}

	s.mu.Lock()
	items := []any{}

	for _, o := range s.sortedLocked(ri.res.key()) {
		if (ri.ns == "" || str(o, "metadata", "namespace") == ri.ns) && labels.matches(strMap(o, "metadata", "labels")) {
			if d, err := s.deleteLocked(ri.res, str(o, "metadata", "namespace"), str(o, "metadata", "name"), false); err == nil {
				items = append(items, d)
			}
		}
	}

	rv := fmt.Sprint(s.rv)
	s.mu.Unlock()

	writeJSON(w, http.StatusOK, obj{"kind": ri.res.kind + "List", "apiVersion": ri.res.apiVersion(), "metadata": obj{"resourceVersion": rv}, "items": items})
}

// readBody reads a JSON request body into an object.
func readBody(r *http.Request) (obj, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")) //nolint:errcheck // "" on error
	if ct != "" && ct != "application/json" && ct != "application/yaml" && ct != "*/*" {
		return nil, errUnsupportedMedia(ct)
	}

	b, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		return nil, errBadRequest("read request body: " + err.Error())
	}

	if ct == "application/yaml" {
		return decodeApply(b)
	}

	var o obj
	if err := decodeJSON(b, &o); err != nil || o == nil {
		return nil, errBadRequest(fmt.Sprintf("the body of the request could not be decoded as JSON: %v", err))
	}

	return o, nil
}

func (s *Server) serveWrite(w http.ResponseWriter, r *http.Request, ri reqInfo, code int, op func(obj) (obj, error)) {
	body, err := readBody(r)
	if err != nil {
		writeErr(w, err)

		return
	}

	s.mu.Lock()
	o, err := op(body)
	s.mu.Unlock()

	if err != nil {
		writeErr(w, err)

		return
	}

	writeJSON(w, code, s.render(ri.res, o))
}
