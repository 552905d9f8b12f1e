package rescuefake

// Stage names a part of the image-write pipeline where a fault can be injected.
type Stage string

const (
	// StageDownload is wget: the download fails mid-stream.
	StageDownload Stage = "download"
	// StageDecompress is xz -d: the stream is reported corrupt.
	StageDecompress Stage = "decompress"
	// StageWrite is dd: writing to /dev/sda fails with an I/O error.
	StageWrite Stage = "write"
)

// Option configures a Server.
type Option func(*config)

type config struct {
	fail       map[Stage]bool
	stallAfter int64 // dd blocks after this many bytes until the session ends; <0 = never
	machine    string
	diskSize   int64
}

func defaultConfig() config {
	return config{fail: map[Stage]bool{}, stallAfter: -1, machine: "x86_64", diskSize: 40 << 30}
}

// FailAt makes the named pipeline stage fail the way the real tool does:
// wget loses the connection ("Read error ... Connection reset by peer",
// exit 4), xz reports corrupt data (exit 1), dd gets an I/O error (exit 1).
func FailAt(stage Stage) Option {
	return func(c *config) { c.fail[stage] = true }
}

// StallWriteAfter makes dd stop after copying n bytes (it prints a progress
// line first) and hang until the SSH session or connection ends, like a write
// to a disk that stopped answering. Tests use it to cancel mid-write.
func StallWriteAfter(n int64) Option {
	return func(c *config) { c.stallAfter = n }
}

// Machine sets what `uname -m` reports: "x86_64" (default) or "aarch64".
func Machine(m string) Option {
	return func(c *config) { c.machine = m }
}

// DiskSize sets the size lsblk reports for /dev/sda (default 40 GiB, the
// disk of cx23 and cax11).
func DiskSize(n int64) Option {
	return func(c *config) { c.diskSize = n }
}
