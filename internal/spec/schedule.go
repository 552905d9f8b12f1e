package spec

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// starBit is robfig/cron's marker for a field written "*" (spec.go): a
// day-of-month or day-of-week written so does not take part in the OR of
// the two day fields.
const starBit = 1 << 63

// gapStart and gapYears bound where ScheduleInterval looks for run days: five
// years from a leap year holds two 29ths of February, so a yearly or
// leap-day schedule shows its real gap.
var gapStart = time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)

const gapYears = 5

// ScheduleInterval validates a CronJob schedule the way Kubernetes does and
// returns the longest gap between two runs, in UTC: the doctor's yardstick
// for a missed backup.
//
// Kubernetes parses spec.schedule with robfig/cron/v3's ParseStandard
// (kubernetes pkg/apis/batch/validation/validation.go validateScheduleFormat
// and pkg/controller/cronjob/cronjob_controllerv2.go), and refuses TZ= or
// CRON_TZ= in the schedule on create ("use timeZone field instead"), so
// this accepts exactly that: five fields with names (MON, JAN), ranges,
// steps and lists, or a descriptor (@daily, @every 6h). When day-of-month
// and day-of-week are both restricted, cron runs on either (robfig's
// dayMatches ORs them), and so does the gap computed here.
func ScheduleInterval(schedule string) (time.Duration, error) {
	s := strings.TrimSpace(schedule)
	if strings.Contains(s, "TZ") {
		return 0, fmt.Errorf("%q sets a time zone in the schedule, which Kubernetes refuses (cannot use TZ or CRON_TZ in schedule); remove it: the schedule runs in UTC", schedule)
	}
	sched, err := cron.ParseStandard(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a cron schedule Kubernetes accepts: %w", schedule, err)
	}
	switch sc := sched.(type) {
	case cron.ConstantDelaySchedule:
		return sc.Delay, nil
	case *cron.SpecSchedule:
		gap, err := longestGap(*sc)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", schedule, err)
		}
		return gap, nil
	default:
		return 0, fmt.Errorf("%q: unexpected schedule type %T", schedule, sched)
	}
}

// longestGap walks the run days of spec over gapYears, in UTC: the times
// of day (minute x hour) are the same on every run day, so the longest gap
// is either between two runs of one day or from the last run of a run day
// to the first run of the next.
func longestGap(spec cron.SpecSchedule) (time.Duration, error) {
	spec.Location = time.UTC
	times := dayTimes(spec.Hour, spec.Minute)
	first, last := times[0], times[len(times)-1]
	longest := time.Duration(0)
	for i := 1; i < len(times); i++ {
		longest = max(longest, times[i]-times[i-1])
	}
	// One run per day is enough to find the days: the first time of day.
	days := spec
	days.Minute = lowestBit(spec.Minute)
	days.Hour = lowestBit(spec.Hour)
	end := gapStart.AddDate(gapYears, 0, 0)
	var prev time.Time
	for t := days.Next(gapStart.Add(-time.Second)); !t.IsZero() && t.Before(end); t = days.Next(endOfDay(t)) {
		day := t.Truncate(24 * time.Hour)
		if !prev.IsZero() {
			longest = max(longest, day.Sub(prev)-last+first)
		}
		prev = day
	}
	if prev.IsZero() {
		return 0, errors.New("the schedule never runs (no matching day in five years, e.g. the 30th of February); pick a day that exists")
	}
	if longest == 0 {
		// A single run day in the whole horizon cannot happen for a
		// schedule that repeats within five years; be strict, not lax.
		longest = 24 * time.Hour
	}
	return longest, nil
}

// dayTimes lists the times of day, sorted, that the hour and minute bit
// sets of a robfig/cron schedule select.
func dayTimes(hours, minutes uint64) []time.Duration {
	var out []time.Duration
	for h := 0; h < 24; h++ {
		if hours&(1<<h) == 0 {
			continue
		}
		for m := 0; m < 60; m++ {
			if minutes&(1<<m) != 0 {
				out = append(out, time.Duration(h)*time.Hour+time.Duration(m)*time.Minute)
			}
		}
	}
	return out
}

// lowestBit keeps the lowest value of a bit set, without the star marker.
func lowestBit(set uint64) uint64 {
	set &^= starBit
	return 1 << bits.TrailingZeros64(set)
}

// endOfDay is the last second of t's day, so Next finds the next day.
func endOfDay(t time.Time) time.Time {
	return t.Truncate(24 * time.Hour).Add(24*time.Hour - time.Second)
}
