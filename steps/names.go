package steps

import "github.com/ohmytalos/ohmytalos/internal/engine"

// The provisioning steps, in the order steps.All runs them.
const (
	StepSecrets   engine.StepName = "secrets"
	StepImages    engine.StepName = "images"
	StepNetwork   engine.StepName = "network"
	StepPools     engine.StepName = "pools"
	StepConfigs   engine.StepName = "configs"
	StepServers   engine.StepName = "servers"
	StepBootstrap engine.StepName = "bootstrap"
	StepAddons    engine.StepName = "addons"
	StepScaleDown engine.StepName = "scale-down"
	StepUpgrade   engine.StepName = "upgrade"
)
