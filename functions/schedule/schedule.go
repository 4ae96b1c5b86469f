// Package schedule parses the schedules of scheduled Cloud Functions
// (onSchedule, v1 pubsub.schedule()) as Cloud Scheduler reads them —
// unix-cron ("*/5 * * * *") and the App Engine cron syntax ("every 5
// minutes", "every monday 09:00", "every 2 hours from 08:00 to 18:00")
// — in a time zone, and says when a schedule next fires.
package schedule

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Default time zones of a function that names none, as firebase-tools
// creates their Cloud Scheduler jobs.
const (
	DefaultTimeZoneV1 = "America/Los_Angeles"
	DefaultTimeZoneV2 = "UTC"
)

// Schedule is a parsed schedule in its time zone.
type Schedule struct {
	spec string
	loc  *time.Location
	cron cron.Schedule // unix-cron
	// App Engine syntax: an interval (from the window's start each day)
	// or times of day on some weekdays.
	every      time.Duration
	from, to   time.Duration // window within the day; to == 0 means the whole day
	at         time.Duration // time of day for a weekday schedule
	days       [7]bool
	weekdaySet bool
}

// String is the schedule as written.
func (s *Schedule) String() string { return s.spec }

// Location is the schedule's time zone.
func (s *Schedule) Location() *time.Location { return s.loc }

// cronParser reads the five unix-cron fields Cloud Scheduler accepts.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// Parse reads spec in time zone tz (an IANA name; "" means UTC). Errors
// name the problem.
func Parse(spec, tz string) (*Schedule, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("schedule: empty schedule")
	}
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("schedule: unknown time zone %q", tz)
	}
	s := &Schedule{spec: spec, loc: loc}
	if strings.HasPrefix(strings.ToLower(spec), "every ") || strings.Contains(strings.ToLower(spec), " of ") {
		if err := s.parseAppEngine(strings.ToLower(spec)); err != nil {
			return nil, err
		}
		return s, nil
	}
	c, err := parseCron(spec)
	if err != nil {
		return nil, fmt.Errorf("schedule: %q is neither unix-cron nor App Engine syntax: %v", spec, err)
	}
	if sc, ok := c.(*cron.SpecSchedule); ok {
		sc.Location = loc
	}
	s.cron = c
	return s, nil
}

// parseCron reads unix-cron; a panic inside the parser (none is known)
// becomes an error, so bad input never crashes the server.
func parseCron(spec string) (c cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return cronParser.Parse(spec)
}

var (
	intervalRx = regexp.MustCompile(`^every (\d+) (minutes?|mins?|hours?|hrs?)(?: (synchronized)| from (\d\d?:\d\d) to (\d\d?:\d\d))?$`)
	daysRx     = regexp.MustCompile(`^every ([a-z, ]+?) (\d\d?:\d\d)$`)
	weekdays   = map[string]time.Weekday{"sunday": time.Sunday, "sun": time.Sunday, "monday": time.Monday, "mon": time.Monday,
		"tuesday": time.Tuesday, "tue": time.Tuesday, "wednesday": time.Wednesday, "wed": time.Wednesday,
		"thursday": time.Thursday, "thu": time.Thursday, "friday": time.Friday, "fri": time.Friday,
		"saturday": time.Saturday, "sat": time.Saturday}
)

func clock(hm string) (time.Duration, error) {
	h, m, _ := strings.Cut(hm, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh > 23 || mm > 59 {
		return 0, fmt.Errorf("schedule: %q is not a time of day (HH:MM)", hm)
	}
	return time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute, nil
}

// parseAppEngine reads the App Engine cron forms Cloud Scheduler takes:
// "every N minutes|hours [synchronized | from HH:MM to HH:MM]", "every
// day HH:MM" and "every monday[,tuesday…] HH:MM". Intervals count from
// midnight (or the window's start) in the time zone, which is what
// "synchronized" asks for and keeps local runs predictable.
func (s *Schedule) parseAppEngine(spec string) error {
	spec = strings.Join(strings.Fields(spec), " ")
	if m := intervalRx.FindStringSubmatch(spec); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n <= 0 {
			return fmt.Errorf("schedule: %q: the interval must be a positive number", spec)
		}
		unit := time.Minute
		if strings.HasPrefix(m[2], "h") {
			unit = time.Hour
		}
		s.every = time.Duration(n) * unit
		if s.every > 24*time.Hour {
			return fmt.Errorf("schedule: %q: an interval is at most 24 hours", spec)
		}
		if m[4] != "" {
			if s.from, err = clock(m[4]); err != nil {
				return err
			}
			if s.to, err = clock(m[5]); err != nil {
				return err
			}
			if s.to <= s.from {
				return fmt.Errorf("schedule: %q: the window ends before it starts", spec)
			}
		}
		return nil
	}
	if m := daysRx.FindStringSubmatch(spec); m != nil {
		at, err := clock(m[2])
		if err != nil {
			return err
		}
		s.at, s.weekdaySet = at, true
		for _, d := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ' ' }) {
			if d == "day" {
				s.days = [7]bool{true, true, true, true, true, true, true}
				continue
			}
			wd, ok := weekdays[d]
			if !ok {
				return fmt.Errorf("schedule: %q: %q is not a day of the week", spec, d)
			}
			s.days[wd] = true
		}
		return nil
	}
	return fmt.Errorf("schedule: %q is not a schedule Pyric reads (unix-cron, or App Engine syntax: \"every 5 minutes\", \"every day 09:00\", \"every monday,friday 18:30\", \"every 2 hours from 08:00 to 18:00\")", spec)
}

// Next is the first time after t the schedule fires (the zero time if
// it never does).
func (s *Schedule) Next(t time.Time) time.Time {
	if s.cron != nil {
		return s.cron.Next(t)
	}
	lt := t.In(s.loc)
	for d := 0; d < 9; d++ {
		y, mo, dd := lt.Date()
		day := time.Date(y, mo, dd+d, 0, 0, 0, 0, s.loc)
		if s.weekdaySet {
			if !s.days[day.Weekday()] {
				continue
			}
			at := wall(day, s.at)
			if at.After(t) {
				return at
			}
			continue
		}
		end := 24 * time.Hour
		if s.to > 0 {
			end = s.to
		}
		for off := s.from; off <= end && off < 24*time.Hour; off += s.every {
			at := wall(day, off)
			if at.After(t) {
				return at
			}
		}
	}
	return time.Time{}
}

// wall is the wall-clock time off after midnight on day, in day's zone
// (so 09:00 stays 09:00 across a daylight-saving change).
func wall(day time.Time, off time.Duration) time.Time {
	y, m, d := day.Date()
	return time.Date(y, m, d, int(off/time.Hour), int(off%time.Hour/time.Minute), 0, 0, day.Location())
}
