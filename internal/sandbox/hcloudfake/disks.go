package hcloudfake

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxDiskCopy bounds what a snapshot keeps of a fake disk: the sandbox's
// disks are small images whose header says what they hold.
const maxDiskCopy = 4 << 20

// snapshotDisk reads what a server's disk holds for create_image; callers
// hold f.mu. Without Options.DiskPath, or without a disk file, the disk is
// empty.
func (f *Fake) snapshotDisk(serverID int64) ([]byte, error) {
	if f.opts.DiskPath == nil {
		return nil, nil
	}
	file, err := os.Open(f.opts.DiskPath(serverID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the disk of server %d: %w", serverID, err)
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, maxDiskCopy))
	if err != nil {
		return nil, fmt.Errorf("read the disk of server %d: %w", serverID, err)
	}
	return data, nil
}

// installDisk gives a new server the disk of the image it is created from:
// a snapshot's recorded content, or an empty disk for any other image (the
// sandbox models no system image's content); callers hold f.mu.
func (f *Fake) installDisk(serverID, imageID int64) error {
	if f.opts.DiskPath == nil {
		return nil
	}
	path := f.opts.DiskPath(serverID)
	data, ok := f.imageDisks[imageID]
	if !ok || len(data) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("prepare the disk of server %d: %w", serverID, err)
		}
		return nil
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write the disk of server %d from image %d: %w", serverID, imageID, err)
	}
	return nil
}
