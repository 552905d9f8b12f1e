package etcdbackup_test

import "crypto/sha256"

func sha256sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}
