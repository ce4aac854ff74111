package config

import (
	"strconv"
	"strings"
	"testing"
)

const pricedConfig = `
battery = "tools.toml"
models  = ["a", "b"]

[[servers]]
name   = "s"
kind   = "sim"
models = ["a", "b", "ja"]

[scoring]
mode = "judge"

[[scoring.judges]]
name      = "ja"
model     = "ja"
server    = "s"
price_in  = PRICE_IN
price_out = 0.6

[prices.a]
price_in  = 0.1
price_out = PRICE_OUT_A
`

func TestPricesLoadAndNegativeOnesNameTheirLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		in, outA      string
		field, atLine string // "" when it loads
	}{
		{"prices load", "2.5", "0.4", "", ""},
		{"zero is unpriced, not an error", "0", "0", "", ""},
		{"negative judge price", "-1", "0.4", "scoring.judges[0].price_in", "price_in  = -1"},
		{"negative model price", "2.5", "-0.4", "prices.a.price_out", "price_out = -0.4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.NewReplacer("PRICE_IN", tt.in, "PRICE_OUT_A", tt.outA).Replace(pricedConfig)
			path := writeConfig(t, body)
			c, err := Load(path, Overrides{}, noEnv)
			if tt.field != "" {
				wantErr(t, err, path, lineOf(t, path, tt.atLine, 1), tt.field, "0 or more", "dollars per million tokens")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			j := c.Scoring.Judges[0]
			if got := strings.Join([]string{fmtF(j.PriceIn), fmtF(j.PriceOut), fmtF(c.Prices["a"].In), fmtF(c.Prices["a"].Out)}, " "); got != tt.in+" 0.6 0.1 "+tt.outA {
				t.Errorf("prices read = %s", got)
			}
			if !strings.Contains(c.RedactedJSON(), `"prices":{"a":{"price_in":0.1`) {
				t.Errorf("the ledger's config lacks the prices: %s", c.RedactedJSON())
			}
		})
	}
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
