package tui

import "strings"

// paint names a style on the lane canvas; the canvas stores one per cell and
// colours runs of equal paint at once.
type paint uint8

const (
	paintPlain paint = iota
	paintLifeline
	paintFaint
	paintBold
	paintOK
	paintWarn
	paintBad
	paintInfo
	paintLane  // + lane index
	paintCount = paintLane + laneCount
)

// Lanes of the sequence pane, left to right.
const (
	laneWatch = iota
	laneQueue
	laneReconcile
	laneClient
	laneAPI
	laneCount
)

var laneNames = [laneCount]string{"Watch", "Queue", "Reconcile", "Client", "API"}

// paintCodes are the escape sequences for every paint, computed once per Styles.
type paintCodes [paintCount]ansiCodes

func newPaintCodes(st Styles) paintCodes {
	var c paintCodes
	for p, i := range map[paint]Ink{
		paintPlain: st.Plain, paintLifeline: st.Lifeline, paintFaint: st.Faint, paintBold: st.Bold,
		paintOK: st.OK, paintWarn: st.Warn, paintBad: st.Bad, paintInfo: st.Info,
	} {
		c[p] = i.codes
	}
	for i := 0; i < laneCount; i++ {
		c[paintLane+paint(i)] = st.Lanes[i].codes
	}
	return c
}

// laneRow is one line of the sequence diagram: a cell per column, with a
// lifeline on every lane until something is drawn over it.
type laneRow struct {
	runes  []rune
	paints []paint
	x      *[laneCount]int
}

// laneAt places the lifelines: the Reconcile lane gets the most room after
// it, because client calls leave from it with the longest labels.
var laneAt = [laneCount]float64{0, 0.2, 0.41, 0.70, 0.92}

func lanePositions(w int) [laneCount]int {
	var x [laneCount]int
	for i, f := range laneAt {
		x[i] = 1 + int(f*float64(w-3))
	}
	return x
}

func newLaneRow(w int, x *[laneCount]int) laneRow {
	r := laneRow{runes: make([]rune, w), paints: make([]paint, w), x: x}
	for i := range r.runes {
		r.runes[i] = ' '
	}
	for _, lx := range x {
		r.set(lx, '│', paintLifeline)
	}
	return r
}

func (r laneRow) set(x int, c rune, p paint) {
	if x >= 0 && x < len(r.runes) {
		r.runes[x], r.paints[x] = c, p
	}
}

// text writes s from column x and returns the column after it.
func (r laneRow) text(x int, s string, p paint) int {
	for _, c := range s {
		r.set(x, c, p)
		x++
	}
	return x
}

// note writes text just right of a lane's lifeline.
func (r laneRow) note(lane int, s string, p paint) int {
	r.set(r.x[lane], '├', paint(paintLane)+paint(lane))
	return r.text(r.x[lane]+2, s, p)
}

// arrow draws a message from one lane to another with its label on the
// shaft when it fits and after the head otherwise; it returns the column
// after everything drawn, for a trailing note.
func (r laneRow) arrow(from, to int, label string, p paint) int {
	xa, xb := r.x[from], r.x[to]
	labelLen := len([]rune(label))
	if from < to {
		for x := xa + 1; x < xb; x++ {
			r.set(x, '─', p)
		}
		r.set(xa, '├', p)
		r.set(xb-1, '▶', p)
		if labelLen > 0 && xa+2+labelLen+2 < xb-1 {
			r.text(xa+2, " "+label+" ", p)
			return xb + 1
		}
		if labelLen > 0 {
			return r.text(xb+1, " "+label, p)
		}
		return xb + 1
	}
	for x := xb + 1; x < xa; x++ {
		r.set(x, '─', p)
	}
	r.set(xb+1, '◀', p)
	r.set(xa, '┤', p)
	if labelLen > 0 && xb+3+labelLen+2 < xa {
		r.text(xb+3, " "+label+" ", p)
		return xa + 1
	}
	if labelLen > 0 {
		return r.text(xa+1, " "+label, p)
	}
	return xa + 1
}

// fits reports whether label fits on the shaft of an arrow between two lanes.
func (r laneRow) fits(from, to int, label string) bool {
	span := r.x[to] - r.x[from]
	if span < 0 {
		span = -span
	}
	return len([]rune(label))+5 < span
}

// arrowFit draws an arrow with the first label that fits on its shaft, or
// the first label after the head when none does.
func (r laneRow) arrowFit(from, to int, p paint, labels ...string) int {
	for _, l := range labels {
		if r.fits(from, to, l) {
			return r.arrow(from, to, l, p)
		}
	}
	return r.arrow(from, to, labels[0], p)
}

// render turns the row into a string, colouring runs of equal paint.
func (r laneRow) render(codes *paintCodes) string {
	var b strings.Builder
	b.Grow(len(r.runes) * 2)
	end := len(r.runes)
	for end > 0 && r.runes[end-1] == ' ' {
		end--
	}
	for i := 0; i < end; {
		j := i
		for j < end && r.paints[j] == r.paints[i] {
			j++
		}
		b.WriteString(codes[r.paints[i]].wrap(string(r.runes[i:j])))
		i = j
	}
	return b.String()
}
