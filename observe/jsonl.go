package observe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Encoder writes events as JSON Lines: one JSON object per line.
// It is safe for concurrent use.
type Encoder struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	e := &Encoder{w: w}
	e.enc = json.NewEncoder(&e.buf)
	// Messages and errors are read by people; "<" is clearer than "\u003c".
	e.enc.SetEscapeHTML(false)
	return e
}

// Encode writes e and a newline in a single Write, so lines from concurrent
// writers never interleave.
func (e *Encoder) Encode(ev Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf.Reset()
	if err := e.enc.Encode(ev); err != nil { // json.Encoder appends the '\n'
		return fmt.Errorf("encode %s event %d: %w", ev.Kind, ev.Seq, err)
	}
	if _, err := e.w.Write(e.buf.Bytes()); err != nil {
		return fmt.Errorf("write %s event %d: %w", ev.Kind, ev.Seq, err)
	}
	return nil
}

// Decoder reads events written by Encoder. Blank lines are skipped; fields
// it does not know are ignored, so older readers can read newer traces of
// the same schema version.
type Decoder struct {
	r    *bufio.Reader
	line int
}

// NewDecoder returns a decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: bufio.NewReader(r)}
}

// Decode returns the next event, or io.EOF after the last one. Any other
// error names the line and what is wrong with it.
func (d *Decoder) Decode() (Event, error) {
	for {
		raw, readErr := d.r.ReadBytes('\n')
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return Event{}, fmt.Errorf("line %d: read: %w", d.line+1, readErr)
		}
		if len(raw) == 0 && readErr != nil {
			return Event{}, io.EOF
		}
		d.line++
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) == 0 {
			if readErr != nil {
				return Event{}, io.EOF
			}
			continue
		}
		return decodeLine(d.line, trimmed)
	}
}

// ParseLine decodes one line written by Encoder, for readers that look at
// each line themselves (and keep the ones that are not events).
func ParseLine(data []byte) (Event, error) {
	return decodeLine(1, bytes.TrimSpace(data))
}

func decodeLine(line int, data []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return Event{}, fmt.Errorf("line %d: %s", line, describeJSONError(data, err))
	}
	switch {
	case ev.V == 0:
		return Event{}, fmt.Errorf("line %d: missing schema version \"v\" (is this a lab event trace?)", line)
	case ev.V > SchemaVersion:
		return Event{}, fmt.Errorf("line %d: schema version %d is newer than this lab understands (%d); upgrade lab", line, ev.V, SchemaVersion)
	case ev.Kind == "":
		return Event{}, fmt.Errorf("line %d: missing \"kind\"", line)
	}
	return ev, nil
}

// describeJSONError turns encoding/json's errors into a sentence that points
// at the column or the field.
func describeJSONError(data []byte, err error) string {
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("invalid JSON at column %d: %v", syntax.Offset, err)
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return fmt.Sprintf("expected a JSON object, got JSON %s", typeErr.Value)
	case errors.As(err, &typeErr):
		return fmt.Sprintf("field %q: expected %s, got JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
	case bytes.HasPrefix(data, []byte("{")):
		if field := failingField(data); field != "" {
			return fmt.Sprintf("field %q: %v", field, err)
		}
		return fmt.Sprintf("bad event: %v", err)
	default:
		return fmt.Sprintf("not a JSON object: %v", err)
	}
}

// failingField finds which field of an object fails to decode, for errors
// (like a bad duration) that encoding/json reports without the field name.
func failingField(data []byte) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return ""
	}
	for name, value := range fields {
		one, _ := json.Marshal(map[string]json.RawMessage{name: value})
		if json.Unmarshal(one, new(Event)) != nil {
			return name
		}
	}
	return ""
}

// ReadAll decodes every event in r.
func ReadAll(r io.Reader) ([]Event, error) {
	d := NewDecoder(r)
	var events []Event
	for {
		ev, err := d.Decode()
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
}
