package wordwrap

import (
	"reflect"
	"testing"
)

func TestLineOfExactlyTheWidth(t *testing.T) {
	got := Wrap("aaa bbb ccc", 7)
	if want := []string{"aaa bbb", "ccc"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Wrap = %q, want %q", got, want)
	}
}

func TestSpacesAreCollapsed(t *testing.T) {
	got := Wrap("the  quick\tbrown fox", 9)
	if want := []string{"the quick", "brown fox"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Wrap = %q, want %q", got, want)
	}
}

func TestLongWordAlone(t *testing.T) {
	got := Wrap("a extraordinary b", 5)
	if want := []string{"a", "extraordinary", "b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Wrap = %q, want %q", got, want)
	}
}
