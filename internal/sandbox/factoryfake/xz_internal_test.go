package factoryfake

import (
	"bytes"
	"os/exec"
	"testing"
)

// Multi-chunk, empty and odd-sized payloads must all decode with xz.
func TestXZStoreDecodes(t *testing.T) {
	t.Parallel()
	xz, err := exec.LookPath("xz")
	if err != nil {
		t.Skip("xz not installed: cannot decode here")
	}
	big := make([]byte, 200_003)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for _, data := range [][]byte{nil, []byte("x"), big} {
		cmd := exec.Command(xz, "-d", "-c")
		cmd.Stdin = bytes.NewReader(xzStore(data))
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("xz -d failed for %d bytes: %v", len(data), err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("round trip of %d bytes gave %d bytes", len(data), len(got))
		}
	}
}
