package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/myip"
)

// operatorAddressFlag adds --operator-address to plan or apply: the
// operator's public address, checked against firewall.allow (and admitted
// by a firewall that leaves it empty) instead of the detected one.
func operatorAddressFlag(c *cobra.Command, v *string) {
	c.Flags().StringVar(v, strings.TrimPrefix(myip.OperatorFlag, "--"), "",
		"this machine's public address (IPs or CIDRs, comma-separated) instead of detecting it; wins over firewall.operatorAddress")
}

// checkOperatorAddress refuses a --operator-address that is not a list of
// addresses or ranges, before anything else runs.
func checkOperatorAddress(v string) error {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	if _, err := myip.ParseOperator(v); err != nil {
		return fmt.Errorf("%s: %w: write your public address or range, e.g. 203.0.113.7, \"203.0.113.7,2001:db8::7\" or 198.51.100.0/24", myip.OperatorFlag, err)
	}
	return nil
}
