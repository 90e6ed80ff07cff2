package ingest

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/ua"
)

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// snapshot builds a $snapshot event with data and overrides of its
// properties.
func snapshot(data []byte, encoding string, over map[string]any) string {
	props := map[string]any{"$session_id": "s1", "$window_id": "w1", "$chunk_index": 2,
		"$snapshot_data": base64.StdEncoding.EncodeToString(data), "$snapshot_encoding": encoding}
	for k, v := range over {
		if v == nil {
			delete(props, k)
		} else {
			props[k] = v
		}
	}
	b, _ := json.Marshal(map[string]any{"event_name": "$snapshot", "distinct_id": "u1", "properties": props})
	return string(b)
}

// TestSnapshotChunks checks how ingest reads $snapshot events into replay
// chunks (docs/replay.md, "Limits"): the counts and times from the rrweb
// events, and each way a chunk is refused, per event, with
// invalid_snapshot or snapshot_too_large.
func TestSnapshotChunks(t *testing.T) {
	p := &Pipeline{UA: ua.NewParser(100, bots.Default())}
	events := []byte(`[{"type":4,"data":{"href":"https://a.example/"},"timestamp":1700000000000},
		{"type":2,"data":{},"timestamp":1700000000001},
		{"type":3,"data":{"source":2,"type":2,"id":5},"timestamp":1700000002000},
		{"type":3,"data":{"source":2,"type":1,"id":5},"timestamp":1700000001000},
		{"type":5,"data":{"tag":"$exception","payload":{}},"timestamp":1700000003000},
		{"type":5,"data":{"tag":"signup","payload":{}},"timestamp":1700000003500}]`)
	noise := make([]byte, analytics.MaxReplayChunkBytes+10)
	rand.Read(noise)
	bomb := gz([]byte("[" + strings.Repeat(" ", analytics.MaxReplayChunkJSON) + "]"))
	// Within the limit, whitespace is only whitespace however much of it
	// there is (it once cost the JSON decoder seconds of CPU to skip).
	padding := strings.Repeat(" \n", analytics.MaxReplayChunkJSON/8)
	padded := gz([]byte("[" + padding + strings.Replace(string(events[1:]), "},", "},"+padding, 1)))
	cases := []struct {
		name  string
		event string
		code  RejectReason
	}{
		{"gzip", snapshot(gz(events), "gzip-json", nil), ""},
		{"plain JSON", snapshot(events, "json", nil), ""},
		{"16 MiB of whitespace", snapshot(padded, "gzip-json", nil), ""},
		{"no session id", snapshot(gz(events), "gzip-json", map[string]any{"$session_id": nil}), RejectInvalidSnapshot},
		{"a session id with a path", snapshot(gz(events), "gzip-json", map[string]any{"$session_id": "../x"}), RejectInvalidSnapshot},
		{"no window id", snapshot(gz(events), "gzip-json", map[string]any{"$window_id": nil}), RejectInvalidSnapshot},
		{"a negative index", snapshot(gz(events), "gzip-json", map[string]any{"$chunk_index": -1}), RejectInvalidSnapshot},
		{"an index as text", snapshot(gz(events), "gzip-json", map[string]any{"$chunk_index": "2"}), RejectInvalidSnapshot},
		{"an unknown encoding", snapshot(gz(events), "br", nil), RejectInvalidSnapshot},
		{"no data", snapshot(gz(events), "gzip-json", map[string]any{"$snapshot_data": nil}), RejectInvalidSnapshot},
		{"data not base64", snapshot(gz(events), "gzip-json", map[string]any{"$snapshot_data": "%%%"}), RejectInvalidSnapshot},
		{"plain JSON said to be gzip", snapshot(events, "gzip-json", nil), RejectInvalidSnapshot},
		{"gzip cut short", snapshot(gz(events)[:40], "gzip-json", nil), RejectInvalidSnapshot},
		{"not an array", snapshot([]byte(`{"type":4}`), "json", nil), RejectInvalidSnapshot},
		{"an empty array", snapshot([]byte(`[]`), "json", nil), RejectInvalidSnapshot},
		{"an event without a timestamp", snapshot([]byte(`[{"type":4}]`), "json", nil), RejectInvalidSnapshot},
		{"a time after the year 9999", snapshot([]byte(`[{"type":4,"timestamp":1700000000000},{"type":3,"timestamp":253402300800000}]`), "json", nil), RejectInvalidSnapshot},
		{"a time of a billion years", snapshot([]byte(`[{"type":4,"timestamp":31536000000000000000}]`), "json", nil), RejectInvalidSnapshot},
		{"over 1 MiB", snapshot(noise, "gzip-json", nil), RejectSnapshotTooLarge},
		{"over 32 MiB decompressed", snapshot(bomb, "gzip-json", nil), RejectSnapshotTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, err := ParseEnvelope([]byte(`{"batch":[` + c.event + `]}`))
			if err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			accepted, rejected := p.Process(env, Request{Product: 9, Env: analytics.EnvLive, ReceivedAt: now})
			if c.code != "" {
				if len(rejected) != 1 || rejected[0].Code != c.code {
					t.Fatalf("rejected %+v, want %s", rejected, c.code)
				}
				return
			}
			if len(accepted) != 1 || accepted[0].Chunk == nil {
				t.Fatalf("accepted %+v, rejected %+v", accepted, rejected)
			}
			ch := accepted[0].Chunk
			if ch.ProductID != 9 || ch.SessionID != "s1" || ch.WindowID != "w1" || ch.Index != 2 || ch.DistinctID != "u1" ||
				ch.Pages != 1 || ch.Clicks != 1 || ch.Errors != 1 || !ch.ReceivedAt.Equal(now) ||
				!ch.FirstTS.Equal(time.UnixMilli(1700000000000)) || !ch.LastTS.Equal(time.UnixMilli(1700000003500)) {
				t.Errorf("chunk %+v", ch)
			}
			if string(accepted[0].Event.Properties) != "{}" {
				t.Errorf("the event keeps its properties: %.80s", accepted[0].Event.Properties)
			}
		})
	}
}
