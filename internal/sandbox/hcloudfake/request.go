package hcloudfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// request is one parsed API request.
type request struct {
	method string
	segs   []string // path segments, e.g. ["servers", "12", "actions", "poweron"]
	query  url.Values
	body   []byte
	now    time.Time
}

// decode unmarshals the JSON body into v, answering json_error as Hetzner does.
func (rq *request) decode(v any) error {
	if len(rq.body) == 0 {
		return &apiError{status: http.StatusBadRequest, code: "json_error", message: "request body is empty; a JSON object is expected"}
	}
	if err := json.Unmarshal(rq.body, v); err != nil {
		return &apiError{status: http.StatusBadRequest, code: "json_error", message: "invalid JSON in request body: " + err.Error()}
	}
	return nil
}

// created is the creation time the API shows for a resource made by this
// request: the request time in UTC, to the second.
func (rq *request) created() time.Time { return rq.now.UTC().Truncate(time.Second) }

// idAt parses the numeric ID at path segment i.
func (rq *request) idAt(i int) (int64, error) {
	id, err := strconv.ParseInt(rq.segs[i], 10, 64)
	if err != nil || id <= 0 {
		return 0, &apiError{status: http.StatusNotFound, code: "not_found", message: fmt.Sprintf("%q is not a valid ID", rq.segs[i])}
	}
	return id, nil
}
