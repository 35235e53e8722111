package wordwrap

import (
	"reflect"
	"testing"
)

func TestShortTextIsOneLine(t *testing.T) {
	got := Wrap("a b", 10)
	if want := []string{"a b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Wrap = %q, want %q", got, want)
	}
}

func TestEmptyTextHasNoLines(t *testing.T) {
	if got := Wrap("   ", 10); len(got) != 0 {
		t.Fatalf("Wrap = %q, want no lines", got)
	}
}
