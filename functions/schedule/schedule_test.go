package schedule

import (
	"strings"
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 12, 6, 10, 7, 30, 0, time.UTC) // a Sunday
	cases := []struct {
		spec, tz string
		after    time.Time
		want     []string // the next fire times, RFC 3339 in UTC
	}{
		{"*/5 * * * *", "", base, []string{"2026-12-06T10:10:00Z", "2026-12-06T10:15:00Z"}},
		{"0 9 * * 1", "America/New_York", base, []string{"2026-12-07T14:00:00Z", "2026-12-14T14:00:00Z"}},
		{"30 2 * * *", "Asia/Kolkata", base, []string{"2026-12-06T21:00:00Z", "2026-12-07T21:00:00Z"}},
		{"0 0 1 * *", "UTC", base, []string{"2027-01-01T00:00:00Z"}},
		{"every 5 minutes", "", base, []string{"2026-12-06T10:10:00Z", "2026-12-06T10:15:00Z"}},
		{"every 1 hours synchronized", "UTC", base, []string{"2026-12-06T11:00:00Z"}},
		{"every 2 hours from 08:00 to 12:00", "UTC", base, []string{"2026-12-06T12:00:00Z", "2026-12-07T08:00:00Z", "2026-12-07T10:00:00Z"}},
		{"every day 09:00", "America/New_York", base, []string{"2026-12-06T14:00:00Z", "2026-12-07T14:00:00Z"}},
		{"every monday,friday 18:30", "UTC", base, []string{"2026-12-07T18:30:00Z", "2026-12-11T18:30:00Z", "2026-12-14T18:30:00Z"}},
		// Daylight saving: 09:00 New York is 13:00 UTC in summer.
		{"every day 09:00", "America/New_York", time.Date(2026, 3, 7, 15, 0, 0, 0, time.UTC), []string{"2026-03-08T13:00:00Z"}},
		{"0 9 * * *", "America/New_York", time.Date(2026, 3, 7, 15, 0, 0, 0, time.UTC), []string{"2026-03-08T13:00:00Z"}},
	}
	for _, c := range cases {
		s, err := Parse(c.spec, c.tz)
		if err != nil {
			t.Errorf("Parse(%q, %q): %v", c.spec, c.tz, err)
			continue
		}
		at := c.after
		for i, w := range c.want {
			at = s.Next(at)
			if got := at.UTC().Format(time.RFC3339); got != w {
				t.Errorf("%q in %q: fire %d = %s, want %s", c.spec, c.tz, i+1, got, w)
				break
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ spec, tz, want string }{
		{"", "", "empty"},
		{"* * *", "", "neither unix-cron nor App Engine"},
		{"61 * * * *", "", "neither unix-cron"},
		{"every 5 minutes", "Mars/Olympus", "unknown time zone"},
		{"every 0 minutes", "", "positive"},
		{"every 30 hours", "", "at most 24 hours"},
		{"every fooday 09:00", "", "not a day of the week"},
		{"every day 25:00", "", "not a time of day"},
		{"every 2 hours from 18:00 to 08:00", "", "ends before it starts"},
		{"every fortnight", "", "not a schedule Pyric reads"},
	} {
		_, err := Parse(c.spec, c.tz)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q, %q) = %v, want an error containing %q", c.spec, c.tz, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "every 5 minutes", "every monday 09:00", "0 9 1-5 1,6 MON-FRI", "every 2 hours from 08:00 to 18:00", "1-/ * * * *"} {
		f.Add(s)
	}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := Parse(spec, "Europe/Paris")
		if err != nil {
			return
		}
		if n := s.Next(from); !n.IsZero() && !n.After(from) {
			t.Fatalf("%q: Next(%s) = %s, not after", spec, from, n)
		}
	})
}
