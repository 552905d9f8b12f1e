//go:build linux || darwin

package kubebin

import "time"

// fileKey is a file's identity: any write, truncation, rename or copy over
// it changes it (the kernel sets the change time on each, and no system
// call sets it back).
type fileKey struct {
	valid        bool
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// settled is k if it can be remembered at time at, else no key.
func (k fileKey) settled(at time.Time) fileKey {
	if !k.valid || at.UnixNano()-k.ctime <= racyWindow.Nanoseconds() {
		return fileKey{}
	}

	return k
}
