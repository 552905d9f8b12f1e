package chartrepo_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/chartrepo"
)

// Start packages in the background what New packages at once: the same
// paths and digests, served once ready.
func TestStartServesWhatNewPackages(t *testing.T) {
	now, err := chartrepo.New()
	if err != nil {
		t.Fatal(err)
	}
	bg := chartrepo.Start()
	if err := bg.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bg.Paths(), now.Paths()) {
		t.Fatalf("Start serves %q, New %q", bg.Paths(), now.Paths())
	}
	for i, c := range bg.Charts() {
		if c.Digest != now.Charts()[i].Digest {
			t.Errorf("%s: digest %s in the background, %s at once", c.Name, c.Digest, now.Charts()[i].Digest)
		}
	}
	rec := httptest.NewRecorder()
	bg.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, now.Paths()[0], nil))
	if rec.Code != http.StatusOK {
		t.Errorf("GET %s = %d, want 200", now.Paths()[0], rec.Code)
	}
}
