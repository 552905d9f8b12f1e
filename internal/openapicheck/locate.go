package openapicheck

import (
	"os"
	"path/filepath"
)

// HCloudDescription is where Hetzner's API description (hcloud-openapi,
// February 2026) lies, relative to the repository root: shared/data beside
// the clone.
const HCloudDescription = "../shared/data/hcloud-openapi.json.gz"

// LocateHCloud finds HCloudDescription from the working directory: it
// walks up to the folder holding go.mod. It returns the path it tried and
// whether a file is there.
func LocateHCloud() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return HCloudDescription, false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return HCloudDescription, false
		}
		dir = parent
	}
	p := filepath.Clean(filepath.Join(dir, HCloudDescription))
	_, err = os.Stat(p)
	return p, err == nil
}
