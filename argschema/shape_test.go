package argschema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"countersign"
	"countersign/argschema"
	"countersign/connectors"
	"countersign/connectors/probe"
)

// shape is a shape of supplied text with the given members besides type
// and description (a string of members, as they appear in the object).
func shape(members string) json.RawMessage {
	return json.RawMessage(`{"type": "string", "description": "a whole number in digits, such as 7"` + members + `}`)
}

// TestTextShapeRefusals: a shape that does not read, does not compile,
// uses more than the keywords every checker reads alike, or whose examples
// do not fit, is refused with a sentence saying why; so is a connector
// declaring one (the catalogue's set, the connectortest harness).
func TestTextShapeRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, shape, says string
	}{
		{"not JSON", `{"type": "string"`, "does not read"},
		{"not an object", `["string"]`, "does not read"},
		{"a number's shape", `{"type": "integer", "description": "a number", "examples": ["1"]}`, `is not a string's ("type": "string")`},
		{"types", `{"type": ["string", "null"], "description": "a number", "examples": ["1"]}`, "does not read"},
		{"no type", `{"description": "a number", "examples": ["1"]}`, `is not a string's`},
		{"another keyword", string(shape(`, "examples": ["1"], "format": "email"`)), "uses a keyword other than type, pattern, minLength, maxLength, description and examples (`format`)"},
		{"a reference", string(shape(`, "examples": ["1"], "$ref": "https://example.com/s.json"`)), "uses a keyword other than"},
		{"enum", string(shape(`, "examples": ["1"], "enum": ["1", "2"]`)), "uses a keyword other than"},
		{"a keyword twice", string(shape(`, "examples": ["1"], "pattern": "^a", "pattern": "^b"`)), "names `pattern` twice"},
		{"a keyword in another case", string(shape(`, "examples": ["1"], "Pattern": "^a"`)), "writes `pattern` in another case"},
		{"no description", `{"type": "string", "examples": ["1"]}`, "has no description of what is expected"},
		{"a blank description", `{"type": "string", "description": "  ", "examples": ["1"]}`, "has no description"},
		{"a description of two lines", `{"type": "string", "description": "a number\nin digits", "examples": ["1"]}`, "has no description of what is expected, in one line"},
		{"a description too long", `{"type": "string", "description": "` + strings.Repeat("n", 201) + `", "examples": ["1"]}`, "one line of at most 200 characters"},
		{"no examples", string(shape(``)), "has no examples"},
		{"empty examples", string(shape(`, "examples": []`)), "has no examples"},
		{"an example not a string", string(shape(`, "examples": [7]`)), "does not read"},
		{"a length not whole", string(shape(`, "examples": ["1"], "maxLength": 2.5`)), "does not read"},
		{"a negative length", string(shape(`, "examples": ["1"], "minLength": -1`)), "negative length"},
		{"least above most", string(shape(`, "examples": ["1"], "minLength": 3, "maxLength": 2`)), "asks for at least more characters than it allows"},
		{"a pattern that does not compile", string(shape(`, "examples": ["1"], "pattern": "^(1$"`)), "does not compile"},
		{"an example that does not fit", string(shape(`, "examples": ["7", "abc"], "pattern": "^[0-9]+$"`)), "example 2 of its supplied text's shape does not fit"},
		{"an example too long", string(shape(`, "examples": ["1234"], "maxLength": 3`)), "example 1 of its supplied text's shape does not fit"},
		// Patterns Go and ECMAScript (the page) read differently, or only
		// one of them reads.
		{"white space class", string(shape(`, "examples": ["1"], "pattern": "^\\s*[0-9]+$"`)), "uses an escape Go and the web page read differently"},
		{"a word boundary", string(shape(`, "examples": ["1"], "pattern": "\\b1"`)), "uses an escape"},
		{"a Unicode class", string(shape(`, "examples": ["1"], "pattern": "^\\pN+$"`)), "uses an escape"},
		{"Go's text anchors", string(shape(`, "examples": ["1"], "pattern": "\\A1\\z"`)), "uses an escape"},
		{"a hex escape", string(shape(`, "examples": ["1"], "pattern": "^\\x31$"`)), "uses an escape"},
		{"a dash escaped outside a class", string(shape(`, "examples": ["-1"], "pattern": "^\\-1$"`)), "uses an escape"},
		{"a lone backslash", string(shape(`, "examples": ["1"], "pattern": "1\\"`)), "ends in a lone backslash"},
		{"flags", string(shape(`, "examples": ["1"], "pattern": "(?i)^a|1"`)), "has a group other than ( and (?:"},
		{"a named group", string(shape(`, "examples": ["1"], "pattern": "(?P<n>1)"`)), "has a group other than"},
		{"a lookahead", string(shape(`, "examples": ["1"], "pattern": "(?=1)1"`)), "has a group other than"},
		{"a POSIX class", string(shape(`, "examples": ["1"], "pattern": "^[[:digit:]]+$"`)), "has [ inside a class"},
		{"a class beginning with ]", string(shape(`, "examples": ["]"], "pattern": "[]a]"`)), "begins with ]"},
		{"a lone ]", string(shape(`, "examples": ["]"], "pattern": "]"`)), "closes no class"},
		{"a literal brace", string(shape(`, "examples": ["{1}"], "pattern": "^{1}$"`)), "counts nothing"},
		{"a brace that is no count", string(shape(`, "examples": ["a{"], "pattern": "a{"`)), "is no count"},
		{"a lone }", string(shape(`, "examples": ["a}"], "pattern": "a}"`)), "closes no count"},
		{"a class not closed", string(shape(`, "examples": ["1"], "pattern": "[0-9"`)), "is not closed"},
		{"a repetition of nothing", string(shape(`, "examples": ["1"], "pattern": "^*1"`)), "repeats nothing"},
		{"a repetition repeated", string(shape(`, "examples": ["1"], "pattern": "1{1}*"`)), "repeats nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := argschema.CompileTextShape("guess", json.RawMessage(tc.shape))
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want …%s…", err, tc.says)
			}
			// A connector declaring it is not loaded.
			c := probe.New()
			op, _ := c.Operation("guess")
			op.SuppliedText = json.RawMessage(tc.shape)
			cat, err := connectors.NewCatalogue(c)
			if err == nil {
				_, err = argschema.NewSet(cat)
			}
			if err == nil || !strings.Contains(err.Error(), "guess") {
				t.Fatalf("a connector with it loads: %v", err)
			}
			if err := argschema.CheckConnector(c); err == nil {
				t.Fatal("CheckConnector took it")
			}
		})
	}
}

// TestTextShapeCheck: the shapes every checker reads alike compile, and
// the text is held to them, whole and counted in characters; a refusal
// says what is expected and never the text.
func TestTextShapeCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, shape string
		fit, unfit  []string
	}{
		{"the probe's guess", probe.GuessShape,
			[]string{"7", "42", "0007", " 42", "42\n", "\t50\r\n", "123456789012345678901234567890"},
			[]string{"abc", "", " ", "4 2", "4.2", "-3", "+3", "1e3", "٤٢", "42abc", "abc42", "0x10", "42\n\nx"}},
		{"lengths in characters", string(shape(`, "examples": ["é", "ab"], "minLength": 1, "maxLength": 2`)),
			[]string{"é", "éé", "😀😀", "ab"}, []string{"", "abc", "ééé", "😀😀😀"}},
		{"a pattern searched for", string(shape(`, "examples": ["x1y"], "pattern": "[0-9]"`)),
			[]string{"1", "x1y"}, []string{"xy", ""}},
		{"every escape allowed", string(shape(`, "examples": ["a1 ^$\\.*+?()[]{}|/\t\n\r-"], "pattern": "^\\w\\d\\W\\^\\$\\\\\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\/\\t\\n\\r[\\-]$"`)),
			[]string{"a1 ^$\\.*+?()[]{}|/\t\n\r-"}, []string{"a1"}},
		{"groups, alternatives, counts and laziness", string(shape(`, "examples": ["ab-12"], "pattern": "^(?:ab|cd)-(1|2){1,3}?[^x]*$"`)),
			[]string{"ab-12", "cd-2", "ab-1"}, []string{"ab-", "ef-1", "ab-1x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := argschema.CompileTextShape("guess", json.RawMessage(tc.shape))
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range tc.fit {
				if err := s.Check([]byte(text)); err != nil {
					t.Errorf("%q: %v", text, err)
				}
			}
			for _, text := range tc.unfit {
				err := s.Check([]byte(text))
				if countersign.ErrorCode(err) != countersign.InvalidRequest || countersign.ErrorMessage(err) != "expected: "+s.Description() {
					t.Errorf("%q: got %v", text, err)
				}
			}
		})
	}
	s, err := argschema.CompileTextShape("guess", json.RawMessage(probe.GuessShape))
	if err != nil {
		t.Fatal(err)
	}
	if s.Description() != "a whole number in digits, such as 7" {
		t.Fatalf("the guess's shape says %q", s.Description())
	}
	if err := s.Check([]byte("4\xff2")); err == nil {
		t.Fatal("text that is not UTF-8 fits")
	}
}
