package kubebin

import (
	"os"
	"syscall"
)

func keyOf(st os.FileInfo) fileKey {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}
	}

	return fileKey{valid: true, dev: uint64(s.Dev), ino: uint64(s.Ino), size: s.Size,
		mtime: s.Mtim.Nano(), ctime: s.Ctim.Nano()}
}
