package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// clip cuts a (styled) line to w cells.
func clip(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// pad clips or pads a (styled) line to exactly w cells.
func pad(s string, w int) string {
	n := ansi.StringWidth(s)
	switch {
	case n > w:
		return clip(s, w)
	case n < w:
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// formatDuration prints a duration short and readable: 850µs, 12ms, 1.2s, 3m05s.
func formatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + formatDuration(-d)
	case d == 0:
		return "0s"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Millisecond && d%time.Millisecond != 0:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 10*time.Second && d%time.Second != 0:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d%time.Minute == 0 && d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func formatUptime(d time.Duration) string {
	return formatDuration(d.Truncate(time.Second))
}

func formatMs(ms float64) string {
	if ms <= 0 {
		return ""
	}
	return formatDuration(time.Duration(ms * float64(time.Millisecond)))
}

// shortKey drops the namespace when the line is short of room.
func shortKey(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[i+1:]
	}
	return key
}
