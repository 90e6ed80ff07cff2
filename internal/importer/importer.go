package importer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Sources lists the sources --from names.
func Sources() []Source {
	return []Source{PostHog{}, Mixpanel{}, Amplitude{}, Umami{}, GA4{}}
}

// SourceNamed returns the source of a --from name.
func SourceNamed(name string) (Source, bool) {
	for _, s := range Sources() {
		if s.Name() == name {
			return s, true
		}
	}
	return nil, false
}

// uuidSpace is the namespace of imported events' uuids (docs/import.md,
// "Importing twice"): an event's uuid is the SHA-1 name-based uuid (RFC
// 9562, version 5) of "SOURCE\x00SOURCE_ID" in it. Changing it would make
// every import of a file already imported store it again.
var uuidSpace = uuid.MustParse("5f2c8a4e-7d1b-4c3a-9e6f-0b8d2a71c4e9")

// EventUUID is the uuid of an imported event.
func EventUUID(source, sourceID string) uuid.UUID {
	return uuid.NewSHA1(uuidSpace, []byte(source+"\x00"+sourceID))
}

// MigratedFrom is the property that marks an imported event with its
// source (the spec's $migrated_from).
const MigratedFrom = "$migrated_from"

// Sink takes the batches of an import: a Target in this process, or a
// running server through its admin socket.
type Sink interface {
	ImportBatch(ctx context.Context, batch []json.RawMessage) (Result, error)
}

// Options says how to run an import.
type Options struct {
	Source Source
	// Batch is how many records one batch carries (the spec's 500 when
	// paced), and Pause the wait after each batch (0.5 s when paced).
	Batch int
	Pause time.Duration
	// DryRun maps every record and reports without writing.
	DryRun bool
	// Checkpoints is the directory where the progress of each file is
	// kept after each stored batch, so that the same command run again
	// resumes after the last stored batch; "" keeps none. Scope names
	// where the events go (a product and environment), so that the same
	// file imported into another product is not taken for done.
	Checkpoints string
	Scope       string
	// Progress, when set, is told after each batch.
	Progress func(Progress)
}

// Progress is how far an import got.
type Progress struct {
	File       string
	Records    int64 // of every file so far
	BytesDone  int64 // of every file so far, as far as read
	BytesTotal int64
	Elapsed    time.Duration
}

// Report is the outcome of an import.
type Report struct {
	Result
	Source string `json:"source"`
	// Names counts the events by source name → Strata name.
	Names map[string]int `json:"names,omitempty"`
	// Skipped counts records an earlier run stored (a resumed import),
	// which this run did not read again; Done lists the files an earlier
	// run finished.
	Skipped int64    `json:"skipped,omitempty"`
	Done    []string `json:"alreadyImported,omitempty"`
	Elapsed time.Duration
}

// Run imports files into sink.
func Run(ctx context.Context, sink Sink, opt Options, files ...string) (Report, error) {
	rep := Report{Source: opt.Source.Name(), Names: map[string]int{}}
	start := time.Now()
	var total int64
	for _, name := range files {
		fi, err := os.Stat(name)
		if err != nil {
			return rep, err
		}
		total += fi.Size()
	}
	var done int64
	for _, name := range files {
		n, err := runFile(ctx, sink, opt, name, &rep, start, done, total)
		done += n
		if err != nil {
			rep.Elapsed = time.Since(start)
			return rep, err
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// checkpoint is what is kept of one file's import.
type checkpoint struct {
	Size    int64  `json:"size"`
	Head    string `json:"head"` // SHA-256 of the first MiB
	Records int64  `json:"records"`
	Done    bool   `json:"done"`
}

// runFile imports one file and returns its size.
func runFile(ctx context.Context, sink Sink, opt Options, name string, rep *Report, start time.Time, before, total int64) (int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	head, err := fileHead(f, size)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", name, err)
	}
	cp := checkpoint{Size: size, Head: head}
	cpPath := ""
	if opt.Checkpoints != "" && !opt.DryRun {
		cpPath = filepath.Join(opt.Checkpoints, opt.Scope+"-"+opt.Source.Name()+"-"+head[:16]+".json")
		if b, err := os.ReadFile(cpPath); err == nil {
			var old checkpoint
			if json.Unmarshal(b, &old) == nil && old.Size == size && old.Head == head {
				cp = old
			}
		}
	}
	if cp.Done {
		rep.Done = append(rep.Done, name)
		return size, nil
	}
	skip := cp.Records
	rep.Skipped += skip
	counted := &countingReaderAt{r: f}

	// One goroutine reads and maps, another stores: with one batch in
	// flight between them the two cores both work (reading and mapping
	// cost about what validating and storing do), and memory holds at
	// most two batches.
	type batchOf struct {
		events  []json.RawMessage
		records int64 // records read up to the batch's last, skipped ones included
	}
	work := make(chan batchOf, 1)
	var written Result
	var writeErr error
	var failed atomic.Bool
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for b := range work {
			if writeErr != nil {
				continue
			}
			if writeErr = storeBatch(ctx, sink, opt, b.events, &written); writeErr != nil {
				failed.Store(true)
				continue
			}
			if cpPath != "" {
				cp.Records = b.records
				if writeErr = saveCheckpoint(cpPath, cp); writeErr != nil {
					failed.Store(true)
					continue
				}
			}
			if opt.Progress != nil {
				opt.Progress(Progress{File: name, Records: b.records, BytesDone: before + counted.max.Load(),
					BytesTotal: total, Elapsed: time.Since(start)})
			}
			if opt.Pause > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(opt.Pause):
				}
			}
		}
	}()

	var records int64
	batch := make([]json.RawMessage, 0, opt.Batch)
	send := func() {
		if len(batch) > 0 {
			work <- batchOf{events: batch, records: records}
			batch = make([]json.RawMessage, 0, opt.Batch)
		}
	}
	source := opt.Source.Name()
	err = opt.Source.Read(counted, size, func(ev Event, merr error) error {
		if failed.Load() {
			return errStopped
		}
		records++
		if records <= skip {
			return nil
		}
		if merr != nil {
			var me *MappingError
			if !errors.As(merr, &me) {
				return merr
			}
			rep.count(&rep.Unmapped, me.Reason, 1, me.Detail)
		} else {
			raw, err := wireEvent(source, ev)
			if err != nil {
				return err
			}
			batch = append(batch, raw)
			rep.Names[ev.Name]++
		}
		if len(batch) >= opt.Batch {
			send()
		}
		return ctx.Err()
	})
	if err == nil {
		send()
	}
	close(work)
	<-writerDone
	rep.add(written)
	if writeErr != nil {
		err = writeErr
	}
	if err != nil {
		return size, fmt.Errorf("importing %s: %w", name, err)
	}
	if cpPath != "" {
		cp.Records, cp.Done = records, true
		if err := saveCheckpoint(cpPath, cp); err != nil {
			return size, err
		}
	}
	return size, nil
}

// errStopped ends a file's reading once storing failed; the storing
// error is the one reported.
var errStopped = errors.New("stopped")

// storeBatch stores one batch, or counts it when the run is a dry one.
func storeBatch(ctx context.Context, sink Sink, opt Options, batch []json.RawMessage, into *Result) error {
	if opt.DryRun {
		into.Imported += len(batch)
		return nil
	}
	res, err := sink.ImportBatch(ctx, batch)
	if err != nil {
		return err
	}
	into.add(res)
	return nil
}

// wire is an event object of POST /e.
type wire struct {
	EventName  string         `json:"event_name"`
	DistinctID string         `json:"distinct_id"`
	Timestamp  string         `json:"timestamp"`
	UUID       string         `json:"uuid"`
	UserAgent  string         `json:"user_agent,omitempty"`
	URL        string         `json:"url,omitempty"`
	Referrer   string         `json:"referrer,omitempty"`
	Properties map[string]any `json:"properties"`
}

// wireEvent is ev as POST /e takes it, with its uuid and $migrated_from.
func wireEvent(source string, ev Event) (json.RawMessage, error) {
	props := ev.Properties
	if props == nil {
		props = make(map[string]any, 1)
	}
	props[MigratedFrom] = source
	b, err := json.Marshal(wire{
		EventName: ev.Name, DistinctID: ev.DistinctID, Timestamp: ev.Timestamp.UTC().Format(time.RFC3339Nano),
		UUID: EventUUID(source, ev.SourceID).String(), UserAgent: ev.UserAgent, URL: ev.URL, Referrer: ev.Referrer,
		Properties: props,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding an event of %s: %w", source, err)
	}
	return b, nil
}

// fileHead is the hex SHA-256 of a file's first MiB, which with its size
// tells a checkpoint's file from another of the same name.
func fileHead(f io.ReaderAt, size int64) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, min(size, 1<<20))); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// saveCheckpoint writes a checkpoint whole or not at all.
func saveCheckpoint(path string, cp checkpoint) error {
	b, _ := json.Marshal(cp)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// countingReaderAt notes how far into a file the source has read, for
// the progress line.
type countingReaderAt struct {
	r   io.ReaderAt
	max atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	if end := off + int64(n); end > c.max.Load() {
		c.max.Store(end)
	}
	return n, err
}
