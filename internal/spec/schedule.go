package spec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cronMacros are the shorthands Kubernetes CronJobs accept (robfig/cron's
// descriptors, as kube-controller-manager parses them), with their period.
var cronMacros = map[string]time.Duration{
	"@yearly": 365 * 24 * time.Hour, "@annually": 365 * 24 * time.Hour,
	"@monthly": 31 * 24 * time.Hour, "@weekly": 7 * 24 * time.Hour,
	"@daily": 24 * time.Hour, "@midnight": 24 * time.Hour, "@hourly": time.Hour,
}

// cronField is one field's name and range.
type cronField struct {
	name     string
	min, max int
}

var cronFields = []cronField{{"minute", 0, 59}, {"hour", 0, 23}, {"day of month", 1, 31}, {"month", 1, 12}, {"day of week", 0, 6}}

// ScheduleInterval validates a 5-field cron schedule (or a macro such as
// @daily) and returns the longest gap between two runs, approximating a
// month as 31 days: the doctor's yardstick for a missed backup.
func ScheduleInterval(schedule string) (time.Duration, error) {
	s := strings.TrimSpace(schedule)
	if d, ok := cronMacros[s]; ok {
		return d, nil
	}
	parts := strings.Fields(s)
	if len(parts) != len(cronFields) {
		return 0, fmt.Errorf("%q has %d fields, a cron schedule has 5 (minute hour day-of-month month day-of-week)", schedule, len(parts))
	}
	sets := make([][]int, len(parts))
	for i, p := range parts {
		v, err := cronValues(p, cronFields[i])
		if err != nil {
			return 0, fmt.Errorf("%q: %w", schedule, err)
		}
		sets[i] = v
	}
	var day []int
	for _, h := range sets[1] {
		for _, m := range sets[0] {
			day = append(day, h*60+m)
		}
	}
	interval := time.Duration(maxGap(day, 24*60)) * time.Minute
	if parts[4] != "*" {
		interval = max(interval, time.Duration(maxGap(sets[4], 7))*24*time.Hour)
	}
	if parts[2] != "*" {
		interval = max(interval, time.Duration(maxGap(sets[2], 31))*24*time.Hour)
	}
	if parts[3] != "*" {
		interval = max(interval, time.Duration(maxGap(sets[3], 12))*31*24*time.Hour)
	}
	return interval, nil
}

// maxGap is the largest cyclic distance between consecutive sorted values.
func maxGap(v []int, cycle int) int {
	v = slices.Compact(slices.Sorted(slices.Values(v)))
	gap := v[0] + cycle - v[len(v)-1]
	for i := 1; i < len(v); i++ {
		gap = max(gap, v[i]-v[i-1])
	}
	return gap
}

// cronValues expands one field: *, N, A-B, with an optional /STEP, comma
// separated.
func cronValues(field string, f cronField) ([]int, error) {
	var out []int
	for _, item := range strings.Split(field, ",") {
		rng, stepStr, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepStr)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%s step %q is not a positive number", f.name, stepStr)
			}
			step = n
		}
		lo, hi := f.min, f.max
		if rng != "*" {
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if lo, err = cronNumber(a, f); err != nil {
				return nil, err
			}
			hi = lo
			if isRange {
				if hi, err = cronNumber(b, f); err != nil {
					return nil, err
				}
			} else if hasStep {
				hi = f.max
			}
			if hi < lo {
				return nil, fmt.Errorf("%s range %q runs backwards", f.name, rng)
			}
		}
		for x := lo; x <= hi; x += step {
			out = append(out, x)
		}
	}
	return out, nil
}

func cronNumber(s string, f cronField) (int, error) {
	n, err := strconv.Atoi(s)
	if f.name == "day of week" && n == 7 {
		n = 0 // Sunday, as cron accepts
	}
	if err != nil || n < f.min || n > f.max {
		return 0, fmt.Errorf("%s %q is not a number from %d to %d", f.name, s, f.min, f.max)
	}
	return n, nil
}
