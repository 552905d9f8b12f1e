package talosfake

import (
	"context"
	"fmt"
	"slices"

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

	return &machine.ApplyConfigurationResponse{Messages: []*machine.ApplyConfiguration{{
		Mode:        mode,
		ModeDetails: details,
	}}}, nil
}

// canApplyImmediate approximates machined's CanApplyImmediate: identity and
// trust (machine type, cluster, CAs) need a reboot, the rest applies live.
func canApplyImmediate(cur, next *nodeConfig) error {
	switch {
	case cur.machineType != next.machineType:
		return fmt.Errorf("machine type change from %s to %s requires a reboot", cur.machineType, next.machineType)
	case cur.clusterID != next.clusterID:
		return fmt.Errorf("cluster ID change requires a reboot")
	case !slices.Equal(cur.osCA.Crt, next.osCA.Crt):
		return fmt.Errorf("machine CA change requires a reboot")
	}

	return nil
}
