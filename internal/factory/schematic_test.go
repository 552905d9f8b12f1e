package factory_test

import (
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/factory"
)

// wantID fails the test unless s's ID is want.
func wantID(t *testing.T, s factory.Schematic, want string) {
	t.Helper()
	got, err := s.ID()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("ID() = %s, want %s", got, want)
	}
}

// Vectors published by the Image Factory's own tests
// (siderolabs/image-factory pkg/schematic/schematic_test.go, TestID).
func TestIDVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		s    factory.Schematic
		want string
	}{
		{"empty", factory.Schematic{}, factory.EmptySchematicID},
		{"config1", factory.Schematic{Customization: factory.Customization{
			ExtraKernelArgs: []string{"noapic", "nolapic"},
		}}, "9cba8e32753f91a16c1837ab8abf356af021706ef284aef07380780177d9a06c"},
		{"meta", factory.Schematic{Customization: factory.Customization{
			Meta: []factory.MetaValue{{Key: 0x0a, Value: "foo"}},
		}}, "d308a2a5ee2277bed5fbaa104fcbc8d59122abfa737df987a95b4ca763459a7f"},
		{"secureboot", factory.Schematic{Customization: factory.Customization{
			SecureBoot: factory.SecureBoot{IncludeWellKnownCertificates: true},
		}}, "fa8e05f142a851d3ee568eb0a8e5841eaf6b0ebc8df9a63df16ac5ed2c04f3e6"},
		{"new kernel args", factory.New(nil, []string{"noapic", "nolapic"}),
			"9cba8e32753f91a16c1837ab8abf356af021706ef284aef07380780177d9a06c"},
		{"new empty", factory.New(nil, []string{}), factory.EmptySchematicID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantID(t, tc.s, tc.want)
		})
	}
}

// Vectors published by the Image Factory's own tests
// (siderolabs/image-factory pkg/schematic/schematic_test.go, TestUnmarshalID).
func TestParseIDVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"no customization 1", `{}`, factory.EmptySchematicID},
		{"no customization 2", `customization: {}`, factory.EmptySchematicID},
		{"no customization 3", `customization: {"extraKernelArgs": []}`, factory.EmptySchematicID},
		{"extra args 1", `{"customization": {"extraKernelArgs": ["noapic", "nolapic"]}}`,
			"9cba8e32753f91a16c1837ab8abf356af021706ef284aef07380780177d9a06c"},
		{"extra args 2", `{"customization": {"extraKernelArgs": ["noapic", "nolapic"], "systemExtensions": {}}}`,
			"9cba8e32753f91a16c1837ab8abf356af021706ef284aef07380780177d9a06c"},
		{"meta", `{"customization": {"meta": [{"key": 10, "value": "foo"}], "extraKernelArgs": [], "systemExtensions": {}}}`,
			"d308a2a5ee2277bed5fbaa104fcbc8d59122abfa737df987a95b4ca763459a7f"},
		{"overlay", `{"overlay": {"name": "rpi_generic", "image": "siderolabs/sbc-raspberrypi"}}`,
			"ee21ef4a5ef808a9b7484cc0dda0f25075021691c8c09a276591eedb638ea1f9"},
		{"overlay with empty customization", `{"overlay": {"name": "rpi_generic", "image": "siderolabs/sbc-raspberrypi"},"customization":{}}`,
			"ee21ef4a5ef808a9b7484cc0dda0f25075021691c8c09a276591eedb638ea1f9"},
		{"secureboot customization", `{"customization":{"secureboot": {"includeWellKnownCertificates": true}}}`,
			"fa8e05f142a851d3ee568eb0a8e5841eaf6b0ebc8df9a63df16ac5ed2c04f3e6"},
		{"yaml kernel args", "customization:\n  extraKernelArgs:\n    - noapic\n    - nolapic\n",
			"9cba8e32753f91a16c1837ab8abf356af021706ef284aef07380780177d9a06c"},
		{"bootloader none is the zero value", `{"customization":{"bootloader":"none"}}`, factory.EmptySchematicID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := factory.Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			wantID(t, s, tc.want)
		})
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, wantErr string
	}{
		{"unknown top-level key", `{"customisation": {}}`, "unknown key"},
		{"unknown nested key", "customization:\n  systemExtension:\n    officialExtensions: [a]\n", "systemExtension"},
		{"empty document", ``, "empty"},
		{"bad bootloader", `{"customization":{"bootloader":"lilo"}}`, "lilo"},
		{"wrong type", `{"customization":{"extraKernelArgs":"noapic"}}`, "parse schematic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := factory.Parse([]byte(tc.in))
			if err == nil {
				t.Fatal("Parse accepted an invalid schematic")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %q does not mention %q", err, tc.wantErr)
			}
		})
	}
}

func TestNewKeepsOrderAndRoundTrips(t *testing.T) {
	t.Parallel()
	exts := []string{"siderolabs/util-linux-tools", "siderolabs/iscsi-tools"}
	s := factory.New(exts, nil)
	exts[0] = "mutated" // New must not alias the caller's slice
	data, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := "customization:\n    systemExtensions:\n        officialExtensions:\n            - siderolabs/util-linux-tools\n            - siderolabs/iscsi-tools\n"
	if string(data) != want {
		t.Fatalf("Marshal() =\n%s\nwant\n%s", data, want)
	}
	back, err := factory.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	id1, _ := s.ID()
	id2, _ := back.ID()
	if id1 != id2 {
		t.Fatalf("round trip changed the ID: %s != %s", id1, id2)
	}
	swapped, _ := factory.New([]string{"siderolabs/iscsi-tools", "siderolabs/util-linux-tools"}, nil).ID()
	if swapped == id1 {
		t.Fatal("extension order must change the ID, as it does on the factory")
	}
}

func TestURLs(t *testing.T) {
	t.Parallel()
	id := factory.EmptySchematicID
	if got, want := factory.DiskImageURL("", id, "v1.13.9", "arm64"),
		"https://factory.talos.dev/image/"+id+"/v1.13.9/hcloud-arm64.raw.xz"; got != want {
		t.Errorf("DiskImageURL = %s, want %s", got, want)
	}
	if got, want := factory.DiskImageURL("http://127.0.0.1:8080/", id, "v1.13.9", "amd64"),
		"http://127.0.0.1:8080/image/"+id+"/v1.13.9/hcloud-amd64.raw.xz"; got != want {
		t.Errorf("DiskImageURL = %s, want %s", got, want)
	}
	for _, host := range []string{"", "factory.talos.dev", "https://factory.talos.dev/"} {
		if got, want := factory.InstallerImage(host, id, "v1.13.9"),
			"factory.talos.dev/hcloud-installer/"+id+":v1.13.9"; got != want {
			t.Errorf("InstallerImage(%q) = %s, want %s", host, got, want)
		}
	}
	if got, want := factory.InstallerImage("http://127.0.0.1:8080", id, "v1.13.9"),
		"127.0.0.1:8080/hcloud-installer/"+id+":v1.13.9"; got != want {
		t.Errorf("InstallerImage = %s, want %s", got, want)
	}
}
