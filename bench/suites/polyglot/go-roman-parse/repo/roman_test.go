package roman

import "testing"

func TestToRoman(t *testing.T) {
	for n, want := range map[int]string{1: "I", 4: "IV", 1994: "MCMXCIV", 3999: "MMMCMXCIX"} {
		if got, err := ToRoman(n); err != nil || got != want {
			t.Errorf("ToRoman(%d) = %q, %v; want %q", n, got, err, want)
		}
	}
}

func TestToRomanOutOfRange(t *testing.T) {
	if _, err := ToRoman(0); err == nil {
		t.Error("ToRoman(0): want an error")
	}
}
