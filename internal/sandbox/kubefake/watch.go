package kubefake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// event is one change, kept for watches that resume from a resourceVersion.
type event struct {
	typ, key string
	o        obj
	rv       uint64
}

// historySize is how many events a watch can resume from; older
// resourceVersions get 410 Gone, as after an etcd compaction.
const historySize = 4096

type watcher struct {
	key    string
	ns     string
	labels labelSelector
	fields []fieldTerm
	ch     chan event
	closed bool
}

func (w *watcher) stop() {
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
}

func (w *watcher) wants(e event) bool {
	if e.key != w.key {
		return false
	}

	if w.ns != "" && str(e.o, "metadata", "namespace") != w.ns {
		return false
	}

	return w.labels.matches(strMap(e.o, "metadata", "labels")) && fieldsMatch(w.fields, e.o)
}

func (s *Server) notifyLocked(r resource, typ string, o obj) {
	e := event{typ: typ, key: r.key(), o: copyObj(o), rv: s.rv}

	s.history = append(s.history, e)
	if len(s.history) > historySize {
		s.history = s.history[len(s.history)-historySize:]
	}

	for w := range s.watchers {
		if !w.wants(e) {
			continue
		}

		select {
		case w.ch <- e:
		default:
			// A watcher too slow to keep up is closed; its client re-lists.
			w.stop()
			delete(s.watchers, w)
		}
	}

	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// serveWatch streams watch events (?watch=true) as kube-apiserver does:
// from resourceVersion when given, else the current objects as ADDED first.
func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request, res resource, ns string, labels labelSelector, fields []fieldTerm) {
	q := r.URL.Query()
	wt := &watcher{key: res.key(), ns: ns, labels: labels, fields: fields, ch: make(chan event, 1024)}

	s.mu.Lock()

	var initial []event

	// sendInitialEvents (the watch-list protocol of client-go's reflector):
	// the current objects, then a BOOKMARK marking the end of them.
	sendInitial := q.Get("sendInitialEvents") == "true"
	bookmarkRV := s.rv

	rvParam := q.Get("resourceVersion")
	if rvParam == "" || rvParam == "0" || sendInitial {
		for _, o := range s.sortedLocked(res.key()) {
			e := event{typ: "ADDED", key: res.key(), o: copyObj(o)}
			if wt.wants(e) {
				initial = append(initial, e)
			}
		}
	} else {
		from, err := strconv.ParseUint(rvParam, 10, 64)
		if err != nil {
			s.mu.Unlock()
			writeErr(w, errBadRequest("invalid resource version: "+rvParam))

			return
		}

		if len(s.history) > 0 && from+1 < s.history[0].rv && from < s.rv {
			s.mu.Unlock()
			writeErr(w, &apiError{code: http.StatusGone, reason: "Expired", message: "too old resource version: " + rvParam})

			return
		}

		for _, e := range s.history {
			if e.rv > from && wt.wants(e) {
				initial = append(initial, e)
			}
		}
	}

	s.watchers[wt] = struct{}{}
	s.mu.Unlock()

	defer func() {
		s.mu.Lock()
		wt.stop()
		delete(s.watchers, wt)
		s.mu.Unlock()
	}()

	timeout := 30 * time.Minute
	if ts, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && ts > 0 {
		timeout = time.Duration(ts) * time.Second
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()

	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)

	flusher, _ := w.(http.Flusher) //nolint:errcheck // flushing is best effort
	enc := json.NewEncoder(w)

	send := func(e event) bool {
		if err := enc.Encode(obj{"type": e.typ, "object": e.o}); err != nil {
			return false
		}

		if flusher != nil {
			flusher.Flush()
		}

		return true
	}

	for _, e := range initial {
		if !send(e) {
			return
		}
	}

	if sendInitial {
		bm := obj{"kind": res.kind, "apiVersion": res.apiVersion(), "metadata": obj{
			"resourceVersion": strconv.FormatUint(bookmarkRV, 10),
			"annotations":     obj{"k8s.io/initial-events-end": "true"},
		}}
		if enc.Encode(obj{"type": "BOOKMARK", "object": bm}) != nil {
			return
		}
	}

	if flusher != nil {
		flusher.Flush()
	}

	for {
		select {
		case e, ok := <-wt.ch:
			if !ok || !send(e) {
				return
			}
		case <-timer.C:
			return
		case <-r.Context().Done():
			return
		}
	}
}
