package hcloudfake

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// action is an asynchronous operation. It runs for its duration and finishes
// on the first request after that (never within the request that started it),
// then runs onSuccess or onError under the fake's lock.
type action struct {
	a         schema.Action
	duration  time.Duration
	seq       int64 // request that created it
	locks     []actionRef
	fail      bool
	onSuccess func(now time.Time)
	onError   func(now time.Time)
}

// resourceTypes maps a path's first segment to an action resource type.
var resourceTypes = map[string]string{
	"servers": "server", "networks": "network", "firewalls": "firewall", "load_balancers": "load_balancer",
	"placement_groups": "placement_group", "images": "image", "volumes": "volume", "primary_ips": "primary_ip",
	"ssh_keys": "ssh_key",
}

// actionRef is a resource an action refers to.
type actionRef = schema.ActionResourceReference

func ref(typ string, id int64) schema.ActionResourceReference {
	return schema.ActionResourceReference{ID: id, Type: typ}
}

// newAction starts an action; callers hold f.mu.
func (f *Fake) newAction(command string, now time.Time, resources ...schema.ActionResourceReference) *action {
	d := f.opts.ActionDuration
	if v, ok := f.opts.Durations[command]; ok {
		d = v
	}
	a := &action{
		a:        schema.Action{ID: f.nextID(), Status: "running", Command: command, Started: now, Resources: resources},
		duration: d,
		seq:      f.reqSeq,
		locks:    lockRefs(command, resources),
	}
	if a.a.Resources == nil {
		a.a.Resources = []schema.ActionResourceReference{}
	}
	if f.failActions[command] > 0 {
		f.failActions[command]--
		a.fail = true
	}
	f.actions[a.a.ID] = a
	return a
}

// advance finishes every running action whose time is up; callers hold f.mu.
func (f *Fake) advance(now time.Time) {
	for {
		progressed := false
		for _, id := range slices.Sorted(maps.Keys(f.actions)) {
			a := f.actions[id]
			if a.a.Status != "running" || a.seq >= f.reqSeq || now.Before(a.a.Started.Add(a.duration)) {
				continue
			}
			finished := now
			a.a.Finished = &finished
			a.a.Progress = 100
			if a.fail {
				a.a.Status = "error"
				a.a.Error = &schema.ActionError{Code: "action_failed", Message: "Action failed (" + a.a.Command + ", injected by the sandbox)"}
				if a.onError != nil {
					a.onError(now)
				}
			} else {
				a.a.Status = "success"
				if a.onSuccess != nil {
					a.onSuccess(now)
				}
			}
			progressed = true
		}
		if !progressed {
			return
		}
	}
}

// render returns the action as the API shows it, with progress growing over time.
func (a *action) render(now time.Time) schema.Action {
	out := a.a
	if out.Status == "running" && a.duration > 0 {
		out.Progress = min(99, int(now.Sub(out.Started)*100/a.duration))
	}
	out.Resources = slices.Clone(out.Resources)
	return out
}

// actionBody is {"action": ...}.
func (f *Fake) actionBody(a *action, now time.Time) map[string]any {
	return map[string]any{"action": a.render(now)}
}

// actionsBody is {"actions": [...]}.
func (f *Fake) actionsBody(now time.Time, as ...*action) map[string]any {
	out := make([]schema.Action, 0, len(as))
	for _, a := range as {
		out = append(out, a.render(now))
	}
	return map[string]any{"actions": out}
}

// routeActions serves GET /actions, /actions/{id}, /{kind}/actions,
// /{kind}/actions/{id}, /{kind}/{id}/actions and /{kind}/{id}/actions/{aid}.
func (f *Fake) routeActions(rq *request) (int, any, error, bool) {
	s := rq.segs
	var typ string
	var resID int64
	var actionSeg int
	switch {
	case s[0] == "actions":
		actionSeg = 0
	case len(s) >= 2 && s[1] == "actions" && rq.method == http.MethodGet:
		typ, actionSeg = resourceTypes[s[0]], 1
	case len(s) >= 3 && s[2] == "actions" && rq.method == http.MethodGet:
		id, err := strconv.ParseInt(s[1], 10, 64)
		if err != nil {
			return 0, nil, nil, false
		}
		typ, resID, actionSeg = resourceTypes[s[0]], id, 2
	default:
		return 0, nil, nil, false
	}
	if rq.method != http.MethodGet {
		return 0, nil, errMethod(rq), true
	}
	matches := func(a *action) bool {
		if typ == "" {
			return true
		}
		for _, r := range a.a.Resources {
			if r.Type == typ && (resID == 0 || r.ID == resID) {
				return true
			}
		}
		return false
	}
	switch len(s) - actionSeg {
	case 2:
		id, err := rq.idAt(actionSeg + 1)
		if err != nil {
			return 0, nil, err, true
		}
		a, ok := f.actions[id]
		if !ok || !matches(a) {
			return 0, nil, errNotFound("action", id), true
		}
		return http.StatusOK, f.actionBody(a, rq.now), nil, true
	case 1:
		// API description, get_actions: GET /actions requires id (listing
		// every action of a project was removed on 30 January 2025).
		if typ == "" && len(rq.query["id"]) == 0 {
			return 0, nil, errInvalid("id", "id is required: GET /actions returns the actions named by one or more id parameters"), true
		}
		ids := map[int64]bool{}
		for _, v := range rq.query["id"] {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, nil, errInvalid("id", "id must be an integer"), true
			}
			ids[id] = true
		}
		statuses := rq.query["status"]
		var items []schema.Action
		for _, a := range f.actions {
			if !matches(a) || (len(ids) > 0 && !ids[a.a.ID]) || (len(statuses) > 0 && !slices.Contains(statuses, a.a.Status)) {
				continue
			}
			items = append(items, a.render(rq.now))
		}
		out, err := listResponse(rq.query, "actions", items, accessor[schema.Action]{
			id: func(a schema.Action) int64 { return a.ID },
			field: func(a schema.Action, field string) string {
				switch field {
				case "status":
					return a.Status
				case "command":
					return a.Command
				case "progress":
					return strconv.Itoa(1000 + a.Progress)
				case "started":
					return a.Started.Format(time.RFC3339Nano)
				}
				return ""
			},
		})
		return http.StatusOK, out, err, true
	}
	return 0, nil, errNoRoute(rq), true
}
