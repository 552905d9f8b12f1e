// Package e2e holds end-to-end tests and benchmarks of ohmytalos against
// the sandbox: a cold apply measured against the latency model's critical
// path (BenchmarkApplySeed, BenchmarkApply50), kill -9 of the built binary
// at random points and inside an image build's cleanup against a
// standalone sandbox (TestCrashResume, TestCrashDuringImageCleanup),
// injected 429s, 5xx and failed actions (TestStorm), and create answers
// lost after Hetzner acted on them (TestLostCreateResponses), and a working
// cluster seen through client-go and hcloud-go (TestWorkingClusterFromSandboxServe). Everything
// runs on loopback; nothing reaches Hetzner or the internet.
package e2e
