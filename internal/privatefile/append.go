package privatefile

import (
	"fmt"
	"os"
)

// OpenAppend opens path for appending (a log file), creating it with mode
// 0600. A file that already exists with a wider mode is narrowed to 0600
// before anything is written to it; when that fails (another owner), it
// is refused, so a log line that quotes a secret by mistake never lands
// in a world-readable file.
func OpenAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, Mode)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file: name a file for the log", path)
	}
	if fi.Mode().Perm()&^Mode != 0 {
		if err := f.Chmod(Mode); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s has mode %04o and cannot be narrowed to 0600 (%w): chmod 600 it or name another file",
				path, fi.Mode().Perm(), err)
		}
	}
	return f, nil
}
