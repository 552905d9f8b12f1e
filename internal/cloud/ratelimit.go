package cloud

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// RateLimitedError is the first 429 of a client built with
// Options.StopOnRateLimit: the project's request budget is spent.
type RateLimitedError struct {
	// Limit is the project's budget (RateLimit-Limit), 0 if not sent.
	Limit int
	// Reset is when the budget is full again (RateLimit-Reset).
	Reset time.Time
}

// Error implements error.
func (e *RateLimitedError) Error() string {
	msg := "the Hetzner API answered 429 rate_limit_exceeded: this project's request budget"
	if e.Limit > 0 {
		msg += fmt.Sprintf(" (%d an hour)", e.Limit)
	}
	msg += " is spent, so ohmytalos stopped rather than wait; it refills one request a second"
	if !e.Reset.IsZero() {
		msg += ", full again at " + e.Reset.UTC().Format("15:04:05") + " UTC"
	}
	return msg + ": run it again later, or stop what else spends this project's requests (other clusters' controllers, scripts)"
}

// stopOnRateLimit turns a 429 into a RateLimitedError instead of the
// answer hcloud-go would retry (five times, with exponential backoff:
// hcloud-go v2.52 client_handler_retry.go retryPolicy), so that a
// read-only run such as plan stops at once with a message.
type stopOnRateLimit struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (s stopOnRateLimit) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		return resp, err
	}
	resp.Body.Close()
	e := &RateLimitedError{}
	e.Limit, _ = strconv.Atoi(resp.Header.Get("RateLimit-Limit"))
	if sec, perr := strconv.ParseInt(resp.Header.Get("RateLimit-Reset"), 10, 64); perr == nil {
		e.Reset = time.Unix(sec, 0)
	}
	return nil, e
}
