package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// Failure reasons a request is counted under (besides "http_<status>").
const (
	ReasonTimeout         = "timeout"          // the request outlived Options.Timeout
	ReasonConnectionReset = "connection_reset" // the connection broke mid-response
	ReasonConnection      = "connection_error" // the request could not be sent (refused, DNS, …)
	ReasonMalformedStream = "malformed_stream" // an SSE event was not the JSON expected
	ReasonStreamError     = "stream_error"     // the server sent an error object inside the stream
	ReasonMissingUsage    = "missing_usage"    // the stream ended without usage.completion_tokens
	ReasonNoTokens        = "no_tokens"        // the stream ended without any text chunk
	reasonCanceled        = "canceled"         // the load point was interrupted; not a failure
)

// outcome is what one request measured. Times are seconds; start is the
// offset of the send from the start of the load point.
type outcome struct {
	sent         bool
	start        float64
	end          float64 // offset of the end of the request (its last byte or its failure)
	ttft         float64
	itl          []float64
	latency      float64
	promptTokens int // from usage; 0 when absent
	outputTokens int
	reason       string // "" on success
	err          string
}

// streamChunk is the part of an OpenAI streaming chunk the timing needs.
type streamChunk struct {
	Choices []struct {
		Text  *string `json:"text"`
		Delta *struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     *int `json:"prompt_tokens"`
		CompletionTokens *int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// carriesText reports whether a chunk holds generated text. Chunks with
// choices but no text (a chat role announcement, a finish-reason-only
// chunk) are not tokens and would add zero-length gaps to ITL.
func (c *streamChunk) carriesText() bool {
	nonEmpty := func(s *string) bool { return s != nil && *s != "" }
	for _, ch := range c.Choices {
		if nonEmpty(ch.Text) {
			return true
		}
		if d := ch.Delta; d != nil && (nonEmpty(d.Content) || nonEmpty(d.ReasoningContent) || nonEmpty(d.Reasoning)) {
			return true
		}
	}
	return false
}

// send posts one streaming request and times it. t0 is the start of the load
// point; parent is the load point's context (its cancellation marks the
// request canceled rather than failed).
func send(parent context.Context, client *http.Client, o *Options, url string, body []byte, t0 time.Time) outcome {
	var out outcome
	if parent.Err() != nil {
		return out
	}
	ctx, cancel := context.WithTimeout(parent, o.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		out.reason, out.err = ReasonConnection, o.redact(err.Error())
		return out
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}

	out.sent = true
	sendTime := time.Now()
	out.start = sendTime.Sub(t0).Seconds()
	fail := func(reason string, err error) outcome {
		out.reason, out.err = reason, o.redact(err.Error())
		if parent.Err() != nil {
			out.reason = reasonCanceled
		}
		return out
	}

	resp, err := client.Do(req)
	if err != nil {
		return fail(classify(err, ctx), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fail(fmt.Sprintf("http_%d", resp.StatusCode),
			fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(msg))))
	}

	var (
		firstSeen  bool
		lastToken  time.Time
		gotUsage   bool
		reader     = bufio.NewReaderSize(resp.Body, 64<<10)
		data       []byte // data lines of the event being read
		line       []byte // the line being read, reused
		chunk      streamChunk
		sawDone    bool
		readErr    error
		eventCount int
	)
	// dispatch handles one complete SSE event; it returns an outcome when the
	// event ends the request with a failure.
	dispatch := func(now time.Time) (bool, outcome) {
		if len(data) == 0 {
			return false, out
		}
		payload := bytes.TrimSpace(data)
		data = data[:0]
		eventCount++
		if string(payload) == "[DONE]" {
			sawDone = true
			return false, out
		}
		chunk = streamChunk{}
		if err := json.Unmarshal(payload, &chunk); err != nil {
			return true, fail(ReasonMalformedStream, fmt.Errorf("event %d: %w", eventCount, err))
		}
		if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			return true, fail(ReasonStreamError, fmt.Errorf("event %d: %s", eventCount, chunk.Error))
		}
		if chunk.carriesText() {
			if !firstSeen {
				firstSeen = true
				out.ttft = now.Sub(sendTime).Seconds()
			} else {
				out.itl = append(out.itl, now.Sub(lastToken).Seconds())
			}
			lastToken = now
		}
		if u := chunk.Usage; u != nil && u.CompletionTokens != nil {
			if *u.CompletionTokens < 0 || (u.PromptTokens != nil && *u.PromptTokens < 0) {
				return true, fail(ReasonMalformedStream, fmt.Errorf("event %d: negative token count in usage", eventCount))
			}
			gotUsage = true
			out.outputTokens = *u.CompletionTokens
			if u.PromptTokens != nil {
				out.promptTokens = *u.PromptTokens
			}
		}
		return false, out
	}

	for !sawDone {
		var err error
		line, err = readLine(reader, line[:0], maxEventBytes)
		now := time.Now()
		if errors.Is(err, errEventTooLarge) {
			return fail(ReasonMalformedStream, fmt.Errorf("event %d: %w", eventCount+1, err))
		}
		if len(line) > 0 {
			trimmed := bytes.TrimRight(line, "\r\n")
			switch {
			case len(trimmed) == 0: // blank line ends an event
				if failed, o := dispatch(now); failed {
					return o
				}
			case trimmed[0] == ':': // SSE comment, e.g. a keep-alive ping
			case bytes.HasPrefix(trimmed, []byte("data:")):
				if len(data)+len(trimmed) > maxEventBytes {
					return fail(ReasonMalformedStream, fmt.Errorf("event %d: %w", eventCount+1, errEventTooLarge))
				}
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(trimmed[5:], []byte(" "))...)
			default: // event:, id:, retry: fields carry nothing we time
			}
		}
		if err != nil {
			readErr = err
			break
		}
	}
	if sawDone {
		// Read the rest (the blank line, the chunked-encoding trailer) so the
		// connection goes back to the pool instead of being closed.
		io.Copy(io.Discard, io.LimitReader(reader, 64<<10))
	} else if readErr == io.EOF {
		// A last event without its blank line still counts.
		if failed, o := dispatch(time.Now()); failed {
			return o
		}
	} else if readErr != nil {
		return fail(classify(readErr, ctx), readErr)
	}
	switch {
	case !firstSeen:
		return fail(ReasonNoTokens, errors.New("stream ended without a chunk carrying text"))
	case !gotUsage:
		return fail(ReasonMissingUsage, errors.New("stream ended without usage.completion_tokens (stream_options.include_usage unsupported?)"))
	}
	out.latency = lastToken.Sub(sendTime).Seconds()
	return out
}

// maxEventBytes bounds one SSE line and one event's data: a streamed chunk
// carries a token or a few, so a megabyte is a broken or hostile server,
// and reading on would hold all of it in memory.
const maxEventBytes = 1 << 20

var errEventTooLarge = fmt.Errorf("larger than %d bytes", maxEventBytes)

// readLine appends the next line of r (with its '\n') to buf, failing with
// errEventTooLarge once it would exceed limit bytes.
func readLine(r *bufio.Reader, buf []byte, limit int) ([]byte, error) {
	for {
		frag, err := r.ReadSlice('\n')
		if len(buf)+len(frag) > limit {
			return buf, errEventTooLarge
		}
		buf = append(buf, frag...)
		if err != bufio.ErrBufferFull {
			return buf, err
		}
	}
}

// classify names the failure behind a transport error.
func classify(err error, ctx context.Context) string {
	var netErr net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout
	case errors.As(err, &netErr) && netErr.Timeout():
		return ReasonTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return ReasonConnectionReset
	case errors.Is(err, io.EOF):
		// The server closed the connection before sending a response.
		return ReasonConnectionReset
	default:
		return ReasonConnection
	}
}
