package steps

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/clients"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// Secrets looks up the credentials the spec references and checks the
// Hetzner token before anything is created.
type Secrets struct{ d *Deps }

// Name implements engine.Step.
func (s *Secrets) Name() engine.StepName { return StepSecrets }

// Title implements engine.Step.
func (s *Secrets) Title() string { return "Secrets: look up and check credentials" }

// actionLookup is the secrets step's plan action: it reads, never creates.
const actionLookup engine.Action = "lookup"

// Plan implements engine.Step.
func (s *Secrets) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	p := engine.Plan{}
	p.Items = append(p.Items, engine.PlanItem{Action: actionLookup, Kind: "secret", Name: "hcloudToken",
		Detail: clients.ToRef(env.Spec.Secrets.HCloudToken).String()})
	if r := env.Spec.Secrets.TailscaleAuthKey; r != nil {
		p.Items = append(p.Items, engine.PlanItem{Action: actionLookup, Kind: "secret", Name: "tailscaleAuthKey", Detail: clients.ToRef(*r).String()})
	}
	p.Notes = append(p.Notes, "secret values stay in memory; only references are written")
	return p, nil
}

// Apply implements engine.Step.
func (s *Secrets) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	ref := env.Spec.Secrets.HCloudToken
	v, err := s.d.Secret(ctx, "secrets.hcloudToken", ref)
	if err != nil {
		return err
	}
	emit(engine.Event{Kind: engine.KindLog, Resource: "secret/hcloudToken",
		Message: fmt.Sprintf("found the Hetzner token in %s (%s)", clients.ToRef(ref), mask(v.Reveal()))})
	if r := env.Spec.Secrets.TailscaleAuthKey; r != nil {
		tv, err := s.d.Secret(ctx, "secrets.tailscaleAuthKey", *r)
		if err != nil {
			return err
		}
		emit(engine.Event{Kind: engine.KindLog, Resource: "secret/tailscaleAuthKey",
			Message: fmt.Sprintf("found the Tailscale auth key in %s (%s)", clients.ToRef(*r), mask(tv.Reveal()))})
	}
	c, err := s.d.HCloud(ctx, env.Spec)
	if err != nil {
		return err
	}
	if err := CheckToken(ctx, c, emit); err != nil {
		// The operator fixes the secret and retries in this process.
		s.d.Forget(ref)
		return err
	}
	return nil
}

// CheckToken proves the token works with a read call, then detects a
// read-only token before anything is created.
//
// Hetzner has no endpoint that states a token's permission. A read-only
// token gets 403 "forbidden" on every mutating request before the
// resource is looked up, so renaming SSH key 0 (an ID that never exists)
// tells the two apart without changing anything: read-write tokens get
// not_found.
func CheckToken(ctx context.Context, c *hcloud.Client, emit engine.Emit) error {
	_, resp, err := c.Location.List(ctx, hcloud.LocationListOpts{ListOpts: hcloud.ListOpts{PerPage: 1}})
	switch {
	case hcloud.IsError(err, hcloud.ErrorCodeUnauthorized):
		return errors.New("the Hetzner API rejected the token (unauthorized): create an API token in the Hetzner Cloud Console (project > Security > API tokens) with Read & Write permission and store it where secrets.hcloudToken points")
	case err != nil:
		return fmt.Errorf("check the Hetzner token: %w", err)
	}
	msg := "the token is valid"
	var rl *engine.RateLimit
	if resp != nil {
		rem, rerr := strconv.Atoi(resp.Header.Get("RateLimit-Remaining"))
		lim, lerr := strconv.Atoi(resp.Header.Get("RateLimit-Limit"))
		if rerr == nil && lerr == nil {
			rl = &engine.RateLimit{Remaining: rem, Limit: lim}
			msg += fmt.Sprintf("; API requests left this hour: %d of %d", rem, lim)
		}
	}
	_, _, err = c.SSHKey.Update(ctx, &hcloud.SSHKey{ID: 0}, hcloud.SSHKeyUpdateOpts{Name: "ohmytalos-permission-probe"})
	if hcloud.IsError(err, hcloud.ErrorCodeForbidden) {
		return errors.New("the Hetzner token is read-only: ohmytalos must create servers and networks; create a token with Read & Write permission (Console > Security > API tokens) and update the secret")
	}
	emit(engine.Event{Kind: engine.KindLog, Resource: "token", Message: msg + "; it can write", RateLimit: rl})
	return nil
}

// mask describes a secret by its length only: not a single character of
// it reaches the screen or a log.
func mask(v string) string {
	return fmt.Sprintf("%d characters, hidden", len(v))
}
