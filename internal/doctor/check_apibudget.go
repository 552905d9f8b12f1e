package doctor

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// APIBudget is what the Hetzner API tells about the project's request
// budget: the RateLimit-* headers of a response, and the actions of the
// last hour (write operations; reads leave no trace).
type APIBudget struct {
	// Remaining and Limit are RateLimit-Remaining and RateLimit-Limit.
	Remaining, Limit int
	// Reset is RateLimit-Reset: when the budget is full again.
	Reset time.Time
	// Actions are the last hour's actions on servers and load balancers.
	Actions []APIAction
}

// APIAction is one recent Hetzner action.
type APIAction struct {
	// Kind is the resource kind, e.g. "server"; Command e.g. "start_server".
	Kind, Command string
	// Ours is true when the resource belongs to this cluster.
	Ours bool
	// Started is when the action started.
	Started time.Time
}

// BudgetSource reads the API budget; a CloudSource that implements it
// enables the api-budget check.
type BudgetSource interface {
	// APIBudget reads the rate-limit headers and the recent actions.
	APIBudget(ctx context.Context) (*APIBudget, error)
}

// BudgetWarnFraction is the share of the hourly limit under which
// api-budget warns: an apply, the cloud controller and the CSI driver
// together need a few hundred requests.
const BudgetWarnFraction = 0.10

// checkAPIBudget reports the project's Hetzner requests left this hour,
// and what the API tells about who spends them. The limit is per project
// (Hetzner API docs, "Rate Limiting": 3600 requests per hour per project,
// one more each second): every token of the project, every cluster's cloud
// controller and CSI driver, draws from it. The API attributes no request
// to a token or client; the actions it lists are write operations only.
func checkAPIBudget(ctx context.Context, env *Env) Result {
	if env.Cloud == nil {
		return skip(noCloud)
	}
	b, r, ok := fetch(ctx, env.Cloud, "this Hetzner source cannot read the rate limit", BudgetSource.APIBudget, "the Hetzner API's rate limit")
	if !ok {
		return r
	}
	if b.Limit <= 0 {
		return skip("the Hetzner API sent no RateLimit-Limit header")
	}
	now := env.now()
	evidence := []string{fmt.Sprintf("%d of %d requests left this hour (RateLimit-Remaining / RateLimit-Limit); full again at %s (in %s)",
		b.Remaining, b.Limit, b.Reset.UTC().Format(time.RFC3339), b.Reset.Sub(now).Round(time.Second))}
	evidence = append(evidence, actionLines(b.Actions)...)
	evidence = append(evidence, "the Hetzner API does not say which token or client made a request: the budget is the project's, shared by every token, cluster and controller in it; actions show writes only, reads (most of a controller's traffic) leave no trace")
	threshold := int(float64(b.Limit) * BudgetWarnFraction)
	switch {
	case b.Remaining <= 0:
		return Result{Status: StatusFail, Evidence: evidence,
			Explanation: "the project's request budget is spent: every Hetzner API call (apply, the cloud controller, the CSI driver) answers 429 rate_limit_exceeded until it refills",
			Fix:         budgetFix(b)}
	case b.Remaining < threshold:
		return Result{Status: StatusWarn, Evidence: evidence,
			Explanation: fmt.Sprintf("fewer than %d%% of the hourly requests are left: an apply or a busy controller may run into 429 rate_limit_exceeded", int(BudgetWarnFraction*100)),
			Fix:         budgetFix(b)}
	}
	return pass(evidence...)
}

func budgetFix(b *APIBudget) string {
	fix := fmt.Sprintf("wait until %s before a large apply", b.Reset.UTC().Format(time.RFC3339))
	for _, a := range b.Actions {
		if !a.Ours {
			return fix + "; other resources of the project are busy (see the actions): move other clusters to their own project, each project has its own budget"
		}
	}
	return fix + "; check the cloud controller's and CSI driver's logs for retry loops, and move other clusters to their own project"
}

// actionLines summarises the actions by owner, kind and command.
func actionLines(actions []APIAction) []string {
	if len(actions) == 0 {
		return []string{"no server or load balancer action in the last hour"}
	}
	counts := map[string]int{}
	for _, a := range actions {
		owner := "other resources of the project"
		if a.Ours {
			owner = "this cluster"
		}
		counts[owner+": "+a.Kind+" "+a.Command]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []string{fmt.Sprintf("%d action(s) in the last hour:", len(actions))}
	for _, k := range keys {
		out = append(out, fmt.Sprintf("  %s × %d", k, counts[k]))
	}
	return out
}
