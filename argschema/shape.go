package argschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"countersign"
	"countersign/connectors"
)

// TextShape is the compiled shape of the text an owner supplies to an
// answer operation (connectors.Operation.SuppliedText): what the terminal
// inbox checks an answer against before the wallet is asked, and what the
// platform compiles when it loads a connector.
type TextShape struct {
	declared connectors.TextShape
	compiled *jsonschema.Schema
}

// CompileTextShape reads a shape of supplied text (connectors.ReadTextShape),
// refuses a pattern outside the subset Go and the web page (ECMAScript)
// read alike, compiles it as JSON Schema 2020-12 and checks each of its
// examples against it. name names it in the refusals.
func CompileTextShape(name string, raw json.RawMessage) (*TextShape, error) {
	declared, err := connectors.ReadTextShape(raw)
	if err != nil {
		return nil, err
	}
	if err := portablePattern(declared.Pattern); err != nil {
		return nil, fmt.Errorf("the pattern of its supplied text's shape %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the shape of its supplied text is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	url := "urn:countersign:supplied-text:" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("the shape of its supplied text does not load: %w", err)
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("the shape of its supplied text does not compile: %w", err)
	}
	s := &TextShape{declared: declared, compiled: compiled}
	for i, ex := range declared.Examples {
		if s.Check([]byte(ex)) != nil {
			return nil, fmt.Errorf("example %d of its supplied text's shape does not fit the shape", i+1)
		}
	}
	return s, nil
}

// Description says in plain words what the shape expects.
func (s *TextShape) Description() string { return s.declared.Description }

// Check tells whether text fits the shape: nil, or invalid_request saying
// "expected: " and the shape's description (never quoting the text). Text
// that is not UTF-8 fits no shape.
func (s *TextShape) Check(text []byte) error {
	if utf8.Valid(text) && s.compiled.Validate(string(text)) == nil {
		return nil
	}
	return countersign.Errorf(countersign.InvalidRequest, "expected: %s", s.declared.Description)
}

// The escapes a portable pattern may use: classes both read as ASCII, the
// three control characters, and the syntax characters (with /) that
// ECMAScript's u flag lets be escaped.
const (
	portableEscapes = `dDwWtnr^$\.*+?()[]{}|/`
)

// quantifier is a brace that counts: {n}, {n,} or {n,m}.
var quantifier = regexp.MustCompile(`^\{[0-9]+(,[0-9]*)?\}`)

// portablePattern refuses what Go's regexp and ECMAScript's RegExp (with the
// u flag, as the page compiles it) do not read alike, or one of them does
// not read: escapes but portableEscapes (and \- in a class; \s, \b,
// \p{…}, \x…, \Q…\E, \A and \z differ or are Go's alone), groups but (
// and (?: (flags, named groups and lookarounds), POSIX classes
// ([[:alpha:]]), a class that begins with ] (Go reads []a] as ] or a,
// ECMAScript as an empty class), a brace or a closing bracket that stands
// for itself (Go reads it literally, ECMAScript's u flag refuses it), and
// a count or repetition of nothing. It says why, after "the pattern of …".
func portablePattern(p string) error {
	inClass := false
	// repeatable: the last thing read may take *, +, ? or a count;
	// repeated: it just took one (only a ? for laziness may follow).
	repeatable, repeated := false, false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if inClass {
			switch c {
			case '\\':
				if i+1 == len(p) {
					return errors.New("ends in a lone backslash")
				}
				if p[i+1] != '-' && !strings.ContainsRune(portableEscapes, rune(p[i+1])) {
					return escapeRefusal()
				}
				i++
			case '[':
				return errors.New("has [ inside a class (escape it; POSIX classes such as [[:alpha:]] are Go's alone)")
			case ']':
				inClass, repeatable, repeated = false, true, false
			}
			continue
		}
		switch c {
		case '\\':
			if i+1 == len(p) {
				return errors.New("ends in a lone backslash")
			}
			if !strings.ContainsRune(portableEscapes, rune(p[i+1])) {
				return escapeRefusal()
			}
			i++
			repeatable, repeated = true, false
		case '[':
			if strings.HasPrefix(p[i:], "[]") || strings.HasPrefix(p[i:], "[^]") {
				return errors.New("has a class that begins with ] (escape it)")
			}
			if strings.HasPrefix(p[i:], "[^") {
				i++
			}
			inClass = true
		case ']':
			return errors.New("has a ] that closes no class (escape it)")
		case '(':
			if strings.HasPrefix(p[i:], "(?") {
				if !strings.HasPrefix(p[i:], "(?:") {
					return errors.New("has a group other than ( and (?: (flags, names and lookarounds are not read alike)")
				}
				i += 2
			}
			repeatable, repeated = false, false
		case '|', '^':
			repeatable, repeated = false, false
		case '*', '+', '?':
			switch {
			case c == '?' && repeated:
				repeated = false // lazy: nothing may follow it either
			case !repeatable:
				return fmt.Errorf("repeats nothing (a %c with nothing before it to repeat: escape it)", c)
			default:
				repeated = true
			}
			repeatable = false
		case '{':
			q := quantifier.FindString(p[i:])
			switch {
			case q == "":
				return errors.New("has a { that is no count such as {2} or {1,4} (escape it)")
			case !repeatable:
				return errors.New("counts nothing (a count with nothing before it to repeat)")
			}
			i += len(q) - 1
			repeatable, repeated = false, true
		case '}':
			return errors.New("has a } that closes no count (escape it)")
		default: // a literal, ., ), $
			repeatable, repeated = c != '$', false
		}
	}
	if inClass {
		return errors.New("has a class that is not closed")
	}
	return nil
}

func escapeRefusal() error {
	return fmt.Errorf("uses an escape Go and the web page read differently or not at all (only \\d \\D \\w \\W \\t \\n \\r and an escaped one of %s)", portableEscapes[7:])
}
