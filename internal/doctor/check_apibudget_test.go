package doctor

import (
	"context"
	"testing"
	"time"
)

func TestAPIBudget(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	env := func(b *APIBudget) *Env {
		return &Env{Cloud: &fakeCloud{budget: b}, Now: func() time.Time { return now }}
	}
	ctx := context.Background()
	expect(t, checkAPIBudget(ctx, env(&APIBudget{Remaining: 3400, Limit: 3600, Reset: now.Add(200 * time.Second)})), StatusPass,
		"3400 of 3600 requests left this hour", "in 3m20s", "no server or load balancer action", "does not say which token or client")
	b := &APIBudget{Remaining: 120, Limit: 3600, Reset: now.Add(58 * time.Minute), Actions: []APIAction{
		{Kind: "server", Command: "start_server"}, {Kind: "server", Command: "start_server"}, {Kind: "server", Command: "create_server", Ours: true}}}
	expect(t, checkAPIBudget(ctx, env(b)), StatusWarn, "120 of 3600", "other resources of the project: server start_server × 2",
		"this cluster: server create_server × 1", "fewer than 10%", "own project")
	b.Remaining = 0
	expect(t, checkAPIBudget(ctx, env(b)), StatusFail, "429 rate_limit_exceeded", "wait until 2026-12-01T10:58:00Z")
	expect(t, checkAPIBudget(ctx, &Env{}), StatusSkip, "no Hetzner token")
}
