package intervals

import (
	"reflect"
	"testing"
)

func TestSortedOverlaps(t *testing.T) {
	got := Merge([]Interval{{1, 4}, {2, 6}, {8, 9}})
	if want := []Interval{{1, 6}, {8, 9}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Merge = %v, want %v", got, want)
	}
}

func TestEmpty(t *testing.T) {
	if got := Merge(nil); len(got) != 0 {
		t.Fatalf("Merge(nil) = %v, want none", got)
	}
}
