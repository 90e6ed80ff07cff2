package importer

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"errors"
	"fmt"
	gojson "github.com/goccy/go-json"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// This file holds what the four vendor sources (Mixpanel, Amplitude, Umami
// and GA4) share: reading a file line by line within a memory bound,
// decoding one JSON object without altering its bytes, naming events in
// Strata's vocabulary and deriving ids for formats that have none.

// maxVendorLine bounds one line (one record) of a line format. Ingest
// refuses properties over 64 KiB (1 MiB more for $exception), so no line
// this long can make an event; the bound keeps a file without line ends
// from being read into memory whole.
const maxVendorLine = 8 << 20

// Mapping error reasons shared by the vendor sources: the keys of the
// import report (docs/import.md lists what each means per source).
const (
	vendorBadJSON           = "bad_json"
	vendorInvalidUTF8       = "invalid_utf8"
	vendorLineTooLong       = "line_too_long"
	vendorMissingEventName  = "missing_event_name"
	vendorMissingDistinctID = "missing_distinct_id"
	vendorBadTimestamp      = "bad_timestamp"
	vendorSkippedAutomatic  = "skipped_automatic_event"
	vendorCorruptMember     = "corrupt_member"
	vendorUnknownEventType  = "unknown_event_type"
	vendorBadRow            = "bad_row"
)

func vendorErr(reason, format string, args ...any) *MappingError {
	return &MappingError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// eachVendorLine calls fn with every line of r that is not blank, without
// its line end (\n or \r\n), and its number counted from 1. A line longer
// than maxVendorLine is skipped to its end and reported to emit as
// line_too_long. It returns fn's or emit's first error, or r's read error
// (wrapped, naming the line), and nil at the end of r.
func eachVendorLine(r io.Reader, emit func(Event, error) error, fn func(line []byte, n int) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than the reader's buffer, gathered
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > maxVendorLine {
				n++
				if err := skipVendorLine(br); err != nil && !errors.Is(err, io.EOF) {
					return fmt.Errorf("reading line %d: %w", n, err)
				}
				long = long[:0]
				if err := emit(Event{}, vendorErr(vendorLineTooLong, "line %d is longer than %d bytes", n, maxVendorLine)); err != nil {
					return err
				}
				continue
			}
			long = append(long, chunk...)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading line %d: %w", n+1, err)
		}
		line := chunk
		if len(long) > 0 {
			if len(long)+len(chunk) > maxVendorLine {
				n++
				long = long[:0]
				if err := emit(Event{}, vendorErr(vendorLineTooLong, "line %d is longer than %d bytes", n, maxVendorLine)); err != nil {
					return err
				}
				if errors.Is(err, io.EOF) {
					return nil
				}
				continue
			}
			long = append(long, chunk...)
			line = long
		}
		if len(line) > 0 {
			n++
			line = bytes.TrimRight(line, "\r\n")
			if n == 1 {
				line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
			}
			if len(bytes.TrimSpace(line)) > 0 {
				if ferr := fn(line, n); ferr != nil {
					return ferr
				}
			}
		}
		long = long[:0]
		if err != nil { // io.EOF
			return nil
		}
	}
}

// readVendorLines is Read of a line format: mapLine maps each line, and
// its event or mapping error goes to emit.
func readVendorLines(f io.ReaderAt, size int64, emit func(Event, error) error, mapLine func(line []byte, n int) (Event, *MappingError)) error {
	return eachVendorLine(io.NewSectionReader(f, 0, size), emit, func(line []byte, n int) error {
		ev, merr := mapLine(line, n)
		if merr != nil {
			return emit(Event{}, merr)
		}
		return emit(ev, nil)
	})
}

// skipVendorLine reads up to and including the next line end.
func skipVendorLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// decodeVendorObject decodes one line that must hold one JSON object.
// Numbers stay json.Number, so that an id or a count of 19 digits keeps
// every digit. A line that is not valid UTF-8, or that escapes half a
// surrogate pair alone, is refused rather than decoded, because the
// decoders would replace those with U+FFFD and store altered data
// (ingest refuses such events the same way). The line is checked whole
// by encoding/json, whose errors say where, and then decoded by
// goccy/go-json, which ingest uses too: about 1.4 times as fast on
// these records (BenchmarkVendorSources), and it checks less, hence the
// check first.
func decodeVendorObject(line []byte, n int) (map[string]any, *MappingError) {
	if !utf8.Valid(line) {
		return nil, vendorErr(vendorInvalidUTF8, "line %d is not valid UTF-8", n)
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		if err == nil {
			err = errors.New("more than one JSON value")
		}
		return nil, vendorErr(vendorBadJSON, "line %d: %v", n, err)
	}
	if hasLoneSurrogate(line) {
		return nil, vendorErr(vendorInvalidUTF8, "line %d has an escape of half a surrogate pair (\\ud800 alone)", n)
	}
	dec := gojson.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, vendorErr(vendorBadJSON, "line %d: %v", n, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, vendorErr(vendorBadJSON, "line %d is JSON but not an object", n)
	}
	return obj, nil
}

// vendorString reads a field that names something (a user, an id): a
// string, or a number written as JSON (old SDKs sent numeric ids). It
// reports false for anything else, and for "".
func vendorString(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, s != ""
	case json.Number:
		return s.String(), true
	}
	return "", false
}

// strataEventName maps a vendor's event name to Strata's vocabulary:
// names in mapped are renamed; any other name that Strata reserves ($…
// and message_…, which ingest refuses from clients) is kept under a plain
// name, the $ dropped ($mp_scroll becomes mp_scroll) and message_ behind
// "imported_" (message_sent becomes imported_message_sent), so that the
// event is stored rather than refused and cannot pose as one of Strata's
// own. It reports false when nothing of the name is left.
func strataEventName(name string, mapped map[string]string) (string, bool) {
	if to, ok := mapped[name]; ok {
		return to, true
	}
	if strings.HasPrefix(name, "$") {
		name = strings.TrimLeft(name, "$")
	}
	if strings.HasPrefix(name, "message_") {
		name = "imported_" + name
	}
	return name, name != ""
}

// derivedSourceID is the source id of a record whose format gives none:
// the SHA-256 of the fields that make the record unique, joined by NUL,
// as 32 hex digits. Importing the same record again derives the same id,
// so it is stored once.
func derivedSourceID(parts ...string) string {
	h := sha256.New()
	for i, p := range parts {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// vendorCanonicalJSON is v encoded with its object keys sorted (as
// encoding/json writes maps), so that two exports of one record that
// order their keys differently derive the same id.
func vendorCanonicalJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// putVendorColumn adds one of the record's own columns (not one of the event's
// properties) to props under its name, or under prefix+name when a
// property of that name exists already: the event's properties keep their
// names, and no column is lost. A null column is left out: it says the
// column is empty, and the absence says the same.
func putVendorColumn(props map[string]any, prefix, name string, v any) {
	if v == nil {
		return
	}
	if _, taken := props[name]; taken {
		name = prefix + name
	}
	props[name] = v
}

// vendorTimeOK reports whether t can be an event's time: from 1970 to the
// year 9999 (RFC 3339's last). A time outside is a unit mistaken, not an
// event, and is reported as bad_timestamp.
func vendorTimeOK(t time.Time) bool {
	return !t.Before(time.Unix(0, 0)) && t.Year() <= 9999
}

// vendorTimeLayouts are the shapes of a date and time that exports write:
// SQL's ("2026-01-02 03:04:05.678000", PostgreSQL's "+00" or "+05:30"
// after it) and RFC 3339's, with or without an offset. Parsing accepts a
// fraction of a second after the seconds in each.
var vendorTimeLayouts = []string{
	"2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05Z0700", "2006-01-02 15:04:05Z07", "2006-01-02 15:04:05",
	"2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05Z07", "2006-01-02T15:04:05",
}

// parseVendorTime reads a date and time in one of vendorTimeLayouts; one
// without an offset is UTC (the vendors that write them say so). The
// result is the instant, in UTC.
func parseVendorTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range vendorTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			return t, vendorTimeOK(t)
		}
	}
	return time.Time{}, false
}

// hasLoneSurrogate reports whether valid JSON text escapes half of a
// UTF-16 surrogate pair without its other half (\ud800 alone, or
// \udc00 first).
func hasLoneSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++ // the escaped character; \\ is skipped whole
		if i >= len(b) || b[i] != 'u' {
			continue
		}
		r, ok := vendorHex4(b[i+1:])
		if !ok {
			continue
		}
		i += 4
		switch {
		case 0xDC00 <= r && r <= 0xDFFF:
			return true
		case 0xD800 <= r && r <= 0xDBFF:
			if i+2 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
				if lo, ok := vendorHex4(b[i+3:]); ok && 0xDC00 <= lo && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return true
		}
	}
	return false
}

// vendorHex4 reads the four hex digits of a \u escape.
func vendorHex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
