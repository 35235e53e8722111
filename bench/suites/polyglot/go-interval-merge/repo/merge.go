// Package intervals merges closed integer intervals.
package intervals

// Interval is the closed range [Start, End].
type Interval struct {
	Start, End int
}

// Merge returns the fewest intervals covering the same points as in.
func Merge(in []Interval) []Interval {
	var out []Interval
	for _, iv := range in {
		if n := len(out); n > 0 && iv.Start < out[n-1].End {
			if iv.End > out[n-1].End {
				out[n-1].End = iv.End
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}
