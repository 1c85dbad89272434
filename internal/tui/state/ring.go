package state

// Ring keeps the most recent values up to a fixed capacity; pushing onto a
// full ring overwrites the oldest value.
type Ring[T any] struct {
	items []T
	start int // index of the oldest value once the ring has wrapped
}

// NewRing returns an empty ring holding at most capacity values (at least one).
func NewRing[T any](capacity int) *Ring[T] {
	if capacity < 1 {
		capacity = 1
	}
	return &Ring[T]{items: make([]T, 0, capacity)}
}

// Push appends v and returns the value it evicted, if any.
func (r *Ring[T]) Push(v T) (evicted T, didEvict bool) {
	if len(r.items) < cap(r.items) {
		r.items = append(r.items, v)
		return evicted, false
	}
	evicted = r.items[r.start]
	r.items[r.start] = v
	r.start = (r.start + 1) % len(r.items)
	return evicted, true
}

// Len is the number of values held.
func (r *Ring[T]) Len() int { return len(r.items) }

// Cap is the most values the ring holds.
func (r *Ring[T]) Cap() int { return cap(r.items) }

// At returns the i-th value, oldest first.
func (r *Ring[T]) At(i int) T {
	return r.items[(r.start+i)%len(r.items)]
}

// Last returns the newest value, or the zero value when empty.
func (r *Ring[T]) Last() (v T, ok bool) {
	if len(r.items) == 0 {
		return v, false
	}
	return r.At(len(r.items) - 1), true
}

// Slice copies the values out, oldest first.
func (r *Ring[T]) Slice() []T {
	out := make([]T, 0, len(r.items))
	for i := range r.items {
		out = append(out, r.At(i))
	}
	return out
}
