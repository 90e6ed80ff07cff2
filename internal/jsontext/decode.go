package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"strata/internal/analytics"
)

// Decode reads body, one JSON object, into v: the one strict decoder of
// every JSON request body of the API except ingest's (which rejects events
// one by one). It refuses, each as an analytics.InvalidField naming the
// field: text that is not Unicode (a lone surrogate escape, which decoders
// would store as U+FFFD), a field v does not have, a value of the wrong
// type, malformed JSON and anything after the object. The client message
// never carries a Go error; the decoder's error is kept as the cause, for
// the log.
func Decode(body []byte, v any) error {
	if i := LoneSurrogate(body); i >= 0 {
		return analytics.InvalidField(Path(body, i),
			"must be Unicode text; %s is half of a UTF-16 surrogate pair without the other half", body[i:i+6])
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, err := dec.Token(); err != io.EOF {
			return analytics.InvalidField("body", "must hold one JSON object and nothing after it")
		}
		return nil
	}
	fail := func(field, format string, args ...any) error {
		e := analytics.InvalidField(field, format, args...)
		e.Err = err
		return e
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var fieldErr *analytics.Error
	switch {
	case errors.As(err, &fieldErr):
		// A type's own UnmarshalJSON refused its value and said why.
		return fieldErr
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return fail("body", "must be a JSON object")
		}
		// Offset is just past a scalar, or just past the { or [ that opens
		// an object or array: step back into the value, or out of it.
		at := max(int(typeErr.Offset)-1, 0)
		if at > 0 && (body[at] == '{' || body[at] == '[') {
			at--
		}
		return fail(Path(body, at), "must be %s, not a JSON %s", describeType(typeErr.Type.String()), typeErr.Value)
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fail("body", "is not valid JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no error type for this one; its text is stable.
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return fail(name, "is not a known field")
	}
	return fail("body", "could not be read as the documented object")
}

// describeType names a Go type the way an API user thinks of it.
func describeType(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case goType == "string", goType == "*string":
		return "a string"
	case strings.Contains(goType, "int"):
		return "an integer"
	case strings.Contains(goType, "float"), goType == "json.Number":
		return "a number"
	case goType == "bool", goType == "*bool":
		return "true or false"
	}
	return "an object"
}
