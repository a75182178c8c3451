package policy

import (
	"errors"
	"strconv"
	"strings"
)

// Cents is an exact amount of US dollars, counted in cents. Policies write
// amounts in dollars with at most two decimals (500, 499.99); they are never
// held as floating point.
type Cents int64

// maxDollarDigits bounds the whole-dollar part of an amount: fifteen digits
// is far above any real payment and keeps every amount well inside int64.
const maxDollarDigits = 15

var errCents = errors.New("not an amount in dollars with at most two decimals")

// ParseCents reads an amount in dollars as policies write it: a whole number
// of dollars without sign, exponent or leading zeros, optionally followed by
// a point and one or two decimals ("0", "500", "499.9", "499.99"). It is the
// exact reading of the JSON numbers a policy holds, so a connector can read
// the amounts of its own calls the same way.
func ParseCents(s string) (Cents, error) {
	whole, frac := s, ""
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			whole, frac = s[:i], s[i+1:]
			if frac == "" || len(frac) > 2 {
				return 0, errCents
			}
			break
		}
	}
	if whole == "" || len(whole) > maxDollarDigits || (len(whole) > 1 && whole[0] == '0') {
		return 0, errCents
	}
	var c int64
	for i := 0; i < len(whole); i++ {
		if whole[i] < '0' || whole[i] > '9' {
			return 0, errCents
		}
		c = c*10 + int64(whole[i]-'0')
	}
	c *= 100
	scale := int64(10)
	for i := 0; i < len(frac); i++ {
		if frac[i] < '0' || frac[i] > '9' {
			return 0, errCents
		}
		c += int64(frac[i]-'0') * scale
		scale /= 10
	}
	return Cents(c), nil
}

// String writes the amount in dollars with two decimals ("499.99",
// "-3.05"), the form ParseCents reads back for amounts that are not
// negative.
func (c Cents) String() string {
	n := int64(c)
	sign := ""
	if n < 0 {
		sign = "-"
	}
	// Work on the magnitude as an unsigned number so that the most negative
	// int64 has one too.
	u := uint64(n)
	if n < 0 {
		u = -u
	}
	frac := strconv.FormatUint(u%100, 10)
	if len(frac) == 1 {
		frac = "0" + frac
	}
	return sign + strconv.FormatUint(u/100, 10) + "." + frac
}

// dollars writes the amount for a sentence, its thousands grouped:
// "$499.99", "$20,000.00".
func (c Cents) dollars() string {
	s := c.String()
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i := range len(whole) {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(whole[i])
	}
	return sign + "$" + b.String() + "." + frac
}
