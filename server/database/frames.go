package databaseserver

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/pyric/pyric/internal/memlimit"
)

// MaxFrame is the largest websocket frame the SDKs send or accept; longer
// messages are split, preceded by a frame holding only the frame count.
const MaxFrame = 16384

// errFrame is a framing violation; the connection is closed.
var errFrame = errors.New("bad frame")

// assembler rebuilds client messages from websocket frames: a frame of at
// most 6 digits announces how many frames the next message spans (a
// count of 0 is the client's keepalive); any other frame is a whole
// message or, after an announcement, its next part.
type assembler struct {
	max   int // the largest message accepted
	want  int
	parts []byte
	// budget, when set, is shared by every session: the bytes of messages
	// being assembled are taken from it, so many sockets each sending a
	// 16 MiB write cannot together hold more than it.
	budget *memlimit.Budget
	held   int64
}

// release gives back what the message being assembled holds.
func (a *assembler) release() {
	if a.budget != nil && a.held > 0 {
		a.budget.Give(a.held)
	}
	a.held = 0
}

// feed takes one frame and returns a whole message when one is complete.
func (a *assembler) feed(frame string) (msg string, ok bool, err error) {
	if a.want > 0 {
		if len(a.parts)+len(frame) > a.max {
			return "", false, fmt.Errorf("%w: a message over %d bytes", errFrame, a.max)
		}
		if a.budget != nil {
			if !a.budget.Take(int64(len(frame))) {
				a.release()
				a.want, a.parts = 0, nil
				return "", false, fmt.Errorf("%w: too many large writes in flight (the messages being received already hold %d MiB); retry when they finish", errFrame, a.budget.Max>>20)
			}
			a.held += int64(len(frame))
		}
		a.parts = append(a.parts, frame...)
		a.want--
		if a.want > 0 {
			return "", false, nil
		}
		msg, a.parts = string(a.parts), nil
		a.release()
		return msg, true, nil
	}
	if len(frame) <= 6 && frame != "" && isDigits(frame) {
		n, _ := strconv.Atoi(frame)
		if n == 0 {
			return "", false, nil // keepalive
		}
		if n*MaxFrame > a.max+MaxFrame {
			return "", false, fmt.Errorf("%w: %d frames announced, more than a %d-byte message needs", errFrame, n, a.max)
		}
		if n == 1 {
			a.want = 1
			return "", false, nil
		}
		a.want = n
		return "", false, nil
	}
	if len(frame) > a.max {
		return "", false, fmt.Errorf("%w: a message over %d bytes", errFrame, a.max)
	}
	return frame, true, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// split cuts an outgoing message into frames as the SDK expects: a
// message longer than MaxFrame goes as its frame count, then the parts.
// Parts end on character boundaries, since each frame must be valid
// UTF-8 text.
func split(msg string) []string {
	if len(msg) <= MaxFrame {
		return []string{msg}
	}
	var parts []string
	for i := 0; i < len(msg); {
		end := min(i+MaxFrame, len(msg))
		for end < len(msg) && end > i+1 && !utf8.RuneStart(msg[end]) {
			end--
		}
		parts = append(parts, msg[i:end])
		i = end
	}
	return append([]string{strconv.Itoa(len(parts))}, parts...)
}
