package talosfake

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/role"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// installer is a parsed Image Factory installer reference:
// factory.talos.dev/hcloud-installer/SCHEMATIC:VERSION.
type installer struct {
	ref, schematic, version string
}

var (
	schematicRe = regexp.MustCompile(`^[0-9a-f]{64}$`)
	talosTagRe  = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
)

// factoryRegistry is the Image Factory's registry host.
const factoryRegistry = "factory.talos.dev"

// parseInstaller reads an installer image reference the way a pull would
// resolve it; anything the Image Factory would not serve cannot be pulled.
// registries are the hosts serving the factory's installers besides
// factory.talos.dev (the sandbox's own factory).
func parseInstaller(ref string, registries []string) (installer, error) {
	colon := strings.LastIndex(ref, ":")
	if ref == "" || colon < 0 || strings.Contains(ref[colon:], "/") {
		return installer{}, fmt.Errorf("reference %q has no tag: name an installer version (factory.talos.dev/hcloud-installer/SCHEMATIC:vX.Y.Z)", ref)
	}

	name, tag := ref[:colon], ref[colon+1:]
	parts := strings.Split(name, "/")

	switch {
	case len(parts) != 3 || (parts[0] != factoryRegistry && !slices.Contains(registries, parts[0])):
		return installer{}, fmt.Errorf("%s: failed to resolve reference %q: not found", ref, ref)
	case parts[1] != "hcloud-installer" && parts[1] != "installer":
		return installer{}, fmt.Errorf("%s: failed to resolve reference %q: not found", ref, ref)
	case !schematicRe.MatchString(parts[2]):
		return installer{}, fmt.Errorf("%s: failed to resolve reference %q: schematic ID %q is not a 64-character hex ID", ref, ref, parts[2])
	case !talosTagRe.MatchString(tag):
		return installer{}, fmt.Errorf("%s: failed to resolve reference %q: %q is not a Talos version", ref, ref, tag)
	}

	return installer{ref: ref, schematic: parts[2], version: tag}, nil
}

// imageService is the part of machined's ImageService an upgrade uses: Pull.
type imageService struct {
	machine.UnimplementedImageServiceServer

	node *Node
}

// Pull pulls an image into containerd (talosctl upgrade pulls the installer
// before LifecycleService.Upgrade).
func (s *imageService) Pull(in *machine.ImageServicePullRequest, srv grpc.ServerStreamingServer[machine.ImageServicePullResponse]) error {
	if err := authorize(srv.Context(), role.Operator); err != nil {
		return err
	}

	if _, err := parseInstaller(in.GetImageRef(), s.node.cluster.opts.Registries); err != nil {
		return status.Errorf(codes.Unknown, "error pulling image: %v", err)
	}

	c := s.node.cluster
	c.mu.Lock()
	s.node.pulled[in.GetImageRef()] = true
	c.mu.Unlock()

	return srv.Send(&machine.ImageServicePullResponse{ //nolint:wrapcheck // the stream's own status
		Response: &machine.ImageServicePullResponse_Name{Name: in.GetImageRef()},
	})
}

// lifecycleService is machined's LifecycleService (Talos 1.13's upgrade
// API, internal/app/lifecycle/lifecycle.go): Upgrade runs the installer
// from a pulled image and streams its progress and exit code; the new
// version boots at the next Reboot.
type lifecycleService struct {
	machine.UnimplementedLifecycleServiceServer

	node *Node
}

// Upgrade installs the pulled installer's Talos onto the system disk.
func (s *lifecycleService) Upgrade(in *machine.LifecycleServiceUpgradeRequest, srv grpc.ServerStreamingServer[machine.LifecycleServiceUpgradeResponse]) error {
	if err := authorize(srv.Context()); err != nil {
		return err
	}

	n := s.node
	c := n.cluster
	ref := in.GetSource().GetImageName()

	if ref == "" {
		return status.Error(codes.InvalidArgument, "installer image name is required")
	}

	c.mu.Lock()

	if n.upgrading {
		c.mu.Unlock()

		return status.Error(codes.FailedPrecondition, "another installation/upgrade is already in progress")
	}

	pulled := n.pulled[ref]
	n.upgrading = pulled
	c.mu.Unlock()

	if !pulled {
		return status.Errorf(codes.Internal, "upgrade failed: installer image %q not found in containerd store: image %q: not found", ref, ref)
	}

	defer func() {
		c.mu.Lock()
		n.upgrading = false
		c.mu.Unlock()
	}()

	send := func(p *machine.LifecycleServiceInstallProgress) error {
		return srv.Send(&machine.LifecycleServiceUpgradeResponse{Progress: p}) //nolint:wrapcheck // the stream's own status
	}

	inst, err := parseInstaller(ref, c.opts.Registries)
	if err == nil {
		err = n.install(inst)
	}

	if err != nil {
		if sendErr := send(&machine.LifecycleServiceInstallProgress{Response: &machine.LifecycleServiceInstallProgress_Message{Message: err.Error()}}); sendErr != nil {
			return sendErr
		}

		return send(&machine.LifecycleServiceInstallProgress{Response: &machine.LifecycleServiceInstallProgress_ExitCode{ExitCode: 1}})
	}

	if err := send(&machine.LifecycleServiceInstallProgress{Response: &machine.LifecycleServiceInstallProgress_Message{
		Message: fmt.Sprintf("installed Talos %s (schematic %s)", inst.version, inst.schematic),
	}}); err != nil {
		return err
	}

	return send(&machine.LifecycleServiceInstallProgress{Response: &machine.LifecycleServiceInstallProgress_ExitCode{ExitCode: 0}})
}

// errInstallFailed is what an installer that fails (FailUpgrade) reports.
var errInstallFailed = errors.New("failed to install bootloader: error writing the boot partition: input/output error")

// install writes the installer's Talos to disk: the next boot runs it.
func (n *Node) install(inst installer) error {
	c := n.cluster
	c.mu.Lock()
	defer c.mu.Unlock()

	if c.failUpgrade[n.opts.ServerID] {
		return errInstallFailed
	}

	c.installed[n.opts.ServerID] = installInfo{version: inst.version, schematic: inst.schematic}

	return nil
}

// Upgrade is the legacy MachineService.Upgrade (deprecated in the 1.13
// client, still served): validate the installer image, check etcd can
// afford the control plane going away, answer, then install and reboot in
// the background (Upgrade in
// internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go).
func (s *machineService) Upgrade(ctx context.Context, in *machine.UpgradeRequest) (*machine.UpgradeResponse, error) {
	if err := authorize(ctx); err != nil {
		return nil, err
	}

	inst, err := parseInstaller(in.GetImage(), s.node.cluster.opts.Registries)
	if err != nil {
		return nil, fmt.Errorf("error validating installer image %q: %w", in.GetImage(), err)
	}

	n := s.node
	cfg, _ := s.current()

	if cfg.controlPlane() && !in.GetForce() && !in.GetPreserve() {
		if err := n.validateEtcdForUpgrade(ctx); err != nil {
			return nil, fmt.Errorf("error validating etcd for upgrade: %w", err)
		}
	}

	go func() {
		if !sleepCtx(n.ctx, 50*time.Millisecond) {
			return
		}

		if err := n.install(inst); err != nil {
			n.cluster.opts.Logger.Warn("upgrade failed", "node", n.opts.Name, "error", err.Error())
		}

		// The upgrade sequence stops the node and reboots it; a failed
		// install boots the old system again.
		n.reboot(nil)
	}()

	return &machine.UpgradeResponse{Messages: []*machine.Upgrade{{Ack: "Upgrade request received", ActorId: actorID()}}}, nil
}

// validateEtcdForUpgrade is ValidateForUpgrade (internal/pkg/etcd/etcd.go):
// two members cannot lose one, and every member must be healthy.
func (n *Node) validateEtcdForUpgrade(ctx context.Context) error {
	tc, err := (&machineService{node: n}).waitQuorum(ctx)
	if err != nil {
		return fmt.Errorf("failed to create etcd client: %w", err)
	}

	c := n.cluster
	c.mu.Lock()
	defer c.mu.Unlock()

	if len(tc.members) == 2 {
		return fmt.Errorf("etcd member count(%d) is insufficient to maintain quorum if upgrade commences", len(tc.members))
	}

	for _, m := range tc.members {
		if !c.healthyLocked(tc, m.serverID) {
			return fmt.Errorf("etcd member %016x is not healthy; all members must be healthy to perform an upgrade: context deadline exceeded", m.id)
		}
	}

	return nil
}
