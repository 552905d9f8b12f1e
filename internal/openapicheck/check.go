package openapicheck

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"
)

// Exchange is one recorded request and the response to it. Path is
// relative to the API root the description's servers name (for Hetzner:
// /servers/42, not /v1/servers/42).
type Exchange struct {
	Method, Path, RawQuery string
	RequestHeader          http.Header
	RequestBody            []byte
	Status                 int
	ResponseHeader         http.Header
	ResponseBody           []byte
}

// Check returns the exchange's violations of the description, if any.
func (c *Checker) Check(ex Exchange) []Violation {
	r, params, ok := c.find(ex.Method, ex.Path)
	if !ok {
		return []Violation{{Operation: ex.Method + " " + genericPath(ex.Path), Side: SideRequest, Kind: KindUnknownOperation,
			Detail: "no operation of the description has this method and path"}}
	}
	op := opName(r.method, r.template)
	req, err := http.NewRequest(ex.Method, "http://api.invalid"+ex.Path+query(ex.RawQuery), bytes.NewReader(ex.RequestBody))
	if err != nil {
		return []Violation{{Operation: op, Side: SideRequest, Kind: KindOther, Detail: err.Error()}}
	}
	req.Header = ex.RequestHeader.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: c.routerRoute(r),
		Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: bearerAuth, SkipSettingDefaults: true}}
	var out []Violation
	ctx := context.Background()
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		out = flatten(err, op, SideRequest, out)
	}
	resp := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: ex.Status, Header: ex.ResponseHeader,
		Body:    io.NopCloser(bytes.NewReader(ex.ResponseBody)),
		Options: &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}}
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	if err := openapi3filter.ValidateResponse(ctx, resp); err != nil {
		out = flatten(err, op, fmt.Sprintf("%s %d", SideResponse, ex.Status), out)
	}
	return out
}

func query(raw string) string {
	if raw == "" {
		return ""
	}
	return "?" + raw
}

// bearerAuth stands for the description's bearer token scheme: the request
// carries "Authorization: Bearer TOKEN".
func bearerAuth(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := in.RequestValidationInput.Request.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(h, "Bearer "); !ok || tok == "" {
		return fmt.Errorf("scheme %s: no bearer token in the Authorization header", in.SecuritySchemeName)
	}
	return nil
}

// genericPath names a path no operation matches, numeric segments
// replaced by {id} so that one unknown route counts once.
func genericPath(path string) string {
	segs := split(path)
	for i, s := range segs {
		if s != "" && strings.Trim(s, "0123456789") == "" {
			segs[i] = "{id}"
		}
	}
	return "/" + strings.Join(segs, "/")
}
