package talosapi

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
)

// hashTailWriter passes bytes through while hashing all but the last
// sha256.Size bytes, which it keeps aside: an etcd snapshot ends with the
// SHA-256 of the database before it (etcdutl verifies it on restore).
type hashTailWriter struct {
	w    io.Writer
	h    hash.Hash
	tail []byte
}

func newHashTailWriter(w io.Writer) *hashTailWriter {
	return &hashTailWriter{w: w, h: sha256.New(), tail: make([]byte, 0, 2*sha256.Size)}
}

func (t *hashTailWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil {
		return n, fmt.Errorf("write snapshot: %w", err)
	}

	if n != len(p) {
		return n, io.ErrShortWrite
	}

	if len(p) >= sha256.Size {
		t.h.Write(t.tail)                 //nolint:errcheck // hash writes never fail
		t.h.Write(p[:len(p)-sha256.Size]) //nolint:errcheck // hash writes never fail
		t.tail = append(t.tail[:0], p[len(p)-sha256.Size:]...)

		return n, nil
	}

	t.tail = append(t.tail, p...)
	if extra := len(t.tail) - sha256.Size; extra > 0 {
		t.h.Write(t.tail[:extra]) //nolint:errcheck // hash writes never fail
		t.tail = append(t.tail[:0], t.tail[extra:]...)
	}

	return n, nil
}

func (t *hashTailWriter) verify() error {
	if len(t.tail) < sha256.Size {
		return errors.New("snapshot is shorter than its checksum")
	}

	if string(t.h.Sum(nil)) != string(t.tail) {
		return errors.New("snapshot checksum does not match its content")
	}

	return nil
}
