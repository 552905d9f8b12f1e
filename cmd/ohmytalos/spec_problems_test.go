package main

import "testing"

// TestPlanReportsEveryProblemOfASpecWithATypo is issue 14's check: a
// misspelled key no longer hides the layout and value problems.
func TestPlanReportsEveryProblemOfASpecWithATypo(t *testing.T) {
	p := tempFile(t, "ohmytalos.yaml", "name: demo\ncontrolPlane:\n  count: 0\n  serverTyp: cpx22\n  subnet: 192.168.1.0/24\n")
	_, err := run(t, "plan", "--config", p)
	if err == nil {
		t.Fatal("bad spec accepted")
	}
	mustContain(t, "error", err.Error(), "controlPlane.serverTyp: unknown key", "controlPlane.count: 0 control planes", "controlPlane.subnet:", "outside the network")
}
