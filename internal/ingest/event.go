package ingest

import (
	"bytes"
	"context"
	stdjson "encoding/json"

	"errors"
	json "github.com/goccy/go-json"
	"hash/fnv"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"strata/internal/analytics"
	"strata/internal/cookieless"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/geo"
	"strata/internal/enrich/source"
	"strata/internal/enrich/ua"
	"strata/internal/errtrack"
	"strata/internal/jsontext"
)

// Per-event limits (docs/ingest.md, "Steps"): event names are 1–255
// characters; the others are generous bounds that keep one event from
// hogging storage.
const (
	maxNameChars       = 255
	maxDistinctIDChars = 255
	maxUserAgentChars  = 2048
	maxURLChars        = 8192
	maxPropertiesBytes = 64 << 10
	maxPropertiesDepth = 32
	// maxExceptionPropertiesBytes is the properties limit of an
	// $exception event: room for a raw stack of a megabyte, which is
	// stored as sent and grouped by type and message when it cannot be
	// read, rather than the event refused (docs/errors.md).
	maxExceptionPropertiesBytes = 1<<20 + maxPropertiesBytes
)

// clientReservedNames are the reserved ($ or message_) names a client may
// send. Every other reserved name, $bot_pageview included, is produced by
// Strata itself and refused from clients.
var clientReservedNames = map[string]bool{
	"$pageview": true, "$click": true, "$form_submit": true, "$exception": true,
	"$identify": true, "$exposure": true, "$snapshot": true,
	"message_impression": true, "message_dismiss": true, "message_cta_click": true, "message_complete": true,
}

// ingestOnlyProperties are set by ingest: by bot classification (a client
// sending them would forge bot traffic) and by error tracking (the frames
// of an $exception and why some stayed minified: package errtrack). An
// event carrying one is refused.
var ingestOnlyProperties = map[string]bool{"$is_bot": true, "$bot_name": true, "$bot_category": true,
	errtrack.PropFrames: true, errtrack.PropResolution: true}

// wireEvent is one event's JSON shape. Unknown fields are refused.
type wireEvent struct {
	EventName  *string         `json:"event_name"`
	DistinctID *string         `json:"distinct_id"`
	Timestamp  *string         `json:"timestamp"`
	UUID       *string         `json:"uuid"`
	UserAgent  *string         `json:"user_agent"`
	URL        *string         `json:"url"`
	Referrer   *string         `json:"referrer"`
	Properties json.RawMessage `json:"properties"`
}

// Request is what the HTTP layer knows about one POST /e besides the body.
type Request struct {
	Product    int64
	Env        analytics.Env
	UserAgent  string    // the request's User-Agent header, used when an event has none
	ReceivedAt time.Time // when the request arrived; the base of clock-skew correction
	// ClientAddr is the client's address as the trusted-proxy rule finds
	// it (geo.ClientAddr), looked up for the events' location and then
	// dropped: it is never stored. The zero Addr has no location.
	ClientAddr netip.Addr
	// location is ClientAddr's, found once by Process.
	location geo.Location
}

// derivedVisitor is the last cookieless visitor derived for a request
// and the user agent it was derived for (cookielessVisitor): the events
// of one request share the address and, mostly, the user agent, so one
// hash serves them all. Process keeps it on its stack and passes it
// apart from the Request, whose contents the events keep.
type derivedVisitor struct{ userAgent, id string }

// Pending is an accepted event on its way to the writer. ClientUUID tells
// the writer whether the uuid came from the client and so may be a retry
// worth deduplicating.
type Pending struct {
	Event      analytics.Event
	ClientUUID bool
	// Index is the event's position in its batch.
	Index int
	// Chunk is the replay chunk a $snapshot event carries; such an event
	// goes to the replay store, not to the writer (docs/replay.md).
	Chunk *analytics.ReplayChunk
}

// Pipeline validates and enriches events. It is safe for concurrent use.
type Pipeline struct {
	// UA names each user agent's browser, OS, device type and AI bot.
	UA *ua.Parser
	// Exceptions parses, de-minifies and fingerprints the stacks of
	// $exception events; nil leaves them as sent.
	Exceptions *errtrack.Processor
	// Geo finds the country, region and city of the client address; nil
	// leaves them empty.
	Geo *geo.DB
	// Visitors derives the visitor of an event whose distinct_id is
	// analytics.CookielessID (docs/privacy.md, "Cookieless mode"); nil
	// refuses such events.
	Visitors *cookieless.Visitors
}

// Process runs every event of env through the steps and returns the
// accepted ones in batch order and the rejections with their indexes.
// The caller may hand the accepted slice to Release once nothing reads it.
func (p *Pipeline) Process(env Envelope, req Request) ([]Pending, []Rejection) {
	accepted := newPending(env.Len())
	var rejected []Rejection
	// Every event of a request comes from one client: one lookup.
	req.location = p.Geo.Lookup(req.ClientAddr)
	var visitor derivedVisitor
	for i := 0; i < env.Len(); i++ {
		// Each event is built in its slot: a Pending is over 400 bytes,
		// and one built apart would be a second allocation and a copy.
		accepted = append(accepted, Pending{})
		ev := &accepted[len(accepted)-1]
		var rej *Rejection
		if env.events != nil {
			rej = p.event(ev, &env.events[i], i, env.SentAt, req, &visitor)
		} else if w, r := decodeEvent(env.Batch[i]); r != nil {
			rej = r
		} else {
			rej = p.event(ev, &w, i, env.SentAt, req, &visitor)
		}

		if rej != nil {
			accepted = accepted[:len(accepted)-1]
			rej.Index = i
			rejected = append(rejected, *rej)
		}
	}
	return accepted, rejected
}

// pooledPending is the size of the accepted slices Process takes from a
// pool: most requests carry a few events (a page's batch), and at tens of
// thousands of requests a second a slice each was a fifth of the bytes the
// server allocated per request.
const pooledPending = 16

type pendingBuf [pooledPending]Pending

var pendingPool = sync.Pool{New: func() any { return new(pendingBuf) }}

// newPending returns an empty slice for n accepted events.
func newPending(n int) []Pending {
	if n <= pooledPending {
		return pendingPool.Get().(*pendingBuf)[:0]
	}
	return make([]Pending, 0, n)
}

// Release returns a slice Process returned for reuse; nothing may read it
// or its events afterwards. Other slices are left to the collector.
func Release(accepted []Pending) {
	if cap(accepted) != pooledPending {
		return
	}
	buf := (*pendingBuf)(accepted[:pooledPending])
	clear(buf[:]) // drop the references into the request's events
	pendingPool.Put(buf)
}

// event runs the steps for one decoded event into out: validate, time,
// identity, enrich. The first failing step rejects the event.
func (p *Pipeline) event(out *Pending, w *wireEvent, index int, sentAt time.Time, req Request, visitor *derivedVisitor) *Rejection {
	out.Index = index
	var rej *Rejection
	e := &out.Event
	e.ProductID, e.Env, e.ReceivedAt = req.Product, req.Env, req.ReceivedAt

	if e.Name, rej = requiredString(w.EventName, "event_name", maxNameChars, RejectMissingEventName, RejectInvalidEventName); rej != nil {
		return rej
	}
	if rej = checkEventName(e.Name); rej != nil {
		return rej
	}
	if e.DistinctID, rej = requiredString(w.DistinctID, "distinct_id", maxDistinctIDChars, RejectMissingDistinctID, RejectInvalidDistinctID); rej != nil {
		return rej
	}
	for _, f := range []struct {
		v    *string
		name string
		max  int
		dst  *string
	}{
		{w.UserAgent, "user_agent", maxUserAgentChars, &e.UserAgent},
		{w.URL, "url", maxURLChars, &e.URL},
		{w.Referrer, "referrer", maxURLChars, &e.Referrer},
	} {
		if *f.dst, rej = optionalString(f.v, f.name, f.max); rej != nil {
			return rej
		}
	}
	limit := maxPropertiesBytes
	switch e.Name {
	case analytics.ExceptionEvent:
		limit = maxExceptionPropertiesBytes
	case analytics.SnapshotEvent:
		if len(w.Properties) > maxSnapshotPropertiesBytes {
			return snapshotTooLarge()
		}
		limit = maxSnapshotPropertiesBytes
	}
	props, viewport, rej := checkProperties(w.Properties, limit)
	if rej != nil {
		return rej
	}
	e.ScreenClass = ua.ScreenClass(viewportWidth(w.Properties, viewport))

	if e.Timestamp, rej = eventTime(w.Timestamp, sentAt, req.ReceivedAt, index); rej != nil {
		return rej
	}
	if w.UUID != nil {
		u, err := uuid.Parse(*w.UUID)
		if err != nil {
			return reject(RejectInvalidUUID, "uuid must be a UUID such as 0192d0c4-5f1e-7a3b-9c4d-1e2f3a4b5c6d.")
		}
		e.UUID, out.ClientUUID = u, true
	} else {
		e.UUID = uuid.Must(uuid.NewV7())
	}
	e.Path = urlPath(e.URL)
	src := source.Classify(e.URL, e.Referrer)
	e.Source, e.Channel, e.UTMSource, e.UTMMedium, e.UTMCampaign = src.Source, src.Channel, src.UTMSource, src.UTMMedium, src.UTMCampaign

	if e.UserAgent == "" {
		// Header bytes are not checked like the JSON body was; storage
		// takes only UTF-8, and one bad header must not fail the commit
		// that other requests share.
		e.UserAgent = truncate(strings.ToValidUTF8(strings.ReplaceAll(req.UserAgent, "\x00", ""), "\uFFFD"), maxUserAgentChars)
		// The request's address is the event's client's, as its
		// User-Agent is. An event with a user_agent of its own was sent
		// on someone else's behalf (a server-side SDK forwarding a
		// visitor's request), and the address is the sending server's:
		// such an event gets no location rather than the server's. A
		// client can only hide its country this way, not choose one.
		e.Country, e.Region, e.City = req.location.Country, req.location.Region, req.location.City
	}
	if e.DistinctID == analytics.CookielessID || e.Name == "$identify" && bytes.Contains(props, cookielessValue) {
		if props, rej = p.cookielessVisitor(e, props, req, visitor); rej != nil {
			return rej
		}
	}
	e.UserID = UserID(e.DistinctID)
	info := p.UA.Parse(e.UserAgent)
	e.Browser, e.OS, e.DeviceType = info.Browser, info.OS, info.DeviceType
	if bot := info.AIBot; bot != nil {
		e.IsBot, e.BotName, e.BotCategory = true, bot.Name, bot.Category
		e.DeviceType = "bot"
		if e.Name == "$pageview" {
			e.Name = "$bot_pageview"
		}
		props = withBotProperties(props, *bot)
	}
	if e.Name == analytics.SnapshotEvent {
		// The chunk goes to the replay store; the event itself is not
		// kept, so its properties are not either.
		if out.Chunk, rej = snapshotChunk(e, props); rej != nil {
			return rej
		}
		props = json.RawMessage("{}")
	}
	if e.Name == analytics.ExceptionEvent && p.Exceptions != nil {
		props = p.Exceptions.Enrich(context.Background(), req.Product, props)
	}
	e.Properties = props
	return nil
}

// decodeEvent parses one event object, refusing unknown fields, wrong
// types and bytes that are not UTF-8 (which encoding/json would otherwise
// silently replace, altering the data).
func decodeEvent(raw json.RawMessage) (wireEvent, *Rejection) {
	var w wireEvent
	if !utf8.Valid(raw) {
		return w, reject(RejectInvalidUTF8, "The event contains bytes that are not valid UTF-8.")
	}
	// A lone surrogate escape is not text either, and the decoder would
	// replace it as silently (package jsontext).
	if i := jsontext.LoneSurrogate(raw); i >= 0 {
		return w, reject(RejectInvalidUTF8, "The event contains %s, half of a UTF-16 surrogate pair without the other half, which is not Unicode text.", raw[i:i+6])
	}
	if len(raw) == 0 || raw[0] != '{' {
		return w, reject(RejectInvalidEvent, "Each event must be a JSON object.")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		err = stdlibError(raw, &wireEvent{}, err)
		var typeErr *stdjson.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			want := "string"
			if typeErr.Field == "properties" {
				want = "object"
			}
			return w, reject(RejectInvalidFieldType, "The field %s must be a %s, not %s.", typeErr.Field, want, typeErr.Value)
		}
		if field, ok := unknownField(err); ok {
			return w, reject(RejectUnknownField, "The event field %s is not known; allowed are event_name, distinct_id, timestamp, uuid, user_agent, url, referrer and properties.", field)
		}
		return w, reject(RejectInvalidEvent, "The event could not be read: %s.", err.Error())
	}
	return w, nil
}

// requiredString checks a field every event must have: missing is its
// reason when the field is absent or null, invalid when it is empty or too
// long.
func requiredString(v *string, field string, maxChars int, missing, invalid RejectReason) (string, *Rejection) {
	if v == nil {
		return "", reject(missing, "The field %s is required.", field)
	}
	if *v == "" {
		return "", reject(invalid, "The field %s must be 1 to %d characters long.", field, maxChars)
	}
	return checkString(*v, field, maxChars, invalid)
}

func optionalString(v *string, field string, maxChars int) (string, *Rejection) {
	if v == nil {
		return "", nil
	}
	return checkString(*v, field, maxChars, RejectFieldTooLong)
}

func checkString(s, field string, maxChars int, tooLong RejectReason) (string, *Rejection) {
	if n := utf8.RuneCountInString(s); n > maxChars {
		return "", reject(tooLong, "The field %s is %d characters long; at most %d are allowed.", field, n, maxChars)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", reject(RejectInvalidCharacter, "The field %s contains a NUL character.", field)
	}
	return s, nil
}

func checkEventName(name string) *Rejection {
	if !strings.HasPrefix(name, "$") && !strings.HasPrefix(name, "message_") {
		return nil
	}
	if clientReservedNames[name] {
		return nil
	}
	return reject(RejectReservedEventName,
		"The event name %q is reserved: names starting with $ or message_ are kept for Strata's own events.", name)
}

// eventTime applies the clock rule of docs/ingest.md ("Time"). With sent_at the client's clock
// offset is removed: ts = received_at − (sent_at − timestamp). Without a
// timestamp, the receive time plus the event's index keeps a batch in order.
func eventTime(ts *string, sentAt, receivedAt time.Time, index int) (time.Time, *Rejection) {
	if ts == nil {
		return receivedAt.Add(time.Duration(index) * time.Microsecond).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, *ts)
	if err != nil {
		return time.Time{}, reject(RejectInvalidTimestamp, "timestamp must be an RFC 3339 date-time such as 2026-11-23T10:00:00.123Z.")
	}
	if !sentAt.IsZero() {
		t = receivedAt.Add(-sentAt.Sub(t))
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

// checkProperties verifies the properties object and returns it compact,
// with where in raw the value of its $viewport_width begins (0: none).
// The JSON is already known to be well-formed (the envelope decoded).
func checkProperties(raw json.RawMessage, limit int) (props json.RawMessage, viewport int, rej *Rejection) {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), 0, nil
	}
	if raw[0] != '{' {
		return nil, 0, reject(RejectInvalidProperties, "properties must be a JSON object.")
	}
	if len(raw) > limit {
		return nil, 0, reject(RejectPropertiesTooLarge, "properties is %d bytes; at most %d are allowed.", len(raw), limit)
	}
	depth, reserved, nul, groups, viewport := scanProperties(raw)
	if depth > maxPropertiesDepth {
		return nil, 0, reject(RejectPropertiesTooDeep, "properties nests %d levels deep; at most %d are allowed.", depth, maxPropertiesDepth)
	}
	if reserved != "" {
		return nil, 0, reject(RejectReservedProperty, "The property %s is set by Strata and cannot be sent by clients.", reserved)
	}
	if nul {
		return nil, 0, reject(RejectInvalidCharacter, "properties contains a NUL character (\\u0000) in a key or a value.")
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil, 0, reject(RejectInvalidProperties, "properties is not valid JSON.")
	}
	if groups {
		if rej := checkGroups(buf.Bytes()); rej != nil {
			return nil, 0, rej
		}
	}
	return buf.Bytes(), viewport, nil
}

// checkGroups verifies the $groups property of compact properties that
// hold it: an object of at most analytics.MaxGroupsPerEvent entries, each
// a group type (analytics.ValidGroupType) mapped to a key string
// (analytics.ValidGroupKey). Queries read it as such a flat object of
// strings (ClickHouse 18.16 with visitParamExtractString), so anything
// else is refused rather than stored unreadable. The object is decoded
// only for the few events that carry groups.
func checkGroups(props []byte) *Rejection {
	var top map[string]stdjson.RawMessage
	if err := stdjson.Unmarshal(props, &top); err != nil {
		return reject(RejectInvalidProperties, "properties is not valid JSON.")
	}
	bad := func(format string, args ...any) *Rejection {
		return reject(RejectInvalidGroups, analytics.GroupsProperty+" must be an object of at most %d group types, "+
			"each mapped to its key: "+format, append([]any{analytics.MaxGroupsPerEvent}, args...)...)
	}
	raw := top[analytics.GroupsProperty]
	if len(raw) == 0 || raw[0] != '{' {
		return bad("it is %s.", jsonKind(raw))
	}
	var groups map[string]stdjson.RawMessage
	if err := stdjson.Unmarshal(raw, &groups); err != nil {
		return bad("it could not be read.")
	}
	if len(groups) > analytics.MaxGroupsPerEvent {
		return bad("it has %d.", len(groups))
	}
	for typ, v := range groups {
		if !analytics.ValidGroupType(typ) {
			return bad("the type %q is not a lower-case letter followed by up to 31 lower-case letters, digits or underscores.", typ)
		}
		var key string
		if len(v) == 0 || v[0] != '"' || stdjson.Unmarshal(v, &key) != nil {
			return bad("the key of %s is %s, not a string.", typ, jsonKind(v))
		}
		if !analytics.ValidGroupKey(key) {
			return bad("the key of %s must be 1 to %d characters.", typ, analytics.MaxGroupKeyChars)
		}
	}
	return nil
}

// jsonKind names the type of a JSON value for a message.
func jsonKind(v []byte) string {
	if len(v) == 0 {
		return "missing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// scanProperties walks well-formed JSON once and returns its maximum
// nesting depth, the first top-level key that only ingest may set, whether
// a key or value holds NUL (which JSON can carry only as the escape
// \u0000), whether a top-level key is $groups (checkGroups), and where
// the value of a top-level $viewport_width begins (after its key's closing
// quote; 0 without one).
func scanProperties(raw []byte) (maxDepth int, reserved string, nul, groups bool, viewport int) {
	depth := 0
	expectKey := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '{', '[':
			depth++
			maxDepth = max(maxDepth, depth)
			expectKey = c == '{' && depth == 1
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		case '"':
			start := i
			i++
			for ; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
					if i+4 < len(raw) && raw[i] == 'u' && string(raw[i+1:i+5]) == "0000" {
						nul = true
					}
				}
			}
			if expectKey {
				key := unquote(raw[start : i+1])
				if reserved == "" && ingestOnlyProperties[key] {
					reserved = key
				}
				groups = groups || key == analytics.GroupsProperty
				if key == ViewportWidthProperty {
					viewport = i + 1
				}
			}
			expectKey = false
		}
	}
	return maxDepth, reserved, nul, groups, viewport
}

// ViewportWidthProperty is the width of the page's viewport in CSS pixels,
// which the browser SDK sends with every event and ingest turns into the
// event's screen class (docs/ingest.md, "Devices").
const ViewportWidthProperty = "$viewport_width"

// viewportWidth is the number whose value begins at raw[at:] (after the
// key $viewport_width, as scanProperties found it), and -1 when there is
// none (at is 0) or it is not a number.
func viewportWidth(raw []byte, at int) float64 {
	if at == 0 {
		return -1
	}
	v := bytes.TrimLeft(raw[at:], " \t\r\n:")
	end := 0
	for end < len(v) && (v[end] >= '0' && v[end] <= '9' || v[end] == '.' || v[end] == '-' || v[end] == '+' || v[end] == 'e' || v[end] == 'E') {
		end++
	}
	f, err := strconv.ParseFloat(string(v[:end]), 64)
	if err != nil {
		return -1
	}
	return f
}

func unquote(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	json.Unmarshal(quoted, &s)
	return s
}

// withBotProperties adds the bot classification to a compact properties
// object known not to hold these keys already.
func withBotProperties(props json.RawMessage, bot bots.Bot) json.RawMessage {
	name, _ := json.Marshal(bot.Name)
	category, _ := json.Marshal(bot.Category)
	out := make([]byte, 0, len(props)+64+len(name))
	out = append(out, `{"$is_bot":true,"$bot_name":`...)
	out = append(out, name...)
	out = append(out, `,"$bot_category":`...)
	out = append(out, category...)
	if len(props) > 2 { // not "{}"
		out = append(out, ',')
		out = append(out, props[1:]...)
	} else {
		out = append(out, '}')
	}
	return out
}

// cookielessValue is the reserved id as a JSON string.
var cookielessValue = []byte(`"` + analytics.CookielessID + `"`)

// cookielessVisitor replaces the reserved distinct_id of an event sent in
// cookieless mode with the visitor derived from the request's address and
// the event's user agent (package cookieless), and, in an $identify, the
// same reserved value of $anon_distinct_id, so that the visitor's
// anonymous events of the day stay linked to the user. An event without
// an address to derive from, or whose day's salt cannot be read, is
// refused rather than stored under the reserved id.
func (p *Pipeline) cookielessVisitor(e *analytics.Event, props json.RawMessage, req Request, last *derivedVisitor) (json.RawMessage, *Rejection) {
	anon := e.Name == "$identify" && anonIsCookieless(props)
	if e.DistinctID != analytics.CookielessID && !anon {
		return props, nil
	}
	if p.Visitors == nil || !req.ClientAddr.IsValid() {
		return props, reject(RejectCookieless, "The value %s asks the server to derive the visitor, which this server cannot do (no client address).", analytics.CookielessID)
	}
	id := ""
	if last.id != "" && last.userAgent == e.UserAgent {
		id = last.id
	} else {
		var err error
		if id, err = p.Visitors.ID(req.ReceivedAt, req.Product, req.ClientAddr, e.UserAgent); err != nil {
			return props, reject(RejectCookieless, "The value %s asks the server to derive the visitor, and the server could not read the day's salt; send the event again later.", analytics.CookielessID)
		}
		*last = derivedVisitor{userAgent: e.UserAgent, id: id}
	}
	if e.DistinctID == analytics.CookielessID {
		e.DistinctID = id
	}
	if anon {
		props = replaceAnonID(props, id)
	}
	return props, nil
}

// anonIsCookieless reports whether props has $anon_distinct_id set to the
// reserved value at its top level (a nested property of that name is the
// client's data).
func anonIsCookieless(props json.RawMessage) bool {
	var m struct {
		Anon *string `json:"$anon_distinct_id"`
	}
	return json.Unmarshal(props, &m) == nil && m.Anon != nil && *m.Anon == analytics.CookielessID
}

// replaceAnonID sets the top-level $anon_distinct_id of props to id. The
// other properties keep their values; their order may change.
func replaceAnonID(props json.RawMessage, id string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(props, &m) != nil {
		return props
	}
	m["$anon_distinct_id"], _ = json.Marshal(id)
	out, err := json.Marshal(m)
	if err != nil {
		return props
	}
	return out
}

// UserID hashes a distinct_id to the 64-bit integer that queries group and
// join on. FNV-1a is stable across processes and versions, so every node
// and backend computes the same id.
func UserID(distinctID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(distinctID))
	return h.Sum64()
}

// urlPath is the path of a page URL as url.Parse gives it ("/" for a bare
// host, "" for what does not parse). The common shape, an http(s) URL of
// plain characters, is cut without parsing (simplePath); url.Parse
// allocated a URL and its strings for every event. FuzzURLPath holds the
// two to the same answer.
func urlPath(raw string) string {
	if p, ok := simplePath(raw); ok {
		return p
	}
	return parsedPath(raw)
}

// simplePath cuts the path out of raw when raw is "http://" or "https://",
// a host of letters, digits, dots and hyphens with an optional numeric
// port, then a path and query of printable ASCII without '%' in the path
// and without a fragment: for such a URL url.Parse cannot fail, unescapes
// nothing, and its Path is exactly those bytes. It reports false for
// anything else.
func simplePath(raw string) (string, bool) {
	rest, ok := strings.CutPrefix(raw, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(raw, "http://"); !ok {
			return "", false
		}
	}
	i := 0
	for i < len(rest) && isHostByte(rest[i]) {
		i++
	}
	if i == 0 {
		return "", false
	}
	if i < len(rest) && rest[i] == ':' {
		i++
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
	}
	rest = rest[i:]
	if rest != "" && rest[0] != '/' && rest[0] != '?' {
		return "", false
	}
	end := len(rest)
	for j := 0; j < len(rest); j++ {
		c := rest[j]
		if c <= ' ' || c >= 0x7f || c == '#' || (c == '%' && j < end) {
			return "", false
		}
		if c == '?' && end == len(rest) {
			end = j
		}
	}
	if end == 0 {
		return "/", true
	}
	return rest[:end], true
}

func isHostByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-'
}

// parsedPath is urlPath by url.Parse, for any URL.
func parsedPath(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if u.Path == "" && u.Host != "" {
		return "/"
	}
	return u.Path
}

func truncate(s string, maxChars int) string {
	if utf8.RuneCountInString(s) <= maxChars {
		return s
	}
	return string([]rune(s)[:maxChars])
}

// GroupProperties checks the properties of a group profile (POST
// /api/v1/groups/{type}/{key}) by the rules of an event's properties — a
// JSON object of at most 64 KiB and 32 levels, no NUL, none of the keys
// only ingest sets — and returns them compact. Absent or null is the empty
// object. A broken rule is an analytics.InvalidField naming properties.
func GroupProperties(raw []byte) ([]byte, error) {
	props, _, rej := checkProperties(raw, maxPropertiesBytes)
	if rej != nil {
		return nil, analytics.InvalidField("properties", "%s", rej.Message)
	}
	return props, nil
}
