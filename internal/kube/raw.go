package kube

import (
	"context"
	"net/http"
	"net/url"
)

// Raw GETs an API path (with query q) with the client's credentials and
// returns the body: for readers that decode only the fields they need
// (the doctor). A 404 unwraps to ErrNotFound.
func (c *Client) Raw(ctx context.Context, path string, q url.Values) ([]byte, error) {
	req := c.typed.CoreV1().RESTClient().Get().AbsPath(path)
	for k, vs := range q {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	body, err := req.Do(ctx).Raw()
	if err != nil {
		p := path
		if len(q) > 0 {
			p += "?" + q.Encode()
		}
		return nil, wrap(http.MethodGet, p, err)
	}
	return body, nil
}
