package factoryfake

import "testing"

// Vectors published by the Image Factory's own tests
// (siderolabs/image-factory pkg/schematic/schematic_test.go, TestID).
func TestSchematicIDVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		doc  schematicDoc
		want string
	}{
		{"empty", schematicDoc{}, "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"},
		{"config1", schematicDoc{Customization: customization{ExtraKernelArgs: []string{"noapic", "nolapic"}}},
			"9cba8e32753f91a16c1837ab8abf356af021706ef284aef07380780177d9a06c"},
		{"meta", schematicDoc{Customization: customization{Meta: []metaValue{{Key: 0x0a, Value: "foo"}}}},
			"d308a2a5ee2277bed5fbaa104fcbc8d59122abfa737df987a95b4ca763459a7f"},
		{"secureboot", schematicDoc{Customization: customization{SecureBoot: secureBoot{IncludeWellKnownCertificates: true}}},
			"fa8e05f142a851d3ee568eb0a8e5841eaf6b0ebc8df9a63df16ac5ed2c04f3e6"},
		{"4k sector disk image", schematicDoc{Customization: customization{DiskImage: diskImage{SectorSize: 4096}}},
			"92833e9ddd9bb9e11b2464fa5525429f01866306d52ebd882ee08d7918f6d1ea"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, id, err := tc.doc.canonical()
			if err != nil || id != tc.want {
				t.Fatalf("ID = %s, %v; want %s", id, err, tc.want)
			}
		})
	}
}

// Vectors published by the Image Factory's own tests
// (siderolabs/image-factory pkg/schematic/schematic_test.go, TestUnmarshalID).
func TestSchematicParseIDVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"no customization 1", `{}`, "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"},
		{"no customization 2", `customization: {}`, "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"},
		{"no customization 3", `customization: {"extraKernelArgs": []}`, "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"},
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
		{"bootloader none is the zero value", `{"customization":{"bootloader":"none"}}`,
			"376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc, err := parseSchematic([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if _, id, err := doc.canonical(); err != nil || id != tc.want {
				t.Fatalf("ID = %s, %v; want %s", id, err, tc.want)
			}
		})
	}
}

func TestSchematicRefusals(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"customization": {"extraKernelArgz": ["x"]}}`,
		`{"owner": "alice"}`,
		`{"customization": {"bootloader": "lilo"}}`,
		`{"customization": {"meta": [{"key": 300, "value": "x"}]}}`,
	} {
		if _, err := parseSchematic([]byte(in)); err == nil {
			t.Errorf("parseSchematic(%s) accepted it", in)
		}
	}
	doc, err := parseSchematic([]byte(`{"customization": {"bootloader": "SD-Boot"}}`))
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := doc.canonical()
	if err != nil || string(data) != "customization:\n    bootloader: sd-boot\n" {
		t.Fatalf("canonical = %q, %v", data, err)
	}
}
