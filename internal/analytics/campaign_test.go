package analytics

import (
	"strings"
	"testing"
)

// TestCampaignValidateShares checks the rules a campaign shares with flags
// and experiments: an arm's key and weight, the weights' sum, and the
// audience's percentage, each named by its field.
func TestCampaignValidateShares(t *testing.T) {
	valid := func() Campaign {
		steps := []Step{{Kind: "modal", Title: "Hi", BodyFormat: "text"}}
		c := Campaign{Name: "Welcome", Status: CampaignActive, Trigger: Trigger{Event: "$pageview"},
			Audience: Audience{Percentage: 12.5}, Cap: FrequencyCap{Kind: CapOnce},
			Variants: []CampaignVariant{{Key: "control", Weight: 33.33, Steps: steps}, {Key: "bold", Weight: 66.67, Steps: steps}}}
		c.Normalize()
		return c
	}
	c := valid()
	if err := c.Validate(); err != nil {
		t.Fatalf("valid campaign: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Campaign)
		want   string
	}{
		{"audience over 100", func(c *Campaign) { c.Audience.Percentage = 100.5 }, "audience.percentage: must be a percentage from 0 to 100 with at most two decimals, not 100.5"},
		{"audience three decimals", func(c *Campaign) { c.Audience.Percentage = 0.125 }, "audience.percentage: must be"},
		{"duplicate variant", func(c *Campaign) { c.Variants[1].Key = "control" }, `variants[1].key: "control" is already a variant of this campaign`},
		{"malformed variant key", func(c *Campaign) { c.Variants[0].Key = "Control!" }, "variants[0].key: must be"},
		{"variant named excluded", func(c *Campaign) { c.Variants[1].Key = "excluded" }, `variants[1].key: "excluded" names the users who are in no arm`},
		{"weight three decimals", func(c *Campaign) { c.Variants[0].Weight = 33.333 }, "variants[0].weight: must be a percentage from 0 to 100"},
		{"negative weight", func(c *Campaign) { c.Variants[1].Weight = -1; c.Variants[0].Weight = 101 }, "variants[0].weight: must be"},
		{"weights sum to 99.99", func(c *Campaign) { c.Variants[1].Weight = 66.66 }, "variants: the weights must sum to 100, not 99.99"},
	} {
		c := valid()
		tc.change(&c)
		err := c.Validate()
		if e := AsError(err); err == nil || e.Code != "invalid_request" || !strings.HasPrefix(e.Message, tc.want) {
			t.Errorf("%s: Validate() = %v; want %q", tc.name, err, tc.want)
		}
	}
}
