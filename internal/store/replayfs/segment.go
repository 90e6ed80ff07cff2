package replayfs

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"

	"strata/internal/analytics"
)

// A segment file is a sequence of records, each one chunk or one
// tombstone:
//
//	offset  size   field
//	0       4      magic: "SRC1" for a chunk, "SRT1" for a tombstone
//	4       4      the header's length, little-endian
//	8       4      the data's length, little-endian (0 for a tombstone)
//	12      h      the header: a chunk's metadata as JSON (header below),
//	               or {"session": id} for a tombstone
//	12+h    d      the data exactly as the SDK sent it
//	12+h+d  4      CRC-32C (Castagnoli) of everything before it
//
// A crash can leave a torn last record in the segment being appended to;
// its length or CRC fails and Open cuts it off. A torn record was never
// acknowledged.
const (
	magicChunk = "SRC1"
	magicTomb  = "SRT1"
	recordHead = 12
	recordTail = 4
	// maxHeaderBytes bounds a record's header when a segment is read: a
	// length past it is a torn or foreign record, not a header.
	maxHeaderBytes = 64 << 10
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// segmentReader is what a segment file's records are read through: the
// file. The tests of a failing disk make it fail, as a bad sector does.
var segmentReader = func(f *os.File) io.ReaderAt { return f }

// header is a chunk record's metadata: the chunk without its data. Its
// JSON is also the first line of a chunk file of the directory layout
// before segments (legacy.go).
type header struct {
	Session    string    `json:"session"`
	Window     string    `json:"window"`
	Index      int       `json:"index"`
	DistinctID string    `json:"distinct_id"`
	First      time.Time `json:"first"`
	Last       time.Time `json:"last"`
	Encoding   string    `json:"encoding"`
	Pages      int       `json:"pages"`
	Clicks     int       `json:"clicks"`
	Errors     int       `json:"errors"`
	Bytes      int       `json:"bytes"`
	Received   time.Time `json:"received"`
}

func headerOf(c analytics.ReplayChunk) header {
	return header{Session: c.SessionID, Window: c.WindowID, Index: c.Index, DistinctID: c.DistinctID,
		First: c.FirstTS.UTC(), Last: c.LastTS.UTC(), Encoding: c.Encoding, Pages: c.Pages, Clicks: c.Clicks, Errors: c.Errors,
		Bytes: len(c.Data), Received: c.ReceivedAt.UTC()}
}

// chunk is the chunk h describes, of product productID, without its data.
func (h header) chunk(productID int64) analytics.ReplayChunk {
	return analytics.ReplayChunk{ProductID: productID, SessionID: h.Session, WindowID: h.Window, Index: h.Index,
		DistinctID: h.DistinctID, FirstTS: h.First, LastTS: h.Last, Encoding: h.Encoding, Size: h.Bytes,
		Pages: h.Pages, Clicks: h.Clicks, Errors: h.Errors, ReceivedAt: h.Received}
}

// tombHeader is a tombstone record's header: every chunk of the session
// before it (in this segment and the ones before) is deleted.
type tombHeader struct {
	Session string `json:"session"`
}

// appendRecord appends one record to dst.
func appendRecord(dst []byte, magic string, head, data []byte) []byte {
	start := len(dst)
	dst = append(dst, magic...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(head)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(data)))
	dst = append(dst, head...)
	dst = append(dst, data...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], crcTable))
}

// appendChunk appends c's record to dst.
func appendChunk(dst []byte, c analytics.ReplayChunk) ([]byte, error) {
	h, err := json.Marshal(headerOf(c))
	if err != nil {
		return dst, fmt.Errorf("encoding a replay chunk's header: %w", err)
	}
	return appendRecord(dst, magicChunk, h, c.Data), nil
}

// appendTomb appends a tombstone of session to dst.
func appendTomb(dst []byte, session string) []byte {
	h, _ := json.Marshal(tombHeader{Session: session})
	return appendRecord(dst, magicTomb, h, nil)
}

// errTorn is a record that is cut short or fails its CRC.
var errTorn = errors.New("torn or corrupt replay record")

// record is one record as a segment is scanned: its kind, where it is and
// its header; its data only when the whole record was read.
type record struct {
	magic string
	off   int64
	n     int64 // the whole record's length
	head  []byte
	data  []byte
}

// parseRecord checks a whole record read into b (its head says how long it
// is) and returns its header and data, which point into b.
func parseRecord(b []byte) (head, data []byte, err error) {
	if len(b) < recordHead+recordTail {
		return nil, nil, errTorn
	}
	hl, dl := int(binary.LittleEndian.Uint32(b[4:8])), int(binary.LittleEndian.Uint32(b[8:12]))
	if m := string(b[:4]); (m != magicChunk && m != magicTomb) || recordHead+hl+dl+recordTail != len(b) {
		return nil, nil, errTorn
	}
	body := b[:len(b)-recordTail]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(b[len(b)-recordTail:]) {
		return nil, nil, errTorn
	}
	return body[recordHead : recordHead+hl], body[recordHead+hl:], nil
}

// scanSegment reads f's records in order and calls fn for each. With
// verify, every record is read whole and its CRC checked (the segment a
// crash may have torn); without, only each record's head and header are
// read and the data skipped (a sealed segment, written whole and synced).
// It returns the offset after the last good record, which is size unless
// the rest is torn: too short for a record's head, a record that does not
// frame (an unknown magic, a length past the file or past what a segment
// holds), or one whose CRC fails. A read that fails within size (the file
// has that many bytes) is not a torn record but the disk's error, which
// is returned: what follows may be acknowledged records, which only a
// read that works can tell.
func scanSegment(f io.ReaderAt, size int64, verify bool, fn func(record) error) (int64, error) {
	// Reading headers alone, a small buffer: a read of the file is about
	// one record's header, the data between them skipped.
	buffer := 256 << 10
	if !verify {
		buffer = 4 << 10
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), buffer)
	var off int64
	var head [recordHead]byte
	var buf []byte
	fail := func(err error) (int64, error) {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("the file ends before its size, %d bytes: %w", size, io.ErrUnexpectedEOF)
		}
		return off, fmt.Errorf("reading the record at %d: %w", off, err)
	}
	for off < size {
		if size-off < recordHead {
			return off, nil // a torn head
		}
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return fail(err)
		}
		m := string(head[:4])
		hl, dl := int64(binary.LittleEndian.Uint32(head[4:8])), int64(binary.LittleEndian.Uint32(head[8:12]))
		n := recordHead + hl + dl + recordTail
		if (m != magicChunk && m != magicTomb) || hl > maxHeaderBytes || n > maxSegmentBytes || off+n > size {
			return off, nil
		}
		rec := record{magic: m, off: off, n: n}
		if verify {
			buf = append(buf[:0], head[:]...)
			buf = append(buf, make([]byte, n-recordHead)...)
			if _, err := io.ReadFull(r, buf[recordHead:]); err != nil {
				return fail(err)
			}
			h, d, err := parseRecord(buf)
			if err != nil {
				return off, nil
			}
			rec.head, rec.data = h, d
		} else {
			rec.head = make([]byte, hl)
			if _, err := io.ReadFull(r, rec.head); err != nil {
				return fail(err)
			}
			// The data is skipped, not read: what is buffered is
			// dropped, past it the reader starts again at the next
			// record, so that reading a sealed segment costs its headers.
			if skip := int(dl + recordTail); skip <= r.Buffered() {
				r.Discard(skip)
			} else {
				r.Reset(io.NewSectionReader(f, off+n, size-off-n))
			}
		}
		if err := fn(rec); errors.Is(err, errTorn) {
			return off, nil // a header that does not parse
		} else if err != nil {
			return off, err
		}
		off += n
	}
	return off, nil
}
