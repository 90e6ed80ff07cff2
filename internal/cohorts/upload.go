package cohorts

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"strata/internal/analytics"
)

// Upload replaces a static cohort's members with the ids of a CSV body:
// one id a line, or a header row naming a distinct_id column among
// others. Ids are trimmed, blank ones skipped, and an id sent twice is one
// member. The ids are streamed into a new generation in batches; a body
// the checks refuse (an id over MaxCohortIDBytes, more than
// MaxCohortUploadIDs ids, no distinct_id column, a read error such as the
// transport's size bound) leaves the cohort's members as they were. The
// transport bounds the body's bytes.
func (s *Service) Upload(ctx context.Context, productID, id int64, body io.Reader) (analytics.Cohort, error) {
	c, err := s.Get(ctx, productID, id)
	if err != nil {
		return c, err
	}
	if c.Kind != analytics.CohortStatic {
		return c, ErrNotStatic
	}
	gen, ok, err := s.Meta.StartCohort(ctx, productID, id, s.now().Add(-StaleAfter))
	if err != nil {
		return c, notFound(err)
	}
	if !ok {
		return c, ErrBusy
	}
	w := s.writer(ctx, productID, id, gen)
	err = readIDs(body, w.add)
	if err == nil {
		err = w.flush()
	}
	var size int64
	if err == nil {
		size, err = s.Events.CohortSize(ctx, productID, id, gen)
	}
	if err != nil {
		// Nothing changed: the generation is dropped and the state put
		// back as it was.
		bk := context.WithoutCancel(ctx)
		return c, errors.Join(err, s.Meta.AbandonCohort(bk, productID, id, gen), s.dropAllBut(bk, productID, id))
	}
	if err := s.finish(ctx, productID, id, gen, size, nil); err != nil {
		return c, err
	}
	return s.Get(ctx, productID, id)
}

// readIDs reads the ids of a CSV body.
func readIDs(body io.Reader, add func(string) error) error {
	r := csv.NewReader(body)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	r.LazyQuotes = true
	column, n, first := 0, 0, true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return analytics.InvalidField("body", "line %d is not CSV: %v", pe.Line, pe.Err)
			}
			return err
		}
		line, _ := r.FieldPos(0)
		if first {
			first = false
			if i := header(rec); i >= 0 {
				column = i
				continue
			}
			if len(rec) > 1 {
				return analytics.InvalidField("body", "several columns but no distinct_id column in the header")
			}
		}
		if column >= len(rec) {
			continue
		}
		id := strings.TrimSpace(rec[column])
		if id == "" {
			continue
		}
		if len(id) > analytics.MaxCohortIDBytes || !utf8.ValidString(id) {
			return analytics.InvalidField("body", "line %d: an id must be at most %d bytes of UTF-8", line, analytics.MaxCohortIDBytes)
		}
		if n++; n > analytics.MaxCohortUploadIDs {
			return analytics.InvalidField("body", "at most %d ids", analytics.MaxCohortUploadIDs)
		}
		if err := add(id); err != nil {
			return err
		}
	}
}

// header returns the distinct_id column of a header row, or -1 when rec is
// no header.
func header(rec []string) int {
	for i, f := range rec {
		if strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(f, "\ufeff")), "distinct_id") {
			return i
		}
	}
	return -1
}
