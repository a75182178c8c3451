package countersign

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Display is what the owner is shown: a title, the summary of what
// approving does, and up to MaxFields fields.
type Display struct {
	Title string
	// Summary is the connector's one line of what approving does, naming
	// the consequence and whether it can be undone (SPEC §8); the approve
	// sentence names it, so the wallet shows it too. Empty: none.
	Summary string
	Fields  []Field
}

// Field is one labelled value (or list of values) of a display, marked with
// whose words they are.
type Field struct {
	Kind      FieldKind
	Label     string
	Values    []string
	WrittenBy WrittenBy
}

// FieldKind says how a field's values are drawn and bounds their length.
type FieldKind string

// The six field kinds.
const (
	FieldMoney    FieldKind = "money"
	FieldAccount  FieldKind = "account"
	FieldAddress  FieldKind = "address"
	FieldText     FieldKind = "text"
	FieldLongText FieldKind = "long_text"
	FieldList     FieldKind = "list"
)

// Valid reports whether k is one of the six field kinds.
func (k FieldKind) Valid() bool {
	switch k {
	case FieldMoney, FieldAccount, FieldAddress, FieldText, FieldLongText, FieldList:
		return true
	}
	return false
}

// MaxChars returns the longest value, in code points, a field of kind k may
// hold.
func (k FieldKind) MaxChars() int {
	switch k {
	case FieldLongText:
		return MaxLongTextChars
	case FieldText:
		return MaxTextChars
	}
	return MaxValueChars
}

// WrittenBy says whose words a field's values are.
type WrittenBy string

// Authors of a field.
const (
	WrittenByProject WrittenBy = "project" // the connector's own words
	WrittenByAgent   WrittenBy = "agent"   // words the agent supplied
)

// Valid reports whether w is project or agent.
func (w WrittenBy) Valid() bool { return w == WrittenByProject || w == WrittenByAgent }

// File describes one file a task hands the owner. Its bytes are sealed apart
// from the envelope; the envelope names them by size and SHA-256.
type File struct {
	ContentType string // lowercase type/subtype, no parameters
	Name        string
	SHA256      string // lowercase hex of the file's bytes
	Size        int64
}

// ValidateDisplay checks a display against every limit and character rule of
// SPEC §12. A refusal is display_invalid with a sentence naming the limit and
// where it was broken (fields and values are numbered from 1); it never
// quotes the text.
func ValidateDisplay(d Display) error {
	if p := checkText(d.Title, MaxTitleChars, false); p != "" {
		return invalid("the title " + p)
	}
	if d.Summary != "" {
		if err := ValidateSummary(d.Summary); err != nil {
			return err
		}
	}
	if len(d.Fields) > MaxFields {
		return invalid(fmt.Sprintf("the display has more than %d fields", MaxFields))
	}
	for i, f := range d.Fields {
		n := i + 1
		if !f.Kind.Valid() {
			return invalid(fmt.Sprintf("field %d kind is not one of money, account, address, text, long_text and list", n))
		}
		if !f.WrittenBy.Valid() {
			return invalid(fmt.Sprintf("field %d written_by is neither project nor agent", n))
		}
		if p := checkText(f.Label, MaxLabelChars, false); p != "" {
			return invalid(fmt.Sprintf("field %d label %s", n, p))
		}
		switch {
		case len(f.Values) == 0:
			return invalid(fmt.Sprintf("field %d has no value", n))
		case f.Kind == FieldList && len(f.Values) > MaxListValues:
			return invalid(fmt.Sprintf("field %d has more than %d values", n, MaxListValues))
		case f.Kind != FieldList && len(f.Values) != 1:
			return invalid(fmt.Sprintf("field %d holds more than one value and is not a list", n))
		}
		for j, v := range f.Values {
			if p := checkText(v, f.Kind.MaxChars(), f.Kind == FieldLongText); p != "" {
				return invalid(fmt.Sprintf("field %d value %d %s", n, j+1, p))
			}
		}
	}
	return nil
}

// ValidateSummary checks a display's summary, the one line naming what
// approving does (SPEC §8): shown text of at most MaxSummaryChars, no line
// break. A refusal is display_invalid and never quotes the text.
func ValidateSummary(s string) error {
	if p := checkText(s, MaxSummaryChars, false); p != "" {
		return invalid("the summary " + p)
	}
	return nil
}

// ValidateShownLine checks one line of shown text of at most maxChars
// characters, by the rules of a summary (SPEC §12): the summaries of a
// batch sentence, joined, are such a line. A refusal is display_invalid
// and never quotes the text.
func ValidateShownLine(s string, maxChars int) error {
	if p := checkText(s, maxChars, false); p != "" {
		return invalid("the text " + p)
	}
	return nil
}

// ValidateFiles checks the files of a task: at most MaxFiles, at most
// MaxFilesBytes together (task_too_large), names and content types as SPEC
// §12 allows, names unique ignoring case (Unicode simple folding). Other
// refusals are display_invalid; files are numbered from 1 in the sentences.
func ValidateFiles(files []File) error {
	if len(files) > MaxFiles {
		return invalid(fmt.Sprintf("the task has more than %d files", MaxFiles))
	}
	var total int64
	for i, f := range files {
		n := i + 1
		if p := checkFileName(f.Name); p != "" {
			return invalid(fmt.Sprintf("file %d name %s", n, p))
		}
		for j := range i {
			if strings.EqualFold(files[j].Name, f.Name) {
				return invalid(fmt.Sprintf("file %d has the same name as file %d, ignoring case", n, j+1))
			}
		}
		if len(f.ContentType) > MaxContentTypeChars {
			return invalid(fmt.Sprintf("file %d content type is longer than %d characters", n, MaxContentTypeChars))
		}
		if !validContentType(f.ContentType) {
			return invalid(fmt.Sprintf("file %d content type is not a lowercase type/subtype without parameters", n))
		}
		if !validHexSHA256(f.SHA256) {
			return invalid(fmt.Sprintf("file %d sha256 is not 64 lowercase hex digits", n))
		}
		if f.Size < 0 {
			return invalid(fmt.Sprintf("file %d size is negative", n))
		}
		// Each size is checked before it is added, so the sum cannot overflow.
		if f.Size > MaxFilesBytes || total+f.Size > MaxFilesBytes {
			return Errorf(TaskTooLarge, "the files together are larger than 6 MiB (%d bytes)", MaxFilesBytes)
		}
		total += f.Size
	}
	return nil
}

func invalid(sentence string) error {
	return &Error{Code: DisplayInvalid, Message: sentence}
}

// checkFileName returns what is wrong with a file name, or "".
func checkFileName(name string) string {
	if p := checkText(name, MaxFileNameChars, false); p != "" {
		return p
	}
	if strings.ContainsAny(name, `/\`) {
		return "holds a path separator"
	}
	if strings.ContainsFunc(name, isSlashLookalike) {
		return "holds a character that looks like a path separator"
	}
	if strings.ContainsAny(name, windowsRefused) {
		return "holds one of " + windowsRefused + ", which Windows refuses in file names"
	}
	first, _ := utf8.DecodeRuneInString(name)
	last, _ := utf8.DecodeLastRuneInString(name)
	if first == '.' || last == '.' {
		return "begins or ends with a dot"
	}
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return "begins or ends with white space"
	}
	if isWindowsDevice(name) {
		return "is a name Windows keeps for a device"
	}
	return ""
}

// windowsRefused are the printable characters Windows refuses in a file
// name besides / and \ (a colon would also name a drive or a data stream).
const windowsRefused = `<>:"|?*`

// isSlashLookalike reports characters drawn as / or \: fraction slash,
// division slash, set minus, the box-drawing diagonals, OCR double
// backslash, the mathematical and big solidi, small and fullwidth solidi,
// and the very heavy solidi.
func isSlashLookalike(r rune) bool {
	switch r {
	case '\u2044', '\u2215', '\u2216', '\u2571', '\u2572', '\u244a', '\u29f5', '\u29f8', '\u29f9',
		'\ufe68', '\uff0f', '\uff3c', '\U0001f67c', '\U0001f67d':
		return true
	}
	return false
}

// isWindowsDevice reports names Windows takes for a device whatever follows
// them: CON, PRN, AUX, NUL, CONIN$, CONOUT$, COM0–COM9 and LPT0–LPT9 (also
// with the superscript digits ¹ ² ³), in any case, alone or before a dot
// (NUL.txt, con.tar.gz), spaces before the dot ignored as Windows ignores
// them.
func isWindowsDevice(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	base = strings.Map(func(r rune) rune { // ASCII case only, as Windows
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if rest, ok := strings.CutPrefix(base, "COM"); ok {
		base = rest
	} else if rest, ok := strings.CutPrefix(base, "LPT"); ok {
		base = rest
	} else {
		return false
	}
	return len(base) == 1 && base[0] >= '0' && base[0] <= '9' || base == "¹" || base == "²" || base == "³"
}

// checkText applies the shown-text rules of SPEC §12 to s and returns what is
// wrong in words that never quote s, or "" when s may be shown. multiline
// allows line feeds and tabs (long_text values).
func checkText(s string, maxChars int, multiline bool) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	if s == "" {
		return "is empty"
	}
	if utf8.RuneCountInString(s) > maxChars {
		return fmt.Sprintf("is longer than %d characters", maxChars)
	}
	visible, marksOnly := false, false
	marks := 0
	for _, r := range s {
		if r >= 0x20 && r < 0x7f { // printable ASCII: no rule applies
			marks = 0
			visible = visible || r != ' '
			continue
		}
		switch {
		case r == '\n' || r == '\t':
			if !multiline {
				if r == '\n' {
					return "holds a line break"
				}
				return "holds a tab"
			}
		case r < 0x20 || r >= 0x7f && r <= 0x9f: // category Cc
			return "holds a control character"
		case r == '\u2028' || r == '\u2029':
			return "holds a line or paragraph separator"
		case isBidiControl(r):
			return "holds a bidirectional control character"
		case isInvisible(r):
			return "holds a zero-width or formatting character"
		case isNoncharacter(r):
			return "holds a noncharacter"
		case r >= 0xe000 && unicode.Is(unicode.Co, r): // none below U+E000
			return "holds a private-use character"
		case !isAssigned(r):
			return "holds a code point Unicode " + unicode.Version + " does not assign"
		}
		mark := r >= 0x300 && unicode.IsMark(r) // Mn, Mc, Me; none below U+0300
		if mark {
			marks++
			if marks > MaxCombiningRun {
				return fmt.Sprintf("holds more than %d combining marks in a row", MaxCombiningRun)
			}
		} else {
			marks = 0
		}
		switch {
		case isBlank(r):
		case mark || r == '\ufe0e' || r == '\ufe0f':
			marksOnly = true
		default:
			visible = true
		}
	}
	switch {
	case visible:
		return ""
	case marksOnly:
		// Marks and presentation selectors draw on a character; alone
		// they draw nothing, or a dotted circle.
		return "holds only combining marks, variation selectors and white space"
	}
	return "holds only white space"
}

// isNoncharacter reports the 66 noncharacters: U+FDD0–U+FDEF and the last
// two code points of every plane (U+FFFE, U+FFFF, U+1FFFE … U+10FFFF).
func isNoncharacter(r rune) bool {
	return r >= 0xfdd0 && r <= 0xfdef || r&0xfffe == 0xfffe
}

// isAssigned reports whether Go's tables (Unicode unicode.Version) give r a
// category other than Cn (unassigned; unicode.C includes Cn, so the other
// categories of C are named one by one). Surrogates (Cs) never reach here:
// they are not valid UTF-8.
func isAssigned(r rune) bool {
	if r < 0x378 { // U+0378 is the first unassigned code point
		return true
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co)
}

// isBidiControl reports the characters that reorder text: the implicit marks
// (ALM, LRM, RLM), the embeddings and overrides (LRE, RLE, PDF, LRO, RLO) and
// the isolates (LRI, RLI, FSI, PDI).
func isBidiControl(r rune) bool {
	switch {
	case r == '\u061c', r == '\u200e', r == '\u200f':
		return true
	case r >= '\u202a' && r <= '\u202e':
		return true
	case r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// isInvisible reports characters that draw nothing or change how their
// neighbours are drawn: every format character (category Cf: zero-width
// space, joiners, word joiner, BOM, soft hyphen, invisible operators, tags,
// the Mongolian vowel separator and the rest), every other default-ignorable
// code point (Hangul fillers, the combining grapheme joiner, Mongolian free
// variation selectors, Khmer inherent vowels, reserved ranges) and variation
// selectors — except U+FE0E and U+FE0F, which choose text or emoji
// presentation of the character before them.
func isInvisible(r rune) bool {
	if r < 0x300 {
		return r == '\u00ad' // the only one below U+0300
	}
	if r == '\ufe0e' || r == '\ufe0f' {
		return false
	}
	return unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// isBlank reports characters that show as empty space: white space and the
// braille blank pattern.
func isBlank(r rune) bool {
	return unicode.IsSpace(r) || r == '\u2800'
}

// validContentType reports whether s is type/subtype, each an RFC 6838
// restricted-name in lowercase, with no parameters.
func validContentType(s string) bool {
	typ, sub, ok := strings.Cut(s, "/")
	return ok && restrictedName(typ) && restrictedName(sub)
}

// restrictedName is RFC 6838 §4.2's restricted-name, lowercase: a letter or
// digit, then up to 126 of letters, digits and !#$&-^_.+
func restrictedName(s string) bool {
	if len(s) == 0 || len(s) > 127 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && strings.IndexByte("!#$&-^_.+", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func validHexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
