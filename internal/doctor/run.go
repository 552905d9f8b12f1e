package doctor

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// DefaultTimeout bounds a check whose Timeout is zero.
const DefaultTimeout = 30 * time.Second

// timeoutGrace is how long Run waits, after a check's deadline, for the
// check to return its last error before reporting the timeout without it.
const timeoutGrace = 250 * time.Millisecond

// Run runs the checks named by ids (all of them when ids is empty)
// concurrently, each under its own timeout, and returns their results in
// registry order. report, when not nil, is called with each result as soon as
// it finishes (from one goroutine at a time). A check that overruns its timeout
// ends in StatusError with the reason; an unknown id yields a StatusError
// result naming the known ones.
func Run(ctx context.Context, env *Env, ids []string, report func(Result)) []Result {
	return runChecks(ctx, env, Checks(), ids, report)
}

func runChecks(ctx context.Context, env *Env, registry []Check, ids []string, report func(Result)) []Result {
	if env == nil {
		env = &Env{}
	}
	selected, unknown := selectChecks(registry, ids)
	results := make([]Result, len(selected), len(selected)+len(unknown))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	emit := func(i int, r Result) {
		mu.Lock()
		defer mu.Unlock()
		results[i] = r
		if report != nil {
			report(r)
		}
	}
	for i, c := range selected {
		wg.Add(1)
		go func() {
			defer wg.Done()
			emit(i, runOne(ctx, env, c))
		}()
	}
	wg.Wait()
	for _, id := range unknown {
		r := Result{
			ID:          id,
			Title:       "unknown check",
			Status:      StatusError,
			Explanation: fmt.Sprintf("there is no check with id %q", id),
			Fix:         "use one of: " + joinIDs(registry),
		}
		results = append(results, r)
		if report != nil {
			report(r)
		}
	}
	return results
}

func selectChecks(registry []Check, ids []string) (selected []Check, unknown []string) {
	if len(ids) == 0 {
		return registry, nil
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for _, c := range registry {
		if want[c.ID] {
			selected = append(selected, c)
			delete(want, c.ID)
		}
	}
	for _, id := range ids {
		if want[id] {
			unknown = append(unknown, id)
			delete(want, id)
		}
	}
	return selected, unknown
}

func joinIDs(registry []Check) string {
	s := ""
	for i, c := range registry {
		if i > 0 {
			s += ", "
		}
		s += c.ID
	}
	return s
}

// runOne runs one check under its timeout. The check runs in its own
// goroutine so that a check ignoring its context still cannot hold up the
// report past the deadline.
func runOne(ctx context.Context, env *Env, c Check) Result {
	if reason, ok := env.Skip[c.ID]; ok {
		return Result{ID: c.ID, Title: c.Title, Status: StatusSkip, Explanation: reason}
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	done := make(chan Result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- Result{Status: StatusError,
					Explanation: fmt.Sprintf("the check crashed: %v", p),
					Evidence:    []string{string(debug.Stack())},
					Fix:         "this is a bug in ohmytalos; please report it with the evidence"}
			}
		}()
		done <- c.Run(cctx, env)
	}()
	var r Result
	select {
	case r = <-done:
		if cctx.Err() != nil && !conclusive(r.Status) {
			r = timeoutResult(ctx, cctx, timeout, r)
		}
	case <-cctx.Done():
		// A check that honours its context returns right away with its
		// last error: give it a moment so the report can include it.
		grace := time.NewTimer(timeoutGrace)
		defer grace.Stop()
		select {
		case partial := <-done:
			r = partial
			if !conclusive(partial.Status) {
				r = timeoutResult(ctx, cctx, timeout, partial)
			}
		case <-grace.C:
			r = timeoutResult(ctx, cctx, timeout, Result{})
		}
	}
	r.ID, r.Title = c.ID, c.Title
	r.Duration = time.Since(start)
	return r
}

// conclusive reports whether a status is a verdict rather than a failure to run.
func conclusive(s Status) bool {
	return s == StatusPass || s == StatusFail || s == StatusWarn || s == StatusSkip
}

func timeoutResult(parent, cctx context.Context, timeout time.Duration, partial Result) Result {
	r := Result{Status: StatusError, Evidence: partial.Evidence}
	switch {
	case parent.Err() != nil:
		r.Explanation = fmt.Sprintf("the check was cancelled: %v", parent.Err())
		r.Fix = "run the doctor again and let it finish"
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		r.Explanation = fmt.Sprintf("the check did not finish within %s: a source it reads (Talos API, Hetzner API, Kubernetes API or DNS) is slow or unreachable", timeout)
		r.Fix = "check network access to the cluster (Tailscale up? talosconfig/kubeconfig endpoints right?) and run the doctor again"
	default:
		r.Explanation = fmt.Sprintf("the check stopped: %v", cctx.Err())
	}
	if partial.Explanation != "" {
		r.Evidence = append(r.Evidence, "last error: "+partial.Explanation)
	}
	return r
}

// ExitCode maps results to the doctor's exit status: 1 when any check failed
// or could not run, 0 otherwise (warnings and skips do not fail). Exit code 2,
// "the doctor itself could not run", is decided by the caller.
func ExitCode(results []Result) int {
	for _, r := range results {
		if r.Status == StatusFail || r.Status == StatusError {
			return 1
		}
	}
	return 0
}
