package cli

import (
	"io"
	"slices"
	"strings"
)

// CutMiddle is Cut that keeps both ends of s: its longest prefix and
// suffix that fit in width-1 cells around Ellipsis, the suffix taking the
// odd cell and any the prefix could not use. For names whose two ends say most (a package path and its
// function, a directory and its file), where Cut would drop the function.
// Like Cut it counts cells after escaping and never splits an escape.
func CutMiddle(s string, width int) string {
	width = max(width, 1)
	safe := Safe(s)
	if StringWidth(safe) <= width {
		return safe
	}
	// Work on the escaped text, in units that are never split: an escape
	// such as \u202e is one unit of six cells.
	units := safeUnits(s)
	head := (width - 1) / 2
	var hb strings.Builder
	cells := 0
	i := 0
	for ; i < len(units) && cells+StringWidth(units[i]) <= head; i++ {
		cells += StringWidth(units[i])
		hb.WriteString(units[i])
	}
	var tailUnits []string
	tail := width - 1 - cells // the cells the head left unused go to the tail
	cells = 0
	for j := len(units) - 1; j >= i && cells+StringWidth(units[j]) <= tail; j-- {
		cells += StringWidth(units[j])
		tailUnits = append(tailUnits, units[j])
	}
	var b strings.Builder
	b.WriteString(hb.String())
	b.WriteString(Ellipsis)
	for k := len(tailUnits) - 1; k >= 0; k-- {
		b.WriteString(tailUnits[k])
	}
	return b.String()
}

// safeUnits splits Safe(s) into the pieces each rune of s becomes.
func safeUnits(s string) []string {
	units := make([]string, 0, len(s))
	for _, r := range s {
		units = append(units, Safe(string(r)))
	}
	return units
}

// StringWidth is how many terminal cells s takes, s being text already
// made Safe: East Asian wide characters count two, every other one.
func StringWidth(s string) int {
	n := 0
	for _, r := range s {
		if wide(r) {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Table is a human table that fits a width: its columns are separated by
// two spaces, as text/tabwriter with padding 2 lays them out (the same
// output when nothing is cut). When the table is wider than the width,
// the Drop columns are left out, in that order, until it can fit with its
// Flex columns at MinFlex, and then the Flex columns, widest first, are cut
// in the middle (CutMiddle) until it fits. Only text output is cut; --json
// always carries every value whole. Cells are raw values: Table makes them
// Safe.
type Table struct {
	Header []string
	Rows   [][]string
	// Flex names the columns that may be cut (by index).
	Flex []int
	// Drop names the columns that may be left out, the first first.
	Drop []int
	// MinFlex is the narrowest a flex column is cut to (default 12).
	MinFlex int
	// Max bounds a column's width whatever the line width (by index; 0 or
	// missing: NameWidth); a flex column is cut to it in the middle.
	Max []int
	// Color, when set and colour is on, gives the style of a body cell
	// (by row and column); the cell is painted after it is padded.
	Color func(row, col int) Style
}

// Write prints t on w within width cells (0: as wide as it is); color
// says whether w may carry colour (Env.ColorStdout), and the header is
// bold when it may. It returns the headers of the columns it left out.
func (t *Table) Write(w io.Writer, width int, color bool) (dropped []string, err error) {
	ncol := len(t.Header)
	for _, r := range t.Rows {
		ncol = max(ncol, len(r))
	}
	all := make([][]string, 0, len(t.Rows)+1)
	if t.Header != nil {
		all = append(all, t.Header)
	}
	all = append(all, t.Rows...)
	cells := make([][]string, len(all))
	widths := make([]int, ncol)
	for i, r := range all {
		cells[i] = make([]string, ncol)
		for j := range ncol {
			if j < len(r) {
				cells[i][j] = Cut(r[j], NameWidth)
			}
			widths[j] = max(widths[j], StringWidth(cells[i][j]))
		}
	}
	for j := range widths {
		if j < len(t.Max) && t.Max[j] > 0 {
			widths[j] = min(widths[j], t.Max[j])
		}
	}
	keep := make([]bool, ncol)
	for j := range keep {
		keep[j] = true
	}
	if width > 0 {
		t.fit(widths, keep, width)
	}
	for j, k := range keep {
		if !k && j < len(t.Header) {
			dropped = append(dropped, t.Header[j])
		}
	}
	last := ncol - 1
	for last > 0 && !keep[last] {
		last--
	}
	var b strings.Builder
	for i, r := range cells {
		b.Reset()
		for j, c := range r {
			if !keep[j] {
				continue
			}
			raw := all[i]
			if StringWidth(c) > widths[j] && j < len(raw) {
				if slices.Contains(t.Flex, j) {
					c = CutMiddle(raw[j], widths[j])
				} else {
					c = Cut(raw[j], widths[j])
				}
			}
			pad := ""
			if j != last {
				pad = strings.Repeat(" ", widths[j]-StringWidth(c)+2)
			}
			style := Style("")
			switch {
			case t.Header != nil && i == 0:
				style = Bold
			case t.Color != nil:
				row := i
				if t.Header != nil {
					row--
				}
				style = t.Color(row, j)
			}
			b.WriteString(Paint(color, style, c))
			b.WriteString(pad)
		}
		line := strings.TrimRight(b.String(), " ")
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			return dropped, err
		}
	}
	return dropped, nil
}

// fit leaves out Drop columns (keep) and narrows the flex columns of
// widths until the table fits width.
func (t *Table) fit(widths []int, keep []bool, width int) {
	minFlex := t.MinFlex
	if minFlex <= 0 {
		minFlex = 12
	}
	total := func(flexAtMin bool) int {
		n, cols := 0, 0
		for j, w := range widths {
			if !keep[j] {
				continue
			}
			if flexAtMin && slices.Contains(t.Flex, j) {
				w = min(w, minFlex)
			}
			n += w
			cols++
		}
		return n + 2*max(cols-1, 0)
	}
	for _, j := range t.Drop {
		if total(true) <= width {
			break
		}
		if j < len(keep) {
			keep[j] = false
		}
	}
	for over := total(false) - width; over > 0; over-- {
		widest := -1
		for _, j := range t.Flex {
			if j < len(widths) && keep[j] && widths[j] > minFlex && (widest < 0 || widths[j] > widths[widest]) {
				widest = j
			}
		}
		if widest < 0 {
			return // cut as far as it goes: the fixed columns are wider
		}
		widths[widest]--
	}
}
