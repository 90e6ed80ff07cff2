package flags

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Condition is one targeting condition of a flag: the user's property
// Trait compared by Op with Value, as a message audience's trait condition
// is (docs/flags.md, "Targeting"). Type says what kind of condition it is:
// "trait" (or left out) is the only kind yet; a condition of a kind an
// evaluator does not know fails, so that a kind added later (cohorts)
// never lets an older SDK show the flag to users it does not target.
type Condition struct {
	Type  string `json:"type,omitempty"`
	Trait string `json:"trait"`
	// Op is eq, neq, contains, exists, gt or lt.
	Op    string `json:"op"`
	Value string `json:"value"`
}

// ConditionTrait is the kind of condition on a user property.
const ConditionTrait = "trait"

// Targeted reports whether every condition holds for a user with these
// properties: no conditions target everyone.
func Targeted(conds []Condition, props map[string]any) bool {
	for _, c := range conds {
		if c.Type != "" && c.Type != ConditionTrait {
			return false
		}
		if !Holds(c.Trait, c.Op, c.Value, props) {
			return false
		}
	}
	return true
}

// Holds evaluates one trait condition on props, the rule message
// audiences and flags share. A trait that is missing (or null) fails
// every condition but neq. eq and neq compare the trait's text (TraitText)
// exactly, contains ignores case, gt and lt compare numbers (Number: a
// text that is not a decimal number fails both), exists holds for any value.
func Holds(trait, op, value string, props map[string]any) bool {
	v, ok := props[trait]
	if !ok || v == nil {
		return op == "neq"
	}
	text := TraitText(v)
	switch op {
	case "exists":
		return true
	case "eq":
		return text == value
	case "neq":
		return text != value
	case "contains":
		return strings.Contains(strings.ToLower(text), strings.ToLower(value))
	case "gt", "lt":
		x, ok1 := Number(text)
		y, ok2 := Number(value)
		if !ok1 || !ok2 {
			return false
		}
		if op == "gt" {
			return x > y
		}
		return x < y
	}
	return false
}

// decimalRE is a number as conditions read one: decimal digits with an
// optional sign, point and exponent. Go's ParseFloat alone would also read
// hexadecimal, underscores, Inf and NaN, which JavaScript's Number does
// not, or reads otherwise.
var decimalRE = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// Number reads s as conditions compare numbers: a finite decimal number
// (decimalRE), or false.
func Number(s string) (float64, bool) {
	if !decimalRE.MatchString(s) {
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	return x, err == nil
}

// TraitText is a property's value as conditions compare it: a string as is,
// a float64 in its shortest form without an exponent (FormatFloat 'f', -1),
// a boolean as true or false, anything else (an object, an array, a Go
// integer) as its JSON, object keys sorted.
func TraitText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
