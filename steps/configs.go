package steps

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/imaging"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos"
)

// Configs creates the cluster's Talos secrets once, then renders and
// validates every node group's machine config before any server exists.
// It keeps what it rendered: the servers step of the same run reuses it.
type Configs struct {
	d *Deps

	mu    sync.Mutex
	cache map[string]map[string]talos.Rendered // spec hash/state dir -> configs

	// recMu serialises updates of the applied-patches record.
	recMu sync.Mutex
}

// Name implements engine.Step.
func (s *Configs) Name() engine.StepName { return StepConfigs }

// Title implements engine.Step.
func (s *Configs) Title() string { return "Configs: Talos secrets and machine configs" }

// Secret blob names in the state.
const (
	secretBundle      = "talos-secrets"
	secretDisk        = "disk-passphrase"
	secretTalosconfig = "talosconfig"
	secretKubeconfig  = "kubeconfig"
	dataConfigs       = "configs"
)

// configsData records each group's config fingerprint (never the config).
type configsData struct {
	Hashes map[string]string `json:"hashes"`
	Sizes  map[string]int    `json:"sizes"`
}

// Plan implements engine.Step.
func (s *Configs) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	p := engine.Plan{}
	a := engine.ActionCreate
	if env.State.HasSecret(secretBundle) {
		a = engine.ActionReuse
	}
	p.Items = append(p.Items, engine.PlanItem{Action: a, Kind: "talos-secrets", Name: env.Spec.Name, Detail: "encrypted at rest with age"})
	if a == engine.ActionCreate && !s.d.Offline {
		// Apply will refuse when the cluster's servers exist: say so now.
		if err := s.d.refuseNewRoot(ctx, env, "Talos secrets bundle", secretBundle); errors.Is(err, errNewRootRefused) {
			p.Notes = append(p.Notes, "apply will fail: "+err.Error())
		}
	}
	gs, err := groups(env.Spec)
	if err != nil {
		return engine.Plan{}, err
	}
	for _, g := range gs {
		detail := g.Role
		if len(g.Patches) > 0 {
			detail += fmt.Sprintf(", %d patch(es)", len(g.Patches))
		}
		p.Items = append(p.Items, engine.PlanItem{Action: engine.ActionRender, Kind: "machine-config", Name: g.Pool, Detail: detail})
	}
	if err := s.planPatches(ctx, env, &p); err != nil {
		return engine.Plan{}, err
	}
	return p, nil
}

// Apply implements engine.Step.
func (s *Configs) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	if _, err := s.ensureSecrets(ctx, env, emit); err != nil {
		return err
	}
	rendered, err := s.renderAll(ctx, env)
	if err != nil {
		return err
	}
	data := configsData{Hashes: map[string]string{}, Sizes: map[string]int{}}
	for pool, r := range rendered {
		sum := sha256.Sum256(r.Config)
		data.Hashes[pool] = hex.EncodeToString(sum[:8])
		data.Sizes[pool] = r.Size
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionCreate, Resource: "config/" + pool,
			Message: fmt.Sprintf("%s config validated, %.1f KB of the 32 KB user_data limit", r.Role, float64(r.Size)/1024)})
		for _, w := range append(slices.Clone(r.Warnings), r.PatchWarnings...) {
			emit(engine.Event{Kind: engine.KindWarning, Resource: "config/" + pool, Message: w})
		}
	}
	return env.State.PutData(dataConfigs, data)
}

// ensureSecrets creates the secrets bundle and the disk passphrase once.
// It never creates them while the cluster has servers (they were made with
// the old ones) nor over a file on disk (state.CreateSecret refuses).
func (s *Configs) ensureSecrets(ctx context.Context, env *engine.Env, emit engine.Emit) (bool, error) {
	created := false
	// The cluster's ID is made with its bundle (or before, by the first
	// step that creates a resource) and kept beside it in secrets/.
	if _, err := applyClusterID(env); err != nil {
		return false, err
	}
	if !env.State.HasSecret(secretBundle) {
		if err := s.d.refuseNewRoot(ctx, env, "Talos secrets bundle", secretBundle); err != nil {
			return false, err
		}
		b, err := talos.NewBundle(env.Spec.Talos.Version)
		if err != nil {
			return false, err
		}
		if err := env.State.CreateSecret(secretBundle, b); err != nil {
			return false, err
		}
		created = true
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionCreate, Resource: "talos-secrets/" + env.Spec.Name,
			Message: "stored encrypted in " + env.State.SecretPath(secretBundle)})
	}
	if !env.State.HasSecret(secretDisk) {
		if err := s.d.refuseNewRoot(ctx, env, "disk passphrase", secretDisk); err != nil {
			return false, err
		}
		buf := make([]byte, 32)
		if _, err := rand.Read(buf); err != nil {
			return false, err
		}
		if err := env.State.CreateSecret(secretDisk, []byte(base64.RawStdEncoding.EncodeToString(buf))); err != nil {
			return false, err
		}
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionCreate, Resource: "disk-passphrase/" + env.Spec.Name,
			Message: "static LUKS key for EPHEMERAL and volumes, locked to STATE"})
	}
	return created, nil
}

// groups lists the node groups: the control plane, then each pool, each
// with its patches (talos.patches, then the group's).
func groups(sp *spec.Spec) ([]talos.NodeGroup, error) {
	out := []talos.NodeGroup{{Role: talos.RoleControlPlane, Pool: spec.RoleControlPlane}}
	for _, p := range sp.Pools {
		out = append(out, talos.NodeGroup{Role: talos.RoleWorker, Pool: p.Name, Labels: p.Labels, Taints: p.Taints,
			VolumeSizeGB: p.VolumeSize, Storage: p.Storage, LoadBalancer: p.InLoadBalancer()})
	}
	for i := range out {
		ps, err := sp.PatchesFor(out[i].Pool)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out[i].Patches = append(out[i].Patches, talos.Patch{Name: p.Name, Data: p.Data})
		}
	}
	return out, nil
}

// bundle decrypts the cluster's Talos secrets.
func bundle(env *engine.Env) (*secrets.Bundle, error) {
	b, err := env.State.Secret(secretBundle)
	if err != nil {
		return nil, err
	}
	return talos.LoadBundle(b)
}

// clusterInput adapts the spec (and looked-up secrets) to talos.Cluster.
func (d *Deps) clusterInput(ctx context.Context, env *engine.Env) (talos.Cluster, error) {
	sp := env.Spec
	tok, err := d.Secret(ctx, "secrets.hcloudToken", sp.Secrets.HCloudToken)
	if err != nil {
		return talos.Cluster{}, err
	}
	disk, err := env.State.Secret(secretDisk)
	if err != nil {
		return talos.Cluster{}, err
	}
	in := clusterSecrets{token: strings.TrimSpace(tok.Reveal()), disk: string(disk)}
	if r := sp.Secrets.TailscaleAuthKey; r != nil {
		ts, err := d.Secret(ctx, "secrets.tailscaleAuthKey", *r)
		if err != nil {
			return talos.Cluster{}, err
		}
		in.tailscale = strings.TrimSpace(ts.Reveal())
	}
	return d.buildClusterInput(ctx, env, in, false)
}

// clusterSecrets are the secret values a machine config carries.
type clusterSecrets struct {
	token, disk, tailscale string
}

// buildClusterInput is the cluster input from the spec, the state and
// the secret values. lbOptional renders, before the API load balancer
// exists, with a stand-in address (plan time).
func (d *Deps) buildClusterInput(ctx context.Context, env *engine.Env, in clusterSecrets, lbOptional bool) (talos.Cluster, error) {
	sp := env.Spec
	c := talos.Cluster{
		Name: sp.Name, TalosVersion: sp.Talos.Version, KubernetesVersion: sp.Kubernetes.Version,
		PodCIDR: sp.Network.Pods, ServiceCIDR: sp.Network.Services, NodeCIDR: sp.Network.CIDR,
		VIP: sp.ControlPlane.VIP, VIPLink: vipLink(sp), PublicIPv4: sp.PublicNetwork.IPv4 || sp.PublicNetwork.IPv6,
		HCloudToken: in.token, DiskPassphrase: in.disk,
		ScheduleOnControlPlanes: !hasWorkers(sp),
	}
	if sp.Addons.Backup.On() {
		c.TalosAPIAccessNamespaces = []string{spec.BackupNamespace}
	}
	if sp.Secrets.TailscaleAuthKey != nil {
		c.TailscaleAuthKey = in.tailscale
		c.TailscaleRoutes = []string{sp.Network.CIDR}
	}
	if sp.Endpoint.Mode == spec.EndpointLoadBalancer {
		c.VIP = ""
		ip := planLBAddress
		if key, _, _ := apiLB(sp, ""); !lbOptional || hasResource(env, key) {
			got, err := d.apiLBAddress(ctx, env)
			if err != nil {
				return talos.Cluster{}, err
			}
			ip = got
		}
		c.Endpoint = ip
		c.CertSANs = []string{ip}
	} else {
		c.Endpoint = sp.ControlPlane.VIP
		// Talos already puts every node address in its own API server
		// certificate (siderolabs/talos internal/app/machined/pkg/controllers/
		// secrets/kubernetes_cert_sans.go: AppendIPs(nodeAddresses)); the
		// recorded public addresses are listed explicitly too.
		c.CertSANs = controlPlaneSANs(env)
	}
	return c, nil
}

// apiLBAddress is the public IPv4 of the API load balancer.
func (d *Deps) apiLBAddress(ctx context.Context, env *engine.Env) (string, error) {
	key, _, _ := apiLB(env.Spec, "")
	r, ok := env.State.Resource(key)
	if !ok {
		return "", fmt.Errorf("the API load balancer does not exist yet: run the pools step first")
	}
	c, err := d.HCloud(ctx, env.Spec)
	if err != nil {
		return "", err
	}
	lb, _, err := c.LoadBalancer.GetByID(ctx, r.ID)
	if err != nil || lb == nil {
		return "", fmt.Errorf("get API load balancer %d: %v", r.ID, err)
	}
	return lb.PublicNet.IPv4.IP.String(), nil
}

// renderAll renders every group's config; it is deterministic for a given
// secrets bundle and spec, so servers regenerate exactly what was checked.
func (s *Configs) renderAll(ctx context.Context, env *engine.Env) (map[string]talos.Rendered, error) {
	// Rendering and validating is CPU work (about a second); the servers
	// step reuses what the configs step of the same process rendered.
	key := env.Spec.Hash() + "/" + env.State.Dir()
	s.mu.Lock()
	cached, ok := s.cache[key]
	s.mu.Unlock()
	if ok {
		return cached, nil
	}
	out, err := s.d.render(ctx, env)
	if err == nil {
		s.mu.Lock()
		if s.cache == nil {
			s.cache = map[string]map[string]talos.Rendered{}
		}
		s.cache[key] = out
		s.mu.Unlock()
	}
	return out, err
}

// render renders every group's config from the stored secrets bundle.
func (d *Deps) render(ctx context.Context, env *engine.Env) (map[string]talos.Rendered, error) {
	b, err := bundle(env)
	if err != nil {
		return nil, err
	}
	c, err := d.clusterInput(ctx, env)
	if err != nil {
		return nil, err
	}
	return d.renderWith(b, c, env)
}

// renderWith renders every group's config from a bundle and cluster input.
func (d *Deps) renderWith(b *secrets.Bundle, c talos.Cluster, env *engine.Env) (map[string]talos.Rendered, error) {
	_, ids, err := imageNeeds(env.Spec)
	if err != nil {
		return nil, err
	}
	gs, err := groups(env.Spec)
	if err != nil {
		return nil, err
	}
	out := map[string]talos.Rendered{}
	for _, g := range gs {
		name, _ := env.Spec.SchematicFor(g.Pool)
		g.Installer = d.installer(ids[name], env.Spec.Talos.Version)
		r, err := talos.Render(b, c, g)
		if err != nil {
			field := "controlPlane"
			if g.Role == talos.RoleWorker {
				field = "pools[" + g.Pool + "]"
			}
			return nil, fmt.Errorf("%s machine config: %w", field, err)
		}
		out[g.Pool] = r
	}
	return out, nil
}

// snapshotFor returns the snapshot ID built for a node's image.
func snapshotFor(env *engine.Env, n spec.Node) (*hcloud.Image, error) {
	var data imagesData
	if _, err := env.State.GetData(dataImages, &data); err != nil {
		return nil, err
	}
	ids, err := schematicIDs(env.Spec)
	if err != nil {
		return nil, err
	}
	name, _ := env.Spec.SchematicFor(n.Pool)
	k := imaging.Key{SchematicID: ids[name], TalosVersion: env.Spec.Talos.Version, Arch: spec.Arch(n.ServerType)}
	id := data.Snapshots[imageKey(k)]
	if id == 0 {
		return nil, fmt.Errorf("no snapshot for %s (%s, %s) yet: run the images step first (ohmytalos apply --only images)", n.Name, k.Arch, k.TalosVersion)
	}
	return &hcloud.Image{ID: id}, nil
}

// RenderConfigs creates the cluster's Talos secrets if needed and renders
// every node group's validated machine config (for review or GitOps).
func RenderConfigs(ctx context.Context, d *Deps, env *engine.Env) (map[string]talos.Rendered, error) {
	s := &Configs{d: d}
	if _, err := s.ensureSecrets(ctx, env, func(engine.Event) {}); err != nil {
		return nil, err
	}
	return s.renderAll(ctx, env)
}

// hasWorkers reports whether any worker pool has a server: without one,
// workloads must be allowed on the control planes.
func hasWorkers(sp *spec.Spec) bool {
	for _, p := range sp.Pools {
		if p.Count > 0 {
			return true
		}
	}
	return false
}
