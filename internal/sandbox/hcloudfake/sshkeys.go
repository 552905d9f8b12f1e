package hcloudfake

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
	"golang.org/x/crypto/ssh"
)

func (f *Fake) serveSSHKeys(rq *request) (int, any, error) {
	switch {
	case len(rq.segs) == 1 && rq.method == http.MethodGet:
		fp := rq.query.Get("fingerprint")
		items := make([]schema.SSHKey, 0, len(f.sshKeys))
		for _, k := range f.sshKeys {
			if fp == "" || k.Fingerprint == fp {
				items = append(items, renderSSHKey(k))
			}
		}
		out, err := listResponse(rq.query, "ssh_keys", items, accessor[schema.SSHKey]{
			id:     func(x schema.SSHKey) int64 { return x.ID },
			name:   func(x schema.SSHKey) string { return x.Name },
			labels: func(x schema.SSHKey) map[string]string { return x.Labels },
		})
		return http.StatusOK, out, err
	case len(rq.segs) == 1 && rq.method == http.MethodPost:
		return f.createSSHKey(rq)
	case len(rq.segs) != 2:
		return 0, nil, errNoRoute(rq)
	}
	id, err := rq.idAt(1)
	if err != nil {
		return 0, nil, err
	}
	k, ok := f.sshKeys[id]
	if !ok {
		return 0, nil, errNotFound("ssh key", id)
	}
	switch rq.method {
	case http.MethodGet:
		return http.StatusOK, map[string]any{"ssh_key": renderSSHKey(k)}, nil
	case http.MethodPut:
		var req schema.SSHKeyUpdateRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if req.Name != "" && req.Name != k.Name {
			if f.sshKeyBy(func(x *schema.SSHKey) bool { return x.Name == req.Name }) != nil {
				return 0, nil, errUniqueness("name")
			}
			k.Name = req.Name
		}
		if req.Labels != nil {
			if err := checkLabels(*req.Labels); err != nil {
				return 0, nil, err
			}
			k.Labels = maps.Clone(*req.Labels)
		}
		return http.StatusOK, map[string]any{"ssh_key": renderSSHKey(k)}, nil
	case http.MethodDelete:
		delete(f.sshKeys, id)
		return http.StatusNoContent, nil, nil
	}
	return 0, nil, errMethod(rq)
}

func renderSSHKey(k *schema.SSHKey) schema.SSHKey {
	out := *k
	out.Labels = maps.Clone(k.Labels)
	return out
}

func (f *Fake) sshKeyBy(match func(*schema.SSHKey) bool) *schema.SSHKey {
	for _, k := range f.sshKeys {
		if match(k) {
			return k
		}
	}
	return nil
}

// createSSHKey stores a public key with Hetzner's fingerprint: the legacy MD5
// form (aa:bb:...) of the key's wire encoding.
func (f *Fake) createSSHKey(rq *request) (int, any, error) {
	var req schema.SSHKeyCreateRequest
	if err := rq.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Name == "" {
		return 0, nil, errInvalid("name", "name is required")
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(req.PublicKey))
	if err != nil {
		return 0, nil, errInvalid("public_key", fmt.Sprintf("public key is not in OpenSSH authorized_keys format: %v", err))
	}
	fp := ssh.FingerprintLegacyMD5(pub)
	if f.sshKeyBy(func(x *schema.SSHKey) bool { return x.Name == req.Name }) != nil {
		return 0, nil, errUniqueness("name")
	}
	if f.sshKeyBy(func(x *schema.SSHKey) bool { return x.Fingerprint == fp }) != nil {
		return 0, nil, errUniqueness("public_key")
	}
	if req.Labels != nil {
		if err := checkLabels(*req.Labels); err != nil {
			return 0, nil, err
		}
	}
	k := &schema.SSHKey{ID: f.nextID(), Name: req.Name, Fingerprint: fp, PublicKey: strings.TrimSpace(req.PublicKey),
		Labels: labelsOrEmpty(req.Labels), Created: rq.now.UTC().Truncate(time.Second)}
	f.sshKeys[k.ID] = k
	return http.StatusCreated, map[string]any{"ssh_key": renderSSHKey(k)}, nil
}
