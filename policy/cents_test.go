package policy

import (
	"math"
	"testing"
)

func TestParseCentsAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Cents
	}{
		{"0", 0},
		{"0.5", 50},
		{"0.05", 5},
		{"1", 100},
		{"499.99", 49999},
		{"500", 50000},
		{"500.0", 50000},
		{"500.00", 50000},
		{"500.01", 50001},
		{"999999999999999.99", 99999999999999999},
	} {
		got, err := ParseCents(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseCents(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestParseCentsRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"",
		".",
		".5",
		"5.",
		"-1",
		"+1",
		"01",
		"00",
		"1.234",
		"1.230",
		"1e3",
		"1E3",
		"1.5e2",
		"1,000",
		" 1",
		"1 ",
		"0x10",
		"1000000000000000", // sixteen whole digits
		"NaN",
		"Infinity",
		"1.2.3",
		"1..2",
		"١٢", // Arabic-Indic digits
	} {
		if got, err := ParseCents(in); err == nil {
			t.Errorf("ParseCents(%q) = %d, want an error", in, got)
		}
	}
}

func TestCentsString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      Cents
		want    string
		dollars string
	}{
		{0, "0.00", "$0.00"},
		{5, "0.05", "$0.05"},
		{50, "0.50", "$0.50"},
		{50001, "500.01", "$500.01"},
		{-305, "-3.05", "-$3.05"},
		{math.MinInt64, "-92233720368547758.08", "-$92,233,720,368,547,758.08"},
		{math.MaxInt64, "92233720368547758.07", "$92,233,720,368,547,758.07"},
	} {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("Cents(%d).String() = %q, want %q", int64(tc.in), got, tc.want)
		}
		if got := tc.in.dollars(); got != tc.dollars {
			t.Errorf("Cents(%d).dollars() = %q, want %q", int64(tc.in), got, tc.dollars)
		}
	}
}
