package duckdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"strata/internal/store/storetest"
)

// TestPathsHorizons holds the paths statement to the reference with
// horizons short enough that the random datasets' paths cross them: the
// users the horizon cuts are read again without it (pathRows, i and w2),
// and with 1 µs nearly every user is. The conformance suite runs the
// default horizon; 12 datasets a horizon cross it often enough.
func TestPathsHorizons(t *testing.T) {
	defer func(h time.Duration) { pathHorizon = h }(pathHorizon)
	for _, h := range []time.Duration{time.Microsecond, time.Minute, 45 * time.Minute} {
		t.Run(fmt.Sprint(h), func(t *testing.T) {
			pathHorizon = h
			s, err := Open(context.Background(), t.TempDir(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			storetest.RunPaths(t, s, 12)
		})
	}
}
