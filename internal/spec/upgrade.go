package spec

import "fmt"

// DefaultWorkerBatch is how many workers an upgrade takes down at once
// when upgrade.workerBatch is not set: one, as Omni and
// terraform-hcloud-kubernetes do.
const DefaultWorkerBatch = 1

// Upgrade paces in-place upgrades of Talos and Kubernetes. Control planes
// always go one at a time; workers go in batches.
type Upgrade struct {
	// WorkerBatch is how many workers are upgraded together (default 1).
	WorkerBatch int `yaml:"workerBatch,omitempty"`
}

// Batch is the worker batch size, with the default applied.
func (u Upgrade) Batch() int {
	if u.WorkerBatch <= 0 {
		return DefaultWorkerBatch
	}
	return u.WorkerBatch
}

func (u Upgrade) validate() Problems {
	if u.WorkerBatch < 0 {
		return Problems{{Field: "upgrade.workerBatch", Reason: fmt.Sprintf("%d is negative", u.WorkerBatch),
			Fix: "set how many workers may be upgraded at once (1 or more), or remove the key for 1"}}
	}
	return nil
}
