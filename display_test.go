package countersign

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// goodDisplay has one field of every kind.
func goodDisplay() Display {
	return Display{
		Title: "Pay invoice INV-104",
		Fields: []Field{
			{Kind: FieldMoney, Label: "Amount", Values: []string{"$1,250.00"}, WrittenBy: WrittenByProject},
			{Kind: FieldAccount, Label: "From", Values: []string{"Operating ••4821"}, WrittenBy: WrittenByProject},
			{Kind: FieldAddress, Label: "To", Values: []string{"acme@example.com"}, WrittenBy: WrittenByAgent},
			{Kind: FieldText, Label: "Memo", Values: []string{"March <hosting> & support"}, WrittenBy: WrittenByAgent},
			{Kind: FieldLongText, Label: "Body", Values: []string{"Hello,\n\n\tplease find the invoice attached.\n— Bot"}, WrittenBy: WrittenByAgent},
			{Kind: FieldList, Label: "Recipients", Values: []string{"a@example.com", "b@example.com"}, WrittenBy: WrittenByAgent},
		},
	}
}

func fieldOf(kind FieldKind, values ...string) Field {
	return Field{Kind: kind, Label: "L", Values: values, WrittenBy: WrittenByAgent}
}

func rep(s string, n int) string { return strings.Repeat(s, n) }

func TestValidateDisplayLimits(t *testing.T) {
	t.Parallel()
	if err := ValidateDisplay(goodDisplay()); err != nil {
		t.Fatalf("the good display is refused: %v", err)
	}
	with := func(f func(*Display)) Display {
		d := goodDisplay()
		f(&d)
		return d
	}
	only := func(fs ...Field) Display { return Display{Title: "T", Fields: fs} }
	many := func(n int) []Field {
		fs := make([]Field, n)
		for i := range fs {
			fs[i] = fieldOf(FieldText, "v")
		}
		return fs
	}
	values := func(n int) []string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = fmt.Sprint(i)
		}
		return vs
	}
	cases := []struct {
		name string
		d    Display
		want string // "" means accepted; otherwise the exact sentence
	}{
		{"title 80", with(func(d *Display) { d.Title = rep("a", 80) }), ""},
		{"title 80 two-byte", with(func(d *Display) { d.Title = rep("é", 80) }), ""},
		{"title 80 astral", with(func(d *Display) { d.Title = rep("💸", 80) }), ""},
		{"title 81", with(func(d *Display) { d.Title = rep("a", 81) }), "the title is longer than 80 characters"},
		{"title 81 two-byte", with(func(d *Display) { d.Title = rep("é", 81) }), "the title is longer than 80 characters"},
		{"title empty", with(func(d *Display) { d.Title = "" }), "the title is empty"},
		{"title spaces", with(func(d *Display) { d.Title = "   " }), "the title holds only white space"},
		{"summary 200", with(func(d *Display) { d.Summary = rep("€", 200) }), ""},
		{"summary 201", with(func(d *Display) { d.Summary = rep("a", 201) }), "the summary is longer than 200 characters"},
		{"summary line break", with(func(d *Display) { d.Summary = "pay $1\nto Bob" }), "the summary holds a line break"},
		{"summary bidi", with(func(d *Display) { d.Summary = "pay \u202e$1" }), "the summary holds a bidirectional control character"},
		{"summary spaces", with(func(d *Display) { d.Summary = "  " }), "the summary holds only white space"},
		{"no fields", only(), ""},
		{"12 fields", only(many(12)...), ""},
		{"13 fields", only(many(13)...), "the display has more than 12 fields"},
		{"label 40", only(Field{Kind: FieldText, Label: rep("ü", 40), Values: []string{"v"}, WrittenBy: WrittenByAgent}), ""},
		{"label 41", only(Field{Kind: FieldText, Label: rep("ü", 41), Values: []string{"v"}, WrittenBy: WrittenByAgent}), "field 1 label is longer than 40 characters"},
		{"label empty", only(Field{Kind: FieldText, Label: "", Values: []string{"v"}, WrittenBy: WrittenByAgent}), "field 1 label is empty"},
		{"label blank", only(fieldOf(FieldText, "v"), Field{Kind: FieldText, Label: "\t", Values: []string{"v"}, WrittenBy: WrittenByAgent}), "field 2 label holds a tab"},
		{"long_text 50000", only(fieldOf(FieldLongText, rep("a", 50_000))), ""},
		{"long_text 50000 astral", only(fieldOf(FieldLongText, rep("😀", 50_000))), ""},
		{"long_text 50001", only(fieldOf(FieldLongText, rep("a", 50_001))), "field 1 value 1 is longer than 50000 characters"},
		{"text 500", only(fieldOf(FieldText, rep("日", 500))), ""},
		{"text 501", only(fieldOf(FieldText, rep("日", 501))), "field 1 value 1 is longer than 500 characters"},
		{"money 200", only(fieldOf(FieldMoney, rep("9", 200))), ""},
		{"money 201", only(fieldOf(FieldMoney, rep("9", 201))), "field 1 value 1 is longer than 200 characters"},
		{"account 201", only(fieldOf(FieldAccount, rep("a", 201))), "field 1 value 1 is longer than 200 characters"},
		{"address 201", only(fieldOf(FieldAddress, rep("a", 201))), "field 1 value 1 is longer than 200 characters"},
		{"list value 200", only(fieldOf(FieldList, "a", rep("b", 200))), ""},
		{"list value 201", only(fieldOf(FieldList, "a", rep("b", 201))), "field 1 value 2 is longer than 200 characters"},
		{"list 1 value", only(fieldOf(FieldList, "a")), ""},
		{"list 20 values", only(fieldOf(FieldList, values(20)...)), ""},
		{"list 21 values", only(fieldOf(FieldList, values(21)...)), "field 1 has more than 20 values"},
		{"list no values", only(fieldOf(FieldList)), "field 1 has no value"},
		{"list nil values", only(Field{Kind: FieldList, Label: "L", WrittenBy: WrittenByAgent}), "field 1 has no value"},
		{"text two values", only(fieldOf(FieldText, "a", "b")), "field 1 holds more than one value and is not a list"},
		{"money no value", only(fieldOf(FieldMoney)), "field 1 has no value"},
		{"long_text two values", only(fieldOf(FieldLongText, "a", "b")), "field 1 holds more than one value and is not a list"},
		{"value empty", only(fieldOf(FieldText, "")), "field 1 value 1 is empty"},
		{"list value blank", only(fieldOf(FieldList, "a", "\u00a0\u3000")), "field 1 value 2 holds only white space"},
		{"long_text blank", only(fieldOf(FieldLongText, "\n\t \n")), "field 1 value 1 holds only white space"},
		{"braille blank", only(fieldOf(FieldText, "\u2800\u2800")), "field 1 value 1 holds only white space"},
		{"only an emoji selector", only(fieldOf(FieldText, "\ufe0f")), "field 1 value 1 holds only combining marks, variation selectors and white space"},
		{"only a text selector", only(fieldOf(FieldText, "\ufe0e")), "field 1 value 1 holds only combining marks, variation selectors and white space"},
		{"selectors and spaces", only(fieldOf(FieldList, "a", " \ufe0f\u00a0\ufe0e ")), "field 1 value 2 holds only combining marks, variation selectors and white space"},
		{"only combining marks", only(fieldOf(FieldText, "\u0301\u0302")), "field 1 value 1 holds only combining marks, variation selectors and white space"},
		{"only one combining mark", only(fieldOf(FieldMoney, "\u0301")), "field 1 value 1 holds only combining marks, variation selectors and white space"},
		{"only an enclosing mark", only(fieldOf(FieldText, "\u20dd")), "field 1 value 1 holds only combining marks, variation selectors and white space"},
		{"only a spacing mark", only(fieldOf(FieldText, "\u0903")), "field 1 value 1 holds only combining marks, variation selectors and white space"},
		{"marks between spaces", only(fieldOf(FieldLongText, " \u0301\n\u0302\t")), "field 1 value 1 holds only combining marks, variation selectors and white space"},
		{"marks on the braille blank", only(fieldOf(FieldText, "\u2800\u0301")), "field 1 value 1 holds only combining marks, variation selectors and white space"},
		{"title only a selector", with(func(d *Display) { d.Title = "\ufe0f" }), "the title holds only combining marks, variation selectors and white space"},
		{"label only marks", only(Field{Kind: FieldText, Label: "\u0301\u0301", Values: []string{"v"}, WrittenBy: WrittenByAgent}), "field 1 label holds only combining marks, variation selectors and white space"},
		{"a mark on a space is visible enough", only(fieldOf(FieldText, "a \u0301")), ""},
		{"a selector after a character", only(fieldOf(FieldText, "\u2764\ufe0f")), ""},
		{"kind unknown", only(fieldOf("url", "x")), "field 1 kind is not one of money, account, address, text, long_text and list"},
		{"kind empty", only(fieldOf("", "x")), "field 1 kind is not one of money, account, address, text, long_text and list"},
		{"kind uppercase", only(fieldOf("Money", "x")), "field 1 kind is not one of money, account, address, text, long_text and list"},
		{"written_by unknown", only(Field{Kind: FieldText, Label: "L", Values: []string{"v"}, WrittenBy: "owner"}), "field 1 written_by is neither project nor agent"},
		{"written_by empty", only(Field{Kind: FieldText, Label: "L", Values: []string{"v"}}), "field 1 written_by is neither project nor agent"},
		{"line feed in text", only(fieldOf(FieldText, "a\nb")), "field 1 value 1 holds a line break"},
		{"tab in list", only(fieldOf(FieldList, "a\tb")), "field 1 value 1 holds a tab"},
		{"line feed in title", with(func(d *Display) { d.Title = "a\nb" }), "the title holds a line break"},
		{"line feed in label", only(Field{Kind: FieldLongText, Label: "a\nb", Values: []string{"v"}, WrittenBy: WrittenByAgent}), "field 1 label holds a line break"},
		{"CRLF in long_text", only(fieldOf(FieldLongText, "a\r\nb")), "field 1 value 1 holds a control character"},
		{"4 combining marks", only(fieldOf(FieldText, "e\u0301\u0302\u0303\u0304")), ""},
		{"4 combining marks twice", only(fieldOf(FieldText, "e\u0301\u0302\u0303\u0304e\u0301\u0302\u0303\u0304")), ""},
		{"5 combining marks", only(fieldOf(FieldText, "e\u0301\u0302\u0303\u0304\u0305")), "field 1 value 1 holds more than 4 combining marks in a row"},
		{"5 marks of every class", only(fieldOf(FieldText, "\u0915\u0903\u0903\u20dd\u0301\u093c")), "field 1 value 1 holds more than 4 combining marks in a row"},
		{"5 marks at the start", only(fieldOf(FieldText, rep("\u0301", 5))), "field 1 value 1 holds more than 4 combining marks in a row"},
		{"emoji presentation", only(fieldOf(FieldText, "❤\ufe0f ✔\ufe0e")), ""},
		{"Devanagari conjunct", only(fieldOf(FieldText, "क्षत्रिय")), ""},
		{"spaces inside", only(fieldOf(FieldText, " a\u00a0b\u2003c ")), ""},
		{"first error wins", Display{Title: rep("a", 81), Fields: many(13)}, "the title is longer than 80 characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkRefusal(t, ValidateDisplay(c.d), DisplayInvalid, c.want)
		})
	}
}

func checkRefusal(t *testing.T, err error, code Code, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("accepted, want %s: %s", code, want)
	}
	if got := ErrorCode(err); got != code {
		t.Fatalf("code = %s, want %s (%v)", got, code, err)
	}
	if got := ErrorMessage(err); got != want {
		t.Fatalf("sentence = %q, want %q", got, want)
	}
}

// refusedChars lists the characters SPEC §12 refuses, with the phrase each
// is refused with.
var refusedChars = []struct {
	r      rune
	phrase string
}{
	{0x00, "holds a control character"},
	{0x07, "holds a control character"},
	{0x08, "holds a control character"},
	{'\r', "holds a control character"},
	{0x1b, "holds a control character"},
	{0x1f, "holds a control character"},
	{0x7f, "holds a control character"},
	{0x85, "holds a control character"},
	{0x9b, "holds a control character"},
	{0x9f, "holds a control character"},
	{0x2028, "holds a line or paragraph separator"},
	{0x2029, "holds a line or paragraph separator"},
	{0x061c, "holds a bidirectional control character"},
	{0x200e, "holds a bidirectional control character"},
	{0x200f, "holds a bidirectional control character"},
	{0x202a, "holds a bidirectional control character"},
	{0x202b, "holds a bidirectional control character"},
	{0x202c, "holds a bidirectional control character"},
	{0x202d, "holds a bidirectional control character"},
	{0x202e, "holds a bidirectional control character"},
	{0x2066, "holds a bidirectional control character"},
	{0x2067, "holds a bidirectional control character"},
	{0x2068, "holds a bidirectional control character"},
	{0x2069, "holds a bidirectional control character"},
	{0x200b, "holds a zero-width or formatting character"}, // zero-width space
	{0x200c, "holds a zero-width or formatting character"}, // ZWNJ
	{0x200d, "holds a zero-width or formatting character"}, // ZWJ
	{0x2060, "holds a zero-width or formatting character"}, // word joiner
	{0xfeff, "holds a zero-width or formatting character"}, // BOM
	{0x180e, "holds a zero-width or formatting character"}, // Mongolian vowel separator
	{0x00ad, "holds a zero-width or formatting character"}, // soft hyphen
	{0x034f, "holds a zero-width or formatting character"}, // combining grapheme joiner
	{0x115f, "holds a zero-width or formatting character"}, // Hangul choseong filler
	{0x1160, "holds a zero-width or formatting character"}, // Hangul jungseong filler
	{0x3164, "holds a zero-width or formatting character"}, // Hangul filler
	{0xffa0, "holds a zero-width or formatting character"}, // halfwidth Hangul filler
	{0x17b4, "holds a zero-width or formatting character"}, // Khmer inherent vowel
	{0x180b, "holds a zero-width or formatting character"}, // Mongolian free variation selector
	{0x2061, "holds a zero-width or formatting character"}, // function application
	{0x2062, "holds a zero-width or formatting character"}, // invisible times
	{0x2064, "holds a zero-width or formatting character"}, // invisible plus
	{0x2065, "holds a zero-width or formatting character"}, // reserved default-ignorable
	{0x206a, "holds a zero-width or formatting character"}, // inhibit symmetric swapping
	{0x206f, "holds a zero-width or formatting character"}, // nominal digit shapes
	{0xfe00, "holds a zero-width or formatting character"}, // variation selector 1
	{0xfe0d, "holds a zero-width or formatting character"}, // variation selector 14
	{0xfff9, "holds a zero-width or formatting character"}, // interlinear annotation anchor
	{0xfffb, "holds a zero-width or formatting character"}, // interlinear annotation terminator
	{0x0600, "holds a zero-width or formatting character"}, // Arabic number sign
	{0x110bd, "holds a zero-width or formatting character"},
	{0x1bca0, "holds a zero-width or formatting character"}, // shorthand format letter overlap
	{0x1d173, "holds a zero-width or formatting character"}, // musical symbol begin beam
	{0xe0001, "holds a zero-width or formatting character"}, // language tag
	{0xe0041, "holds a zero-width or formatting character"}, // tag latin capital A
	{0xe007f, "holds a zero-width or formatting character"}, // cancel tag
	{0xe0100, "holds a zero-width or formatting character"}, // variation selector 17
	{0xe01ef, "holds a zero-width or formatting character"}, // variation selector 256
	{0xe0fff, "holds a zero-width or formatting character"}, // reserved default-ignorable
	{0xfdd0, "holds a noncharacter"},
	{0xfdef, "holds a noncharacter"},
	{0xfffe, "holds a noncharacter"},
	{0xffff, "holds a noncharacter"},
	{0x1fffe, "holds a noncharacter"},
	{0x1ffff, "holds a noncharacter"},
	{0xefffe, "holds a noncharacter"},
	{0x10fffe, "holds a noncharacter"},
	{0x10ffff, "holds a noncharacter"},
	{0xe000, "holds a private-use character"},
	{0xf8ff, "holds a private-use character"}, // a vendor's logo in its own fonts
	{0xf0000, "holds a private-use character"},
	{0xffffd, "holds a private-use character"},
	{0x100000, "holds a private-use character"},
	{0x10fffd, "holds a private-use character"},
	{0x0378, unassigned},
	{0x0530, unassigned},
	{0x1faff, unassigned},
	{0x2fffd, unassigned},
	{0x3fffd, unassigned},
	{0x9fffd, unassigned},
	{0xefffd, unassigned},
}

// unassigned is the phrase for a code point Go's Unicode tables leave
// unassigned.
var unassigned = "holds a code point Unicode " + unicode.Version + " does not assign"

// TestRefusedCharactersEverywhere puts every refused character in every
// place shown text goes: the title, a label, a value of each kind and a file
// name, at the start, in the middle and at the end.
func TestRefusedCharactersEverywhere(t *testing.T) {
	t.Parallel()
	const marker = "MARKER-51c2"
	for _, c := range refusedChars {
		for _, pos := range []string{"start", "middle", "end"} {
			var s string
			switch pos {
			case "start":
				s = string(c.r) + marker
			case "middle":
				s = "a" + marker + string(c.r) + "b"
			case "end":
				s = marker + string(c.r)
			}
			places := []struct {
				where string
				err   error
			}{
				{"the title", ValidateDisplay(Display{Title: s})},
				{"field 1 label", ValidateDisplay(Display{Title: "T", Fields: []Field{{Kind: FieldText, Label: s, Values: []string{"v"}, WrittenBy: WrittenByAgent}}})},
				{"file 1 name", ValidateFiles([]File{{ContentType: "text/plain", Name: s, SHA256: rep("0", 64), Size: 1}})},
			}
			for _, k := range []FieldKind{FieldMoney, FieldAccount, FieldAddress, FieldText, FieldLongText, FieldList} {
				places = append(places, struct {
					where string
					err   error
				}{"field 2 value 1", ValidateDisplay(Display{Title: "T", Fields: []Field{fieldOf(FieldText, "ok"), fieldOf(k, s)}})})
			}
			for _, p := range places {
				name := fmt.Sprintf("%U %s in %s", c.r, pos, p.where)
				t.Run(name, func(t *testing.T) {
					checkRefusal(t, p.err, DisplayInvalid, p.where+" "+c.phrase)
					if strings.Contains(p.err.Error(), marker) {
						t.Fatal("the sentence quotes the text")
					}
				})
			}
		}
	}
}

// TestRefusedSetIsWhatTheRulesSay walks every code point and checks the
// classification against the rules written out in the package documentation,
// so that a character is neither refused nor let through by accident.
func TestRefusedSetIsWhatTheRulesSay(t *testing.T) {
	t.Parallel()
	bidi := map[rune]bool{0x061c: true, 0x200e: true, 0x200f: true, 0x202a: true, 0x202b: true, 0x202c: true,
		0x202d: true, 0x202e: true, 0x2066: true, 0x2067: true, 0x2068: true, 0x2069: true}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue // not encodable in UTF-8
		}
		if r == '\n' || r == '\t' {
			continue // checked in TestValidateDisplayLimits
		}
		var want string
		switch {
		case unicode.Is(unicode.Cc, r):
			want = "holds a control character"
		case r == 0x2028 || r == 0x2029:
			want = "holds a line or paragraph separator"
		case bidi[r]:
			want = "holds a bidirectional control character"
		case unicode.Is(unicode.Cf, r),
			unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
			unicode.Is(unicode.Variation_Selector, r) && r != 0xfe0e && r != 0xfe0f:
			want = "holds a zero-width or formatting character"
		case unicode.Is(unicode.Noncharacter_Code_Point, r):
			want = "holds a noncharacter"
		case unicode.Is(unicode.Co, r):
			want = "holds a private-use character"
		case unicode.Is(unicode.Cn, r):
			want = unassigned
		}
		got := checkText("a"+string(r)+"b", 10, true)
		if got != want {
			t.Errorf("%U: got %q, want %q", r, got, want)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"\xff", "a\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ok\x80"} {
		checkRefusal(t, ValidateDisplay(Display{Title: s}), DisplayInvalid, "the title is not valid UTF-8")
		checkRefusal(t, ValidateDisplay(Display{Title: "T", Fields: []Field{fieldOf(FieldLongText, s)}}), DisplayInvalid, "field 1 value 1 is not valid UTF-8")
		checkRefusal(t, ValidateFiles([]File{{ContentType: "a/b", Name: s, SHA256: rep("a", 64)}}), DisplayInvalid, "file 1 name is not valid UTF-8")
	}
}

func goodFile(name string, size int64) File {
	return File{ContentType: "application/pdf", Name: name, SHA256: rep("ab", 32), Size: size}
}

func TestValidateFiles(t *testing.T) {
	t.Parallel()
	files := func(n int, size int64) []File {
		fs := make([]File, n)
		for i := range fs {
			fs[i] = goodFile(fmt.Sprintf("file-%d.pdf", i), size)
		}
		return fs
	}
	withName := func(name string) []File { return []File{goodFile("other.txt", 1), goodFile(name, 1)} }
	withType := func(ct string) []File {
		f := goodFile("a.bin", 1)
		f.ContentType = ct
		return []File{f}
	}
	withHash := func(h string) []File {
		f := goodFile("a.bin", 1)
		f.SHA256 = h
		return []File{f}
	}
	const tooLarge = "the files together are larger than 6 MiB (6291456 bytes)"
	const (
		windows   = `file 2 name holds one of <>:"|?*, which Windows refuses in file names`
		lookalike = "file 2 name holds a character that looks like a path separator"
		device    = "file 2 name is a name Windows keeps for a device"
	)
	cases := []struct {
		name  string
		files []File
		code  Code
		want  string // "" means accepted
	}{
		{"none", nil, "", ""},
		{"empty file", files(1, 0), "", ""},
		{"10 files", files(10, 1), "", ""},
		{"11 files", files(11, 1), DisplayInvalid, "the task has more than 10 files"},
		{"exactly 6 MiB in one", files(1, 6_291_456), "", ""},
		{"exactly 6 MiB in ten", append(files(9, 629_145), goodFile("last.pdf", 6_291_456-9*629_145)), "", ""},
		{"one byte over in one", files(1, 6_291_457), TaskTooLarge, tooLarge},
		{"one byte over in ten", append(files(9, 629_145), goodFile("last.pdf", 6_291_457-9*629_145)), TaskTooLarge, tooLarge},
		{"largest size", files(1, 1<<63-1), TaskTooLarge, tooLarge},
		{"largest size after another", []File{goodFile("a", 1), goodFile("b", 1<<63-1)}, TaskTooLarge, tooLarge},
		{"sizes that would overflow", []File{goodFile("a", 1<<62), goodFile("b", 1<<62), goodFile("c", 1<<62)}, TaskTooLarge, tooLarge},
		{"negative size", files(1, -1), DisplayInvalid, "file 1 size is negative"},
		{"negative size hiding a large one", []File{goodFile("a", 6_291_456), goodFile("b", -6_291_456)}, DisplayInvalid, "file 2 size is negative"},
		{"name 200", withName(rep("n", 196) + ".pdf"), "", ""},
		{"name 200 multibyte", withName(rep("名", 200)), "", ""},
		{"name 201", withName(rep("名", 201)), DisplayInvalid, "file 2 name is longer than 200 characters"},
		{"name empty", withName(""), DisplayInvalid, "file 2 name is empty"},
		{"name blank", withName("  "), DisplayInvalid, "file 2 name holds only white space"},
		{"name slash", withName("a/b.pdf"), DisplayInvalid, "file 2 name holds a path separator"},
		{"name backslash", withName(`a\b.pdf`), DisplayInvalid, "file 2 name holds a path separator"},
		{"name traversal", withName("../etc/passwd"), DisplayInvalid, "file 2 name holds a path separator"},
		{"name dot", withName("."), DisplayInvalid, "file 2 name begins or ends with a dot"},
		{"name dot dot", withName(".."), DisplayInvalid, "file 2 name begins or ends with a dot"},
		{"name leading dot", withName(".env"), DisplayInvalid, "file 2 name begins or ends with a dot"},
		{"name trailing dot", withName("report."), DisplayInvalid, "file 2 name begins or ends with a dot"},
		{"name inner dots", withName("a..b.tar.gz"), "", ""},
		{"name leading space", withName(" report.pdf"), DisplayInvalid, "file 2 name begins or ends with white space"},
		{"name trailing space", withName("report.pdf "), DisplayInvalid, "file 2 name begins or ends with white space"},
		{"name trailing no-break space", withName("report.pdf\u00a0"), DisplayInvalid, "file 2 name begins or ends with white space"},
		{"name inner space", withName("annual report.pdf"), "", ""},
		{"name tab", withName("a\tb"), DisplayInvalid, "file 2 name holds a tab"},
		{"name right-to-left override", withName("invoice\u202efdp.exe"), DisplayInvalid, "file 2 name holds a bidirectional control character"},
		{"name only a selector", withName("\ufe0f"), DisplayInvalid, "file 2 name holds only combining marks, variation selectors and white space"},
		{"name only combining marks", withName("\u0301\u0301"), DisplayInvalid, "file 2 name holds only combining marks, variation selectors and white space"},
		{"name noncharacter", withName("a\uffff.pdf"), DisplayInvalid, "file 2 name holds a noncharacter"},
		{"name private use", withName("\uf8ff.pdf"), DisplayInvalid, "file 2 name holds a private-use character"},
		{"name unassigned", withName("a\u0378.pdf"), DisplayInvalid, "file 2 name " + unassigned},
		{"name colon", withName("C:evil"), DisplayInvalid, windows},
		{"name data stream", withName("report.pdf:hidden"), DisplayInvalid, windows},
		{"name leading colon", withName(":x"), DisplayInvalid, windows},
		{"name less than", withName("a<b.txt"), DisplayInvalid, windows},
		{"name greater than", withName("a>b.txt"), DisplayInvalid, windows},
		{"name quote", withName(`a"b.txt`), DisplayInvalid, windows},
		{"name bar", withName("a|b.txt"), DisplayInvalid, windows},
		{"name question mark", withName("a?.txt"), DisplayInvalid, windows},
		{"name star", withName("*.txt"), DisplayInvalid, windows},
		{"name fullwidth solidus", withName("a\uff0fb"), DisplayInvalid, lookalike},
		{"name division slash", withName("a\u2215b"), DisplayInvalid, lookalike},
		{"name fraction slash", withName("a\u2044b"), DisplayInvalid, lookalike},
		{"name big solidus", withName("a\u29f8b"), DisplayInvalid, lookalike},
		{"name box diagonal", withName("a\u2571b"), DisplayInvalid, lookalike},
		{"name very heavy solidus", withName("a\U0001f67cb"), DisplayInvalid, lookalike},
		{"name fullwidth reverse solidus", withName("a\uff3cb"), DisplayInvalid, lookalike},
		{"name set minus", withName("a\u2216b"), DisplayInvalid, lookalike},
		{"name reverse solidus operator", withName("a\u29f5b"), DisplayInvalid, lookalike},
		{"name big reverse solidus", withName("a\u29f9b"), DisplayInvalid, lookalike},
		{"name small reverse solidus", withName("a\ufe68b"), DisplayInvalid, lookalike},
		{"name box reverse diagonal", withName("a\u2572b"), DisplayInvalid, lookalike},
		{"name OCR double backslash", withName("a\u244ab"), DisplayInvalid, lookalike},
		{"name very heavy reverse solidus", withName("a\U0001f67db"), DisplayInvalid, lookalike},
		{"name con", withName("con"), DisplayInvalid, device},
		{"name CON", withName("CON"), DisplayInvalid, device},
		{"name Con.txt", withName("Con.txt"), DisplayInvalid, device},
		{"name NUL.txt", withName("NUL.txt"), DisplayInvalid, device},
		{"name nul.tar.gz", withName("nul.tar.gz"), DisplayInvalid, device},
		{"name NUL space dot", withName("NUL .txt"), DisplayInvalid, device},
		{"name prn", withName("prn.pdf"), DisplayInvalid, device},
		{"name aux", withName("Aux"), DisplayInvalid, device},
		{"name com1", withName("com1"), DisplayInvalid, device},
		{"name COM9.log", withName("COM9.log"), DisplayInvalid, device},
		{"name COM0", withName("COM0.txt"), DisplayInvalid, device},
		{"name lpt1", withName("lpt1.txt"), DisplayInvalid, device},
		{"name LPT9", withName("LPT9"), DisplayInvalid, device},
		{"name COM superscript one", withName("COM\u00b9.txt"), DisplayInvalid, device},
		{"name LPT superscript two", withName("lpt\u00b2"), DisplayInvalid, device},
		{"name LPT superscript three", withName("LPT\u00b3.pdf"), DisplayInvalid, device},
		{"name conin$", withName("conin$"), DisplayInvalid, device},
		{"name CONOUT$", withName("CONOUT$.txt"), DisplayInvalid, device},
		{"name console", withName("console.txt"), "", ""},
		{"name com10", withName("com10.txt"), "", ""},
		{"name nul_report", withName("nul_report.txt"), "", ""},
		{"name con-a", withName("con-a.txt"), "", ""},
		{"name com", withName("com.txt"), "", ""},
		{"name extension con", withName("report.con"), "", ""},
		{"name COM superscript four", withName("COM\u2074.txt"), "", ""},
		{"name fullwidth CON", withName("\uff23\uff2f\uff2e.txt"), "", ""},
		{"name CON with a dotless i is no device", withName("con\u0131n$"), "", ""},
		{"same name", withName("other.txt"), DisplayInvalid, "file 2 has the same name as file 1, ignoring case"},
		{"same name other case", withName("OTHER.TXT"), DisplayInvalid, "file 2 has the same name as file 1, ignoring case"},
		{"same name non-ASCII case", []File{goodFile("Ärger.pdf", 1), goodFile("äRGER.PDF", 1)}, DisplayInvalid, "file 2 has the same name as file 1, ignoring case"},
		{"same name Kelvin sign", []File{goodFile("k.pdf", 1), goodFile("\u212a.pdf", 1)}, DisplayInvalid, "file 2 has the same name as file 1, ignoring case"},
		{"same name Greek sigma", []File{goodFile("σ.pdf", 1), goodFile("ς.pdf", 1)}, DisplayInvalid, "file 2 has the same name as file 1, ignoring case"},
		{"same name, third file", []File{goodFile("a.pdf", 1), goodFile("b.pdf", 1), goodFile("A.PDF", 1)}, DisplayInvalid, "file 3 has the same name as file 1, ignoring case"},
		{"sharp s is not ss under simple folding", []File{goodFile("straße.pdf", 1), goodFile("strasse.pdf", 1)}, "", ""},
		{"type text/plain", withType("text/plain"), "", ""},
		{"type with suffix", withType("application/vnd.openxmlformats-officedocument.wordprocessingml.document"), "", ""},
		{"type with symbols", withType("application/x-a!#$&^_.+b"), "", ""},
		{"type 100", withType("a/" + rep("b", 98)), "", ""},
		{"type 101", withType("a/" + rep("b", 99)), DisplayInvalid, "file 1 content type is longer than 100 characters"},
		{"type with parameter", withType("text/plain; charset=utf-8"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"type with parameter no space", withType("text/plain;charset=utf-8"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"type uppercase", withType("Text/Plain"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"type without subtype", withType("text"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"type empty subtype", withType("text/"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"type empty type", withType("/plain"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"type two slashes", withType("text/plain/x"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"type symbol first", withType("-text/plain"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"subtype symbol first", withType("text/+plain"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"type space", withType(" text/plain"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"type wildcard", withType("*/*"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"type non-ASCII", withType("text/plaın"), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"type empty", withType(""), DisplayInvalid, "file 1 content type is not a lowercase type/subtype without parameters"},
		{"sha256 uppercase", withHash(rep("AB", 32)), DisplayInvalid, "file 1 sha256 is not 64 lowercase hex digits"},
		{"sha256 63", withHash(rep("a", 63)), DisplayInvalid, "file 1 sha256 is not 64 lowercase hex digits"},
		{"sha256 65", withHash(rep("a", 65)), DisplayInvalid, "file 1 sha256 is not 64 lowercase hex digits"},
		{"sha256 not hex", withHash(rep("g", 64)), DisplayInvalid, "file 1 sha256 is not 64 lowercase hex digits"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkRefusal(t, ValidateFiles(c.files), c.code, c.want)
		})
	}
}

func FuzzValidateDisplay(f *testing.F) {
	f.Add("Guess my number", "Question", "I picked a number", uint8(3), "report.pdf", "application/pdf")
	f.Add("a\u202eb", "L", "e\u0301\u0301\u0301\u0301\u0301", uint8(4), ".env", "text/plain; charset=utf-8")
	f.Add(" ", "\t", "line\nline\ttab", uint8(4), "a/b", "Text/Plain")
	f.Add("💸", "❤\ufe0f", "\u200d", uint8(5), "K.pdf", "a/b")
	f.Add("\xff", "ok", "\u2028", uint8(0), "\u212a", "x/y+z")
	f.Add("\ufe0f", "\u0301\u0302", "\ufffe", uint8(3), "NUL.txt", "text/plain")
	f.Add("\uf8ff", "L", "a\u0378", uint8(1), "C:evil", "text/plain")
	f.Add("T", "L", "v", uint8(3), "a\uff0fb", "text/plain")
	f.Add("T", "L", "v", uint8(3), "lpt\u00b9.pdf", "text/plain")
	f.Fuzz(func(t *testing.T, title, label, value string, kind uint8, name, contentType string) {
		kinds := []FieldKind{FieldMoney, FieldAccount, FieldAddress, FieldText, FieldLongText, FieldList, "other"}
		k := kinds[int(kind)%len(kinds)]
		values := []string{value}
		if k == FieldList {
			values = strings.Split(value, "|")
		}
		d := Display{Title: title, Fields: []Field{{Kind: k, Label: label, Values: values, WrittenBy: WrittenByAgent}}}
		files := []File{
			{ContentType: contentType, Name: name, SHA256: rep("0", 64), Size: 1},
			{ContentType: "text/plain", Name: "K.pdf", SHA256: rep("1", 64), Size: 2},
		}
		derr := ValidateDisplay(d)
		ferr := ValidateFiles(files)
		for _, err := range []error{derr, ferr} {
			if err == nil {
				continue
			}
			code := ErrorCode(err)
			if code != DisplayInvalid && code != TaskTooLarge {
				t.Fatalf("refusal with code %s: %v", code, err)
			}
		}
		if derr == nil {
			for _, s := range append([]string{title, label}, values...) {
				mustBeShowable(t, s, k == FieldLongText && s != title && s != label)
			}
			if n := utf8.RuneCountInString(title); n > MaxTitleChars {
				t.Fatalf("accepted a title of %d characters", n)
			}
		}
		if ferr == nil {
			mustBeShowable(t, name, false)
			if strings.ContainsAny(name, `/\<>:"|?*`+"\u2044\u2215\u2216\u2571\u2572\u244a\u29f5\u29f8\u29f9\ufe68\uff0f\uff3c\U0001f67c\U0001f67d") ||
				strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") ||
				strings.EqualFold(name, "K.pdf") || strings.TrimSpace(name) != name || windowsDevice.MatchString(name) {
				t.Fatalf("accepted the file name %q", name)
			}
			if strings.ToLower(contentType) != contentType || strings.ContainsAny(contentType, "; ") || strings.Count(contentType, "/") != 1 {
				t.Fatalf("accepted the content type %q", contentType)
			}
		}
		if derr != nil || ferr != nil {
			return
		}
		// Whatever is accepted makes an envelope that reads back the same.
		e := vectorEnvelope()
		e.Display, e.Files = d, files
		b, err := e.Canonical()
		if err != nil {
			if ErrorCode(err) == TaskTooLarge {
				return
			}
			t.Fatalf("an accepted display does not encode: %v", err)
		}
		parsed, err := ParseEnvelope(b)
		if err != nil {
			t.Fatalf("an accepted display does not parse back: %v", err)
		}
		if parsed.Display.Title != title || parsed.Files[0].Name != name || strings.Join(parsed.Display.Fields[0].Values, "|") != strings.Join(values, "|") {
			t.Fatal("an accepted display reads back differently")
		}
	})
}

// windowsDevice restates the device names Windows keeps, independently of
// isWindowsDevice.
var windowsDevice = regexp.MustCompile(`(?i)^(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³]) *(\.|$)`)

// mustBeShowable restates the shown-text rules independently of checkText.
func mustBeShowable(t *testing.T, s string, multiline bool) {
	t.Helper()
	blank := func(r rune) bool {
		return unicode.IsSpace(r) || r == 0x2800 || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me, unicode.Variation_Selector)
	}
	if !utf8.ValidString(s) || strings.TrimFunc(s, blank) == "" {
		t.Fatalf("accepted %q: invalid or blank", s)
	}
	marks := 0
	for _, r := range s {
		if (r == '\n' || r == '\t') && multiline {
			marks = 0
			continue
		}
		if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cn, unicode.Noncharacter_Code_Point) || r == 0x2028 || r == 0x2029 {
			t.Fatalf("accepted %q: it holds %U", s, r)
		}
		if unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) {
			if marks++; marks > 4 {
				t.Fatalf("accepted %q: more than 4 combining marks in a row", s)
			}
		} else {
			marks = 0
		}
	}
}

func BenchmarkValidateDisplay(b *testing.B) {
	d := goodDisplay()
	for b.Loop() {
		if err := ValidateDisplay(d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateDisplayLongText(b *testing.B) {
	d := Display{Title: "Send the message"}
	for range MaxFields {
		d.Fields = append(d.Fields, Field{Kind: FieldLongText, Label: "Body", Values: []string{rep("Grüße, 世界 — ok.\n", MaxLongTextChars/17)}, WrittenBy: WrittenByAgent})
	}
	n := 0
	for _, f := range d.Fields {
		n += len(f.Values[0])
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		if err := ValidateDisplay(d); err != nil {
			b.Fatal(err)
		}
	}
}
