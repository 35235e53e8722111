package intervals

import (
	"reflect"
	"testing"
)

func TestUnsortedInput(t *testing.T) {
	got := Merge([]Interval{{5, 8}, {1, 3}, {2, 6}})
	if want := []Interval{{1, 8}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Merge = %v, want %v", got, want)
	}
}

func TestTouchingIntervalsMerge(t *testing.T) {
	got := Merge([]Interval{{1, 3}, {3, 5}, {7, 7}})
	if want := []Interval{{1, 5}, {7, 7}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Merge = %v, want %v", got, want)
	}
}

func TestInputUntouched(t *testing.T) {
	in := []Interval{{5, 8}, {1, 3}}
	Merge(in)
	if want := []Interval{{5, 8}, {1, 3}}; !reflect.DeepEqual(in, want) {
		t.Fatalf("Merge changed its input to %v", in)
	}
}
