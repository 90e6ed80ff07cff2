package sourcemap

// chunked is a slice of n elements kept in chunks of chunkLen (the last
// one shorter), each allocated at its final size. A parsed map's segments
// and line index are tens of megabytes for the largest maps; as many
// allocations of half a megabyte or less, the memory of a map dropped
// from the cache is reused by the next map parsed, where one allocation
// of the whole would need a free run of its own size, which the maps
// before, of other sizes, leave in pieces: the process then grows by the
// largest map again and again (docs/errors.md, "Limits of a map").
type chunked[T any] struct {
	chunks [][]T
	n      int
}

// chunkShift sets chunkLen, 32,768 elements: 640 KB of segments, 128 KB
// of line starts.
const (
	chunkShift = 15
	chunkLen   = 1 << chunkShift
	chunkMask  = chunkLen - 1
)

// newChunked returns a chunked slice of n zero elements.
func newChunked[T any](n int) chunked[T] {
	c := chunked[T]{chunks: make([][]T, (n+chunkMask)>>chunkShift), n: n}
	for i := range c.chunks {
		c.chunks[i] = make([]T, min(chunkLen, n-i<<chunkShift))
	}
	return c
}

// at returns the i-th element, 0 ≤ i < n.
func (c *chunked[T]) at(i int) *T { return &c.chunks[i>>chunkShift][i&chunkMask] }

// chunkedBytes is what a chunked slice of n elements of size bytes holds:
// the elements and a slice header a chunk.
func chunkedBytes(n, size int) int {
	return n*size + (n+chunkMask)>>chunkShift*sliceBytes
}
