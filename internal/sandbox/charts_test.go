package sandbox

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The sandbox serves the chart repositories under ChartsURL, and Env
// exports it as the chart mirror.
func TestSandboxServesChartRepositories(t *testing.T) {
	sb := startExporting(t, ChartMirrorEnv, func(sb *Sandbox) string { return sb.ChartsURL })
	for _, c := range sb.Charts.Charts() {
		for _, p := range []string{"/index.yaml", "/" + c.File} {
			resp, err := http.Get(sb.ChartsURL + "/" + c.Repository + p)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Ohmytalos-Sandbox") != "1" {
				t.Errorf("GET %s%s: %d, sandbox header %q", c.Repository, p, resp.StatusCode, resp.Header.Get("Ohmytalos-Sandbox"))
			}
			if p == "/index.yaml" && !strings.Contains(string(body), "digest: "+c.Digest) {
				t.Errorf("%s/index.yaml does not list %s's digest %s", c.Repository, c.Name, c.Digest)
			}
		}
	}
	resp, err := http.Get(sb.ChartsURL + "/helm.cilium.io/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("directory listing: %d, want 404", resp.StatusCode)
	}
}
