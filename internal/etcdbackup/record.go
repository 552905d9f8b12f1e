package etcdbackup

import (
	"time"

	"github.com/ohmytalos/ohmytalos/internal/state"
)

// recordKey is the state data key of the last on-demand snapshot.
const recordKey = "etcd-snapshot"

// Record describes the last snapshot `ohmytalos etcd snapshot` took. It
// holds no secret: where the file went, when, from which node, its size and
// the public keys it is encrypted to.
type Record struct {
	Taken      time.Time `json:"taken"`
	File       string    `json:"file"`
	Endpoint   string    `json:"endpoint"`
	Size       int64     `json:"size"`
	Recipients []string  `json:"recipients"`
}

// Save stores r as the last snapshot in the cluster's state.
func Save(st *state.Store, r Record) error {
	return st.PutData(recordKey, r)
}

// Last returns the last snapshot recorded in the state; ok is false when
// none was ever taken.
func Last(st *state.Store) (Record, bool, error) {
	var r Record

	ok, err := st.GetData(recordKey, &r)

	return r, ok, err
}
