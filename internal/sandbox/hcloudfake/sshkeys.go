package hcloudfake

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
	"golang.org/x/crypto/ssh"
)

// sshKeyKind is the collection behind /ssh_keys, filtered by ?fingerprint=.
func (f *Fake) sshKeyKind() *collection[*schema.SSHKey, schema.SSHKey] {
	c := &collection[*schema.SSHKey, schema.SSHKey]{plural: "ssh_keys", single: "ssh_key", noun: "ssh key",
		items: f.sshKeys, render: withOwnLabels(sshKeyFields), create: f.createSSHKey,
		fields: sshKeyFields,
		keep:   equalTo("fingerprint", func(k *schema.SSHKey) string { return k.Fingerprint }),
	}
	c.update = patchBy(c, func(r *schema.SSHKeyUpdateRequest) (*string, *map[string]string) { return optName(r.Name), r.Labels })
	return c
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
	if f.sshKeyKind().taken(req.Name) {
		return 0, nil, errUniqueness("name")
	}
	for _, k := range f.sshKeys {
		if k.Fingerprint == fp {
			return 0, nil, errUniqueness("public_key")
		}
	}
	if err := checkNewLabels(req.Labels); err != nil {
		return 0, nil, err
	}
	k := &schema.SSHKey{ID: f.nextID(), Name: req.Name, Fingerprint: fp, PublicKey: strings.TrimSpace(req.PublicKey),
		Labels: labelsOrEmpty(req.Labels), Created: rq.created()}
	f.sshKeys[k.ID] = k
	return http.StatusCreated, map[string]any{"ssh_key": f.sshKeyKind().render(k)}, nil
}

// sshKeyFields returns the ID, name and labels of an SSH key for its collection.
func sshKeyFields(x *schema.SSHKey) (int64, *string, *map[string]string) {
	return x.ID, &x.Name, &x.Labels
}
