package steps

import "fmt"

// Requests an apply spends, estimated from what hcloud-go sends: a create,
// the action it starts polled until done, and the lookups and updates
// around it. Hetzner allows 3600 requests an hour per project, refilled one
// a second (docs.hetzner.cloud, "Rate Limiting"; the
// RateLimit-* headers of every answer).
const (
	requestsPerServer   = 30  // create, actions polled, network, power, volume attach
	requestsPerVolume   = 10  // create, attach, polls
	requestsPerGroup    = 2   // create, get
	requestsPerBuild    = 150 // temporary server, rescue, polls, snapshot, cleanup
	requestsPerExisting = 2   // get and compare
	requestsFixed       = 60  // network, firewall, load balancers, lookups
)

// budgetEstimate is the requests apply needs for what the census says it
// creates and compares, and builds snapshot builds.
func budgetEstimate(cen census, builds int) int {
	n := requestsFixed + builds*requestsPerBuild
	n += cen.servers.adds()*requestsPerServer + cen.volumes.adds()*requestsPerVolume + cen.groups.adds()*requestsPerGroup
	n += (cen.servers.cluster + cen.volumes.cluster + cen.groups.cluster) * requestsPerExisting
	return n
}

// budgetFindings compares the estimate with the RateLimit-Remaining of the
// last answer (the Meter reads it): fewer left than apply needs is an
// error, as hcloud-go would retry every 429 and apply would stall; less
// than twice as many is a warning, since other tools in the project (the
// cloud controller, the CSI driver, another cluster) spend the same budget.
func (d *Deps) budgetFindings(cen census, builds int) []Finding {
	if d.Meter == nil {
		return nil
	}
	left, limit, ok := d.Meter.RateLimit()
	if !ok {
		return nil
	}
	need := budgetEstimate(cen, builds)
	f := Finding{Check: CheckBudget, Field: "secrets.hcloudToken",
		Reason: fmt.Sprintf("apply needs about %d Hetzner API requests; %d of the project's %d are left this hour", need, left, limit)}
	switch {
	case left < need:
		f.Severity = SeverityError
		f.Fix = fmt.Sprintf("wait about %d minutes for the budget to refill (one request a second), or stop what else spends this project's requests", (need-left+59)/60)
	case left < 2*need:
		f.Severity = SeverityWarning
		f.Fix = "other tools on this project (cloud controller, CSI driver, other clusters) spend the same budget; apply may slow down when it runs out"
	default:
		f.Severity = SeverityNote
	}
	return []Finding{f}
}
