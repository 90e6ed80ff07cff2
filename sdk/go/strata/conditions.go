package strata

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// condition is one targeting condition of a flag (SdkFlag.conditions): the
// user's property Trait compared by Op with Value (type "trait", or left
// out), or the user in (Op "in") or not in ("not_in") the cohort CohortID
// (type "cohort"). The rule is the server's (its
// internal/flags/conditions.go and docs/flags.md, "Targeting"); the shared
// vectors pin this copy to it.
type condition struct {
	Type     string `json:"type"`
	Trait    string `json:"trait"`
	CohortID int64  `json:"cohortId"`
	Op       string `json:"op"`
	Value    string `json:"value"`
}

// targeted reports whether every condition holds for a user with these
// properties and cohorts (by id, as GET /api/v1/config?distinct_id= gives
// them); none target everyone. A condition of a type this SDK does not
// know (a kind added after it) fails.
func targeted(conds []condition, props map[string]any, cohorts map[string]bool) bool {
	for _, c := range conds {
		switch c.Type {
		case "", "trait":
			if !holds(c.Trait, c.Op, c.Value, props) {
				return false
			}
		case "cohort":
			if !inCohort(c.CohortID, c.Op, cohorts) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// inCohort evaluates one cohort condition: in holds for a member, not_in
// for a user known not to be one; a cohort whose membership is unknown
// fails both, as does any other operator.
func inCohort(id int64, op string, cohorts map[string]bool) bool {
	member, known := cohorts[strconv.FormatInt(id, 10)]
	switch {
	case !known:
		return false
	case op == "in":
		return member
	case op == "not_in":
		return !member
	}
	return false
}

// needsCohorts reports whether a flag has a cohort condition, which needs
// the user's memberships.
func needsCohorts(f *flagConfig) bool {
	if f == nil {
		return false
	}
	for _, c := range f.Conditions {
		if c.Type == "cohort" {
			return true
		}
	}
	return false
}

// holds evaluates one condition. A missing (or nil) property fails every
// operator but neq; eq and neq compare the property's text exactly,
// contains ignoring case, gt and lt as decimal numbers; exists holds for
// any value.
func holds(trait, op, value string, props map[string]any) bool {
	v, ok := props[trait]
	if !ok || v == nil {
		return op == "neq"
	}
	text := traitText(v)
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
		x, ok1 := decimal(text)
		y, ok2 := decimal(value)
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
// optional sign, point and exponent (no hexadecimal, underscores, Inf or
// NaN, which JavaScript reads otherwise).
var decimalRE = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

func decimal(s string) (float64, bool) {
	if !decimalRE.MatchString(s) {
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	return x, err == nil
}

// traitText is a property's value as conditions compare it: a string as is,
// a float64 in its shortest form without an exponent (FormatFloat 'f', -1),
// a boolean as true or false, anything else (an object, an array, a Go
// integer) as its JSON, object keys sorted.
func traitText(v any) string {
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
