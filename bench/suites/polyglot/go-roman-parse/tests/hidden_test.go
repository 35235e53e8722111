package roman

import "testing"

func TestFromRoman(t *testing.T) {
	for s, want := range map[string]int{"I": 1, "IV": 4, "XLII": 42, "MCMXCIV": 1994, "MMMCMXCIX": 3999} {
		if got, err := FromRoman(s); err != nil || got != want {
			t.Errorf("FromRoman(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
}

func TestFromRomanRefuses(t *testing.T) {
	for _, s := range []string{"", "IIII", "VX", "IM", "ABC", "mcm", "MMMM"} {
		if got, err := FromRoman(s); err == nil {
			t.Errorf("FromRoman(%q) = %d; want an error", s, got)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for n := 1; n <= 3999; n++ {
		s, _ := ToRoman(n)
		if got, err := FromRoman(s); err != nil || got != n {
			t.Fatalf("FromRoman(%q) = %d, %v; want %d", s, got, err, n)
		}
	}
}
