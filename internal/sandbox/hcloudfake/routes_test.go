package hcloudfake_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// TestCollectionRouting pins how the shared collection handlers answer
// paths and methods a kind does not serve: 405 where the kind has actions
// (the path exists, the method does not), 404 where it has none.
func TestCollectionRouting(t *testing.T) {
	e, c := newPlainEnv(t)
	res, _, err := c.Volume.Create(ctx(t), hcloud.VolumeCreateOpts{Name: "v", Size: 10, Location: &hcloud.Location{Name: "fsn1"}})
	if err != nil {
		t.Fatal(err)
	}
	vid := strconv.FormatInt(res.Volume.ID, 10)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodDelete, "/volumes", http.StatusMethodNotAllowed},
		{http.MethodPost, "/images", http.StatusMethodNotAllowed},
		{http.MethodPost, "/primary_ips", http.StatusNotFound},
		{http.MethodPut, "/ssh_keys", http.StatusNotFound},
		{http.MethodGet, "/placement_groups/1/x", http.StatusNotFound},
		{http.MethodPatch, "/volumes/" + vid, http.StatusMethodNotAllowed},
		{http.MethodGet, "/volumes/" + vid + "/x", http.StatusNotFound},
		{http.MethodGet, "/volumes/999999", http.StatusNotFound},
		{http.MethodGet, "/volumes/abc", http.StatusNotFound},
		{http.MethodGet, "/volumes/" + vid, http.StatusOK},
		{http.MethodGet, "/nothing", http.StatusNotFound},
	} {
		req, err := http.NewRequestWithContext(ctx(t), tc.method, e.url+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}
}
