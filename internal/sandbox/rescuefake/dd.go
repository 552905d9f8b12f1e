package rescuefake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// dd copies stdin to /dev/sda (the disk file) in bs-sized blocks. It knows
// the operands the builder uses: of=, bs=, conv=sparse (seek over all-zero
// blocks instead of writing them), conv=fsync, status=progress|none. The
// output mimics GNU coreutils dd: progress lines ending in "\r" on stderr
// and the records/bytes summary at the end.
func (s *Server) dd(ctx context.Context, args []string, in io.Reader, errw io.Writer) int {
	bs := int64(512)
	of, status := "", ""
	sparse := false
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(errw, "dd: unrecognized operand '%s'\n", a)
			return 1
		}
		switch k {
		case "of":
			of = v
		case "bs":
			n, err := parseSize(v)
			if err != nil || n <= 0 {
				fmt.Fprintf(errw, "dd: invalid number: '%s'\n", v)
				return 1
			}
			bs = n
		case "conv":
			for _, c := range strings.Split(v, ",") {
				switch c {
				case "sparse":
					sparse = true
				case "fsync", "fdatasync", "notrunc":
				default:
					fmt.Fprintf(errw, "dd: invalid conversion: '%s'\n", c)
					return 1
				}
			}
		case "status":
			status = v
		case "if", "iflag", "oflag":
			fmt.Fprintf(errw, "dd: the rescue fake reads stdin only; %s= is not supported\n", k)
			return 1
		default:
			fmt.Fprintf(errw, "dd: unrecognized operand '%s'\n", a)
			return 1
		}
	}
	f, ok := s.openDisk(errw, of, "dd: failed to open '%s'")
	if !ok {
		return 1
	}
	defer func() { _ = f.Close() }()

	start := time.Now()
	buf := make([]byte, bs)
	var pos, full, partial int64
	printed := false
	report := func(final bool) {
		if status == "none" {
			return
		}
		line := progressLine(pos, time.Since(start))
		if final {
			if printed {
				fmt.Fprint(errw, "\n")
			}
			fmt.Fprintf(errw, "%d+%d records in\n%d+%d records out\n%s\n", full, partial, full, partial, line)
			return
		}
		if status == "progress" {
			fmt.Fprint(errw, line+"\r")
			printed = true
		}
	}
	finish := func() int {
		// A sparse copy that ended on a skipped block still sets the length.
		if st, err := f.Stat(); err == nil && st.Size() < pos {
			_ = f.Truncate(pos)
		}
		report(true)
		return 0
	}
	for {
		if s.cfg.stallAfter >= 0 && pos >= s.cfg.stallAfter {
			report(false)
			<-ctx.Done() // the disk stopped answering; only the session ending frees us
			return 1
		}
		n, rerr := io.ReadFull(in, buf)
		if n > 0 {
			if s.cfg.fail[StageWrite] {
				fmt.Fprintf(errw, "dd: error writing '/dev/sda': Input/output error\n")
				report(true)
				return 1
			}
			chunk := buf[:n]
			if !sparse || !allZero(chunk) {
				if _, err := f.WriteAt(chunk, pos); err != nil {
					fmt.Fprintf(errw, "dd: error writing '/dev/sda': %v\n", err)
					report(true)
					return 1
				}
			}
			pos += int64(n)
			s.addDiskBytes(int64(n))
			if int64(n) == bs {
				full++
			} else {
				partial++
			}
			report(false)
		}
		switch {
		case rerr == nil:
			continue
		case errors.Is(rerr, io.EOF), errors.Is(rerr, io.ErrUnexpectedEOF):
			return finish()
		default:
			fmt.Fprintf(errw, "dd: error reading 'standard input': %v\n", rerr)
			report(true)
			return 1
		}
	}
}

func allZero(b []byte) bool {
	return len(bytes.TrimLeft(b, "\x00")) == 0
}

// parseSize reads dd sizes: 512, 64K, 4M, 1G, 4MiB, 1kB.
func parseSize(v string) (int64, error) {
	mult := int64(1)
	suffixes := []struct {
		s string
		m int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"kB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
		{"K", 1 << 10}, {"k", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"c", 1}, {"w", 2}, {"b", 512},
	}
	for _, sf := range suffixes {
		if strings.HasSuffix(v, sf.s) {
			v, mult = strings.TrimSuffix(v, sf.s), sf.m
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, err
	}
	return n * mult, nil
}

// progressLine renders GNU dd's statistics line, e.g.
// "268435456 bytes (268 MB, 256 MiB) copied, 2.01 s, 134 MB/s".
func progressLine(n int64, d time.Duration) string {
	secs := max(d.Seconds(), 1e-6)
	rate := si(int64(float64(n)/secs)) + "/s"
	var size string
	switch {
	case n == 1:
		size = "1 byte"
	case n < 1000:
		size = fmt.Sprintf("%d bytes", n)
	case n < 1024:
		size = fmt.Sprintf("%d bytes (%s)", n, si(n))
	default:
		size = fmt.Sprintf("%d bytes (%s, %s)", n, si(n), iec(n))
	}
	return fmt.Sprintf("%s copied, %s s, %s", size, strconv.FormatFloat(secs, 'g', 3, 64), rate)
}

// si formats with decimal units like coreutils' human output ("66 kB").
func si(n int64) string { return human(n, 1000, []string{"B", "kB", "MB", "GB", "TB"}) }

// iec formats with binary units ("64 KiB", "40G" style is lsblk's but close enough).
func iec(n int64) string { return human(n, 1024, []string{"B", "KiB", "MiB", "GiB", "TiB"}) }

func human(n int64, base float64, units []string) string {
	v := float64(n)
	i := 0
	for v >= base && i < len(units)-1 {
		v /= base
		i++
	}
	if v < 10 && i > 0 {
		return fmt.Sprintf("%.1f %s", math.Round(v*10)/10, units[i])
	}
	return fmt.Sprintf("%.0f %s", math.Round(v), units[i])
}
