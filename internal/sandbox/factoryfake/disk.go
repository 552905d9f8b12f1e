package factoryfake

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strings"
)

// diskMagic opens every fake disk image DiskImage makes.
const diskMagic = "ohmytalos sandbox talos disk image\n"

// DiskHeader is what a fake Talos disk image says about itself: the
// schematic it was built from, the Talos version and the architecture.
type DiskHeader struct {
	Schematic, Version, Arch string
}

// ParseDiskHeader reads the header DiskImage writes at the start of a disk.
// ok is false for anything else: an empty disk, zeros, another system.
func ParseDiskHeader(b []byte) (h DiskHeader, ok bool) {
	rest, found := bytes.CutPrefix(b, []byte(diskMagic))
	if !found {
		return DiskHeader{}, false
	}
	sc := bufio.NewScanner(bytes.NewReader(rest))
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), "=")
		if !found {
			break
		}
		switch k {
		case "schematic":
			h.Schematic = v
		case "version":
			h.Version = v
		case "arch":
			h.Arch = v
		}
	}
	return h, idPattern.MatchString(h.Schematic) && strings.HasPrefix(h.Version, "v") && (h.Arch == "amd64" || h.Arch == "arm64")
}

// ReadDiskHeader reads the header of a fake server disk file; a missing
// file is an empty disk.
func ReadDiskHeader(path string) (DiskHeader, bool) {
	f, err := os.Open(path)
	if err != nil {
		return DiskHeader{}, false
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, _ := io.ReadFull(f, buf)
	return ParseDiskHeader(buf[:n])
}
