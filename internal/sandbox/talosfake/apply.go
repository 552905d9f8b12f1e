package talosfake

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Mode details as machined words them (ApplyConfiguration in
// internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go).
const (
	detailsNoReboot = "Applied configuration without a reboot"
	detailsReboot   = "Applied configuration with a reboot"
	detailsStaged   = "Staged configuration to be applied after the next reboot"
)

// ApplyConfiguration validates and stores a new machine config.
func (s *machineService) ApplyConfiguration(ctx context.Context, in *machine.ApplyConfigurationRequest) (*machine.ApplyConfigurationResponse, error) {
	if err := authorize(ctx); err != nil {
		return nil, err
	}

	next, err := parseNodeConfig(in.GetData())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}

	// machined validates before anything else (cfgProvider.Validate with
	// the platform's mode, installed: RequiresInstall false) and answers
	// InvalidArgument (v1alpha1_server.go, ApplyConfiguration).
	if err := validateConfig(in.GetData()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}

	c := s.node.cluster
	c.mu.Lock()
	defer c.mu.Unlock()

	cur := s.node.cfg
	immediateErr := canApplyImmediate(cur, next)
	mode := in.GetMode()
	details := detailsReboot

	switch mode {
	case machine.ApplyConfigurationRequest_NO_REBOOT, machine.ApplyConfigurationRequest_TRY:
		if immediateErr != nil {
			return nil, status.Error(codes.InvalidArgument, immediateErr.Error())
		}

		details = detailsNoReboot
	case machine.ApplyConfigurationRequest_STAGED:
		details = detailsStaged
	case machine.ApplyConfigurationRequest_AUTO:
		if immediateErr != nil {
			mode = machine.ApplyConfigurationRequest_REBOOT
			details = detailsReboot + ": " + immediateErr.Error()
		} else {
			mode = machine.ApplyConfigurationRequest_NO_REBOOT
			details = detailsNoReboot
		}
	case machine.ApplyConfigurationRequest_REBOOT:
	default:
		return nil, fmt.Errorf("incorrect mode '%s' specified for the apply config call", mode)
	}

	if in.GetDryRun() {
		return &machine.ApplyConfigurationResponse{Messages: []*machine.ApplyConfiguration{{
			Mode:        mode,
			ModeDetails: "Dry run summary:\n" + details + " (skipped in dry-run).\n",
		}}}, nil
	}

	switch mode { //nolint:exhaustive // the other modes were rejected above
	case machine.ApplyConfigurationRequest_STAGED:
		c.persisted[s.node.opts.ServerID] = next.raw
	default:
		// A reboot comes back with the new config; the sandbox applies it at once.
		oldCluster := c.clusters[cur.clusterID]
		s.node.cfg = next
		c.persisted[s.node.opts.ServerID] = next.raw

		if err := s.node.writeRoutes(ctx, s.node.wantRoutes()); err != nil {
			return nil, err
		}

		c.clusterLocked(next)

		if oldCluster != nil && oldCluster.id != next.clusterID {
			c.reconcileLocked(oldCluster)
		}

		c.reconcileLocked(c.clusters[next.clusterID])
	}

	s.node.publishConfigLocked()

	return &machine.ApplyConfigurationResponse{Messages: []*machine.ApplyConfiguration{{
		Mode:        mode,
		ModeDetails: details,
	}}}, nil
}

// canApplyImmediate is machined's CanApplyImmediate of Talos v1.13.9
// (internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_runtime.go): only
// the v1alpha1 document is compared (every other document applies live),
// and within it everything may change live except what its list leaves
// out: .debug, .cluster and the machine fields copied in immediateFields
// apply without a reboot; any other change (machine.type, machine.env,
// machine.files, machine.disks, the other machine.features, ...) needs one.
// Talos v1.14 dropped the check (commit 995bc30d5, "drop apply config
// method reboot"); the sandbox speaks 1.13.
func canApplyImmediate(cur, next *nodeConfig) error {
	if cur.maintenance {
		return nil
	}

	curP, err := configloader.NewFromBytes(cur.raw)
	if err != nil {
		return fmt.Errorf("no current config: %w", err)
	}

	nextP, err := configloader.NewFromBytes(next.raw)
	if err != nil {
		return fmt.Errorf("new config: %w", err)
	}

	current, proposed := curP.RawV1Alpha1(), nextP.RawV1Alpha1()
	if current == nil {
		return errors.New("current config is not v1alpha1")
	}

	if proposed == nil {
		return errors.New("new config is not v1alpha1")
	}

	proposed = proposed.DeepCopy()
	proposed.ConfigDebug = current.ConfigDebug
	proposed.ClusterConfig = current.ClusterConfig

	if proposed.MachineConfig != nil && current.MachineConfig != nil {
		immediateFields(proposed.MachineConfig, current.MachineConfig)
	}

	if !reflect.DeepEqual(current, proposed) {
		// machined appends configdiff's text diff; the changed keys say the same.
		return fmt.Errorf("this config change can't be applied in immediate mode\nchanged: %s", strings.Join(changedKeys(current, proposed), ", "))
	}

	return nil
}

// changedKeys names the v1alpha1 keys (machine.KEY, or the top-level key)
// whose values differ.
func changedKeys(a, b *v1alpha1.Config) []string {
	var out []string

	if a.MachineConfig != nil && b.MachineConfig != nil {
		va, vb := reflect.ValueOf(a.MachineConfig).Elem(), reflect.ValueOf(b.MachineConfig).Elem()
		for i := range va.NumField() {
			if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
				out = append(out, "machine."+strings.Split(va.Type().Field(i).Tag.Get("yaml"), ",")[0])
			}
		}
	}

	a2, b2 := *a, *b
	a2.MachineConfig, b2.MachineConfig = nil, nil

	if len(out) == 0 || !reflect.DeepEqual(a2, b2) {
		out = append(out, "the v1alpha1 document")
	}

	return out
}

// immediateFields copies into next the machine fields Talos v1.13.9
// applies without a reboot.
func immediateFields(next, cur *v1alpha1.MachineConfig) {
	next.MachineCA = cur.MachineCA
	next.MachineAcceptedCAs = cur.MachineAcceptedCAs
	next.MachineTime = cur.MachineTime //nolint:staticcheck // as machined
	next.MachineCertSANs = cur.MachineCertSANs
	next.MachineInstall = cur.MachineInstall
	next.MachineNetwork = cur.MachineNetwork //nolint:staticcheck // as machined
	next.MachineSysfs = cur.MachineSysfs
	next.MachineSysctls = cur.MachineSysctls
	next.MachineLogging = cur.MachineLogging
	next.MachineControlPlane = cur.MachineControlPlane
	next.MachineKubelet = cur.MachineKubelet
	next.MachineKernel = cur.MachineKernel
	next.MachineRegistries = cur.MachineRegistries //nolint:staticcheck // as machined
	next.MachinePods = cur.MachinePods
	next.MachineSeccompProfiles = cur.MachineSeccompProfiles
	next.MachineNodeAnnotations = cur.MachineNodeAnnotations
	next.MachineNodeLabels = cur.MachineNodeLabels
	next.MachineNodeTaints = cur.MachineNodeTaints

	if next.MachineFeatures != nil && cur.MachineFeatures != nil {
		next.MachineFeatures.KubernetesTalosAPIAccessConfig = cur.MachineFeatures.KubernetesTalosAPIAccessConfig
		next.MachineFeatures.KubePrismSupport = cur.MachineFeatures.KubePrismSupport
		next.MachineFeatures.HostDNSSupport = cur.MachineFeatures.HostDNSSupport
		next.MachineFeatures.ImageCacheSupport = cur.MachineFeatures.ImageCacheSupport
		next.MachineFeatures.FeatureNodeAddressSortAlgorithm = cur.MachineFeatures.FeatureNodeAddressSortAlgorithm
	}
}

// installedCloud is machined's validation mode on an installed cloud
// node: the platform's cloud mode wrapped in modeWrapper with installed
// true, so RequiresInstall is false.
type installedCloud struct{}

func (installedCloud) String() string        { return "cloud" }
func (installedCloud) RequiresInstall() bool { return false }
func (installedCloud) InContainer() bool     { return false }

// validateConfig runs machinery's validation of the whole document set.
func validateConfig(raw []byte) error {
	p, err := configloader.NewFromBytes(raw)
	if err != nil {
		return err //nolint:wrapcheck // answered as is, as machined does
	}

	_, err = p.Validate(installedCloud{})

	return err //nolint:wrapcheck // answered as is, as machined does
}
