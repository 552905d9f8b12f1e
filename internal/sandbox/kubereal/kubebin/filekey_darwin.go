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

	return fileKey{valid: true, dev: uint64(s.Dev), ino: s.Ino, size: s.Size,
		mtime: s.Mtimespec.Nano(), ctime: s.Ctimespec.Nano()}
}
