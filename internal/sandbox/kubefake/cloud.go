package kubefake

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// Images the simulated cloud integrations recognise, with any registry
// prefix and tag.
const (
	ccmImage = "hetznercloud/hcloud-cloud-controller-manager"
	csiImage = "hetznercloud/hcloud-csi-driver"
)

// cloudState caches what the simulated Hetzner integrations learnt from
// the Hetzner API, so that the loop does not call it on every pass.
type cloudState struct {
	// checks: "token\x00network" -> result of the CCM's start-up check.
	checks map[string]cloudCheck
	// routes: "network/cidr/gateway" the route controller ensured.
	routes map[string]bool
	// lbTargets: Service UID -> the target servers last synced.
	lbTargets map[string]string
	// retry: node name -> earliest next lookup after a failed one.
	retry map[string]time.Time
	// volumes: claim UID -> the Hetzner volume the CSI driver provisioned.
	volumes map[string]int64
}

type cloudCheck struct {
	err       string // "" when the token (and network) work
	networkID int64
	at        time.Time
}

// gate is what keeps a pod's containers from running or being ready.
type gate struct {
	configErr string // CreateContainerConfigError message
	crash     string // CrashLoopBackOff message
	starting  bool   // started, not ready yet
}

func imageIs(img, repo string) bool {
	if i := strings.LastIndex(img, "@"); i >= 0 {
		img = img[:i]
	}

	if i := strings.LastIndex(img, ":"); i > strings.LastIndex(img, "/") {
		img = img[:i]
	}

	return img == repo || strings.HasSuffix(img, "/"+repo)
}

func podImages(spec map[string]any) []string {
	var out []string
	for _, c := range listAt(spec, "containers") {
		out = append(out, str(c, "image"))
	}

	return out
}

func usesImage(spec map[string]any, repo string) bool {
	return slices.ContainsFunc(podImages(spec), func(i string) bool { return imageIs(i, repo) })
}

// cloudEnv is the environment a CCM or CSI container gets: env values and
// secretKeyRefs, envFrom secretRefs; err is the kubelet's
// CreateContainerConfigError message.
type cloudEnv struct {
	vars map[string]string
	args []string
	err  string
}

func (s *Server) containerEnvLocked(ns string, spec map[string]any, repo string) cloudEnv {
	ce := cloudEnv{vars: map[string]string{}}

	for _, c := range listAt(spec, "containers") {
		if !imageIs(str(c, "image"), repo) {
			continue
		}

		for _, a := range append(listAt(c, "command"), listAt(c, "args")...) {
			if as, ok := a.(string); ok {
				ce.args = append(ce.args, as)
			}
		}

		for _, ef := range listAt(c, "envFrom") {
			if name := str(ef, "secretRef", "name"); name != "" {
				sec, ok := s.getLocked(s.builtinLocked("secrets"), ns, name)
				if !ok {
					ce.err = fmt.Sprintf("secret %q not found", name)

					continue
				}

				for k := range mapAt(sec, "data") {
					ce.vars[k] = secretValue(sec, k)
				}
			}
		}

		for _, e := range listAt(c, "env") {
			name := str(e, "name")
			if ref := mapAt(e, "valueFrom", "secretKeyRef"); ref != nil {
				v, msg := s.secretKeyLocked(ns, ref)
				if msg != "" {
					ce.err = msg
				}

				ce.vars[name] = v

				continue
			}

			ce.vars[name] = str(e, "value")
		}
	}

	return ce
}

func (s *Server) secretKeyLocked(ns string, ref map[string]any) (string, string) {
	sec, ok := s.getLocked(s.builtinLocked("secrets"), ns, str(ref, "name"))

	switch {
	case !ok && boolAt(ref, "optional"):
		return "", ""
	case !ok:
		return "", fmt.Sprintf("secret %q not found", str(ref, "name"))
	}

	if _, has := mapAt(sec, "data")[str(ref, "key")]; !has {
		if boolAt(ref, "optional") {
			return "", ""
		}

		return "", fmt.Sprintf("couldn't find key %s in Secret %s/%s", str(ref, "key"), ns, str(ref, "name"))
	}

	return secretValue(sec, str(ref, "key")), ""
}

func secretValue(sec obj, key string) string {
	b, err := base64.StdEncoding.DecodeString(str(sec, "data", key))
	if err != nil {
		return ""
	}

	return string(b)
}

// podGateLocked decides what keeps a pod from running: a missing Secret
// key (any pod), or for the hcloud CCM and CSI driver a token the Hetzner
// API refuses.
func (s *Server) podGateLocked(p obj) gate {
	ns, spec := str(p, "metadata", "namespace"), mapAt(p, "spec")

	for _, c := range listAt(spec, "containers") {
		for _, e := range listAt(c, "env") {
			if ref := mapAt(e, "valueFrom", "secretKeyRef"); ref != nil {
				if _, msg := s.secretKeyLocked(ns, ref); msg != "" {
					return gate{configErr: msg}
				}
			}
		}
	}

	for _, repo := range []string{ccmImage, csiImage} {
		if !usesImage(spec, repo) {
			continue
		}

		env := s.containerEnvLocked(ns, spec, repo)
		if env.err != "" {
			return gate{configErr: env.err}
		}

		if !needsToken(repo, env) {
			continue
		}

		chk, ok := s.cloud.checks[checkKey(env)]

		switch {
		case !ok:
			return gate{starting: true}
		case chk.err != "":
			return gate{crash: chk.err}
		}
	}

	return gate{}
}

// needsToken: the CCM always talks to the Hetzner API; the CSI driver's
// image also runs as the node plugin, which has no token and never calls
// the API, so only a container given HCLOUD_TOKEN (the controller) does.
func needsToken(repo string, env cloudEnv) bool {
	_, has := env.vars["HCLOUD_TOKEN"]

	return repo == ccmImage || has
}

func checkKey(env cloudEnv) string {
	return env.vars["HCLOUD_TOKEN"] + "\x00" + env.vars["HCLOUD_NETWORK"]
}

// ccmWork is what the simulated CCM has to do in one pass.
type ccmWork struct {
	env    cloudEnv
	check  bool     // run the start-up check
	nodes  []string // nodes to initialise
	routes []wantRoute
	// lbs are LoadBalancer Services to provision or clean up.
	lbs       []lbWork
	networkID int64
	// dead are nodes whose kubelet stopped: name -> server ID.
	dead map[string]int64
	// volumes are claims the CSI controller provisions; released are PVs
	// whose claim is gone.
	volumes  []csiWork
	released []csiRelease
}

// cloudWorkLocked collects the hcloud CCM's pending work: the start-up
// check of each distinct configuration of a scheduled CCM pod, and, for
// a CCM pod that runs, the nodes to initialise.
func (s *Server) cloudWorkLocked() []ccmWork {
	var out []ccmWork

	seen := map[string]bool{}

	for _, p := range s.sortedLocked("/pods") {
		spec := mapAt(p, "spec")
		if str(spec, "nodeName") == "" {
			continue
		}

		for _, repo := range []string{ccmImage, csiImage} {
			if !usesImage(spec, repo) {
				continue
			}

			env := s.containerEnvLocked(str(p, "metadata", "namespace"), spec, repo)
			key := repo + "\x00" + checkKey(env)

			if env.err != "" || seen[key] || !needsToken(repo, env) {
				continue
			}

			seen[key] = true
			w := ccmWork{env: env}

			chk, ok := s.cloud.checks[checkKey(env)]
			w.check = !ok || (chk.err != "" && s.now().Sub(chk.at) > 5*time.Second)

			if repo == ccmImage && ok && chk.err == "" && podReady(p) {
				w.networkID = chk.networkID
				s.ccmNodesLocked(&w)
				w.lbs = s.lbWorkLocked(env)
			}

			if repo == csiImage && ok && chk.err == "" && podReady(p) {
				w.volumes, w.released = s.csiWorkLocked(env), s.csiReleasesLocked()
			}

			if w.check || len(w.nodes) > 0 || len(w.routes) > 0 || len(w.dead) > 0 || len(w.lbs) > 0 || len(w.volumes) > 0 || len(w.released) > 0 {
				out = append(out, w)
			}
		}
	}

	return out
}

func (s *Server) ccmNodesLocked(w *ccmWork) {
	w.dead = map[string]int64{}

	for _, n := range s.sortedLocked("/nodes") {
		name := str(n, "metadata", "name")

		if hasTaint(n, taintUninitialized, "") && s.now().After(s.cloud.retry[name]) {
			w.nodes = append(w.nodes, name)
		}

		if !s.kubelets[name] && s.now().After(s.cloud.retry["dead/"+name]) {
			// A node without a provider ID is looked up by its name
			// (k8s.io/cloud-provider nodelifecycle ensureNodeExistsByProviderID
			// asks GetInstanceProviderID by node name; the hcloud CCM finds
			// the server by name then): id 0.
			pid := str(n, "spec", "providerID")
			if id, err := strconv.ParseInt(strings.TrimPrefix(pid, "hcloud://"), 10, 64); err == nil || pid == "" {
				w.dead[name] = id
			}
		}
	}

	if routesEnabled(w.env) {
		w.routes = s.missingRoutesLocked(w.env)
	}
}

// routesEnabled: the route controller of the cloud-provider framework runs
// with --allocate-node-cidrs=true and --configure-cloud-routes (default
// true), and the hcloud CCM offers routes when HCLOUD_NETWORK is set and
// HCLOUD_NETWORK_ROUTES_ENABLED is not false
// (hetznercloud/hcloud-cloud-controller-manager hcloud/cloud.go; the
// kube-hetzner templates/ccm.yaml.tpl passes --allocate-node-cidrs=true).
func routesEnabled(env cloudEnv) bool {
	if env.vars["HCLOUD_NETWORK"] == "" || env.vars["HCLOUD_NETWORK_ROUTES_ENABLED"] == "false" {
		return false
	}

	return slices.Contains(env.args, "--allocate-node-cidrs=true") && !slices.Contains(env.args, "--configure-cloud-routes=false")
}

type wantRoute struct{ cidr, gateway string }

func (s *Server) missingRoutesLocked(env cloudEnv) []wantRoute {
	var out []wantRoute

	for _, n := range s.sortedLocked("/nodes") {
		cidr, gw := str(n, "spec", "podCIDR"), nodeInternalIP(n)
		if cidr == "" || gw == "" || str(n, "spec", "providerID") == "" {
			continue
		}

		if !s.cloud.routes[env.vars["HCLOUD_NETWORK"]+"/"+cidr+"/"+gw] {
			out = append(out, wantRoute{cidr, gw})
		}
	}

	return out
}

// ccmResult is what a pass of the CCM learnt.
type ccmResult struct {
	env     cloudEnv
	check   *cloudCheck
	servers map[string]*hcloud.Server // node name -> server (nil: not found)
	failed  []string                  // nodes whose lookup failed
	routes  []string                  // route keys now present
	gone    []string                  // nodes whose server no longer exists
	checked []string                  // stopped nodes whose server was looked up
	lbs     []lbResult
	volumes []csiResult
}

func (s *Server) hcloudClient(token string) *hcloud.Client {
	opts := []hcloud.ClientOption{
		hcloud.WithToken(token), hcloud.WithHTTPClient(s.opts.HTTPClient),
		hcloud.WithApplication("hcloud-cloud-controller-manager", "sandbox"),
		hcloud.WithRetryOpts(hcloud.RetryOpts{MaxRetries: 0}),
	}
	if s.opts.HCloudEndpoint != "" {
		opts = append(opts, hcloud.WithEndpoint(s.opts.HCloudEndpoint))
	}

	return hcloud.NewClient(opts...)
}

// runCloud does the Hetzner API calls of the pending work, without the lock.
func (s *Server) runCloud(ctx context.Context, work []ccmWork) []ccmResult {
	var out []ccmResult

	for _, w := range work {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		out = append(out, s.runCCM(ctx, w))

		cancel()
	}

	return out
}

func (s *Server) runCCM(ctx context.Context, w ccmWork) ccmResult {
	res := ccmResult{env: w.env, servers: map[string]*hcloud.Server{}}
	c := s.hcloudClient(w.env.vars["HCLOUD_TOKEN"])

	if w.check {
		res.check = s.startupCheck(ctx, c, w.env)
		if res.check.err != "" {
			return res
		}
	}

	for _, name := range w.nodes {
		srv, _, err := c.Server.GetByName(ctx, name)
		if err != nil || srv == nil {
			res.failed = append(res.failed, name)

			continue
		}

		res.servers[name] = srv
	}

	for name, id := range w.dead {
		res.checked = append(res.checked, name)

		var (
			srv *hcloud.Server
			err error
		)

		if id == 0 {
			srv, _, err = c.Server.GetByName(ctx, name)
		} else {
			srv, _, err = c.Server.GetByID(ctx, id)
		}

		if err == nil && srv == nil {
			res.gone = append(res.gone, name)
		}
	}

	if len(w.routes) > 0 {
		res.routes = s.ensureRoutes(ctx, c, w.env.vars["HCLOUD_NETWORK"], w.routes)
	}

	for _, lb := range w.lbs {
		res.lbs = append(res.lbs, ensureLB(ctx, c, w.networkID, lb))
	}

	for _, v := range w.volumes {
		res.volumes = append(res.volumes, provision(ctx, c, v))
	}

	for _, r := range w.released {
		res.volumes = append(res.volumes, release(ctx, c, r))
	}

	return res
}

// ensureRoutes is the route controller: a route in the Hetzner network for
// each node's pod CIDR through the node's private IP (add_route).
func (s *Server) ensureRoutes(ctx context.Context, c *hcloud.Client, network string, want []wantRoute) []string {
	nw, _, err := c.Network.Get(ctx, network)
	if err != nil || nw == nil {
		return nil
	}

	var done []string

	for _, r := range want {
		key := network + "/" + r.cidr + "/" + r.gateway
		have := slices.ContainsFunc(nw.Routes, func(nr hcloud.NetworkRoute) bool {
			return nr.Destination != nil && nr.Destination.String() == r.cidr && nr.Gateway.String() == r.gateway
		})

		if !have {
			_, dst, err := net.ParseCIDR(r.cidr)
			gw := net.ParseIP(r.gateway)

			if err != nil || gw == nil {
				continue
			}

			if _, _, err := c.Network.AddRoute(ctx, nw, hcloud.NetworkAddRouteOpts{Route: hcloud.NetworkRoute{Destination: dst, Gateway: gw}}); err != nil {
				continue
			}
		}

		done = append(done, key)
	}

	return done
}

// startupCheck is what the hcloud CCM does when it starts: with a network
// configured it must find it, and the token must be accepted.
func (s *Server) startupCheck(ctx context.Context, c *hcloud.Client, env cloudEnv) *cloudCheck {
	chk := &cloudCheck{at: s.now()}

	if env.vars["HCLOUD_TOKEN"] == "" {
		chk.err = "hcloud/newCloud: environment variable \"HCLOUD_TOKEN\" is required"

		return chk
	}

	if nw := env.vars["HCLOUD_NETWORK"]; nw != "" {
		n, _, err := c.Network.Get(ctx, nw)

		switch {
		case err != nil:
			chk.err = "hcloud/newCloud: " + err.Error()
		case n == nil:
			chk.err = fmt.Sprintf("hcloud/newCloud: network %s not found", nw)
		default:
			chk.networkID = n.ID
		}

		return chk
	}

	if _, _, err := c.Server.List(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{PerPage: 1}}); err != nil {
		chk.err = "hcloud/newCloud: " + err.Error()
	}

	return chk
}
