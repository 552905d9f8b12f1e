package talosfake

import (
	"bytes"
	"encoding/json"
)

// snapshotMembers reads the member names from the leaf page snapshotBlob
// writes (its JSON payload, NUL-padded); nil when there is none.
func snapshotMembers(db []byte) []string {
	if len(db) < boltPageCount*boltPageSize {
		return nil
	}

	payload := bytes.TrimRight(db[3*boltPageSize+16:4*boltPageSize], "\x00")

	var body struct {
		Members []struct {
			Name string `json:"name"`
		} `json:"members"`
	}

	if json.Unmarshal(payload, &body) != nil {
		return nil
	}

	names := make([]string, 0, len(body.Members))
	for _, m := range body.Members {
		names = append(names, m.Name)
	}

	return names
}

// RestoredFrom lists the etcd members recorded in the snapshot that Talos
// cluster's etcd was last bootstrapped from (Bootstrap with RecoverEtcd),
// or nil when it never was: the data a restore carried over.
func (c *Cluster) RestoredFrom(clusterName string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()

	for _, tc := range c.clusters {
		if tc.name == clusterName && tc.restored != nil {
			return append([]string(nil), tc.restored...)
		}
	}

	return nil
}
