package kubefake

import (
	"fmt"
	"strings"
)

// recordEventLocked records a core/v1 Event on o as client-go's event
// recorder does (k8s.io/client-go/tools/record event.go and
// events_cache.go): the event is named after the object and a hex
// timestamp, and a repeat of the same reason and message on the same
// object bumps the existing event's count and lastTimestamp instead of
// creating another.
func (s *Server) recordEventLocked(o obj, typ, reason, message, component string) {
	evRes := s.builtinLocked("events")
	ns := str(o, "metadata", "namespace")

	if ns == "" {
		ns = "default"
	}

	uid := str(o, "metadata", "uid")
	for _, old := range s.sortedLocked(evRes.key()) {
		if str(old, "involvedObject", "uid") == uid && str(old, "reason") == reason && str(old, "message") == message {
			ev := copyObj(old)
			n, _ := intAt(ev, "count")
			ev["count"], ev["lastTimestamp"] = num(n+1), s.timestamp()
			s.saveLocked(evRes, old, ev)

			return
		}
	}

	ev := obj{
		"apiVersion": "v1", "kind": "Event",
		"metadata": obj{
			"name": fmt.Sprintf("%s.%x", str(o, "metadata", "name"), s.now().UnixNano()), "namespace": ns,
			"uid": s.newUID(), "creationTimestamp": s.timestamp(),
		},
		"involvedObject": obj{
			"kind": str(o, "kind"), "namespace": str(o, "metadata", "namespace"), "name": str(o, "metadata", "name"),
			"uid": uid, "apiVersion": str(o, "apiVersion"), "resourceVersion": str(o, "metadata", "resourceVersion"),
		},
		"reason": reason, "message": message, "type": typ,
		"source":         obj{"component": component},
		"firstTimestamp": s.timestamp(), "lastTimestamp": s.timestamp(), "count": num(1),
		"reportingComponent": component, "reportingInstance": "",
	}

	if strings.TrimSpace(str(ev, "involvedObject", "kind")) == "" {
		return
	}

	s.storeLocked(evRes, ev, "ADDED")
}
