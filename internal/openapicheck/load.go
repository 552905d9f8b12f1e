package openapicheck

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Checker checks exchanges against one loaded description.
type Checker struct {
	doc    *openapi3.T
	routes []route
}

// LoadHCloudFile loads Hetzner's description with HCloudAmendments.
func LoadHCloudFile(path string) (*Checker, error) {
	return LoadFile(path, HCloudAmendments...)
}

// LoadFile loads a description from a JSON file, gzip-compressed when its
// name ends in .gz, and applies the amendments.
func LoadFile(path string, amendments ...Amendment) (*Checker, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open the API description %s: %w", path, err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("decompress the API description %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read the API description %s: %w", path, err)
	}
	c, err := Load(data, amendments...)
	if err != nil {
		return nil, fmt.Errorf("the API description %s: %w", path, err)
	}
	return c, nil
}

// Load loads a description from its JSON and applies the amendments; an
// amendment that finds nothing to change is an error (the description
// moved on: drop the amendment).
func Load(data []byte, amendments ...Amendment) (*Checker, error) {
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("decode the OpenAPI document: %w", err)
	}
	if v, _ := raw["openapi"].(string); !strings.HasPrefix(v, "3.") {
		return nil, fmt.Errorf("openapi version %q: only OpenAPI 3 documents are supported", v)
	}
	normalizeRanges(raw)
	for _, a := range amendments {
		if a.apply(raw) == 0 {
			return nil, fmt.Errorf("amendment %q changes nothing: the description already says otherwise, drop it", a.Name)
		}
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("encode the amended OpenAPI document: %w", err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	return &Checker{doc: doc, routes: routesOf(doc)}, nil
}

// Version is the description's OpenAPI version ("3.0.3", "3.1.0", ...).
func (c *Checker) Version() string { return c.doc.OpenAPI }

// Operations counts the operations the description documents.
func (c *Checker) Operations() int { return len(c.routes) }

// Operation names the operation of a method and path ("GET /servers/{id}"),
// or "" when the description has none.
func (c *Checker) Operation(method, path string) string {
	if r, _, ok := c.find(method, path); ok {
		return opName(r.method, r.template)
	}
	return ""
}

// normalizeRanges spells response status ranges as OpenAPI 3 does ("4XX"):
// hcloud-openapi writes them in lower case ("4xx"), which kin-openapi
// would not match, leaving every error response undocumented.
func normalizeRanges(doc map[string]any) {
	paths, _ := doc["paths"].(map[string]any)
	for _, item := range paths {
		ops, _ := item.(map[string]any)
		for _, op := range ops {
			o, _ := op.(map[string]any)
			resps, _ := o["responses"].(map[string]any)
			for k, v := range resps {
				if len(k) == 3 && strings.HasSuffix(k, "xx") {
					delete(resps, k)
					resps[strings.ToUpper(k)] = v
				}
			}
		}
	}
}
