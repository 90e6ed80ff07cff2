package flags

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Condition is one targeting condition of a flag (docs/flags.md,
// "Targeting"). Type says what kind it is: "trait" (or left out), the
// user's property Trait compared by Op with Value, as a message audience's
// trait condition is; or "cohort", the user in (Op "in") or not in
// ("not_in") the cohort CohortID. A condition of a kind an evaluator does
// not know fails, so that a kind added later never lets an older SDK show
// the flag to users it does not target.
type Condition struct {
	Type     string `json:"type,omitempty"`
	Trait    string `json:"trait,omitempty"`
	CohortID int64  `json:"cohortId,omitempty"`
	// Op is eq, neq, contains, exists, gt or lt; in or not_in for a cohort.
	Op    string `json:"op"`
	Value string `json:"value"`
}

// The kinds of condition: on a user property, on a cohort's membership.
const (
	ConditionTrait  = "trait"
	ConditionCohort = "cohort"
)

// Cohorts is what an evaluator knows of a user's cohorts: for each cohort
// it knows of, whether the user is a member. A cohort it does not list is
// unknown, and both of its conditions fail (docs/flags.md, "Cohorts").
type Cohorts map[int64]bool

// Targeted reports whether every condition holds for a user with these
// properties and cohorts: no conditions target everyone.
func Targeted(conds []Condition, props map[string]any, cohorts Cohorts) bool {
	for _, c := range conds {
		switch c.Type {
		case "", ConditionTrait:
			if !Holds(c.Trait, c.Op, c.Value, props) {
				return false
			}
		case ConditionCohort:
			if !InCohort(c.CohortID, c.Op, cohorts) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// InCohort evaluates one cohort condition: in holds for a member, not_in
// for a user known not to be one; a cohort whose membership is unknown
// fails both, as does any other operator.
func InCohort(id int64, op string, cohorts Cohorts) bool {
	member, known := cohorts[id]
	if !known {
		return false
	}
	switch op {
	case "in":
		return member
	case "not_in":
		return !member
	}
	return false
}

// CohortIDs lists the cohorts the conditions name, each once, in order.
func CohortIDs(conds []Condition) []int64 {
	var ids []int64
	for _, c := range conds {
		if c.Type == ConditionCohort && !slices.Contains(ids, c.CohortID) {
			ids = append(ids, c.CohortID)
		}
	}
	return ids
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
