package imaging

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// actionAPI serves GET /actions?id=... from a script: each action runs for
// a number of polls, then succeeds or fails. It records the IDs of every
// request.
type actionAPI struct {
	mu       sync.Mutex
	running  map[int64]int  // polls left before the action ends
	fail     map[int64]bool // ends in error instead of success
	fail500  int            // answer the next n requests with 500
	requests [][]int64
}

func (a *actionAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.Method != http.MethodGet || r.URL.Path != "/actions" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	var ids []int64
	for _, v := range r.URL.Query()["id"] {
		id, _ := strconv.ParseInt(v, 10, 64)
		ids = append(ids, id)
	}
	a.requests = append(a.requests, ids)
	w.Header().Set("Content-Type", "application/json")
	if a.fail500 > 0 {
		a.fail500--
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"code":"server_error","message":"injected"}}`))
		return
	}
	out := schema.ActionListResponse{Actions: []schema.Action{}}
	for _, id := range ids {
		left, ok := a.running[id]
		if !ok {
			continue
		}
		act := schema.Action{ID: id, Command: "test_" + strconv.FormatInt(id, 10), Status: "running", Progress: 50,
			Started: time.Now(), Resources: []schema.ActionResourceReference{}}
		if left > 0 {
			a.running[id] = left - 1
		} else {
			act.Status, act.Progress = "success", 100
			if a.fail[id] {
				act.Status = "error"
				act.Error = &schema.ActionError{Code: "action_failed", Message: "scripted failure"}
			}
		}
		out.Actions = append(out.Actions, act)
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (a *actionAPI) log() [][]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.requests)
}

func newActionAPI(t *testing.T, running map[int64]int) (*actionAPI, *hcloud.Client) {
	t.Helper()
	api := &actionAPI{running: running, fail: map[int64]bool{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return api, hcloud.NewClient(hcloud.WithEndpoint(srv.URL), hcloud.WithToken("test-token"),
		hcloud.WithRetryOpts(hcloud.RetryOpts{BackoffFunc: hcloud.ConstantBackoff(time.Millisecond), MaxRetries: 1}))
}

func runningAction(id int64) *hcloud.Action {
	return &hcloud.Action{ID: id, Status: hcloud.ActionStatusRunning}
}

func TestWatcherBatchesConcurrentWaits(t *testing.T) {
	api, c := newActionAPI(t, map[int64]int{1: 2, 2: 2, 3: 2})
	// The first poll waits long enough for all three waits to register.
	w := newActionWatcher(c, func(n int) time.Duration {
		if n == 0 {
			return 300 * time.Millisecond
		}
		return 20 * time.Millisecond
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	seen := make([][]*hcloud.Action, 4)
	errs := make([]error, 4)
	for id := int64(1); id <= 3; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[id] = w.wait(ctx, func(a *hcloud.Action) error {
				seen[id] = append(seen[id], a)
				return nil
			}, runningAction(id))
		}()
	}
	wg.Wait()
	for id := int64(1); id <= 3; id++ {
		if errs[id] != nil {
			t.Fatalf("wait for action %d: %v", id, errs[id])
		}
		// Progress per action, as today: two running updates, then success.
		var statuses []string
		for _, a := range seen[id] {
			if a.ID != id {
				t.Errorf("wait for action %d got an update of action %d", id, a.ID)
			}
			statuses = append(statuses, string(a.Status))
		}
		if want := []string{"running", "running", "success"}; !slices.Equal(statuses, want) {
			t.Errorf("action %d updates %v, want %v", id, statuses, want)
		}
	}
	reqs := api.log()
	if len(reqs) != 3 {
		t.Fatalf("%d GET /actions for three concurrent waits of three polls each, want 3 shared: %v", len(reqs), reqs)
	}
	for _, ids := range reqs {
		if !slices.Equal(ids, []int64{1, 2, 3}) {
			t.Errorf("a poll asked for %v, want all three actions in one request", ids)
		}
	}
	assertStopped(t, w)
}

func TestWatcherKeepsEachActionsSchedule(t *testing.T) {
	api, c := newActionAPI(t, map[int64]int{1: 1 << 30, 2: 0})
	// After its first poll an action is polled again only an hour later.
	w := newActionWatcher(c, func(n int) time.Duration {
		if n == 0 {
			return 10 * time.Millisecond
		}
		return time.Hour
	})
	ctxA, cancelA := context.WithCancel(t.Context())
	defer cancelA()
	doneA := make(chan error, 1)
	go func() { doneA <- w.wait(ctxA, func(*hcloud.Action) error { return nil }, runningAction(1)) }()
	deadline := time.Now().Add(5 * time.Second)
	for len(api.log()) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("action 1 was never polled")
		}
		time.Sleep(time.Millisecond)
	}

	// A new action is due soon even though action 1 is not: it is polled
	// at once, and action 1 rides along in the same request.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var got []hcloud.ActionStatus
	if err := w.wait(ctx, func(a *hcloud.Action) error { got = append(got, a.Status); return nil }, runningAction(2)); err != nil {
		t.Fatalf("wait for action 2: %v", err)
	}
	if !slices.Equal(got, []hcloud.ActionStatus{hcloud.ActionStatusSuccess}) {
		t.Errorf("action 2 updates %v", got)
	}
	if reqs := api.log(); len(reqs) != 2 || !slices.Equal(reqs[1], []int64{1, 2}) {
		t.Errorf("requests %v, want [[1] [1 2]]", reqs)
	}

	cancelA()
	err := <-doneA
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "remaining running actions: [1]") {
		t.Errorf("cancelled wait returned %v", err)
	}
	assertStopped(t, w)
}

func TestWatcherErrors(t *testing.T) {
	fast := func(int) time.Duration { return 5 * time.Millisecond }
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	t.Run("action error", func(t *testing.T) {
		api, c := newActionAPI(t, map[int64]int{7: 1, 8: 5})
		api.fail[7] = true
		w := newActionWatcher(c, fast)
		err := w.wait(ctx, func(a *hcloud.Action) error {
			if a.Status == hcloud.ActionStatusError {
				return a.Error()
			}
			return nil
		}, runningAction(7), runningAction(8))
		var ae hcloud.ActionError
		if !errors.As(err, &ae) || ae.Code != "action_failed" {
			t.Fatalf("err = %v, want the action's error", err)
		}
		assertStopped(t, w)
	})
	t.Run("finished actions are handled without a poll", func(t *testing.T) {
		api, c := newActionAPI(t, map[int64]int{})
		w := newActionWatcher(c, fast)
		var n int
		err := w.wait(ctx, func(*hcloud.Action) error { n++; return nil },
			&hcloud.Action{ID: 3, Status: hcloud.ActionStatusSuccess}, nil)
		if err != nil || n != 1 || len(api.log()) != 0 {
			t.Fatalf("err %v, %d updates, requests %v", err, n, api.log())
		}
	})
	t.Run("unknown action", func(t *testing.T) {
		_, c := newActionAPI(t, map[int64]int{1: 3})
		w := newActionWatcher(c, fast)
		err := w.wait(ctx, func(*hcloud.Action) error { return nil }, runningAction(1), runningAction(99))
		if err == nil || err.Error() != "actions not found: [99]" {
			t.Fatalf("err = %v", err)
		}
		assertStopped(t, w)
	})
	t.Run("poll fails every wait in it", func(t *testing.T) {
		api, c := newActionAPI(t, map[int64]int{1: 3, 2: 3})
		api.fail500 = 1
		w := newActionWatcher(c, func(n int) time.Duration {
			if n == 0 {
				return 200 * time.Millisecond
			}
			return 5 * time.Millisecond
		})
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for id := int64(1); id <= 2; id++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[id] = w.wait(ctx, func(*hcloud.Action) error { return nil }, runningAction(id))
			}()
		}
		wg.Wait()
		for id := 1; id <= 2; id++ {
			if !hcloud.IsError(errs[id], hcloud.ErrorCodeServerError) {
				t.Errorf("wait %d: err = %v, want the poll's server_error", id, errs[id])
			}
		}
		assertStopped(t, w)
	})
}

// assertStopped checks that no poll loop is left once every wait returned.
func assertStopped(t *testing.T, w *actionWatcher) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil || len(w.waits) != 0 {
		t.Errorf("watcher still running with %d waits", len(w.waits))
	}
}
