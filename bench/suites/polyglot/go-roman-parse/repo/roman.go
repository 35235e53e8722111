// Package roman converts numbers to Roman numerals.
package roman

import (
	"fmt"
	"strings"
)

var numerals = []struct {
	value  int
	symbol string
}{
	{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"},
	{100, "C"}, {90, "XC"}, {50, "L"}, {40, "XL"},
	{10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"},
}

// ToRoman writes n (1 to 3999) as a Roman numeral.
func ToRoman(n int) (string, error) {
	if n < 1 || n > 3999 {
		return "", fmt.Errorf("%d is out of range 1..3999", n)
	}
	var b strings.Builder
	for _, numeral := range numerals {
		for n >= numeral.value {
			b.WriteString(numeral.symbol)
			n -= numeral.value
		}
	}
	return b.String(), nil
}
